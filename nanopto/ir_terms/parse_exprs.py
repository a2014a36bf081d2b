"""`pl` expressions and type annotations -> IR, for the statement parser in `parser`.

Split from the statement forms because expressions are context-free given a name table: this
module knows literals, operators, `pl.<op>(...)` calls checked against the op registry,
`self.f(...)` calls, subscripts and the annotation grammar (`pl.Tensor[[4, n], pl.FP32]`, ...).
The statement parser supplies the name table through `lookup_local`. Type inference of a value
(for an unannotated assignment) asks the op registry, so a new op needs no parser change.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from nanopto.ir_terms import parse_distributed, split_aiv_forms
from nanopto.ir_terms import parse_subscripts as subscripts
from nanopto.ir_terms.dtypes import DataType, MemorySpace, PadValue, enum_of_symbol
from nanopto.ir_terms.infer import call_result_type, type_reader, weakly_bound
from nanopto.ir_terms.names import validate_base_name
from nanopto.ir_terms.nodes import (
    DEPENDENCY_ATTRS,
    AssignStmt,
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ConstStr,
    Expr,
    GlobalVar,
    Keyword,
    Keywords,
    Level,
    MakeTuple,
    ParamDirection,
    Span,
    SplitMode,
    Stmt,
    Submit,
    Symbol,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    slot_constructor,
)
from nanopto.ir_terms.ops import OPS, SCALAR_OPERATORS
from nanopto.ir_terms.parse_error import (
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)
from nanopto.ir_terms.parse_static import NotStatic, StaticSizes, static_eval
from nanopto.ir_terms.types import (
    ArrayType,
    CompactMode,
    DistributedTensorType,
    MemRef,
    ScalarType,
    TensorType,
    TileLayout,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)

MAX_NESTING = 150
"""Deeper expression/statement nesting is rejected rather than risking Python's recursion limit.

A chained comparison or boolean chain is one Python node but becomes a left-nested chain of
BinaryExprs, one level per operand, so its operands count as levels too."""

MAX_CONSTANT_ELEMENTS = 1 << 18
"""List and tuple elements the parser copies out of module constants into one program's IR."""

NESTING_HINT = "split the expression or body into smaller parts"

_Parsed = TypeVar("_Parsed")

# a Span is no Node, but a slotted frozen dataclass as nodes are: all that slot_constructor reads
_new_span = slot_constructor(Span, ("file", "line", "col", "end_line", "end_col"))
"""`Span(file, line, col, end_line, end_col)` with its slots set directly: the parser makes a span
for most nodes, and a frozen dataclass's `__init__` sets each field through `object.__setattr__`."""
_NO_KEYWORDS = Keywords(())
"""The keywords of a call that has none, as `Call` would make them (one object: it is immutable)."""

_BINOPS: dict[type[ast.operator], BinOp] = {
    ast.Add: BinOp.Add,
    ast.Sub: BinOp.Sub,
    ast.Mult: BinOp.Mul,
    ast.FloorDiv: BinOp.FloorDiv,
    ast.Mod: BinOp.FloorMod,
    ast.Div: BinOp.FloatDiv,
    ast.Pow: BinOp.Pow,
    ast.BitXor: BinOp.Xor,
    ast.BitAnd: BinOp.BitAnd,
    ast.BitOr: BinOp.BitOr,
    ast.LShift: BinOp.BitShiftLeft,
    ast.RShift: BinOp.BitShiftRight,
}

_CMPOPS: dict[type[ast.cmpop], BinOp] = {
    ast.Eq: BinOp.Eq,
    ast.NotEq: BinOp.Ne,
    ast.Lt: BinOp.Lt,
    ast.LtE: BinOp.Le,
    ast.Gt: BinOp.Gt,
    ast.GtE: BinOp.Ge,
}


_SPLIT_TRANSFERS = frozenset({"aiv_shard", "aic_gather", "tile.aiv_shard", "tile.aic_gather", "tensor.aiv_shard", "tensor.aic_gather"})
"""The lane crossings of a `pl.split_aiv` region, whose `split=` the parser fills (`_split_transfer`)."""

_STATEMENT_ONLY = ("yield_", "static_print", "static_assert", "dump_tag", "cond")
_ITERATORS = ("range", "parallel", "unroll", "while_", "split_aiv")
_SCOPES = ("at", "cluster", "graph", "spmd", "scope", "manual_scope")


@dataclass(frozen=True)
class DynamicDim:
    """What `pl.dynamic("N")` evaluates to in Python: a named symbolic dimension."""

    name: str


def _canonical_symbol(path: str) -> str:
    """`Level.POD` -> `Level.CLUSTER_0`: an enum alias is read as the member it names; and
    `MemorySpace.Vec` -> `Mem.Vec`: the enum's two names are one enum, spelled as PyPTO prints it."""
    prefix, _, name = path.rpartition(".")
    if prefix == "Level" and name in Level.__members__:
        return f"{prefix}.{Level[name].name}"
    if prefix == "MemorySpace" and name in MemorySpace.__members__:
        return f"Mem.{name}"
    return path


_VIEW_ENUMS: dict[str, type[TileLayout | PadValue | CompactMode]] = {
    "blayout": TileLayout,
    "slayout": TileLayout,
    "pad": PadValue,
    "compact": CompactMode,
}
"""The `pl.TileView` fields that take an enum member, and its enum."""


_PREDICATE_DTYPES = frozenset({DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64})


def _int_literal(node: ast.expr) -> int | None:
    """An integer literal, with its sign (`-5`, `+5`); None for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def dotted_name(node: ast.expr) -> str | None:
    """`pl.tile.load` for the attribute chain `pl.tile.load`; None for anything else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # `self.f`, `pl.add`: most calls
        return f"{node.value.id}.{node.attr}"
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def pl_call_name(node: ast.expr) -> str | None:
    """`yield_` for a call `pl.yield_(...)`; None unless `node` calls something under `pl`."""
    if not isinstance(node, ast.Call):
        return None
    base = node.func
    while isinstance(base, ast.Attribute):  # every assignment asks: join no name that is not under `pl`
        base = base.value
    if base is node.func or not isinstance(base, ast.Name) or base.id != "pl":
        return None
    path = dotted_name(node.func)
    if path is None or not path.startswith("pl."):
        return None
    return path[3:]


PER_TASK_KEYWORDS = ("deps", "allow_early_resolve", "predicate", "core_num", "sync_start")
"""The keywords of one task's launch, which a launch inside a `pl.cluster()` (one Group dispatch) cannot carry."""
_SPMD_HINT = "launch the kernel on N blocks with out, tid = pl.spmd_submit(self.kernel, ..., core_num=N)"
_DISPATCH_KEYWORDS = {
    "deps": "a plain self.kernel(...) call has no dependency edges: submit it, out, tid = pl.submit(self.kernel, ..., deps=[...])",
    "dumps": "mark the tensor with a pl.dump_tag(x) statement before the call, or submit it with pl.submit(..., dumps=[x])",
    "allow_early_resolve": "only a submitted task can resolve early: pl.submit(self.kernel, ..., allow_early_resolve=True)",
    "core_num": _SPMD_HINT,
    "sync_start": _SPMD_HINT,
}
"""Keywords of a task launch that a plain `self.kernel(...)` call rejects, with what to write instead."""
_SUBMIT_KEYWORDS = frozenset({"deps", "dumps", "allow_early_resolve", "predicate", "attrs"})
_SPMD_SUBMIT_KEYWORDS = _SUBMIT_KEYWORDS | {"core_num", "sync_start"}


_DTYPE_SPELLINGS: dict[str, DataType] = {
    **{f"pl.{name}": dtype for name, dtype in DataType.__members__.items()},
    **{f"pl.DataType.{name}": dtype for name, dtype in DataType.__members__.items()},
}
"""`pl.FP32` and `pl.DataType.FP32` -> the dtype (every annotation names one)."""


class ExprParser:
    """Expressions, annotations and errors; subclasses supply the function's name table."""

    def __init__(self, source: str, filename: str, line_offset: int) -> None:
        self.source = source
        self.file = filename
        self.lines = source.splitlines()
        self.line_offset = line_offset
        self.col_offset = 0
        """Columns the source lost to dedenting (a class defined in a function body): added back
        to every span and error column, so they count in the file."""
        self.constants: dict[str, object] = {}
        self.dynamic: dict[str, Var] = {}
        self.function_names: set[str] = set()
        self._call_results: dict[str, tuple[tuple[Type, ...], tuple[Type, ...]] | Type | None] = {}
        """Per callee, what a call of it is typed from (`_call_result_type`), found once: its
        return types with its parameter types when one has a dynamic dimension to bind, else the
        one type every call of it has, or None when nothing types it."""
        self.static_sizes = StaticSizes()
        self._constant_elements = 0
        self.standalone_functions: set[str] = set()
        """Names of module-level `@pl.function`s the source may call by name."""
        self.inline_templates: set[str] = set()
        """Names of `@pl.inline` templates; a call of one is spliced by the statement parser."""
        self._spans: dict[tuple[int, int | None, int | None, int], Span] = {}
        self._span_line = 0
        self._span_file = filename
        self._span_lines = self.lines
        self._span_ascii = True
        self._depth = 0
        self._char_starts: dict[tuple[int, int], list[int] | None] = {}
        self._open: list[ast.AST] = []
        self.split_modes: list[SplitMode] = []
        """The modes of the `pl.split_aiv` regions around the expression, innermost last."""
        self.window_buffers: set[str] = set()
        """The names of the program's `pld.alloc_window_buffer`s, unique across its functions."""
        self.prelude: list[Stmt] = []
        """Statements an expression of the statement being parsed needs before it (the buffer a
        per-element `deps=` list fills): the statement parser puts them in front of it."""
        self._type_reader: Callable[[Expr], Type] | None = None
        self.failed_at: ast.AST | None = None
        """The innermost node being parsed when an unexpected exception (RecursionError,
        MemoryError, a parser bug) went through: where `parse_program` reports it."""

    # -- hooks --------------------------------------------------------------------------------

    def lookup_local(self, name: str) -> Var | None:
        raise NotImplementedError

    def function_return_types(self, name: str) -> tuple[Type, ...] | None:
        raise NotImplementedError

    def bind_local(self, name: str, ty: Type, node: ast.AST) -> Var:
        """The Var an assignment the parser adds writes: `name`'s, as a source assignment would
        bind it, or under `strict_ssa` a fresh `name_N`, since each value has its own name there."""
        raise NotImplementedError

    def function_arity(self, name: str) -> int | None:
        """How many parameters the program function `name` takes; None when not known."""
        return None

    def _check_dynamic_dims(self, callee: str, values: tuple[Expr, ...], node: ast.Call) -> None:
        """A dynamic dimension of the callee's parameters (`pl.dynamic("M")`) takes one size at a
        call: the arguments' static sizes in its places must agree. Not for an Inline callee: its
        copy resolves a disagreeing dimension per operation (docs/specification.md#dynamic-dimensions-and-types)."""
        if self.function_is_inline(callee):  # asked first: the parameter types are a new tuple
            return
        declared = self.function_param_types(callee)
        if declared is None:
            return
        bound: dict[int, tuple[int, int]] = {}
        for index, (param_type, value) in enumerate(zip(declared, values, strict=False)):
            if not isinstance(param_type, (TensorType, TileType)):
                continue  # asked first: the argument's type (an inference) is needed only here
            arg_type = self.type_of(value)
            if not isinstance(arg_type, (TensorType, TileType)):
                continue
            if len(param_type.shape) != len(arg_type.shape):
                continue
            for dim, size in zip(param_type.shape, arg_type.shape, strict=True):
                if not (isinstance(dim, Var) and isinstance(size, ConstInt)):
                    continue
                first = bound.setdefault(dim.id, (size.value, index))
                if first[0] != size.value:
                    raise self.error(
                        node.args[index] if index < len(node.args) else node,
                        f"'{callee}' gets conflicting bindings for its dynamic dimension '{dim.name}': "
                        f"{first[0]} from argument {first[1] + 1}, {size.value} from argument {index + 1}",
                        hint=f"pass arguments whose sizes agree where '{callee}' declares '{dim.name}'",
                    )

    def _call_result_type(self, callee: str, values: tuple[Expr, ...]) -> Type | None:
        """The type of a call of `callee` with these arguments (`infer.call_result_type`): its
        declared return type, or for a callee that declares none, the type of what its body
        returns when that body is parsed already (an Inline helper, or a function defined above
        the caller); None when
        neither tells. The arguments' types are asked for only when a parameter has a dynamic
        dimension to bind."""
        if callee in self._call_results:
            known = self._call_results[callee]
        else:
            known = self._call_typing(callee)
            if known is not None or self.function_return_types(callee) or self.function_is_parsed(callee):
                self._call_results[callee] = known
        if not isinstance(known, tuple):
            return known
        params, returns = known
        return call_result_type(params, returns, [self.type_of(v) for v in values])

    def _call_typing(self, callee: str) -> tuple[tuple[Type, ...], tuple[Type, ...]] | Type | None:
        returns = self.function_return_types(callee) or self.function_body_returns(callee)
        if not returns or any(isinstance(ty, UnknownType) for ty in returns):
            return None
        params = self.function_param_types(callee) or ()
        if any(isinstance(p, (TensorType, TileType)) and any(isinstance(d, Var) for d in p.shape) for p in params):
            return params, tuple(returns)
        return returns[0] if len(returns) == 1 else TupleType(tuple(returns))

    def function_body_returns(self, name: str) -> tuple[Type, ...]:
        """What program function `name`'s body returns, when it declares no return type and is
        parsed already; none by default."""
        return ()

    def function_is_parsed(self, name: str) -> bool:
        """Whether program function `name`'s body is parsed already (so what it returns is known)."""
        return False

    def function_param_types(self, name: str) -> tuple[Type, ...] | None:
        """The declared types of program function `name`'s parameters; None when not known."""
        return None

    def function_is_inline(self, name: str) -> bool:
        """Whether program function `name` is declared Inline."""
        return False

    def standalone_name(self, name: str, node: ast.AST) -> str:
        """The name of the module-level function the source calls as `name` (its own name, which
        an alias `f = g` does not change); `name` itself by default."""
        return name

    def dump_tagged(self) -> Mapping[int, Var]:
        """The values a `pl.dump_tag` has marked so far (Var id -> Var); none by default."""
        return {}

    def function_attr(self, name: str) -> Expr | None:
        """The value of the enclosing function's decorator attribute `name` (`level=`), if given."""
        return None

    def assigned_name(self, value: ast.expr) -> str | None:
        """The name `value` is assigned to when it is the whole right side of `name = value`."""
        return None

    def callee_is_orchestrator(self, name: str) -> bool:
        """Whether program function `name` is an orchestrator (`FunctionType.Orchestration`, or
        `role=pl.Role.Orchestrator`)."""
        return False

    def check_predicate_deps(self, kwargs: Sequence[Keyword], node: ast.AST, *, takes_deps: bool) -> None:
        """Reject a launch whose `predicate=` reads a tensor another launch writes unless that
        launch's task id is in its `deps=`; nothing is tracked by default."""

    def enclosing_scopes(self) -> Sequence[str]:
        """The `pl` scope constructors around the expression, outermost first; none by default."""
        return ()

    # -- locations and errors -----------------------------------------------------------------

    def span(self, node: ast.AST | None) -> Span | None:
        """The node's location. Nodes at one place share one `Span` (immutable): an expression's
        operands mostly start where it does, and a span per node was half the IR's memory. The
        spans of the line last asked about are remembered (nodes are parsed in line order)."""
        try:  # a parsed node has all four; one built by hand may lack any of them
            line, col, end_line, end_col = node.lineno, node.col_offset, node.end_lineno, node.end_col_offset  # type: ignore[union-attr]
        except AttributeError:
            line = getattr(node, "lineno", None)
            col = getattr(node, "col_offset", 0)
            end_line = getattr(node, "end_lineno", None)
            end_col = getattr(node, "end_col_offset", None)
        if line is None:
            return None
        line += self.line_offset
        if line != self._span_line or self.file != self._span_file or self.lines is not self._span_lines:
            self._span_line, self._span_file, self._span_lines, self._spans = line, self.file, self.lines, {}
            index = line - self.line_offset
            self._span_ascii = not 1 <= index <= len(self.lines) or self.lines[index - 1].isascii()
        key = (col, end_line, end_col, self.col_offset)
        found = self._spans.get(key)
        if found is None:
            # an ASCII line's columns are `ast`'s (`char_col` is not asked: it remembers each line
            # it is asked about); the line's one int object, not this call's equal copy (ints past
            # 256 are 32 bytes each)
            char_col = col if self._span_ascii else self.char_col(line - self.line_offset, col)
            if end_line is None or end_col is None:
                found = Span(self.file, self._span_line, char_col + self.col_offset)
            else:
                char_end = end_col if end_line + self.line_offset == line and self._span_ascii else self.char_col(end_line, end_col)
                found = _new_span(self.file, self._span_line, char_col + self.col_offset, end_line + self.line_offset, char_end + self.col_offset)
            self._spans[key] = found
        return found

    def header_span(self, node: ast.stmt) -> Span | None:
        """A class's or function's location: where its header starts, without an end (a large
        source is parsed a method at a time, so the end of the whole is not at hand)."""
        span = self.span(node)
        return None if span is None else Span(span.file, span.line, span.col)

    def char_col(self, line: int, col: int) -> int:
        """`ast` counts a column in UTF-8 bytes; a span and a caret count characters, so a name such
        as `café` before the node does not push the column past it."""
        if not col:
            return col
        key = (id(self.lines), line)
        starts = self._char_starts.get(key, ())
        if starts == ():
            text = self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
            # None for an ASCII line; else the byte offset where each character starts
            starts = None if text.isascii() else [i for i, b in enumerate(text.encode("utf-8")) if b & 0xC0 != 0x80]
            self._char_starts[key] = starts
        return col if starts is None else bisect.bisect_left(starts, col)

    def error(
        self,
        node: ast.AST | None,
        message: str,
        hint: str | None = None,
        kind: type[ParserError] = ParserSyntaxError,
    ) -> ParserError:
        """An error of `kind` at `node`; without one, at the innermost node being parsed, else line 1."""
        if node is None:
            node = self._open[-1] if self._open else self.failed_at
        line = getattr(node, "lineno", 1) if node is not None else 1
        col = getattr(node, "col_offset", 0) if node is not None else 0
        return self.error_at(line, self.char_col(line, col), message, hint, kind)

    def error_at(
        self,
        line: int,
        col: int,
        message: str,
        hint: str | None = None,
        kind: type[ParserError] = ParserSyntaxError,
    ) -> ParserError:
        """An error at `line` of this source (1-based, before `line_offset`) and 0-based `col`
        (before `col_offset`); the quoted line gets back the indentation dedenting took."""
        text = self.lines[line - 1] if 1 <= line <= len(self.lines) else None
        if text is not None and self.col_offset:
            text = " " * self.col_offset + text
        return kind(
            message,
            file=self.file,
            line=line + self.line_offset if line else 0,
            col=col + self.col_offset,
            hint=hint,
            source_line=text,
            source=self.lines if not self.line_offset else None,
        )

    @contextmanager
    def nesting(self, node: ast.AST | None) -> Iterator[None]:
        self._depth += 1
        if node is not None:
            self._open.append(node)
        try:
            if self._depth > MAX_NESTING:
                raise self.error(node, f"nesting too deep (the limit is {MAX_NESTING} levels)", hint=NESTING_HINT)
            yield
        except ParserError:
            raise
        except BaseException:
            if self.failed_at is None and node is not None:
                self.failed_at = node
            raise
        finally:
            self._depth -= 1
            if node is not None:
                self._open.pop()

    def _nested(self, node: ast.expr, parse: Callable[[ast.expr], _Parsed]) -> _Parsed:
        """`with self.nesting(node): return parse(node)` written out: it runs for every expression
        and annotation node, and the generator-based context manager took a quarter of the parse."""
        self._depth += 1
        self._open.append(node)
        try:
            if self._depth > MAX_NESTING:
                raise self.error(node, f"nesting too deep (the limit is {MAX_NESTING} levels)", hint=NESTING_HINT)
            return parse(node)
        except ParserError:
            raise
        except BaseException:
            if self.failed_at is None:
                self.failed_at = node
            raise
        finally:
            self._depth -= 1
            self._open.pop()

    @contextmanager
    def chain_nesting(self, node: ast.BoolOp | ast.Compare, operands: int) -> Iterator[None]:
        """Count a chain of `operands` operands as the levels its left-nested IR takes."""
        extra = operands - 2  # `expr` counted the chain's own node; its first link is that level
        if self._depth + extra > MAX_NESTING:
            raise self.error(
                node,
                f"nesting too deep: a chain of {operands} operands nests {operands - 1} levels "
                f"(the limit is {MAX_NESTING} levels, counting the enclosing ones)",
                hint="split the chain into named parts: `c1 = a < b < c` then `c1 and ...`",
            )
        self._depth += extra
        try:
            yield
        finally:
            self._depth -= extra

    def check_name(self, name: str, node: ast.AST) -> None:
        try:
            validate_base_name(name)
        except ValueError as exc:
            raise self.error(node, str(exc)) from None

    def bind_dynamic(self, py_name: str, dim_name: str, node: ast.AST | None) -> None:
        if node is not None:
            self.check_name(dim_name, node)
        existing = next((v for v in self.dynamic.values() if v.name == dim_name), None)
        self.dynamic[py_name] = existing or Var(dim_name, ScalarType(DataType.INDEX), span=self.span(node))
        self.constants.pop(py_name, None)

    # -- expressions --------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Expr:
        if type(node) is ast.Name and self._depth < MAX_NESTING:
            # a bound name, most operands, is its Var: a level that cannot fail needs no guard
            local = self.lookup_local(node.id)
            if local is not None:
                return local
        return self._nested(node, self._expr)

    def _expr(self, node: ast.expr) -> Expr:
        # the three commonest nodes first, without the span none keeps (`_call` and `_constant`
        # take their own)
        if isinstance(node, ast.Name):
            return self._name(node.id, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Constant):  # a shape's dimensions, mostly
            return self._constant(node.value, node)
        span = self.span(node)
        match node:
            case ast.Constant(value=value):
                return self._constant(value, node)
            case ast.Name(id=name):
                return self._name(name, node)
            case ast.Attribute():
                path = dotted_name(node)
                distributed = parse_distributed.symbol(path) if path and parse_distributed.is_distributed(path) else None
                if distributed is not None:
                    return Symbol(distributed.path, span=span)
                if path is None or not path.startswith("pl."):
                    raise self.error(node, "only pl.<name> attributes may be read", hint="write pl.FP32, pl.Mem.Vec, ...")
                return Symbol(_canonical_symbol(path[3:]), span=span)
            case ast.BinOp(left=left, op=op, right=right):
                bin_op = _BINOPS.get(type(op))
                if bin_op is None:  # `@` is the only Python operator pl has no BinOp for
                    raise self.error(
                        node,
                        "the `@` (matrix multiply) operator is not supported in pl",
                        kind=UnsupportedFeatureError,
                    )
                return BinaryExpr(bin_op, self.expr(left), self.expr(right), span=span)
            case ast.BoolOp(op=op, values=values):
                bop = BinOp.And if isinstance(op, ast.And) else BinOp.Or
                with self.chain_nesting(node, len(values)):
                    result = self.expr(values[0])
                    for operand in values[1:]:
                        result = BinaryExpr(bop, result, self.expr(operand), span=span)
                return result
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                return self._compare(node, left, ops, comparators)
            case ast.UnaryOp(op=op, operand=operand):
                return self._unary(op, operand, node)
            case ast.Call():
                return self._call(node)
            case ast.Subscript():
                return self._subscript(node)
            case ast.List(elts=elts):
                return MakeTuple(tuple(self.expr(e) for e in elts), is_list=True, span=span)
            case ast.Tuple(elts=elts):
                return MakeTuple(tuple(self.expr(e) for e in elts), span=span)
            case ast.ListComp():
                raise self.error(
                    node,
                    "unsupported expression (ListComp): a list comprehension is unrolled only where it is "
                    "written inside deps=[...]",
                    hint="write it in place: deps=[tids[k] for k in range(4)]",
                    kind=UnsupportedFeatureError,
                )
            case ast.JoinedStr():
                raise self.error(node, "f-strings are only allowed in pl.static_print")
            case ast.Starred():
                raise self.error(node, "*args is not supported", kind=UnsupportedFeatureError)
            case _:
                raise self.error(
                    node,
                    f"unsupported expression ({type(node).__name__})",
                    kind=UnsupportedFeatureError,
                )

    def _compare(self, node: ast.Compare, left: ast.expr, ops: list[ast.cmpop], comparators: list[ast.expr]) -> Expr:
        """`a < b < c` is `a < b and b < c`, `b` parsed once (the IR shares the operand)."""
        span = self.span(node)
        with self.chain_nesting(node, len(comparators) + 1):
            lhs = self.expr(left)
            compared: Expr | None = None
            for cmp, right in zip(ops, comparators, strict=True):
                cop = _CMPOPS.get(type(cmp))
                if cop is None:
                    raise self.error(node, "`is` / `in` comparisons are not supported", kind=UnsupportedFeatureError)
                rhs = self.expr(right)
                term = BinaryExpr(cop, lhs, rhs, span=span)
                compared = term if compared is None else BinaryExpr(BinOp.And, compared, term, span=span)
                lhs = rhs
        assert compared is not None
        return compared

    def check_int(self, value: int, dtype: DataType, node: ast.AST) -> int:
        """`value`, if the IR's integer type `dtype` holds it; else a ParserError at `node`.

        Bounding literals here keeps every later stage (egglog, the interpreter, the printer,
        which cannot spell an int past 4,300 digits) on numbers of at most 64 bits."""
        low, high = dtype.int_range
        if low <= value <= high:
            return value
        shown = f"integer {value}" if value.bit_length() <= 128 else f"a {value.bit_length():,}-bit integer"
        hint = "an integer literal is a pl.INDEX; use pl.const(value, pl.UINT64) for values up to 2**64 - 1"
        raise self.error(
            node,
            f"{shown} does not fit pl.{dtype.name} ({low} to {high})",
            hint=hint if dtype is DataType.INDEX and 0 < value < 1 << 64 else None,
        )

    def _constant(self, value: object, node: ast.AST) -> Expr:
        span = self.span(node)
        if isinstance(value, bool):
            return ConstBool(value, span=span)
        if isinstance(value, int):
            return ConstInt(self.check_int(value, DataType.INDEX, node), span=span)
        if isinstance(value, float):
            if not math.isfinite(value):  # `1e999`: no literal spells it back
                raise self.error(node, f"float constant {value} is out of range (a finite float is at most about 1.8e308)")
            return ConstFloat(value, span=span)
        if isinstance(value, str):
            return ConstStr(value, span=span)
        if isinstance(value, (list, tuple)):
            self._constant_elements += len(value)
            if self._constant_elements > MAX_CONSTANT_ELEMENTS:  # `A` is 65,536 elements, used 1,000 times
                raise self.error(
                    node,
                    f"list and tuple constants expand to more than {MAX_CONSTANT_ELEMENTS:,} elements in this program",
                    hint="a module constant is copied into every place that names it; keep list constants small",
                )
            elements = tuple(self._constant(v, node) for v in value)
            return MakeTuple(elements, is_list=isinstance(value, list), span=span)
        raise self.error(node, f"unsupported constant {value!r}", kind=UnsupportedFeatureError)

    def _name(self, name: str, node: ast.Name) -> Expr:
        local = self.lookup_local(name)
        if local is not None:
            return local
        if name in self.dynamic:
            return self.dynamic[name]
        if name in self.constants:
            return self._constant(self.constants[name], node)
        if name == "pl":
            raise self.error(node, "`pl` is the language module, not a value")
        raise self.error(
            node,
            f"Undefined variable '{name}'",
            hint="assign it before this line, or define it at module level as a constant",
            kind=UndefinedVariableError,
        )

    def _unary(self, op: ast.unaryop, operand: ast.expr, node: ast.UnaryOp) -> Expr:
        span = self.span(node)
        if isinstance(op, ast.USub) and isinstance(operand, ast.Constant):
            value = operand.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return self._constant(-value, node)
        inner = self.expr(operand)
        if isinstance(op, ast.UAdd):
            return inner
        unop = {ast.USub: UnOp.Neg, ast.Not: UnOp.Not, ast.Invert: UnOp.BitNot}[type(op)]
        return UnaryExpr(unop, inner, span=span)

    def positional(self, call: ast.Call) -> list[ast.expr]:
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                raise self.error(arg, "*args is not supported", kind=UnsupportedFeatureError)
        return list(call.args)

    def keywords(self, call: ast.Call, skip: tuple[str, ...] = ()) -> tuple[Keyword, ...]:
        out: list[Keyword] = []
        for kw in call.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs is not supported", kind=UnsupportedFeatureError)
            if kw.arg in skip:
                continue
            value = (
                self.predicate(kw.value) if kw.arg == "predicate"
                else self.deps_value(kw.value) if kw.arg == "deps"
                else self.expr(kw.value)
            )  # fmt: skip
            out.append(Keyword(kw.arg, value, span=self.span(kw.value)))
        return tuple(out)

    def predicate(self, node: ast.expr) -> Expr:
        """A launch's `predicate=(t[i, j] > 0)`: one comparison of one element of a tensor with an
        integer literal, either side first (docs/specification.md, "Statement forms"). The element
        is the `pl.read(t, [i, j])` it means, which the printer writes back."""
        if not isinstance(node, ast.Compare):
            raise self.error(
                node,
                "predicate= must be a single comparison of a tensor element with an integer literal",
                hint="write predicate=(t[0, 0] > 0)",
            )
        if len(node.ops) != 1:
            raise self.error(
                node,
                "Only simple comparisons supported in a predicate: it is one comparison, not a chain",
                hint="compare once: t[i] > 0",
            )
        op = _CMPOPS.get(type(node.ops[0]))
        if op is None:
            raise self.error(
                node,
                f"Unsupported comparison '{type(node.ops[0]).__name__}' in a predicate",
                hint="compare with ==, !=, <, <=, > or >=",
                kind=UnsupportedFeatureError,
            )
        left, right = node.left, node.comparators[0]
        literal_first = _int_literal(left) is not None or isinstance(left, ast.Constant)
        element_node, literal_node = (right, left) if literal_first else (left, right)
        element = self._predicate_element(element_node)
        value = _int_literal(literal_node)
        if value is None:
            raise self.error(
                literal_node,
                "a predicate requires same numeric dtype category on both sides: the integer element is "
                "compared with an integer literal",
                hint="write the target as a whole number: t[0, 0] > 0",
            )
        target = ConstInt(self.check_int(value, DataType.INT64, literal_node), span=self.span(literal_node))
        lhs, rhs = (target, element) if literal_first else (element, target)
        return BinaryExpr(op, lhs, rhs, span=self.span(node))

    def _predicate_element(self, node: ast.expr) -> Expr:
        """`t[i, j]` (or the `pl.read(t, [i, j])` it prints as): one element of a tensor of signed
        8/16/32/64-bit integers, one scalar index per axis."""
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            index_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        elif isinstance(node, ast.Call) and dotted_name(node.func) in ("pl.read", "pl.tensor.read") and len(node.args) == 2:
            base = self.expr(node.args[0])
            listed = node.args[1]
            index_nodes = list(listed.elts) if isinstance(listed, (ast.List, ast.Tuple)) else [listed]
        else:
            if isinstance(node, ast.Name) and isinstance(self.type_of(self.expr(node)), TensorType):  # `rc > 0`
                raise self.error(
                    node,
                    f"a predicate operand must be ScalarExpr or Var with ScalarType: '{node.id}' is a whole "
                    "tensor, and a predicate compares one element of it",
                    hint=f"write predicate=({node.id}[0, 0] > 0)",
                )
            raise self.error(
                node,
                "a predicate must compare one tensor element, t[i, j], with an integer literal",
                hint="write predicate=(t[0, 0] > 0)",
            )
        ty = self.type_of(base)
        if isinstance(ty, ScalarType):
            raise self.error(
                node,
                f"Subscript requires Tuple, Tensor, Tile, or Array, not a pl.Scalar[pl.{ty.dtype.name}]: "
                "a predicate reads an element of a tensor",
                kind=ParserTypeError,
            )
        if not isinstance(ty, (TensorType, UnknownType)):
            raise self.error(node, "a predicate reads an element of a tensor", kind=ParserTypeError)
        if isinstance(ty, TensorType):
            if ty.dtype not in _PREDICATE_DTYPES:
                raise self.error(
                    node,
                    f"a predicate's tensor holds signed 8/16/32/64-bit integers, not {ty.dtype.name}",
                    hint="the runtime reads the element as a signed integer",
                    kind=ParserTypeError,
                )
            if len(index_nodes) != len(ty.shape):
                raise self.error(
                    node,
                    f"a predicate operand must be ScalarExpr or Var with ScalarType: {len(index_nodes)} "
                    f"index(es) of a rank-{len(ty.shape)} tensor read a view, not one element",
                    hint="give one index per axis",
                )
        indices: list[Expr] = []
        for position, index_node in enumerate(index_nodes):
            if isinstance(index_node, ast.Slice):
                raise self.error(index_node, "a predicate reads one element: an index, not a slice")
            literal = _int_literal(index_node)
            if literal is not None and literal < 0:
                raise self.error(index_node, "a predicate's index must be non-negative", kind=ParserTypeError)
            index = self.expr(index_node)
            if not isinstance(self.type_of(index), (ScalarType, UnknownType)):
                raise self.error(
                    index_node,
                    f"a predicate's index element {position} must be ScalarType: one scalar index per axis",
                    hint="index with integers or scalar variables: t[i, 0]",
                )
            indices.append(index)
        return Call("read", (base, MakeTuple(tuple(indices), is_list=True)), span=self.span(node))

    def dumps(self, node: ast.expr, form: str = "dumps=", *, repeats: bool = False) -> tuple[Var, ...]:
        """The tensors of a `dumps=[a, b]` list; with `repeats`, a name listed twice counts once."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.error(node, f"{form} takes a list of variable names: {form}[a, b]", kind=ParserTypeError)
        out: list[Var] = []
        for elt in node.elts:
            var = self.lookup_local(elt.id) if isinstance(elt, ast.Name) else None
            if var is None:
                raise self.error(elt, f"{form} entries must be bound variable names", kind=ParserTypeError)
            if not isinstance(var.type, (TensorType, UnknownType)):
                raise self.error(
                    elt, f"{form} entry '{var.name}' is not a tensor", hint="only tensors can be dumped", kind=ParserTypeError
                )
            if var in out:
                if repeats:
                    continue
                raise self.error(elt, f"'{var.name}' is listed twice in {form}", hint="list each name once", kind=ParserTypeError)
            out.append(var)
        return tuple(out)

    def dispatch_dumps(
        self, values: tuple[Expr, ...], explicit: tuple[Var, ...], nodes: list[ast.expr], form: str, what: str
    ) -> tuple[Var, ...]:
        """A dispatch's dump selection, in argument order: the arguments written in its `dumps=`
        (or `attrs={"dump_vars": ...}`) and those a `pl.dump_tag` marked earlier in the function.
        A written entry must be one of the dispatch's arguments."""
        tagged = self.dump_tagged()
        if not explicit and not tagged:  # most calls: nothing written, nothing tagged
            return ()
        written = {v.id: n for v, n in zip(explicit, nodes, strict=False)}
        for var in explicit:
            if not any(isinstance(v, Var) and v.id == var.id for v in values):
                raise self.error(
                    written.get(var.id),
                    f"{form} entry '{var.name}' is not an argument of this {what}",
                    hint="a dispatch dumps only tensors it is passed",
                    kind=ParserTypeError,
                )
        chosen = {v.id for v in explicit} | set(tagged)
        out: dict[int, Var] = {}
        for value in values:
            if isinstance(value, Var) and value.id in chosen:
                out.setdefault(value.id, value)
        return tuple(out.values())

    def call_attrs(
        self, node: ast.Call, form: str, *, selection: bool, builtin: bool = False
    ) -> tuple[tuple[Var, ...], list[ast.expr], tuple[Keyword, ...]]:
        """A call's `attrs={"key": value, ...}`: its dump selection (`"dump_vars": [a, b]`, where
        the call is a dispatch, `selection`) with the names written, and its other attributes in
        source order. A value is a literal (str, int, float, bool), a `pl.<name>` symbol, a bound
        variable, or a list of those. A `builtin` op is no dispatch: its `"dump_vars"` is one of
        those attributes (no op reads it, and `pl.dump_tag` never adds to it)."""
        explicit: tuple[Var, ...] = ()
        nodes: list[ast.expr] = []
        items: list[Keyword] = []
        for kw in node.keywords:
            if kw.arg != "attrs":
                continue
            if not isinstance(kw.value, ast.Dict):
                raise self.error(kw.value, 'attrs= takes a dict literal: attrs={"key": value}', kind=ParserTypeError)
            seen: set[str] = set()
            for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    raise self.error(
                        key or value,
                        f"{form}: an attrs= key is a string literal",
                        hint='write attrs={"name": value}',
                        kind=ParserTypeError,
                    )
                name = key.value
                if name in seen:
                    raise self.error(key, f"{form}: attrs= key '{name}' is given twice", hint="give each key once")
                seen.add(name)
                if name in DEPENDENCY_ATTRS:
                    launch = name == "manual_dep_edges" and not builtin  # a dispatch takes deps= instead
                    raise self.error(
                        key,
                        f"{form}: attrs= key '{name}' is reserved: a dependency edge exists only on a dummy task"
                        + (" or as a launch's deps=" if launch else ""),
                        hint="launch it with out, tid = pl.submit(self.kernel, ..., deps=[...])" if launch
                        else "write tid = pl.system.task_dummy(deps=[...]) and pass the task ids on",
                        kind=ParserTypeError if launch else ParserSyntaxError,
                    )
                if name == "dump_vars" and not builtin:
                    if not selection:
                        raise self.error(
                            key,
                            f"{form}: attrs= key 'dump_vars' (a dump selection) is not accepted here",
                            hint='a self.<function>(...) call takes attrs={"dump_vars": [a]}, a pl.submit dumps=[a]',
                            kind=ParserTypeError,
                        )
                    explicit = self.dumps(value, 'attrs["dump_vars"]', repeats=True)
                    nodes = [e for e in value.elts if isinstance(e, ast.Name)] if isinstance(value, (ast.List, ast.Tuple)) else []
                    continue
                items.append(Keyword(name, self._attr_value(value, name, form, top=True), span=self.span(value)))
        return explicit, nodes, tuple(items)

    def _attr_value(self, node: ast.expr, key: str, form: str, *, top: bool) -> Expr:
        """One attribute value (`call_attrs`); a list only at the top."""
        span = self.span(node)
        match node:
            case ast.Constant(value=value) if isinstance(value, (str, int, float)):  # bool is an int
                return self._constant(value, node)
            case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() | float() as value)) if type(value) is not bool:
                return self._constant(-value, node)
            case ast.Attribute():
                return self.expr(node)
            case ast.Name(id=name):
                var = self.lookup_local(name)
                if var is not None:
                    return var
                raise self.error(
                    node,
                    f"{form}: attrs['{key}'] names '{name}', which is not a bound variable",
                    hint="an attribute value names a variable bound before this call",
                    kind=UndefinedVariableError,
                )
            case ast.List(elts=elts) if top:
                return MakeTuple(tuple(self._attr_value(e, key, form, top=False) for e in elts), is_list=True, span=span)
        if isinstance(node, ast.List):
            what = "a nested list"
        elif isinstance(node, ast.Tuple):
            what = "a tuple (write a list)"
        elif isinstance(node, ast.Constant):
            what = repr(node.value) if node.value is None else f"a {type(node.value).__name__} constant"
        else:
            what = f"a {type(node).__name__}"
        raise self.error(
            node,
            f"{form}: attrs['{key}'] is {what}, which an attribute value cannot be",
            hint="an attribute value is a str, int, float or bool literal, a pl.<name>, a variable, or a list of those",
            kind=ParserTypeError,
        )

    def _call(self, node: ast.Call) -> Expr:
        span = self.span(node)
        path = dotted_name(node.func)
        if path is None:
            raise self.error(node, "only pl.<op>(...), self.<function>(...), min, max and abs can be called")
        if path in ("min", "max"):
            args = self.positional(node)
            if len(args) != 2 or node.keywords:
                raise self.error(node, f"{path}() takes exactly two arguments")
            op = BinOp.Min if path == "min" else BinOp.Max
            return BinaryExpr(op, self.expr(args[0]), self.expr(args[1]), span=span)
        if path == "abs":
            args = self.positional(node)
            if len(args) != 1 or node.keywords:
                raise self.error(node, "abs() takes exactly one argument")
            return UnaryExpr(UnOp.Abs, self.expr(args[0]), span=span)
        method = path.startswith("self.")
        if method or path in self.standalone_functions:
            callee = path[5:] if method else self.standalone_name(path, node.func)
            if method and callee not in self.function_names:
                raise self.error(node.func, f"unknown function 'self.{callee}'", kind=UndefinedVariableError)
            if not method and callee in self.function_names:
                raise self.error(
                    node.func,
                    f"the module-level function '{callee}' conflicts with program function '{callee}'",
                    hint=f"call the method as self.{callee}(...), or rename one of them",
                )
            for kw in node.keywords:
                if kw.arg in _DISPATCH_KEYWORDS:
                    raise self.error(
                        kw.value,
                        f"{path}(...) does not accept keyword argument '{kw.arg}': a plain call is no submit",
                        hint=_DISPATCH_KEYWORDS[kw.arg],
                        kind=ParserTypeError,
                    )
            values = tuple([self.expr(a) for a in self.positional(node)])
            # most calls have no keyword, so nothing for the three readers of keywords to read
            explicit, nodes, items = self.call_attrs(node, f"{path}(...)", selection=True) if node.keywords else ((), [], ())
            dumps = self.dispatch_dumps(values, explicit, nodes, 'attrs["dump_vars"]', "call")
            kwargs: tuple[Keyword, ...] = ()
            if node.keywords:
                parse_distributed.check_device_keyword(self, callee, node)
                kwargs = self.keywords(node, skip=("attrs",))
            arity = self.function_arity(callee)
            if arity is not None and not kwargs and len(values) != arity:  # keywords: a dispatch's own
                raise self.error(
                    node,
                    f"'{callee}' expects {arity} argument(s), got {len(values)}",
                    hint="pass one argument per parameter of the function",
                    kind=ParserTypeError,
                )
            self._check_dynamic_dims(callee, values, node)
            result = self._call_result_type(callee, values)
            # the callee and the keywords given as `Call` would make them: it need not convert them
            return Call(
                GlobalVar(callee), values, kwargs or _NO_KEYWORDS, function=True, dumps=dumps, attr_items=items, span=span, result_type=result
            )
        if path in self.inline_templates:
            raise self.error(
                node,
                f"the @pl.inline function '{path}' is spliced only where its call is a whole statement or a pl.yield_ value",
                hint=f"bind its result first: r = {path}(...)",
                kind=UnsupportedFeatureError,
            )
        if parse_distributed.is_distributed(path):
            return parse_distributed.call(self, node, path)
        if not path.startswith("pl."):
            raise self.error(
                node.func,
                f"Unsupported function call: unknown function '{path}'",
                hint="builtin ops are called as pl.<op>(...), program functions as self.<name>(...)",
                kind=UnsupportedFeatureError,
            )
        spelling = OPS.ir_name(path[3:])
        if spelling == "const":
            return self._typed_const(node)
        if spelling in ("submit", "spmd_submit"):
            return self._submit(node, spmd=spelling == "spmd_submit")
        if spelling in _STATEMENT_ONLY:
            raise self.error(node, f"pl.{spelling}(...) can only be used as a statement")
        if spelling in _ITERATORS:
            raise self.error(node, f"pl.{spelling}(...) can only be used as a for-loop iterator")
        if spelling in _SCOPES:
            raise self.error(node, f"pl.{spelling}(...) can only be used as a with-statement scope")
        if spelling in _SPLIT_TRANSFERS:
            return self._split_transfer(node, spelling)
        if spelling not in OPS and spelling not in SCALAR_OPERATORS:
            raise self.error(node.func, f"Unknown operation 'pl.{spelling}'", kind=InvalidOperationError)
        if spelling == "split" and any(kw.arg == "slot_num" for kw in node.keywords):
            line = getattr(node, "lineno", 0) + self.line_offset
            warnings.warn(
                f"{self.file}:{line}: pl.split(MODE, slot_num=N) is deprecated: write the slot count as "
                "its own entry, optimizations=[pl.split(MODE), pl.cross_core_slot(slot_num=N)]",
                DeprecationWarning,
                stacklevel=2,
            )
        self._check_arguments(spelling, node)
        values = tuple(self.expr(a) for a in self.positional(node))
        _, _, items = self.call_attrs(node, f"pl.{spelling}", selection=False, builtin=True)
        kwargs = self.keywords(node, skip=("attrs",))
        if spelling == "system.task_dummy" and not any(k.name == "deps" for k in kwargs):
            raise self.error(
                node,
                "pl.system.task_dummy requires keyword argument 'deps': the tasks it waits for",
                hint="write the fan-in out, deps=[] for none: pl.system.task_dummy(deps=[t1, t2])",
                kind=ParserTypeError,
            )
        scalar = self._scalar_dispatch(spelling, values, node)
        if scalar is not None:
            return scalar
        opdef = OPS.lookup(spelling)
        if opdef is not None and opdef.extra.get("canonical"):
            spelling = opdef.name  # printed as PyPTO prints it: `pl.tpush_to_aic` is `pl.tile.tpush_to_aic`
        call = Call(spelling, values, kwargs, attr_items=items, span=span)
        normalize = opdef.extra.get("normalize") if opdef is not None else None
        if normalize is None:
            return call
        try:
            normalized: Expr = normalize(call)
        except (TypeError, ValueError) as exc:
            raise self.error(node, f"pl.{spelling}: {exc}", kind=ParserTypeError) from None
        return normalized

    def _split_transfer(self, node: ast.Call, spelling: str) -> Expr:
        """`pl.aiv_shard(x)` / `pl.aic_gather(x)`: the tile or tensor op by the operand's kind, its
        `split=` the enclosing `pl.split_aiv` region's; the outlined `pl.tile.<op>(x, split=N)`
        form takes a tile and its own split (split_aiv_forms)."""
        name = spelling.rpartition(".")[2]
        if len(node.args) != 1 or any(kw.arg not in ("split",) for kw in node.keywords):
            if any(kw.arg == "mode" for kw in node.keywords):
                raise self.error(node, f"pl.{name} does not take a mode: it inherits the enclosing pl.split_aiv region's")
            raise self.error(node, f"pl.{spelling} takes one operand", hint=f"write pl.{name}(x)", kind=ParserTypeError)
        operand = self.expr(node.args[0])
        kind = self.type_of(operand)
        if isinstance(kind, DistributedTensorType):
            raise self.error(node.args[0], f"pl.{name} does not take a distributed tensor: a split region is local to one device")
        written = next((kw for kw in node.keywords if kw.arg == "split"), None)
        if spelling.startswith("tile."):
            if isinstance(kind, TensorType):
                raise self.error(
                    node.args[0],
                    f"pl.tile.{name}(x, split=N) is tile-only: a tensor crosses with pl.{name}(x) inside a pl.split_aiv region",
                    hint=f"wrap the code in for aiv_id in pl.split_aiv(2, mode=...) and write pl.{name}(x)",
                )
            if written is not None:
                return Call(spelling, (operand,), (Keyword("split", self.expr(written.value)),), span=self.span(node))
        if not self.split_modes:
            raise self.error(node, f"pl.{name} is used outside a pl.split_aiv region: it has no split mode to inherit", hint="write it inside for aiv_id in pl.split_aiv(2, mode=...)")
        op = f"{'tensor' if isinstance(kind, TensorType) else 'tile'}.{name}"
        split = Keyword("split", split_aiv_forms.split_value(self.split_modes[-1]))
        return Call(op, (operand,), (split,), span=self.span(node))

    def _check_arguments(self, spelling: str, node: ast.Call) -> None:
        """The call's arguments against the op's declared signature (`OpDef.signature`): too many,
        a missing one, an unknown keyword is a ParserTypeError at the call naming the signature.
        A constant shape extent must be a non-negative integer."""
        op = OPS.lookup(spelling)
        signature = op.parameters if op is not None else None
        if op is None or signature is None:
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return  # `*args` / `**kwargs`: refused with their own message when read
        given = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None and kw.arg != "attrs"}
        try:
            bound = signature.bind(*node.args, **given)
        except TypeError as exc:
            unknown = [name for name in given if name not in signature.parameters]
            close = difflib.get_close_matches(unknown[0], list(signature.parameters), n=1) if unknown else []
            at: ast.AST = next((kw.value for kw in node.keywords if kw.arg in unknown), node) if close or unknown else node
            if "unexpected keyword" not in str(exc):
                at = node
            raise self.error(
                at,
                f"pl.{spelling}{op.signature}: {exc}",
                hint=f"did you mean {close[0]}=?" if close else None,
                kind=ParserTypeError,
            ) from None
        for name in ("shape", "shapes", "extent"):
            value = bound.arguments.get(name)
            if isinstance(value, ast.expr):
                for extent in value.elts if isinstance(value, ast.List | ast.Tuple) else [value] if name == "extent" else []:
                    self.check_extent(extent)

    def check_extent(self, node: ast.expr) -> None:
        """A literal extent is a non-negative integer: `2.5`, `True` and `-3` are refused here."""
        literal = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
        if not isinstance(literal, ast.Constant):
            return
        value = literal.value
        if isinstance(value, bool) or not isinstance(value, int) or literal is not node:
            bits = value.bit_length() if isinstance(value, int) else 0
            shown = f"a negative {bits:,}-bit integer" if bits > 64 else ast.unparse(node)
            raise self.error(
                node,
                f"an extent is a non-negative integer, not {shown}",
                hint="write a whole number of elements (0 or more), or a pl.dynamic dimension",
                kind=ParserTypeError,
            )

    def _scalar_dispatch(self, spelling: str, values: tuple[Expr, ...], node: ast.Call) -> Expr | None:
        """`pl.add(a, b)` (and sub, mul, div, min, max) of two scalars is the scalar expression
        `a + b`, as PyPTO dispatches it; on tensors and tiles it stays the op."""
        op = SCALAR_OPERATORS.get(spelling)
        if op is None:
            return None
        if not node.keywords and len(values) == 2 and all(isinstance(self.type_of(v), ScalarType) for v in values):
            return BinaryExpr(op, values[0], values[1], span=self.span(node))
        if spelling in OPS:
            return None
        raise self.error(
            node,
            f"pl.{spelling} takes two scalars",
            hint=f"write pl.{spelling}(a, b) with scalar a and b",
            kind=InvalidOperationError,
        )

    def _typed_const(self, node: ast.Call) -> Expr:
        if len(node.args) != 2 or node.keywords:
            raise self.error(node, "pl.const takes a value and a dtype: pl.const(42, pl.INT64)")
        try:
            value = static_eval(node.args[0], self.constants, sizes=self.static_sizes)
        except NotStatic as exc:
            raise self.error(exc.node, f"pl.const needs a literal value: {exc.message}") from None
        dtype = self.dtype(node.args[1])
        span = self.span(node)
        shown = repr(value) if not isinstance(value, int) or value.bit_length() <= 128 else "a huge integer"
        if isinstance(value, bool) != (dtype is DataType.BOOL):  # True is no pl.INT32, 7 no pl.BOOL
            want = "True or False" if dtype is DataType.BOOL else "a number"
            raise self.error(node.args[0], f"pl.const({shown}, pl.{dtype.name}): a pl.{dtype.name} constant is {want}")
        if isinstance(value, bool):
            return ConstBool(value, span=span)
        if isinstance(value, int) and dtype.is_int:
            return ConstInt(self.check_int(value, dtype, node.args[0]), dtype, span=span)
        if isinstance(value, int):
            return ConstInt(self.check_int(value, DataType.INDEX, node.args[0]), dtype, span=span)
        if isinstance(value, float):
            if not dtype.is_float:  # 2.5 is no pl.INT32 (a cast is pl.cast's business)
                raise self.error(
                    node.args[0],
                    f"pl.const({shown}, pl.{dtype.name}): a pl.{dtype.name} constant is an integer",
                    hint="write an integer literal, or a float dtype such as pl.FP32",
                )
            if not math.isfinite(value):  # `1e999`: no literal spells it back
                raise self.error(node.args[0], f"float constant {shown} is out of range (a finite float is at most about 1.8e308)")
            return ConstFloat(value, dtype, span=span)
        raise self.error(node.args[0], "pl.const takes a number")

    def _submit(self, node: ast.Call, spmd: bool = False) -> Expr:
        form = "pl.spmd_submit" if spmd else "pl.submit"
        args = self.positional(node)
        callee = dotted_name(args[0]) if args else None
        if callee is None or not callee.startswith("self.") or callee[5:] not in self.function_names:
            where = args[0] if args else node
            raise self.error(where, f"{form}'s first argument must be a program function: {form}(self.k, ...)")
        if spmd and not any(kw.arg == "core_num" for kw in node.keywords):
            raise self.error(
                node,
                "pl.spmd_submit requires the core_num= block count",
                hint="write pl.spmd_submit(self.k, *args, core_num=N)",
            )
        values = tuple(self.expr(a) for a in args[1:])
        kwargs: list[Keyword] = []
        explicit: tuple[Var, ...] = ()
        nodes: list[ast.expr] = []
        allowed = _SPMD_SUBMIT_KEYWORDS if spmd else _SUBMIT_KEYWORDS
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs is not supported", kind=UnsupportedFeatureError)
            if kw.arg not in allowed:
                raise self.error(
                    kw.value,
                    f"{form} does not accept keyword argument '{kw.arg}'",
                    hint=_SPMD_HINT if kw.arg in _SPMD_SUBMIT_KEYWORDS else f"{form} takes {', '.join(sorted(allowed))}",
                    kind=ParserTypeError,
                )
            if kw.arg in PER_TASK_KEYWORDS and "cluster" in self.enclosing_scopes():
                raise self.error(
                    kw.value,
                    f"{form} inside pl.cluster() cannot carry per-task dispatch metadata ('{kw.arg}='): the "
                    "cluster is launched as one Group dispatch, which has no place for it",
                    hint=f"drop {kw.arg}= here, or launch the kernel outside the pl.cluster()",
                )
            if kw.arg in ("allow_early_resolve", "sync_start"):
                self.check_bool_literal(kw, form)
            if kw.arg == "core_num":
                self._check_core_num(kw.value, form)
            if kw.arg == "dumps":
                explicit = self.dumps(kw.value, f"{form} dumps=", repeats=True)
                nodes = [e for e in kw.value.elts if isinstance(e, ast.Name)] if isinstance(kw.value, (ast.List, ast.Tuple)) else []
            elif kw.arg == "deps":
                kwargs.append(Keyword(kw.arg, self.deps_value(kw.value), span=self.span(kw.value)))
            elif kw.arg == "predicate":
                kwargs.append(Keyword(kw.arg, self.predicate(kw.value), span=self.span(kw.value)))
            elif kw.arg != "attrs":
                kwargs.append(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
        _, _, items = self.call_attrs(node, form, selection=False)
        self.check_predicate_deps(kwargs, node, takes_deps=True)
        dumps = self.dispatch_dumps(values, explicit, nodes, f"{form} dumps=", "submit")
        submit = Submit(callee[5:], values, tuple(kwargs), dumps, spmd, attr_items=items, span=self.span(node))
        ty = self.type_of(submit)  # from the kernel's declaration, which a launch reads as PyPTO's does
        return Submit(callee[5:], values, tuple(kwargs), dumps, spmd, attr_items=items, span=self.span(node), type=ty)

    _MAX_COMPREHENSION = 4096  # entries a deps= comprehension may unroll to

    def deps_value(self, node: ast.expr) -> Expr:
        """`deps=[...]`: task ids (`t`), whole task-id arrays (`tids`), single entries of one
        (`tids[i]`), and comprehensions over parse-time values (`[tids[k] for k in range(4)]`),
        unrolled where they are written. A list with single entries becomes one fresh array the
        statement fills first, `deps=[_submit_deps_buf]`: a dependency is a task id or an array
        of them, as PyPTO's parser builds it (docs/coming-from-pypto.md#statement-forms)."""
        if isinstance(node, ast.ListComp):
            entries = self._unrolled_deps(node)
        elif isinstance(node, (ast.List, ast.Tuple)):
            entries = []
            for element in node.elts:
                if isinstance(element, ast.ListComp):
                    entries += self._unrolled_deps(element)
                elif not (isinstance(element, ast.Constant) and element.value is None):  # None: no task
                    entries.append((element, self.expr(element)))
        else:
            raise self.error(
                node,
                "deps= takes a list of task ids",
                hint="write the task ids out: deps=[t1, t2] (or deps=[tids[k] for k in range(4)])",
                kind=ParserTypeError,
            )
        self.check_task_ids([n for n, _ in entries], tuple(v for _, v in entries))
        single: ast.expr | None = None
        whole: ast.expr | None = None
        for where, value in entries:
            if isinstance(value, Call) and value.op == "array.get_element":
                single = single or where
            elif isinstance(self.type_of(value), ArrayType):
                whole = whole or where
            if single is not None and whole is not None:
                raise self.error(
                    where,
                    f"deps= cannot mix a whole task-id array ('{ast.unparse(whole)}') with single entries "
                    f"of one ('{ast.unparse(single)}')",
                    hint="pass the array alone, deps=[tids], or name each entry, deps=[tids[0], tids[1]]",
                    kind=ParserTypeError,
                )
        span = self.span(node)
        values = tuple(v for _, v in entries)
        if single is None:
            return MakeTuple(values, is_list=True, span=span)
        create = Call("array.create", (ConstInt(len(values), span=span), Symbol("TASK_ID", span=span)), span=span)
        ty = self.type_of(create)
        buffer = self.bind_local("_submit_deps_buf", ty, node)
        self.prelude.append(AssignStmt(buffer, create, annotated=False, span=span))
        for index, value in enumerate(values):
            fill = Call("array.update_element", (buffer, ConstInt(index, span=span), value), span=span)
            buffer = self.bind_local("_submit_deps_buf", ty, node)  # the same Var, but under strict_ssa
            self.prelude.append(AssignStmt(buffer, fill, annotated=False, span=span))
        return MakeTuple((buffer,), is_list=True, span=span)

    def _unrolled_deps(self, node: ast.ListComp) -> list[tuple[ast.expr, Expr]]:
        """`[tids[k] for k in <iterable> if <filter>]` in `deps=`, unrolled while parsing: the
        iterable (`range(...)`, a tuple or list of ints, a module constant) and the filter are
        Python values, never IR variables or a pl loop."""
        form = "a deps= comprehension"
        gen = node.generators[0]
        if len(node.generators) != 1 or gen.is_async or not isinstance(gen.target, ast.Name):
            raise self.error(
                node,
                f"{form} has one `for <name> in <iterable>` clause",
                hint="write deps=[tids[k] for k in range(4)]",
                kind=ParserSyntaxError,
            )
        name = gen.target.id
        loop = dotted_name(gen.iter.func) if isinstance(gen.iter, ast.Call) else None
        if loop is not None and loop.startswith("pl.") and loop[3:] in ("range", "parallel", "pipeline", "unroll"):
            raise self.error(
                gen.iter,
                f"{form} iterates a DSL loop ({loop}), which runs in the program: it cannot be unrolled while parsing",
                hint="iterate a Python range(...), or write deps=[tids[i]] inside a pl.range body",
                kind=ParserTypeError,
            )
        for part, what in ((gen.iter, "iterable"), *((f, "filter") for f in gen.ifs)):
            local = next(
                (n for n in ast.walk(part) if isinstance(n, ast.Name) and n.id != name and self.lookup_local(n.id) is not None),
                None,
            )
            if local is not None:
                raise self.error(
                    local,
                    f"{form}'s {what} reads the IR variable '{local.id}': it cannot be unrolled while parsing",
                    hint="use Python values only (range(...), module constants, the comprehension's own name)",
                    kind=ParserTypeError,
                )
        if self.lookup_local(name) is not None:
            raise self.error(gen.target, f"the comprehension variable '{name}' shadows a variable of the function")
        indices = self._comprehension_indices(gen.iter, form)
        missing = object()
        saved = self.constants.get(name, missing)
        entries: list[tuple[ast.expr, Expr]] = []
        try:
            for value in indices:
                self.constants[name] = value
                if all(self._static_truth(f, form) for f in gen.ifs):
                    entries.append((node.elt, self.expr(node.elt)))
        finally:
            if saved is missing:
                self.constants.pop(name, None)
            else:
                self.constants[name] = saved
        return entries

    def _comprehension_indices(self, node: ast.expr, form: str) -> Sequence[int]:
        """The integers a deps= comprehension's iterable yields: `range(...)` or a sequence."""
        try:
            if isinstance(node, ast.Call) and dotted_name(node.func) == "range" and not node.keywords:
                bounds = [static_eval(a, self.constants, sizes=self.static_sizes) for a in node.args]
                if not 1 <= len(bounds) <= 3 or not all(type(b) is int for b in bounds) or bounds[2:] == [0]:
                    raise self.error(node, f"{form}: range(...) takes one to three integers, a step not 0", kind=ParserTypeError)
                values: object = range(*bounds)
            else:
                values = static_eval(node, self.constants, sizes=self.static_sizes)
        except NotStatic as exc:
            raise self.error(exc.node, f"{form}'s iterable is a Python value: {exc.message}", kind=ParserTypeError) from None
        if not isinstance(values, (range, list, tuple)) or not all(type(v) is int for v in values):
            raise self.error(
                node,
                f"{form} iterates integers: range(...), or a list or tuple of ints",
                hint="write deps=[tids[k] for k in range(4)]",
                kind=ParserTypeError,
            )
        if len(values) > self._MAX_COMPREHENSION:
            raise self.error(node, f"{form} may unroll to at most {self._MAX_COMPREHENSION} entries")
        return values

    def _static_truth(self, node: ast.expr, form: str) -> bool:
        try:
            return bool(static_eval(node, self.constants, sizes=self.static_sizes))
        except NotStatic as exc:
            raise self.error(exc.node, f"{form}'s filter is a Python value: {exc.message}", kind=ParserTypeError) from None

    def check_task_ids(self, nodes: list[ast.expr], values: tuple[Expr, ...]) -> None:
        """Each `deps=` entry is a task id: a TASK_ID scalar or an array of them. An entry of
        another known type (a tensor, an INT32 scalar) is a ParserTypeError; an untyped one is
        left to the source."""
        for node, value in zip(nodes, values, strict=True):
            ty = self.type_of(value)
            dtype = ty.dtype if isinstance(ty, (ScalarType, ArrayType)) else None
            if isinstance(ty, UnknownType) or dtype is DataType.TASK_ID:
                continue
            shown = (
                f"a {dtype.name} scalar" if isinstance(ty, ScalarType) and dtype is not None
                else f"an array of {dtype.name}" if isinstance(ty, ArrayType) and dtype is not None
                else type(ty).__name__.removesuffix("Type").lower()
            )  # fmt: skip
            raise self.error(
                node,
                f"a deps= entry is a TaskId (a pl.Scalar[pl.TASK_ID] or an array of them), not {shown}",
                hint="depend on the task id a launch returns: out, tid = pl.submit(...); deps=[tid]",
                kind=ParserTypeError,
            )

    def check_bool_literal(self, kw: ast.keyword, form: str) -> None:
        """`allow_early_resolve=` and `sync_start=` are written True or False, nothing computed."""
        if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
            raise self.error(
                kw.value,
                f"{form}: {kw.arg} must be a boolean literal (True or False)",
                hint=f"write {kw.arg}=True",
            )

    def _check_core_num(self, node: ast.expr, form: str) -> None:
        """A block count known while parsing (a literal or a module constant) is a positive int."""
        try:
            value = static_eval(node, self.constants, sizes=self.static_sizes)
        except NotStatic:
            return  # a runtime count, checked where it is known
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{form}: core_num must be an integer, not {value!r}", hint="write core_num=N")
        if value <= 0:
            raise self.error(node, f"{form}: core_num must be positive, not {value}", hint="write core_num=N with N > 0")

    def _subscript(self, node: ast.Subscript) -> Expr:
        base = self.expr(node.value)
        if isinstance(base, Symbol):  # `pl.Tensor[[4], pl.FP32]` where a value belongs (an extent)
            raise self.error(
                node,
                f"pl.{base.path}[...] is a type, not a value",
                hint="an extent or an index is an integer or a scalar expression",
            )
        ty = self.type_of(base)
        if isinstance(ty, TupleType):
            index_node = node.slice
            if not (isinstance(index_node, ast.Constant) and type(index_node.value) is int):
                raise subscripts.tuple_index_error(self, node)
            index = self.check_int(index_node.value, DataType.INDEX, index_node)
            return TupleGetItemExpr(base, index, span=self.span(node))
        if isinstance(ty, ArrayType):
            return subscripts.array_index(self, node, base, ty)
        if isinstance(ty, (TensorType, TileType)):
            return subscripts.read(self, node, base, ty)
        if isinstance(ty, UnknownType):
            return subscripts.plain(self, node, base)
        raise subscripts.not_subscriptable(self, node, ty)

    def element_literal(self, value: Expr, dtype: DataType, node: ast.expr) -> Expr:
        """An untyped number literal stored into an array of `dtype` is a constant of that dtype
        (`arr[i] = 7` on an INT32 array stores `pl.const(7, pl.INT32)`); any other value as it is."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
            return value
        if isinstance(value, ConstInt) and dtype.is_int:
            return ConstInt(self.check_int(value.value, dtype, node), dtype, span=value.span)
        if isinstance(value, (ConstInt, ConstFloat)) and dtype.is_float:
            return ConstFloat(float(value.value), dtype, span=value.span)
        return value

    def describe(self, node: ast.expr) -> str:
        """How `pl.static_print` shows a value: `name: type` for a variable, `value: type` for
        anything else whose type is known, else its source."""
        from nanopto.ir_terms.printer import print_expr, print_type

        value = self.expr(node)
        if isinstance(value, Var):
            return f"{value.name}: {print_type(value.type)}"
        ty = self.type_of(value)
        return print_expr(value) if isinstance(ty, UnknownType) else f"{print_expr(value)}: {print_type(ty)}"

    # -- type inference -----------------------------------------------------------------------

    def type_of(self, expr: Expr) -> Type:
        """The type of a value, as far as the registry and the signatures tell."""
        if self._type_reader is None:  # one reader for the parse: it holds no state, and it is asked once a statement
            self._type_reader = type_reader(returns=weakly_bound(self.function_return_types))
        return self._type_reader(expr)

    # -- annotations --------------------------------------------------------------------------

    def dtype(self, node: ast.expr) -> DataType:
        dtype = _DTYPE_SPELLINGS.get(dotted_name(node))  # type: ignore[arg-type]
        if dtype is None:
            raise self.error(node, "expected a dtype such as pl.FP32 or pl.INDEX", kind=ParserTypeError)
        return dtype

    def _memory_space(self, node: ast.expr) -> MemorySpace | None:
        """The memory space `pl.Mem.<space>` (or `pl.MemorySpace.<space>`) names, else None."""
        path = dotted_name(node)
        member = enum_of_symbol(path[3:]) if path is not None and path.startswith("pl.") else None
        return member if isinstance(member, MemorySpace) else None

    def _tile_type(self, shape: tuple[Expr, ...], dtype: DataType, extras: list[ast.expr]) -> TileType:
        """The rest of `pl.Tile[shape, dtype, ...]`: a `pl.MemRef(...)`, a `pl.Mem.<space>` and a
        `pl.TileView(...)`, each at most once, in any order. A bare `pl.TileView()` is the view the
        memory space implies, the same as leaving it out."""
        memory: MemorySpace | None = None
        memref: ast.Call | None = None
        view: TileView | None = None
        seen: set[str] = set()
        for extra in extras:
            head = dotted_name(extra.func) if isinstance(extra, ast.Call) else None
            space = self._memory_space(extra)
            what = head if head in ("pl.MemRef", "pl.TileView") else "pl.Mem" if space is not None else None
            if what is None or what in seen:
                raise self.error(
                    extra,
                    "a tile annotation takes shape, dtype and optionally a pl.MemRef(...), a pl.Mem.<space> "
                    "and a pl.TileView(...), each once"
                    if what is None
                    else f"{what} is given twice in one tile annotation",
                    kind=ParserTypeError,
                )
            seen.add(what)
            if what == "pl.Mem":
                memory = space
            elif what == "pl.MemRef":
                assert isinstance(extra, ast.Call)
                memref = extra
            else:
                assert isinstance(extra, ast.Call)
                view = self._tile_view(extra)
        if memref is not None and memory is None:
            raise self.error(
                memref,
                "a tile annotation with a pl.MemRef also names its memory space",
                hint="add pl.Mem.<space> after the pl.MemRef(...)",
                kind=ParserTypeError,
            )
        return TileType(shape, dtype, None if memref is None else self._memref(memref, memory), view, memory)

    def _tile_view(self, node: ast.Call) -> TileView | None:
        """`pl.TileView(name=value, ...)` (None for a bare `pl.TileView()`, the implicit view)."""
        if node.args:
            raise self.error(node.args[0], "pl.TileView takes keywords only: pl.TileView(blayout=...)", kind=ParserTypeError)
        fields: dict[str, object] = {}
        for keyword in node.keywords:
            name, value = keyword.arg, keyword.value
            enum_cls = _VIEW_ENUMS.get(name or "")
            if name in ("valid_shape", "stride"):
                fields[name] = self._shape(value)
            elif name == "start_offset":
                fields[name] = self.expr(value)
            elif name == "fractal":
                if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0):
                    raise self.error(value, "fractal is a size in bytes: a positive int literal", kind=ParserTypeError)
                fields[name] = value.value
            elif enum_cls is not None and name is not None:
                path = dotted_name(value) or ""
                prefix, _, member = path.rpartition(".")
                if prefix != f"pl.{enum_cls.__name__}" or member not in enum_cls.__members__:
                    raise self.error(
                        value,
                        f"{name} takes a pl.{enum_cls.__name__} member",
                        hint=", ".join(f"pl.{enum_cls.__name__}.{m}" for m in enum_cls.__members__),
                        kind=ParserTypeError,
                    )
                fields[name] = enum_cls[member]
            else:
                raise self.error(
                    value if name else keyword,
                    f"pl.TileView has no field {name!r}" if name else "pl.TileView takes its fields by name",
                    hint="its fields: valid_shape, stride, start_offset, blayout, slayout, fractal, pad, compact",
                    kind=ParserTypeError,
                )
        return TileView(**fields) if fields else None  # type: ignore[arg-type]

    def _memref(self, node: ast.Call, memory: MemorySpace | None) -> MemRef:
        """`pl.MemRef("mem_vec_0", offset, size)`, or the older `pl.MemRef(addr, size, id)` and
        `pl.MemRef(pl.Mem.<space>, addr, size, id)`, whose allocation is named `mem_<space>_<id>`."""
        args = node.args
        if node.keywords:
            raise self.error(node.keywords[0].value, "pl.MemRef takes positional arguments only", kind=ParserTypeError)

        def literal(arg: ast.expr, what: str) -> int:
            if not (isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value >= 0):
                raise self.error(arg, f"a MemRef's {what} is a non-negative int literal", kind=ParserTypeError)
            return arg.value

        if len(args) == 3 and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
            return MemRef(args[0].value, self.expr(args[1]), literal(args[2], "size"))
        space = self._memory_space(args[0]) if len(args) == 4 else None
        if len(args) == 3 or space is not None:
            rest = args[1:] if space is not None else args
            allocation = space or memory
            assert allocation is not None  # the caller requires a memory space with a MemRef
            return MemRef(allocation, self.expr(rest[0]), literal(rest[1], "size"), literal(rest[2], "id"))
        raise self.error(
            node,
            'pl.MemRef takes an allocation, a byte offset and a size: pl.MemRef("mem_vec_0", 0, 512)',
            kind=ParserTypeError,
        )

    def shape(self, node: ast.expr) -> tuple[Expr, ...]:
        """The dimensions of a shape list in an annotation."""
        return self._shape(node)

    def _shape(self, node: ast.expr) -> tuple[Expr, ...]:
        for extent in node.elts if isinstance(node, ast.List | ast.Tuple) else ():
            self.check_extent(extent)
        shape = self.expr(node)
        if not isinstance(shape, MakeTuple):
            raise self.error(node, "a shape is a list of dimensions: [4, n]", kind=ParserTypeError)
        return shape.elements

    def param_annotation(self, node: ast.expr) -> tuple[Type, ParamDirection]:
        if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("pl.Out", "pl.InOut"):
            direction = ParamDirection.Out if dotted_name(node.value) == "pl.Out" else ParamDirection.InOut
            inner = node.slice
            if isinstance(inner, ast.Constant) and inner.value is Ellipsis:
                return UnknownType(), direction
            return self.type_annotation(inner), direction
        return self.type_annotation(node), ParamDirection.In

    def return_annotation(self, node: ast.expr) -> tuple[Type, ...]:
        if isinstance(node, ast.Constant) and node.value is None:
            return ()
        if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("tuple", "pl.Tuple"):
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return tuple(self.type_annotation(e) for e in elements)
        return (self.type_annotation(node),)

    def type_annotation(self, node: ast.expr) -> Type:
        return self._nested(node, self._type_annotation)

    def _type_annotation(self, node: ast.expr) -> Type:
        distributed = parse_distributed.annotation(self, node)
        if distributed is not None:
            return distributed
        if not isinstance(node, ast.Subscript):
            if isinstance(node, ast.Constant) and node.value is Ellipsis:
                return UnknownType()
            if dotted_name(node) == "pl.TaskId":  # PyPTO's name for pl.Scalar[pl.TASK_ID]
                return ScalarType(DataType.TASK_ID)
            return ScalarType(self.dtype(node))
        head = dotted_name(node.value)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "pl.Scalar":
            if len(items) != 1:
                raise self.error(node, "pl.Scalar takes one dtype: pl.Scalar[pl.INDEX]", kind=ParserTypeError)
            return ScalarType(self.dtype(items[0]))
        if head in ("pl.Tensor", "pl.Tile"):
            if len(items) < 2:
                raise self.error(
                    node,
                    f"{head} takes a shape and a dtype: {head}[[4, 8], pl.FP32]",
                    kind=ParserTypeError,
                )
            shape = self._shape(items[0])
            dtype = self.dtype(items[1])
            if head == "pl.Tensor":
                if len(items) > 2:
                    raise self.error(
                        items[2],
                        "tensor layouts and views are not supported",
                        kind=UnsupportedFeatureError,
                    )
                return TensorType(shape, dtype)
            return self._tile_type(shape, dtype, items[2:])
        if head == "pl.Array":
            if len(items) != 2:
                raise self.error(
                    node,
                    "pl.Array takes a size and a dtype: pl.Array[8, pl.INT32]",
                    kind=ParserTypeError,
                )
            self.check_extent(items[0])
            return ArrayType(size=self.expr(items[0]), dtype=self.dtype(items[1]))
        if head in ("tuple", "pl.Tuple"):
            return TupleType(tuple(self.type_annotation(i) for i in items))
        if head in ("pl.Out", "pl.InOut"):
            raise self.error(
                node,
                f"{head}[...] is only allowed on a function parameter",
                kind=ParserTypeError,
            )
        raise self.error(
            node,
            "unknown type annotation",
            hint="use pl.Tensor, pl.Tile, pl.Scalar, pl.Array or a dtype",
            kind=ParserTypeError,
        )
