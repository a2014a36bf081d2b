"""Specialized jit functions -> the `@pl.program` class they stand for -> a `Program`.

`@pl.jit` specializes into exactly the shape `@pl.program` writes by hand: one class, one method
per function, `self.f(...)` for a call between them. This module builds that class as a syntax
tree from the user's own function trees (the decorator becomes `@pl.function(type=...)`, `self` is
added, a call of a discovered function `f(...)` becomes `self.f(...)`, bare parameter annotations
take the types the arguments gave), applies the JIT alpha-rename, and hands the tree to the one
`pl` parser, so there is no second parser and every rule of the language holds for jit bodies.

The tree keeps the user's line numbers, and the parser quotes the user's file, so a parse error in
a jit body points at the user's line. Functions from several files are laid out one file after
another in one text for the parser; its errors and the spans of the parsed program are then moved
back to each function's own file and line.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import Call, ConstInt, FunctionType, Program, Span, Submit, Var
from nanopto.ir_terms.parse_error import ParserError
from nanopto.ir_terms.parse_exprs import dotted_name
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, Type
from nanopto.jit.rename import rename_rebound_params
from nanopto.jit.signature import ParamSpec, bare_annotation
from nanopto.jit.source import FunctionSource

__all__ = ["Member", "SpecializedProgram", "build_program", "to_user_names"]


@dataclass(frozen=True)
class Member:
    """One function of the program being built, with the names its body calls others by."""

    name: str
    func_type: FunctionType
    source: FunctionSource
    callees: Mapping[str, str]
    """A name called in the body -> the program function it names."""


@dataclass(frozen=True)
class SpecializedProgram:
    """The parsed program and what it takes to speak about it in the user's words."""

    program: Program
    renamed: Mapping[str, str] = field(default_factory=dict)
    """A name the JIT alpha-rename made -> the user's name."""


@dataclass(frozen=True)
class _Segment:
    offset: int
    file: str
    lines: int


def to_user_names(text: str, renamed: Mapping[str, str]) -> str:
    """`text` with every name the JIT made replaced by the user's name it stands for."""
    if not renamed:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(renamed, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: renamed[m.group(1)], text)


def build_program(
    entry: Member,
    members: Sequence[Member],
    entry_params: Sequence[ParamSpec],
    entry_types: Sequence[Type],
    closure: Mapping[str, object],
) -> SpecializedProgram:
    """Parse the program of `entry` (and `members`, the discovered sub-functions) specialized to
    `entry_types`, the types the call's arguments gave the entry's parameters."""
    segments: list[_Segment] = []
    texts: list[str] = []
    offsets: dict[str, int] = {}
    for member in (entry, *members):
        file = member.source.file
        if file not in offsets:
            offsets[file] = sum(s.lines for s in segments)
            lines = member.source.text.splitlines()
            segments.append(_Segment(offsets[file], file, len(lines)))
            texts.append("\n".join(lines) + "\n")
    # A sub-function's bare parameters take the type every call site passes them: parse, read the
    # argument types at the sites, and parse again until nothing new is learnt (a chain of calls
    # needs one round per link).
    site_types: dict[str, dict[str, str]] = {}
    for _ in range(len(members) + 1):
        result = _parse(entry, members, entry_params, entry_types, closure, site_types, offsets, texts, segments)
        learnt = _site_types(result.program, members)
        if learnt == site_types:
            break
        site_types = learnt
    for member in members:
        _refuse_untyped_out_scalars(member, site_types.get(member.name, {}))
    return result


def _refuse_untyped_out_scalars(member: Member, types: Mapping[str, str]) -> None:
    """A bare `pl.Out[pl.Scalar]` / `pl.InOut[pl.Scalar]` whose call sites pass different or
    unknown types is refused. Left untyped, InlineFunctions would read it as a tensor, whose
    rebinding stays on a local, while a scalar's is written back to the caller's variable: the
    write-back would be lost (docs/09-inlining-with-jit.md, "nanopto's choices")."""
    for arg in member.source.node.args.args:
        direction = _direction_name(arg.annotation) if arg.annotation is not None else None
        if direction is None or arg.arg in types:
            continue
        assert isinstance(arg.annotation, ast.Subscript)
        if dotted_name(arg.annotation.slice) != "pl.Scalar":
            continue
        raise member.source.error(
            arg,
            f"the type of bare pl.{direction}[pl.Scalar] parameter '{arg.arg}' of '{member.name}' cannot be "
            "told from its call sites (they pass different or unknown types); without it, the write-back "
            "to the caller's variable could not be told from a tensor's",
            hint=f"write the dtype: pl.{direction}[pl.Scalar[pl.INDEX]] (or the dtype the callers pass)",
            parameter=arg.arg,
        )


def _parse(
    entry: Member,
    members: Sequence[Member],
    entry_params: Sequence[ParamSpec],
    entry_types: Sequence[Type],
    closure: Mapping[str, object],
    site_types: Mapping[str, Mapping[str, str]],
    offsets: Mapping[str, int],
    texts: Sequence[str],
    segments: Sequence[_Segment],
) -> SpecializedProgram:
    renamed: dict[str, str] = {}
    methods: list[ast.stmt] = []
    for member in (entry, *members):
        node = copy.deepcopy(member.source.node)
        if member is entry:
            types = {p.name: python_print(t) for p, t in zip(entry_params, entry_types, strict=True)}
        else:
            types = dict(site_types.get(member.name, {}))
        _specialize_signature(node, member, types)
        inputs = [a.arg for a in node.args.args if a.annotation is None or _direction_name(a.annotation) is None]
        renamed.update(rename_rebound_params(node, inputs).renamed)
        _call_through_self(node, member.callees)
        node.args.args.insert(0, _located(ast.arg(arg="self"), node))
        if offsets[member.source.file]:
            ast.increment_lineno(node, offsets[member.source.file])
        methods.append(node)
    first = methods[0]
    cls = ast.ClassDef(
        name=entry.name,
        bases=[],
        keywords=[],
        body=methods,
        decorator_list=[_expr("pl.program", first)],
    )
    ast.copy_location(cls, first)
    module = ast.Module(
        body=[_located(ast.Import(names=[ast.alias(name="nanopto.language", asname="pl")]), first), cls],
        type_ignores=[],
    )
    ast.fix_missing_locations(module)
    source = "".join(texts)
    filename = segments[0].file
    try:
        program = parse_program(source, filename, closure=closure, tree=module)
    except ParserError as exc:
        raise _relocated(exc, segments, renamed) from None
    if len(segments) > 1:
        program = _SpansInTheirFiles(segments).visit(program)
    return SpecializedProgram(program, renamed)


class _SpansInTheirFiles(Mutator):
    """Every span of a function from a later file moved from the combined text to that file."""

    def __init__(self, segments: Sequence[_Segment]) -> None:
        self.segments = segments

    def leave(self, node: Any) -> Any:
        span = getattr(node, "span", None)
        if isinstance(span, Span) and span.line > self.segments[0].lines:
            segment = next(s for s in reversed(self.segments) if span.line > s.offset)
            end_line = span.end_line - segment.offset if span.end_line >= 0 else -1
            moved = Span(segment.file, span.line - segment.offset, span.col, end_line, span.end_col)
            extra = {"id": node.id} if isinstance(node, Var) else {}
            node = dataclasses.replace(node, span=moved, **extra)
        return node


def _site_types(program: Program, members: Sequence[Member]) -> dict[str, dict[str, str]]:
    """For each sub-function, the type (printed) each parameter receives, where all sites agree."""
    wanted = {m.name for m in members}
    functions = program.functions
    seen: dict[tuple[str, str], set[str]] = {}

    def returns(name: str) -> tuple[Type, ...] | None:
        return functions[name].return_types if name in functions else None

    for function in program.function_list:
        for node in walk(function.body):
            if isinstance(node, Call) and node.function and node.op in wanted:
                callee, args = node.op, node.args
            elif isinstance(node, Submit) and node.callee in wanted:
                callee, args = node.callee, node.args
            else:
                continue
            params = functions[callee].param_list
            for param, arg in zip(params, args, strict=False):
                ty = type_of(arg, returns=returns)
                text = python_print(ty) if _concrete(ty) else ""
                seen.setdefault((callee, param.var.name), set()).add(text)
    out: dict[str, dict[str, str]] = {}
    for (callee, name), texts in seen.items():
        if len(texts) == 1 and "" not in texts:
            out.setdefault(callee, {})[name] = next(iter(texts))
    return out


def _concrete(ty: Type) -> bool:
    """A type with every extent a constant, so its printed form needs no name to read back."""
    if isinstance(ty, ScalarType):
        return True
    if isinstance(ty, (TensorType, TileType)):
        return all(isinstance(d, ConstInt) for d in ty.shape)
    if isinstance(ty, ArrayType):
        return isinstance(ty.size, ConstInt)
    return False


def _specialize_signature(node: ast.FunctionDef, member: Member, types: Mapping[str, str]) -> None:
    """Turn a jit `def` into a `@pl.function` method's signature (the body is untouched): a bare
    parameter takes its type from `types` (printed), or stays untyped when it has none."""
    deco = node.decorator_list[0] if node.decorator_list else node
    node.decorator_list = [_expr(f"pl.function(type=pl.FunctionType.{member.func_type.name})", deco)]
    for arg in node.args.args:
        if not bare_annotation(arg.annotation):
            continue
        where = arg.annotation if arg.annotation is not None else arg
        direction = _direction_name(arg.annotation) if arg.annotation is not None else None
        text = types.get(arg.arg)
        if text is None:
            arg.annotation = _expr(f"pl.{direction}[...]", where) if direction else None
        else:
            arg.annotation = _expr(f"pl.{direction}[{text}]" if direction else text, where)
    if node.returns is not None and _has_bare_head(node.returns):
        node.returns = None


def _direction_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("pl.Out", "pl.InOut"):
        return dotted_name(node.value)[3:]  # type: ignore[index]
    return None


def _has_bare_head(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(node.value, ast.Name) and node.value.id in ("tuple",):
            return any(_has_bare_head(e) for e in elements)
        if isinstance(node.value, ast.Attribute) and node.value.attr == "Tuple":
            return any(_has_bare_head(e) for e in elements)
        return False
    return bare_annotation(node) and not (isinstance(node, ast.Constant) and node.value is None)


class _CallThroughSelf(ast.NodeTransformer):
    def __init__(self, callees: Mapping[str, str]) -> None:
        self.callees = callees

    def _self(self, name: ast.Name) -> ast.expr:
        target = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=self.callees[name.id], ctx=ast.Load())
        return ast.copy_location(target, name)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.callees:
            node.func = self._self(node.func)
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "submit"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "pl"
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.callees
        ):
            node.args[0] = self._self(node.args[0])
        return node


def _call_through_self(node: ast.FunctionDef, callees: Mapping[str, str]) -> None:
    if callees:
        for stmt in node.body:
            _CallThroughSelf(callees).visit(stmt)


A = TypeVar("A", bound=ast.AST)


def _located(node: A, like: ast.AST) -> A:
    """`node`, a synthesized tree, with every node of it placed at `like`."""
    for sub in ast.walk(node):
        if "lineno" in sub._attributes:
            sub.lineno = getattr(like, "lineno", 1)  # type: ignore[attr-defined]
            sub.col_offset = getattr(like, "col_offset", 0)  # type: ignore[attr-defined]
            sub.end_lineno = getattr(like, "end_lineno", None)  # type: ignore[attr-defined]
            sub.end_col_offset = getattr(like, "end_col_offset", None)  # type: ignore[attr-defined]
    return node


def _expr(text: str, like: ast.AST) -> ast.expr:
    node = ast.parse(text, mode="eval").body
    _located(node, like)
    return node


def _relocated(exc: ParserError, segments: Sequence[_Segment], renamed: Mapping[str, str]) -> ParserError:
    """`exc` in the user's file, line and names."""
    file, line = exc.file, exc.line
    for segment in reversed(segments):
        if exc.line > segment.offset:
            file, line = segment.file, exc.line - segment.offset
            break
    return ParserError(
        to_user_names(exc.message, renamed),
        file=file,
        line=line,
        col=exc.col,
        hint=to_user_names(exc.hint, renamed) if exc.hint else None,
        source_line=exc.source_line,
    )
