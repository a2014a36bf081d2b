"""`pl` source text -> IR, by reading Python's `ast` and never running anything.

Programs are written as decorated Python classes, but they are data, not code: the parser walks the
syntax tree, so a program cannot execute arbitrary Python while it is being read, and every error
can point at the exact source column. Literal values (module constants, `pl.static_assert`
conditions) go through `parse_static`, a closed interpreter for constant expressions.

Name binding is deliberately pre-SSA, because that is what the inliner's rebinding rules are stated
against: a function has one flat name table, assigning an already-bound name reuses its `Var`
(`t = pl.add(t, t)` on a parameter `t` assigns the parameter's own Var), and a name first bound in
a loop or branch body stays visible after it. Only loop headers (loop variables, `init_values`
iter_args, `for ... in pl.spmd(...)` variables) are scoped to their body; `x = pl.yield_(...)`
names the loop's or if's result variables, visible after the statement.

Types and expressions live in `parse_exprs`; this module holds the program, function and
statement forms.
"""

from __future__ import annotations

import ast
import enum
import inspect
import io
import itertools
import keyword
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from nanopto.gc_pause import gc_paused
from nanopto.ir_terms import parse_subscripts as subscripts
from nanopto.ir_terms import split_aiv_forms, spmd_forms
from nanopto.ir_terms.dtypes import DataType, enum_of_symbol
from nanopto.ir_terms.dump_selection import DUMP_CARRIERS, seeded
from nanopto.ir_terms.nodes import (
    DECORATOR_ATTRS,
    AssignStmt,
    BinaryExpr,
    BreakStmt,
    Call,
    ConstBool,
    ConstInt,
    ConstStr,
    ContinueStmt,
    EvalStmt,
    Expr,
    ForKind,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    Keyword,
    Level,
    MakeTuple,
    Node,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Span,
    SplitMode,
    Stmt,
    Submit,
    Symbol,
    TupleGetItemExpr,
    Var,
    WhileStmt,
    YieldStmt,
    attribute_literal,
    level_to_linqu_level,
    places_auto_scopes,
    slot_constructor,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.parse_comments import extract_line_comments
from nanopto.ir_terms.parse_error import (
    InternalParserError,
    InvalidOperationError,
    ParserError,
    ParserTypeError,
    PythonSyntaxError,
    SSAViolationError,
    UnsupportedFeatureError,
)
from nanopto.ir_terms.parse_exprs import (
    MAX_NESTING,
    NESTING_HINT,
    DynamicDim,
    ExprParser,
    dotted_name,
    pl_call_name,
)
from nanopto.ir_terms.parse_static import NotStatic, is_static_value, static_eval
from nanopto.ir_terms.printer import LANGUAGE_MODULES
from nanopto.ir_terms.schema import walk, walk_stmts
from nanopto.ir_terms.templates import InlineFunction
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, TupleType, Type, UnknownType

__all__ = ["DynamicDim", "ParserError", "parse_function", "parse_program"]

_DISTRIBUTED_IMPORTS = tuple((f"{module}.distributed", "pld") for module in LANGUAGE_MODULES)
_RANGE_LOOPS = {
    "range": ForKind.Sequential,
    "parallel": ForKind.Parallel,
    "unroll": ForKind.Unroll,
    "pipeline": ForKind.Pipeline,
}
_LOOP_OPTIONS = {ForKind.Pipeline: ("stage",)}
"""The keywords (besides init_values) a loop kind takes; they are kept in `ForStmt.attrs`."""
_FOR_SCOPES = ("spmd", "split_aiv")
_WITH_SCOPES = ("at", "cluster", "graph", "spmd", "scope", "manual_scope")
_DUMP_TAG_FUNCTIONS = (FunctionType.Orchestration, FunctionType.Inline)
_new_var = slot_constructor(Var, ("name", "type", "span"))
_new_assignment = slot_constructor(AssignStmt, ("var", "value", "annotated", "span"))
"""`Var(...)` and `AssignStmt(...)` with their slots set directly, for a source assignment's (most
statements): a frozen dataclass's `__init__` sets each field through `object.__setattr__`."""

_AUG_HINT = "write an explicit assignment: acc = acc + ..."
_SPMD_KEYWORDS = frozenset(
    {"core_num", "sync_start", "name_hint", "optimizations", "deps", "allow_early_resolve", "predicate", "dumps"}
)
_SPMD_LOOP_REFUSED = ("init_values", "chunk", "chunk_policy", "attrs", "step", "stage", "deps")
_SPMD_FOR_HINT = "write for i in pl.spmd(N): the loop variable is the block index (pl.tile.get_block_idx())"


def _order_inline_callees(
    method: ast.FunctionDef, inline: dict[str, ast.FunctionDef], ordered: dict[str, ast.FunctionDef], visiting: set[str]
) -> None:
    """Add `method` to `ordered` after the Inline helpers it calls, depth first. A module-level
    function: a nested one that calls itself is a reference cycle holding every tree it reaches
    (nanopto/gc_pause.py)."""
    if method.name in ordered or method.name in visiting:
        return
    visiting.add(method.name)
    for node in ast.walk(method):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "self" and node.func.attr in inline:
                _order_inline_callees(inline[node.func.attr], inline, ordered, visiting)
    ordered[method.name] = method


@dataclass
class _YieldContext:
    """What the `pl.yield_` statements of one if-branch or loop body have bound so far."""

    kind: str  # "if", "for", "while_", "while"
    carried: int = 0
    seen: bool = False
    names: tuple[str, ...] | None = None
    value_types: tuple[Type, ...] = ()
    annotation: Type | None = None
    node: ast.AST | None = None


@dataclass
class _Signature:
    name: str
    params: tuple[Param, ...]
    return_types: tuple[Type, ...]
    func_type: FunctionType
    attrs: tuple[Keyword, ...]
    node: ast.FunctionDef


@dataclass
class _FunctionState:
    names: dict[str, Var] = field(default_factory=dict)
    header_ids: set[int] = field(default_factory=set)
    loops: list[str] = field(default_factory=list)
    yields: list[_YieldContext] = field(default_factory=list)
    tmp_counter: int = 0
    func_type: FunctionType = FunctionType.Opaque
    auto_scope: bool = True
    scopes: list[str] = field(default_factory=list)
    """The `pl` scope constructors enclosing the statement being parsed, outermost first."""
    attrs: tuple[Keyword, ...] = ()
    """The function's decorator attributes (`level=`, `role=`, ...)."""
    strict_ssa: bool = False
    """`@pl.function(strict_ssa=True)`: a name is assigned at most once in a block."""
    tagged: dict[int, Var] = field(default_factory=dict)
    """The values `pl.dump_tag` has marked (Var id -> Var), in tag order. Assigning the name again
    makes a new value, so the assignment removes it (docs/specification.md, "Dump tags")."""
    bindings: dict[int, int] = field(default_factory=dict)
    """How often each Var has been assigned so far (Var id -> count): a name assigned again holds
    a new value in the same Var, and a count tells the two values apart."""
    producers: dict[int, tuple[Var, int, int]] = field(default_factory=dict)
    """The launch that wrote each tensor value (Var id -> the launch's task id Var, that task id's
    binding count, the tensor's binding count), which a later `predicate=` must depend on."""


_MODULE_HINT = "a pl source holds `import nanopto.language as pl`, constants and one @pl.program class"

BOM = "\ufeff"
"""A UTF-8 byte-order mark, which some editors write first: Python skips it, and so does the parser."""


def parse_program(
    source: str,
    filename: str = "<string>",
    *,
    closure: Mapping[str, object] | None = None,
    line_offset: int = 0,
    tree: ast.Module | None = None,
    col_offset: int = 0,
) -> Program:
    """Parse the `@pl.program` class in `source` into a `Program`; never executes `source`.

    `closure` supplies Python values the source may name but does not define (what the
    `@pl.program` decorator passes from the defining module); `line_offset` shifts reported line
    numbers when `source` is an excerpt of a larger file. `tree`, when given, is the module to read
    instead of parsing `source`: a front end that assembles the `@pl.program` class from functions
    found elsewhere (`@pl.jit`) passes it with locations in `source`, so errors quote `source`.
    `col_offset` is the indentation `source` lost when it was dedented, added back to columns.
    """
    source = source.removeprefix(BOM)
    parser = _ProgramParser(source, filename, dict(closure or {}), line_offset, tree, col_offset=col_offset)
    try:
        return _run(parser, parser.parse)
    except _ChunksDisagree:  # a method's chunk was cut inside a string: parse the module whole
        parser = _ProgramParser(source, filename, dict(closure or {}), line_offset, tree, chunked=False, col_offset=col_offset)
        return _run(parser, parser.parse)


def parse_function(
    source: str,
    filename: str = "<string>",
    *,
    closure: Mapping[str, object] | None = None,
    line_offset: int = 0,
    col_offset: int = 0,
) -> Function:
    """Parse the one module-level `@pl.function` (or `@pl.inline`) `def` in `source`; it takes no
    `self`. What the decorators do for a function written outside a `@pl.program` class."""
    parser = _ProgramParser(source, filename, dict(closure or {}), line_offset, col_offset=col_offset)
    return _run(parser, parser.parse_standalone)


T = TypeVar("T")


def _run(parser: _ProgramParser, action: Callable[[], T]) -> T:
    try:
        with gc_paused():  # a 5 MB file parsed in 64 s with the collector on, 17 s without
            return action()
    except (ParserError, _ChunksDisagree):
        raise
    except RecursionError:
        raise parser.error(None, f"nesting too deep (the limit is {MAX_NESTING} levels)", hint=NESTING_HINT) from None
    except MemoryError:
        raise parser.error(None, "out of memory while parsing this construct") from None
    except Exception as exc:  # a bug in the parser, not in the source: located, but not a ParserError
        at = parser.error(None, "")
        raise InternalParserError(
            f"internal parser error ({type(exc).__name__}): {exc}", file=at.file, line=at.line, col=at.col
        ) from exc


class _ProgramParser(ExprParser):
    """Program, function and statement forms; expressions and types come from `ExprParser`."""

    def __init__(
        self,
        source: str,
        filename: str,
        closure: dict[str, object],
        line_offset: int,
        tree: ast.Module | None = None,
        chunked: bool = True,
        col_offset: int = 0,
    ) -> None:
        super().__init__(source, filename, line_offset)
        self.col_offset = col_offset
        self._closure = closure
        self._chunked = chunked and tree is None and len(source) >= CHUNKED_FROM
        self._method_chunks: dict[int, tuple[int, int]] = {}
        self._pieces_left: list[tuple[int, int]] = []
        """The pieces of a long method body not parsed yet (`_body_pieces`), as line ranges."""
        self._source_lines: list[str] = []
        """For a method whose body is parsed when it is converted: its chunk's lines (0-based, end
        exclusive), by the id of its `ast.FunctionDef` (whose `body` is empty until then)."""
        self._standalone: dict[str, Function] = {}
        """The module-level functions the program calls, by their own names (`standalone_name`)."""
        self._standalone_as: dict[str, Function] = {}
        """The module-level functions the source may call, by the names it sees them under."""
        self._templates: dict[str, InlineFunction] = {}
        self._tree = tree
        self._may_call_func_attr = tree is not None or not source.isascii() or "func_attr" in source
        """False when no `pl.func_attr` call can be in the source: then the search for one out of
        place, a walk of every function's syntax tree, is skipped. A tree handed in may hold what the
        source does not; a non-ASCII name may normalize to `func_attr` (Python's NFKC)."""
        for name, value in closure.items():
            if isinstance(value, DynamicDim):
                self.bind_dynamic(name, value.name, None)
            elif is_static_value(value, self.static_sizes):
                self.constants[name] = value
            elif isinstance(value, Function):
                self._standalone_as[name] = value
                self.standalone_functions.add(name)
            elif isinstance(value, InlineFunction):
                self._templates[name] = value
                self.inline_templates.add(name)
        self._signatures: dict[str, _Signature] = {}
        self._assigned: dict[int, str] = {}
        """The target name of each `name = value` being parsed, by the id of its value node."""
        self._fn = _FunctionState()
        self._standalone_def = False
        self._splicing: list[str] = []
        """The @pl.inline templates being spliced, innermost last (a template may call another)."""
        self._exported_tags: dict[str, tuple[int, ...]] = {}
        """Inline helper -> the parameters it tags and leaves bound (`_tag_helper_arguments`)."""
        self._inline_parsed: dict[str, Function] = {}
        """The Inline helpers parsed so far, which a `pl.spmd` body's form reads through."""
        self._parsed: dict[str, Function] = {}
        """The program's functions parsed so far, by name: a call of one that declares no return
        type reads what its body returns (`function_body_returns`)."""
        self._comments: list[tuple[int, int, str]] | None = None
        self._comment_at = 0

    # -- ExprParser hooks ---------------------------------------------------------------------

    def lookup_local(self, name: str) -> Var | None:
        return self._fn.names.get(name)

    def enclosing_scopes(self) -> list[str]:
        return self._fn.scopes

    def function_attr(self, name: str) -> Expr | None:
        return next((k.value for k in self._fn.attrs if k.name == name), None)

    def assigned_name(self, value: ast.expr) -> str | None:
        return self._assigned.get(id(value))

    def callee_is_orchestrator(self, name: str) -> bool:
        sig = self._signatures.get(name)
        if sig is None:
            return False
        role = next((k.value for k in sig.attrs if k.name == "role"), None)
        return sig.func_type is FunctionType.Orchestration or (isinstance(role, Symbol) and role.path == "Role.Orchestrator")

    def dump_tagged(self) -> dict[int, Var]:
        """The tagged values still bound here: a loop's iteration variables and a block's own
        bindings are not once their block has ended (docs/specification.md, "Dump tags")."""
        if not self._fn.tagged:  # most functions tag nothing, and every call asks
            return {}
        names = self._fn.names
        return {i: v for i, v in self._fn.tagged.items() if names.get(v.name) is v}

    def _seeded(self, constructor: str, written: tuple[Var, ...], at_entry: dict[int, Var]) -> tuple[Var, ...]:
        """A carrier scope's selection: the values written in its `dumps=`, then those tagged and
        still bound at its entry (`nanopto.ir_terms.dump_selection`)."""
        return seeded(written, at_entry.values()) if constructor in DUMP_CARRIERS else written

    def standalone_name(self, name: str, node: ast.AST) -> str:
        """A module-level function keeps its own name in the program, whatever name the source
        calls it by (docs/coming-from-pypto.md#functions-outside-a-program); two different
        functions with one name cannot both be called."""
        function = self._standalone_as[name]
        known = self._standalone.setdefault(function.name, function)
        if known is not function:
            raise self.error(
                node,
                f"Conflicting external functions named '{function.name}': '{name}' is another function of that name",
                hint="rename one of the module-level functions",
            )
        return function.name

    def function_param_types(self, name: str) -> tuple[Type, ...] | None:
        sig = self._signatures.get(name)
        if sig is not None:
            return tuple(p.var.type for p in sig.params)
        return tuple(p.var.type for p in self._standalone[name].param_list) if name in self._standalone else None

    def function_is_inline(self, name: str) -> bool:
        sig = self._signatures.get(name)
        return sig is not None and sig.func_type is FunctionType.Inline

    def function_arity(self, name: str) -> int | None:
        sig = self._signatures.get(name)
        if sig is None and name in self._standalone:
            return len(self._standalone[name].param_list)
        return None if sig is None else len(sig.params)

    def function_body_returns(self, name: str) -> tuple[Type, ...]:
        """The types of the values the first `return` of program function `name` returns, when
        it is parsed already; none otherwise."""
        fn = self._parsed.get(name)
        if fn is None:
            return ()
        for stmt in walk_stmts(fn.body):
            if isinstance(stmt, ReturnStmt):
                return tuple(self.type_of(value) for value in stmt.values)
        return ()

    def function_is_parsed(self, name: str) -> bool:
        return name in self._parsed

    def function_return_types(self, name: str) -> tuple[Type, ...] | None:
        sig = self._signatures.get(name)
        if sig is None and name in self._standalone:
            return self._standalone[name].return_types
        return None if sig is None else sig.return_types

    # -- module -------------------------------------------------------------------------------

    def parse(self) -> Program:
        if self._tree is not None:
            return self._module(self._tree)
        chunked = self._chunked_module() if self._chunked else None
        if chunked is not None:
            try:
                return self._module(chunked)
            except ParserError:
                self._check_unparsed_chunks()  # a syntax error anywhere is reported first, as unchunked
                raise
        try:
            with warnings.catch_warnings():  # `'\X'` would print a DeprecationWarning from Python's compiler
                warnings.simplefilter("ignore")
                module = ast.parse(self.source, filename=self.file)
        except SyntaxError as exc:
            raise self._syntax_error(exc) from None
        except MemoryError:
            raise self.error(None, f"out of memory in Python's parser on this {len(self.source):,}-character source") from None
        except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
            raise self.error(None, f"cannot parse source: {exc or type(exc).__name__}") from None
        except RecursionError:
            line, col = _deepest_line(self.source)
            message = f"nesting too deep for Python's own parser (nanopto's limit is {MAX_NESTING} levels)"
            raise self.error_at(line, col, message, hint=NESTING_HINT) from None
        return self._module(module)

    def _chunked_module(self) -> ast.Module | None:
        """The module with each method's body left to be parsed when the method is converted
        (`_method_body`), or None when the source is not laid out for that (then the whole module
        is parsed at once).

        Python's parser holds the whole syntax tree, and while it builds it, its own copy: 210
        bytes per byte of source, where the IR takes about 25. So a large source is cut at its
        methods: the lines at the class body's indentation that start a member. Each method's
        decorators and `def` line are parsed first (for the signatures every call needs), its body
        when it is converted, after which it is dropped. A cut is only trusted if every piece
        parses: a cut inside a string or brackets leaves a piece that does not, and the whole
        module is parsed instead."""
        # Python's own line breaks only (`str.splitlines` also breaks at \v, \f and others)
        lines = self._source_lines = io.StringIO(self.source, newline="").readlines()
        classes = [i for i, line in enumerate(lines) if line.startswith("class ")]
        if len(classes) != 1:
            return None
        head_end = classes[0] + 1
        indent = next((_leading(line) for line in lines[head_end:] if _significant(line)), "")
        if not indent or indent.strip(" "):
            return None
        # each line's indentation asked first, by `startswith` alone: most lines are a body's,
        # indented deeper (`_leading(line) == indent` stripped each line of a large source)
        end = next((i for i in range(head_end, len(lines)) if not lines[i].startswith(_BLANK) and _significant(lines[i])), len(lines))
        width = len(indent)
        starts = [
            i
            for i in range(head_end, end)
            if lines[i].startswith(indent) and not lines[i].startswith(_BLANK, width) and _significant(lines[i])
            and not (i > head_end and _previous_member_line(lines, i, head_end, indent).startswith(indent + "@"))
        ]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                head = ast.parse("".join(lines[:head_end]) + indent + "pass\n", filename=self.file)
                tail = ast.parse("\n" * end + "".join(lines[end:]), filename=self.file)
                members: list[ast.stmt] = []
                bounds = [*starts, end]
                for start, stop in itertools.pairwise(bounds):
                    members += self._member_heads(lines, start, stop, indent)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not head.body or not isinstance(head.body[-1], ast.ClassDef) or not starts:
            return None
        head.body[-1].body = members
        head.body += tail.body
        return head

    def _member_heads(self, lines: list[str], start: int, stop: int, indent: str) -> list[ast.stmt]:
        """The members in `lines[start:stop]`: a method as its decorators and signature (its body
        parsed later), anything else whole."""
        prefix = "\n" * (start - 1) + "class _:\n"
        define = next((i for i in range(start, stop) if lines[i].startswith(indent + "def ")), None)
        if define is not None:
            for last in range(define, min(stop, define + _SIGNATURE_LINES)):
                text = prefix + "".join(lines[start : last + 1]) + indent * 2 + "pass\n"
                try:
                    parsed = ast.parse(text, filename=self.file)
                except SyntaxError:
                    continue  # the signature goes on (or the body shares the `def` line)
                body = parsed.body[0].body if parsed.body and isinstance(parsed.body[0], ast.ClassDef) else []
                if len(body) == 1 and isinstance(body[0], ast.FunctionDef):
                    body[0].body = []
                    self._method_chunks[id(body[0])] = (start, stop)
                    return body
                break
        whole = ast.parse(prefix + "".join(lines[start:stop]), filename=self.file)
        assert isinstance(whole.body[0], ast.ClassDef)
        return whole.body[0].body

    def _check_unparsed_chunks(self) -> None:
        """Raise `_ChunksDisagree` if a method body not parsed yet does not parse."""
        for start, stop in list(self._method_chunks.values()):
            text = "\n" * (start - 1) + "class _:\n" + "".join(self._source_lines[start:stop])
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ast.parse(text, filename=self.file)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise _ChunksDisagree from None
        for start, stop in self._pieces_left:
            self._parse_piece(start, stop)

    def _method_body(self, node: ast.FunctionDef) -> Iterator[list[ast.stmt]]:
        """A method's statements, in pieces: parsed now if `_chunked_module` left them for later,
        and a long body a piece at a time (`_body_pieces`), each parsed only when the one before
        has been converted, so that Python's parser never holds more than one piece."""
        chunk = self._method_chunks.pop(id(node), None)
        if chunk is None:
            yield node.body
            return
        start, stop = chunk
        cuts = self._body_cuts(start, stop) if stop - start > 2 * BODY_PIECE_LINES else []
        if not cuts:
            yield self._whole_method_body(node, start, stop)
            return
        self._pieces_left = list(itertools.pairwise([*cuts, stop]))
        yield self._whole_method_body(node, start, cuts[0])
        while self._pieces_left:
            piece_start, piece_stop = self._pieces_left.pop(0)
            yield self._parse_piece(piece_start, piece_stop)

    def _body_cuts(self, start: int, stop: int) -> list[int]:
        """Where a long method body (lines `start:stop`) is cut: every `BODY_PIECE_LINES` lines or
        so, at a line indented as the body's statements are that starts a statement of its own
        (not a closing bracket or an `else:`). A cut inside a string or brackets is caught when its
        piece does not parse (`_ChunksDisagree`: the module is then parsed whole)."""
        lines = self._source_lines
        member = _leading(lines[start])
        body = next(
            (_leading(lines[i]) for i in range(start + 1, stop) if _significant(lines[i]) and len(_leading(lines[i])) > len(member)),
            None,
        )
        if body is None:
            return []
        cuts: list[int] = []
        target = start + BODY_PIECE_LINES
        i = target
        while i < stop - BODY_PIECE_LINES // 2:
            line = lines[i]
            if _leading(line) == body and _significant(line) and not line[len(body) :].startswith(_NOT_A_STATEMENT):
                cuts.append(i)
                i += BODY_PIECE_LINES
            else:
                i += 1
        return cuts

    def _parse_piece(self, start: int, stop: int) -> list[ast.stmt]:
        """The statements of lines `start:stop` of a method body, at their own line numbers."""
        member = " " * max(0, len(_leading(self._source_lines[start])) - 1)  # any deeper indentation
        text = "\n" * (start - 2) + "class _:\n" + member[:1] + "def _():\n" + "".join(self._source_lines[start:stop])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = ast.parse(text, filename=self.file)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _ChunksDisagree from None
        method = parsed.body[0].body[0] if parsed.body and isinstance(parsed.body[0], ast.ClassDef) else None
        if not isinstance(method, ast.FunctionDef) or not method.body or method.body[0].lineno != start + 1:
            raise _ChunksDisagree
        return method.body

    def _whole_method_body(self, node: ast.FunctionDef, start: int, stop: int) -> list[ast.stmt]:
        """The statements of a method whose lines are `start:stop` (its decorators and `def` first)."""
        lines = self._source_lines[start:stop]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = ast.parse("\n" * (start - 1) + "class _:\n" + "".join(lines), filename=self.file)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise _ChunksDisagree from None
        body = parsed.body[0].body if parsed.body and isinstance(parsed.body[0], ast.ClassDef) else []
        if len(body) != 1 or not isinstance(body[0], ast.FunctionDef) or body[0].lineno != node.lineno:
            raise _ChunksDisagree
        return body[0].body

    def _module(self, module: ast.Module) -> Program:
        classes: list[ast.ClassDef] = []
        functions: list[ast.FunctionDef] = []
        for stmt in module.body:
            match stmt:
                case ast.Import():
                    self._check_import(stmt)
                case ast.ImportFrom(module="__future__"):
                    pass
                case ast.Expr(value=ast.Constant(value=str())):
                    pass  # a module docstring
                case ast.Assign() | ast.AnnAssign():
                    self._module_constant(stmt)
                case ast.ClassDef():
                    classes.append(stmt)
                case ast.FunctionDef() if not classes and not functions:
                    functions.append(stmt)
                case _:
                    raise self.error(stmt, "unsupported module-level statement", kind=UnsupportedFeatureError, hint=_MODULE_HINT)
        if functions and not classes:
            raise self.error(
                functions[0],
                f"Expected @pl.program but found @pl.function '{functions[0].name}': a program is a class",
                hint="parse a lone function with pl.parse, or make it a method of a @pl.program class",
            )
        if functions:
            raise self.error(functions[0], "unsupported module-level statement", kind=UnsupportedFeatureError, hint=_MODULE_HINT)
        if len(classes) != 1:
            where = classes[1] if len(classes) > 1 else None
            found = "Multiple functions/programs found" if classes else "No @pl.program found"
            raise self.error(where, f"{found}: expected exactly one @pl.program class, found {len(classes)}")
        return self._program(classes[0])

    def _syntax_error(self, exc: SyntaxError) -> ParserError:
        line = exc.lineno or 0
        col = max(0, (exc.offset or 1) - 1)
        if not line and "\0" in self.source:  # CPython reports a null byte without a location
            before = self.source[: self.source.index("\0")]
            line, col = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1)
        if not 1 <= line <= len(self.lines):  # e.g. "unexpected EOF" one line past the end
            line, col = max(1, len(self.lines)), len(self.lines[-1]) if self.lines else 0
        message = exc.msg or "invalid syntax"
        hint = None
        if "not tuple" in message and "annotated" in message:
            message = "Type annotations cannot be used inline with tuple unpacking"
            hint = "Type annotations cannot be used inline with tuple unpacking; annotate each name separately"
        elif "nested" in message or "too many levels" in message:
            message = f"nesting too deep ({message})"
        return self.error_at(line, col, f"syntax error: {message} (Failed to compile code)", hint, kind=PythonSyntaxError)

    def _check_import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            if (alias.name, alias.asname) in _DISTRIBUTED_IMPORTS:
                continue
            if alias.name not in LANGUAGE_MODULES or alias.asname != "pl":
                raise self.error(
                    stmt,
                    f"unsupported import '{alias.name}'",
                    hint="the only import a pl source may hold is `import nanopto.language as pl`",
                    kind=UnsupportedFeatureError,
                )

    def _module_constant(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        if not isinstance(target, ast.Name) or stmt.value is None:
            raise self.error(stmt, "a module-level assignment must bind one name to a value")
        value = stmt.value
        if pl_call_name(value) == "dynamic":
            assert isinstance(value, ast.Call)
            if len(value.args) != 1 or value.keywords or not isinstance(value.args[0], ast.Constant):
                raise self.error(value, 'pl.dynamic takes one string literal: N = pl.dynamic("N")')
            dim_name = value.args[0].value
            if not isinstance(dim_name, str):
                raise self.error(value, 'pl.dynamic takes one string literal: N = pl.dynamic("N")')
            self.bind_dynamic(target.id, dim_name, value)
            return
        try:
            self.constants[target.id] = static_eval(value, self.constants, sizes=self.static_sizes)
        except NotStatic as exc:
            raise self.error(
                exc.node,
                f"module-level '{target.id}' must be a compile-time constant: {exc.message}",
                hint="module constants may be numbers, strings, booleans and lists/tuples of them",
            ) from None
        self.dynamic.pop(target.id, None)

    # -- program and functions ----------------------------------------------------------------

    def _program(self, cls: ast.ClassDef) -> Program:
        if len(cls.decorator_list) != 1 or dotted_name(_decorator_target(cls.decorator_list[0])) != "pl.program":
            raise self.error(cls, f"class '{cls.name}' must be decorated with @pl.program")
        if cls.bases or cls.keywords:
            raise self.error(cls, "a @pl.program class takes no base classes")
        methods: list[ast.FunctionDef] = []
        for index, stmt in enumerate(cls.body):
            if isinstance(stmt, ast.FunctionDef):
                methods.append(stmt)
            elif isinstance(stmt, ast.Pass) or (
                index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            ):
                continue
            else:
                raise self.error(stmt, "a @pl.program class body may only hold @pl.function methods")
        if not methods:
            raise self.error(
                cls, f"the @pl.program class '{cls.name}' defines no function", hint="add a @pl.function method"
            )
        for method in methods:
            if method.name in self._signatures:
                raise self.error(method, f"function '{method.name}' is defined twice")
            self.function_names.add(method.name)
            self._signatures[method.name] = _Signature(method.name, (), (), FunctionType.Opaque, (), method)
        for method in methods:
            self._signatures[method.name] = self._signature(method)
        # Inline helpers first: a caller's dump selections depend on the tags its helpers leave on
        # their parameters (`_exported_tags`); the program keeps the source order.
        # Among them, callees before callers: a `pl.spmd` body reads through the Inline calls in it
        # (`_check_spmd_body`).
        converted: dict[str, Function] = {}
        for method in self._inline_callees_first(methods):
            converted[method.name] = self._parsed[method.name] = self._function(self._signatures[method.name])
            if converted[method.name].func_type is FunctionType.Inline:
                self._inline_parsed[method.name] = converted[method.name]
            if self._tree is None:  # the syntax tree is ours: a 5 MB source's is 600 MB, the IR's 125
                method.body = []
        functions = tuple(converted[method.name] for method in methods)
        # a program starts at its `@pl.program` line (the `@`, at the class's own column), as in PyPTO
        span = self.header_span(cls)
        if span is not None and cls.decorator_list:
            span = Span(span.file, cls.decorator_list[0].lineno + self.line_offset, span.col)
        return Program(cls.name, functions + self._called_standalone(functions), span=span)

    def _inline_callees_first(self, methods: list[ast.FunctionDef]) -> list[ast.FunctionDef]:
        """`methods` with the Inline ones first, each after the Inline helpers it calls (source
        order otherwise; a cycle, which the call graph rejects later, keeps source order)."""
        inline = {m.name: m for m in methods if self._signatures[m.name].func_type is FunctionType.Inline}
        ordered: dict[str, ast.FunctionDef] = {}
        visiting: set[str] = set()
        for method in inline.values():
            _order_inline_callees(method, inline, ordered, visiting)
        return [*ordered.values(), *(m for m in methods if m.name not in inline)]

    def _called_standalone(self, functions: tuple[Function, ...]) -> tuple[Function, ...]:
        """The module-level `@pl.function`s the program calls by name, each added once, in the
        order first called (a called one's own standalone callees follow it)."""
        if not self._standalone:  # nothing to look for: skip the walk of every function
            return ()
        # a called function's own callees are known by their own names
        known = {f.name: f for f in self._standalone_as.values()} | self._standalone
        added: dict[str, Function] = {}
        pending = list(functions)
        while pending:
            for node in walk(pending.pop(0)):
                # a call of a name the program also defines is `self.<name>(...)`: the method (a
                # bare call of such a name is refused where it is written)
                if isinstance(node, Call) and node.function and node.op in known:
                    if node.op in self._signatures:
                        continue
                    if node.op not in added:
                        added[node.op] = known[node.op]
                        pending.append(added[node.op])
        return tuple(added.values())

    def parse_standalone(self) -> Function:
        """The one module-level `def` of the source, decorated `@pl.function` or `@pl.inline`."""
        try:
            module = ast.parse(self.source, filename=self.file)
        except SyntaxError as exc:
            raise self._syntax_error(exc) from None
        defs = [s for s in module.body if isinstance(s, ast.FunctionDef)]
        if len(defs) != 1:
            found = "Multiple functions/programs found" if defs else "No @pl.function or @pl.program found"
            where = defs[1] if defs else None
            raise self.error(where, f"{found}: expected exactly one function definition, found {len(defs)}")
        self._standalone_def = True
        fn = defs[0]
        self.function_names.add(fn.name)
        self._signatures[fn.name] = _Signature(fn.name, (), (), FunctionType.Opaque, (), fn)
        self._signatures[fn.name] = self._signature(fn)
        return self._function(self._signatures[fn.name])

    def _signature(self, fn: ast.FunctionDef) -> _Signature:
        self._fn = _FunctionState()
        func_type, attrs = self._decorator(fn)
        args = fn.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
            raise self.error(fn, "a @pl.function takes plain positional parameters only")
        if self._standalone_def:
            if args.args and args.args[0].arg == "self":
                raise self.error(fn, f"the module-level function '{fn.name}' takes no self")
            own = args.args
        elif _is_subworker(attrs):  # a SubWorker is self-contained: a method without self
            if args.args and args.args[0].arg == "self":
                raise self.error(
                    fn, f"the SubWorker function '{fn.name}' takes no self", hint="remove the 'self' parameter"
                )
            own = args.args
        elif not args.args or args.args[0].arg != "self":
            raise self.error(fn, f"method '{fn.name}' must take self as its first parameter")
        else:
            own = args.args[1:]
        params: list[Param] = []
        for arg in own:
            if arg.arg in self._fn.names:
                raise self.error(arg, f"duplicate parameter '{arg.arg}'")
            self.check_name(arg.arg, arg)
            direction = ParamDirection.In
            ty: Type = UnknownType()
            if arg.annotation is not None:
                ty, direction = self.param_annotation(arg.annotation)
            elif self._standalone_def:  # docs/coming-from-pypto.md#what-differs-and-why
                raise self.error(
                    arg,
                    f"Parameter '{arg.arg}' missing type annotation",
                    hint=f"a module-level function declares its parameters' types: write {arg.arg}: pl.Tensor[[...], pl.FP32]",
                    kind=ParserTypeError,
                )
            if isinstance(ty, TupleType):
                raise self.error(
                    arg.annotation,
                    f"parameter '{arg.arg}' cannot be a tuple",
                    hint="take each element as its own parameter",
                    kind=ParserTypeError,
                )
            if direction is ParamDirection.InOut and isinstance(ty, ScalarType):
                raise self.error(
                    arg,
                    "Scalar parameters cannot have InOut direction",
                    hint="pass the scalar as pl.Out[...] or return the new value",
                )
            var = Var(arg.arg, ty, span=self.span(arg))
            self._fn.names[arg.arg] = var
            params.append(Param(var, direction, span=self.span(arg)))
        returns = self.return_annotation(fn.returns) if fn.returns is not None else ()
        return _Signature(fn.name, tuple(params), returns, func_type, attrs, fn)

    def _decorator(self, fn: ast.FunctionDef) -> tuple[FunctionType, tuple[Keyword, ...]]:
        if len(fn.decorator_list) != 1:
            raise self.error(fn, f"method '{fn.name}' must be decorated with @pl.function (exactly once)")
        deco = fn.decorator_list[0]
        if self._standalone_def and dotted_name(deco) == "pl.inline":
            return FunctionType.Inline, ()
        if dotted_name(_decorator_target(deco)) != "pl.function":
            raise self.error(deco, f"method '{fn.name}' must be decorated with @pl.function")
        if not isinstance(deco, ast.Call):
            return FunctionType.Opaque, ()
        if deco.args:
            raise self.error(deco, "@pl.function takes keyword arguments only")
        func_type = FunctionType.Opaque
        attrs: list[Keyword] = []
        for kw in deco.keywords:
            if kw.arg is None:
                raise self.error(
                    kw.value,
                    "**kwargs is not supported in @pl.function(...)",
                    kind=UnsupportedFeatureError,
                )
            if kw.arg == "type":
                path = dotted_name(kw.value)
                member = path.rsplit(".", 1)[-1] if path and path.startswith("pl.FunctionType.") else None
                if member is None or member not in FunctionType.__members__:
                    raise self._bad_member(kw.value, "type= must be a pl.FunctionType member", FunctionType)
                func_type = FunctionType[member]
            elif kw.arg == "attrs" and isinstance(kw.value, ast.Name) and isinstance(named := self._closure.get(kw.value.id), dict):
                attrs.extend(self._closure_attrs(kw.value, named, attrs))
            elif kw.arg == "attrs" and not isinstance(kw.value, ast.Dict):
                raise self.error(
                    kw.value,
                    "@pl.function(attrs=...) must be a dict literal",
                    hint='write attrs={"name": value}, or pl.func_attr({...}) as the first statement',
                )
            elif kw.arg == "attrs" and isinstance(kw.value, ast.Dict):
                if kw.value.keys:  # `attrs={}` gives the same function as no attrs=: nothing to move
                    warnings.warn(
                        f"{self.file}:{getattr(kw.value, 'lineno', 0) + self.line_offset}: @pl.function(attrs={{...}}) is "
                        "deprecated: its values cannot reference parameters; write "
                        "pl.func_attr({...}) as the body's first statement",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                attrs.extend(self._attr_dict(kw.value, attrs, "@pl.function(attrs=...)"))
            else:
                if any(k.name == kw.arg for k in attrs):
                    raise self.error(kw.value, f"Duplicate function attribute '{kw.arg}'. Each attribute may be declared only once.", hint="declare each attribute once")
                attrs.append(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
        return func_type, tuple(attrs)

    def _function(self, sig: _Signature) -> Function:
        auto_scope = places_auto_scopes(sig.attrs)
        strict_ssa = any(k.name == "strict_ssa" and isinstance(k.value, ConstBool) and k.value.value for k in sig.attrs)
        self._fn = _FunctionState(func_type=sig.func_type, auto_scope=auto_scope, attrs=sig.attrs, strict_ssa=strict_ssa)
        for param in sig.params:
            self._fn.names[param.var.name] = param.var
        pieces = self._method_body(sig.node)
        body_nodes = next(pieces, [])
        later_pieces: Iterable[ast.stmt] = (stmt for piece in pieces for stmt in piece)
        if self._may_call_func_attr:  # the check below reads every statement
            body_nodes = [*body_nodes, *later_pieces]
            later_pieces = ()
        header = sig.node.returns or (sig.node.args.args[-1] if sig.node.args.args else sig.node)
        self._skip_comments(max(sig.node.lineno, header.end_lineno or 0))
        docstring = None
        if body_nodes and isinstance(body_nodes[0], ast.Expr) and isinstance(body_nodes[0].value, ast.Constant):
            docstring, body_nodes = body_nodes[0], body_nodes[1:]
            if not isinstance(docstring.value.value, str):  # type: ignore[attr-defined]
                docstring = None  # `...` as the whole body
        attrs = list(sig.attrs)
        while body_nodes and (call := _func_attr_call(body_nodes[0])) is not None:
            attrs.extend(self._func_attrs(call, attrs))
            body_nodes = body_nodes[1:]
        for later in body_nodes if self._may_call_func_attr else ():
            for node in ast.walk(later):
                if isinstance(node, ast.Call) and dotted_name(node.func) == "pl.func_attr":
                    raise self.error(
                        node,
                        "pl.func_attr({...}) must be the first statement: it must appear before every other statement "
                        "of the function body",
                        hint="move it to the top of the body (a docstring may precede it)",
                    )
        body = self._block(itertools.chain(body_nodes, later_pieces), sig.node, docstring)
        if sig.func_type is FunctionType.Inline:
            live = self.dump_tagged()
            exported = tuple(i for i, p in enumerate(sig.params) if p.var.id in live)
            if exported:
                self._exported_tags[sig.name] = exported
        # The decorator's own attributes first, as the printer writes them (docs/coming-from-pypto.md)
        # `split` set to NONE is no split: dropped, as on the decorator (docs/coming-from-pypto.md)
        attrs = [k for k in attrs if not (k.name == "split" and isinstance(k.value, Symbol) and k.value.path.endswith(".NONE"))]
        ordered = [k for k in attrs if k.name in DECORATOR_ATTRS] + [k for k in attrs if k.name not in DECORATOR_ATTRS]
        return Function(
            sig.name,
            sig.params,
            sig.return_types,
            body,
            self.header_span(sig.node),
            func_type=sig.func_type,
            attr_items=tuple(ordered),
        )

    def _closure_attrs(self, node: ast.Name, values: Mapping[object, object], existing: list[Keyword]) -> list[Keyword]:
        """`@pl.function(attrs=ATTRS)` naming a dict the decorator evaluated: each value a
        constant or an enum member (kept as its `pl` symbol), as a literal dict would spell it."""
        out: list[Keyword] = []
        for key, value in values.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise self.error(node, f"@pl.function(attrs=...) keys must be strings naming the attribute, not {key!r}")
            if key in DECORATOR_ATTRS or key == "type" or any(k.name == key for k in (*existing, *out)):
                raise self.error(node, f"Duplicate function attribute '{key}'. Each attribute may be declared only once.", hint="declare each attribute once")
            try:
                literal = attribute_literal(value)
            except (TypeError, KeyError):
                raise self.error(
                    node, f"@pl.function(attrs=...): the value of '{key}' is not a constant, an enum member or a list of them"
                ) from None
            out.append(Keyword(key, self._function_attr_value(key, literal, node), span=self.span(node)))
        if out:
            warnings.warn(
                f"{self.file}:{node.lineno + self.line_offset}: @pl.function(attrs={{...}}) is deprecated: its values cannot "
                "reference parameters; write pl.func_attr({...}) as the body's first statement",
                DeprecationWarning,
                stacklevel=2,
            )
        return out

    def _bad_member(self, node: ast.expr, message: str, members: type[enum.Enum]) -> ParserError:
        """An unknown enum member, located at the member's own name (`BadType` in
        `pl.FunctionType.BadType`), with the valid members as the hint."""
        hint = "one of " + ", ".join(members.__members__)
        if isinstance(node, ast.Attribute) and node.end_lineno == node.lineno and node.end_col_offset is not None:
            line = node.lineno
            start = self.char_col(line, node.end_col_offset) - len(node.attr)
            return self.error_at(line, start, f"{message}, not '{node.attr}'", hint)
        return self.error(node, message, hint)

    def _func_attrs(self, call: ast.Call, existing: list[Keyword]) -> list[Keyword]:
        """`pl.func_attr({"name": value, ...})`: attributes of the function, read after its
        parameters are bound, so a value may name one."""
        if len(call.args) != 1 or call.keywords:
            raise self.error(
                call, "pl.func_attr takes exactly one positional dict argument", hint='write pl.func_attr({"name": value})'
            )
        if not isinstance(call.args[0], ast.Dict):
            raise self.error(
                call.args[0], "the argument of pl.func_attr must be a dict literal", hint='write pl.func_attr({"name": value})'
            )
        return self._attr_dict(call.args[0], existing, "pl.func_attr")

    def _attr_dict(self, node: ast.Dict, existing: list[Keyword], form: str) -> list[Keyword]:
        seen = {k.name for k in existing}
        out: list[Keyword] = []
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
                raise self.error(
                    key or value, f"{form} keys must be strings: each key must be a string literal naming the attribute", hint='write {"name": value}'
                )
            if form == "pl.func_attr" and key.value in DECORATOR_ATTRS:
                raise self.error(
                    key,
                    f"'{key.value}' cannot be set with pl.func_attr: the parser reads it from the decorator",
                    hint=f"write @pl.function(..., {key.value}=...)",
                )
            if key.value in seen or key.value == "type":
                raise self.error(key, f"Duplicate function attribute '{key.value}'. Each attribute may be declared only once.", hint="declare each attribute once")
            seen.add(key.value)
            if form != "pl.func_attr":
                self._check_closure_attr(key.value, value)
            out.append(Keyword(key.value, self._function_attr_value(key.value, self.expr(value), value), span=self.span(value)))
        return out

    def _check_closure_attr(self, key: str, value: ast.expr) -> None:
        """A decorator attribute naming a Python object that is not a constant: an IR expression
        over a variable has no spelling the decorator can hold (a parameter is named in
        `pl.func_attr` instead), and an annotation (`pl.Scalar[pl.INT32]`) names a type, not a value."""
        if not isinstance(value, ast.Name) or self.lookup_local(value.id) is not None:
            return
        found = self._closure.get(value.id)
        if isinstance(found, Node) and any(isinstance(node, Var) for node in walk(found)):
            raise self.error(
                value,
                f"the value of function attribute '{key}' references a variable: a decorator attribute holds constants only",
                hint=f'name a parameter in pl.func_attr({{"{key}": ...}}) as the body\'s first statement',
            )
        annotation = getattr(found, "_annotation_head", None)
        if callable(annotation) and annotation() is not None:
            raise self.error(
                value,
                f"the value of function attribute '{key}' is an annotation-only {annotation()}: it names a type and holds no value",
                hint="give the attribute a constant, an enum member, or a pl.func_attr value that names a parameter",
            )

    def _function_attr_value(self, key: str, value: Expr, node: ast.AST) -> Expr:
        """A function attribute's value; a list in one holds variables or argument directions
        only, as in PyPTO (docs/coming-from-pypto.md#function-attributes)."""
        if isinstance(value, MakeTuple) and value.is_list:
            for element in value.elements:
                if not isinstance(element, (Var, Symbol)):
                    raise self.error(
                        node,
                        f"Unsupported list element type for key: {key}: a function attribute's list holds "
                        "variables (Var) or argument directions (ArgDirection, as under arg_direction_overrides)",
                        hint="give a number or a string as a value of its own, not in a list",
                    )
        return value

    # -- statements ---------------------------------------------------------------------------

    def _block(self, stmts: Iterable[ast.stmt], owner: ast.AST, docstring: ast.stmt | None = None) -> SeqStmts:
        if self._fn.strict_ssa:
            stmts = list(stmts)
            self._check_single_assignment(stmts)
        with self.nesting(owner):
            out: list[Stmt] = []
            carried = self._docstring_comments(docstring) if docstring is not None else ()
            first: ast.stmt | None = None
            last: ast.stmt | None = None
            for stmt in stmts:
                first, last = first or stmt, stmt
                comments = carried + self._leading_comments(stmt)
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    carried = comments + self._docstring_comments(stmt)
                    continue
                enclosing, self.prelude = self.prelude, []
                try:
                    produced = self._stmt(stmt)
                    if self.prelude:
                        produced[:0] = self.prelude  # what the statement's expressions need first
                finally:
                    self.prelude = enclosing
                if self._exported_tags and produced:
                    self._tag_helper_arguments(produced)
                if produced and comments:
                    produced[0] = replace(produced[0], comments=comments)
                carried = () if produced else comments
                out.extend(produced)
            self._drop_block_tail(first, last)
            span = self.span(first) if first is not None else self.span(owner)
            return SeqStmts(tuple(out), span=span)

    def _check_single_assignment(self, stmts: list[ast.stmt]) -> None:
        """Under `strict_ssa=True`, a second assignment of a name in the same block is an error
        (without it, assigning a name again rebinds it: docs/coming-from-pypto.md)."""
        assigned: set[str] = set()
        for stmt in stmts:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
            for target in targets:
                names = [target] if isinstance(target, ast.Name) else target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
                for name in (t for t in names if isinstance(t, ast.Name)):
                    if name.id in assigned:
                        raise self.error(
                            name,
                            f"'{name.id}' is assigned twice in one block of a strict_ssa function",
                            hint="give the new value its own name",
                            kind=SSAViolationError,
                        )
                    assigned.add(name.id)

    def _drop_block_tail(self, first: ast.stmt | None, last: ast.stmt | None) -> None:
        """The comments after a block's last statement, indented as its statements, go with no
        statement: they are dropped, with a warning, rather than put on whatever follows the
        block (docs/coming-from-pypto.md#leading-comments-and-inlinestmt)."""
        comments = self._comment_table()
        if first is None or last is None or self._splicing or self._comment_at == len(comments):
            return
        indent, end = first.col_offset, last.end_lineno or last.lineno
        while self._comment_at < len(comments):
            line, col, _ = comments[self._comment_at]
            own_line = self.lines[line - 1][:col] if 1 <= line <= len(self.lines) else ""
            if line <= end or col < indent or own_line.strip() or any(map(self._is_code, range(end + 1, line))):
                return
            self._warn_tail_comment(line)
            self._comment_at += 1

    def _is_code(self, line: int) -> bool:
        """Whether source line `line` holds code (not blank, not only a comment)."""
        text = self.lines[line - 1].strip() if 1 <= line <= len(self.lines) else ""
        return bool(text) and not text.startswith("#")

    def _warn_tail_comment(self, line: int) -> None:
        warnings.warn(
            f"{self.file}:{line + self.line_offset}: a tail-of-block comment (after the last statement of a block) "
            "is dropped",
            UserWarning,
            stacklevel=4,
        )

    def _tag_helper_arguments(self, produced: list[Stmt]) -> None:
        """A helper that tags a parameter and leaves it bound tags the value its caller passes, as
        the same code written in the caller would (docs/specification.md, "Dump tags"): each later
        carrier and dispatch of the caller selects that value until the caller rebinds its name."""
        if self._fn.func_type not in _DUMP_TAG_FUNCTIONS:
            return
        for stmt in produced:
            if not isinstance(stmt, (AssignStmt, EvalStmt)):
                continue  # a compound statement's calls were seen in its own blocks
            for node in walk(stmt.value if isinstance(stmt, AssignStmt) else stmt.expr):
                if not (isinstance(node, Call) and node.function and node.op in self._exported_tags):
                    continue
                for index in self._exported_tags[node.op]:
                    actual = node.args[index] if index < len(node.args) else None
                    if not isinstance(actual, Var) or self._fn.names.get(actual.name) is not actual:
                        continue  # not a variable, or no longer bound to this value
                    if isinstance(stmt, AssignStmt) and stmt.var is actual:
                        continue  # `a = self.h(a)`: the receiver is a new value
                    if isinstance(actual.type, (TensorType, UnknownType)):
                        self._fn.tagged.setdefault(actual.id, actual)

    def _leading_comments(self, node: ast.stmt) -> tuple[str, ...]:
        """The `#` comments above `node` not yet taken, and one on its own line(s): up to its last
        line for a simple statement, up to its header line for a compound one (the body's
        comments are its statements'). A comment after the last statement of an inner block
        (indented deeper than `node`) has no statement to go with: it is dropped with a warning."""
        comments, at = self._comment_table(), self._comment_at
        if at == len(comments) or self._splicing:
            return ()
        limit = _header_end(node) if isinstance(node, _COMPOUND) else (node.end_lineno or node.lineno)
        taken: list[str] = []
        while at < len(comments) and comments[at][0] <= limit:
            line, col, text = comments[at]
            if line < node.lineno and col > node.col_offset:
                self._warn_tail_comment(line)
            else:
                taken.append(text)
            at += 1
        self._comment_at = at
        return tuple(taken)

    def _skip_comments(self, through_line: int) -> None:
        """Leave the comments up to `through_line` (a function's header) unattached."""
        comments = self._comment_table()
        while self._comment_at < len(comments) and comments[self._comment_at][0] <= through_line:
            self._comment_at += 1

    def _comment_table(self) -> list[tuple[int, int, str]]:
        """Every `#` comment of the source as (line, column, text after `# `), in source order."""
        if self._comments is None:
            self._comments = [
                (line, col, text) for line, found in extract_line_comments(self.source).items() for col, text in found
            ]
        return self._comments

    def _docstring_comments(self, node: ast.stmt) -> tuple[str, ...]:
        """A string statement as comment lines (PyPTO keeps a docstring as the next statement's
        leading comments)."""
        if self._splicing:
            return ()
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        return tuple(inspect.cleandoc(str(node.value.value)).splitlines())

    def _stmt(self, node: ast.stmt) -> list[Stmt]:
        match node:
            case ast.Assign():
                return self._assign(node)
            case ast.AnnAssign():
                return self._ann_assign(node)
            case ast.AugAssign():
                raise self.error(
                    node,
                    "Augmented assignments such as acc += ... are not supported",
                    hint=_AUG_HINT,
                    kind=UnsupportedFeatureError,
                )
            case ast.Expr():
                return self._expr_stmt(node)
            case ast.Return():
                template = self._template_of(node.value)
                if template is not None:
                    assert isinstance(node.value, ast.Call)
                    spliced, results = self._splice(template, node.value)
                    return [*spliced, ReturnStmt(results, span=self.span(node))]
                return [ReturnStmt(self._values(node.value), span=self.span(node))]
            case ast.If():
                return [self._if(node)]
            case ast.For():
                return [self._for(node)]
            case ast.While():
                return [self._while(node)]
            case ast.With():
                return self._with(node)
            case ast.Break() | ast.Continue():
                return [self._break_continue(node)]
            case ast.Pass():
                return []
            case _:
                raise self.error(
                    node,
                    f"Unsupported statement ({type(node).__name__}) in a @pl.function body",
                    kind=UnsupportedFeatureError,
                )

    def _values(self, node: ast.expr | None) -> tuple[Expr, ...]:
        if node is None:
            return ()
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e) for e in node.elts)
        return (self.expr(node),)

    def _bind(self, target: ast.Name, ty: Type) -> Var:
        """The Var an assignment to `target` writes: the bound one if any, else a new one."""
        self.check_name(target.id, target)
        existing = self._fn.names.get(target.id)
        if existing is not None:
            self._fn.tagged.pop(existing.id, None)  # a new value: the tag stays with the old one
            self._fn.bindings[existing.id] = self._fn.bindings.get(existing.id, 0) + 1
            return existing
        var = _new_var(target.id, ty, self.span(target))
        self._fn.names[target.id] = var
        self._fn.bindings[var.id] = 1
        return var

    def _record_producer(self, written: Iterable[Var], task: Var) -> None:
        """The values in `written` are the outputs of the launch whose task id is `task`."""
        count = self._fn.bindings.get
        for var in written:
            if var is not task:
                self._fn.producers[var.id] = (task, count(task.id, 0), count(var.id, 0))

    def check_predicate_deps(self, kwargs: Sequence[Keyword], node: ast.AST, *, takes_deps: bool) -> None:
        """A `predicate=` reads its tensor when the launch is dispatched, so the launch that writes
        that tensor must be done first: its task id (the same value, not a later one of that name)
        is in `deps=`. A `deps=` holding an array of task ids is not checked."""
        predicate = next((k for k in kwargs if k.name == "predicate"), None)
        if predicate is None or not isinstance(predicate.value, BinaryExpr):
            return
        read = next((x for x in (predicate.value.lhs, predicate.value.rhs) if isinstance(x, Call)), None)
        tensor = read.args[0] if read is not None and read.args else None
        if not isinstance(tensor, Var):
            return
        count = self._fn.bindings.get
        record = self._fn.producers.get(tensor.id)
        if record is None or record[2] != count(tensor.id, 0):
            return  # a parameter, or a value no tracked launch wrote
        task, task_count, _ = record
        deps = next((k.value for k in kwargs if k.name == "deps"), None)
        entries = deps.elements if isinstance(deps, MakeTuple) else ()
        if any(not isinstance(self.type_of(e), ScalarType) for e in entries):
            return
        if any(e is task and count(task.id, 0) == task_count for e in entries):
            return
        hint = (
            f"depend on it: deps=[{task.name}]"
            if takes_deps
            else f"a pl.spmd without `as tid` does not accept deps=: write with pl.spmd(..., deps=[{task.name}]) as tid:"
        )
        raise self.error(
            next((kw.value for kw in getattr(node, "keywords", ()) if kw.arg == "predicate"), node),
            f"the predicate reads '{tensor.name}', produced by the task '{task.name}', which is not in deps=: "
            "the launch could read it before that task writes it"
            + (" (that name now holds a later task id)" if count(task.id, 0) != task_count else ""),
            hint=hint,
        )

    def bind_local(self, name: str, ty: Type, node: ast.AST) -> Var:
        if self._fn.strict_ssa:
            names = itertools.chain((name,), (f"{name}_{i}" for i in itertools.count(1)))
            name = next(n for n in names if n not in self._fn.names)
        return self._bind(ast.Name(name, ast.Store(), **{k: getattr(node, k) for k in node._attributes}), ty)

    def _assign(self, node: ast.Assign) -> list[Stmt]:
        if len(node.targets) != 1:
            raise self.error(
                node,
                "chained assignment (a = b = ...) is not supported",
                kind=UnsupportedFeatureError,
            )
        target = node.targets[0]
        if pl_call_name(node.value) == "yield_":
            assert isinstance(node.value, ast.Call)
            return self._yield(node.value.args, node.value.keywords, target, None, node)
        template = self._template_of(node.value)
        if template is not None and isinstance(target, (ast.Name, ast.Tuple, ast.List)):
            assert isinstance(node.value, ast.Call)
            return self._splice_into(template, node.value, target, None, node)
        if isinstance(target, ast.Name):
            if isinstance(node.value, ast.Constant) and node.value.value is None:
                # `tid = None`, "no producer yet": the task id of no task (docs/coming-from-pypto.md)
                value: Expr = Call("system.task_invalid", (), span=self.span(node.value))
            else:
                value = self._assigned_value(node.value, target.id)
            var = self._bind(target, self.type_of(value))
            return [_new_assignment(var, value, False, self.span(node))]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self._unpack(target, node)
        if isinstance(target, ast.Subscript):
            return [self._subscript_write(target, node)]
        raise self.error(target, "unsupported assignment target", kind=UnsupportedFeatureError)

    def _assigned_value(self, value: ast.expr, name: str) -> Expr:
        """`value`, the whole right side of `name = value`, parsed knowing its name
        (`assigned_name`). The entry lives while `value` is parsed only: a large method is parsed
        a piece at a time and each piece's syntax tree freed, so a later node could reuse an id."""
        self._assigned[id(value)] = name
        try:
            return self.expr(value)
        finally:
            del self._assigned[id(value)]

    def _ann_assign(self, node: ast.AnnAssign) -> list[Stmt]:
        if isinstance(node.target, (ast.Tuple, ast.List)):
            raise self.error(
                node,
                "Type annotations cannot be used inline with tuple unpacking",
                hint="Type annotations cannot be used inline with tuple unpacking; annotate each name separately",
            )
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "only a plain name can be annotated")
        if node.value is None:
            raise self.error(node, f"'{node.target.id}' is declared without a value")
        ty = self.type_annotation(node.annotation)
        if pl_call_name(node.value) == "yield_":
            assert isinstance(node.value, ast.Call)
            return self._yield(node.value.args, node.value.keywords, node.target, ty, node)
        template = self._template_of(node.value)
        if template is not None:
            assert isinstance(node.value, ast.Call)
            return self._splice_into(template, node.value, node.target, ty, node)
        value = self._assigned_value(node.value, node.target.id)
        self._check_loaded_tile(node.annotation, ty, value)
        var = self._bind(node.target, ty)
        return [AssignStmt(var, value, annotated=True, span=self.span(node))]

    def _check_loaded_tile(self, annotation: ast.expr, ty: Type, value: Expr) -> None:
        """A tile annotation on a `pl.tile.load` must say the shape and dtype the load gives
        (docs/coming-from-pypto.md#what-differs-and-why): its sizes are the load's `shapes`."""
        load = OPS.lookup("tile.load")
        if not (isinstance(value, Call) and isinstance(ty, TileType) and load is not None and OPS.lookup(value.op) is load):
            return
        loaded = self.type_of(value)
        if not isinstance(loaded, TileType):
            return
        if len(loaded.shape) == len(ty.shape):
            for dim, (said, got) in enumerate(zip(ty.shape, loaded.shape, strict=True)):
                if isinstance(said, ConstInt) and isinstance(got, ConstInt) and said.value != got.value:
                    raise self.error(
                        annotation,
                        f"the annotation's shape dimension {dim} = {said.value}, but pl.tile.load gives {got.value}",
                        hint=f"annotate the tile with the sizes it loads: dimension {dim} is {got.value}",
                        kind=ParserTypeError,
                    )
        if ty.dtype is not loaded.dtype:
            raise self.error(
                annotation,
                f"the annotation's dtype {ty.dtype.name} is not the dtype {loaded.dtype.name} pl.tile.load gives",
                hint=f"annotate pl.{loaded.dtype.name}, or convert the loaded tile with pl.tile.cast",
                kind=ParserTypeError,
            )

    def _unpack(self, target: ast.Tuple | ast.List, node: ast.Assign) -> list[Stmt]:
        names: list[ast.Name] = []
        for elt in target.elts:
            if not isinstance(elt, ast.Name):
                raise self.error(elt, "tuple unpacking may only bind plain names")
            names.append(elt)
        value = self.expr(node.value)
        ty = self.type_of(value)
        if not isinstance(ty, TupleType):
            ty = TupleType(tuple(UnknownType() for _ in names))
        tmp = Var(f"ret__tmp_v{self._fn.tmp_counter}", ty, span=self.span(node))
        self._fn.tmp_counter += 1
        out: list[Stmt] = [AssignStmt(tmp, value, annotated=False, span=self.span(node))]
        bound: list[Var] = []
        for index, name in enumerate(names):
            elt_ty = ty.types[index] if index < len(ty.types) else UnknownType()
            var = self._bind(name, elt_ty)
            bound.append(var)
            item = TupleGetItemExpr(tmp, index, span=self.span(name))
            out.append(AssignStmt(var, item, annotated=False, span=self.span(name)))
        if isinstance(value, Submit) and bound:
            self._record_producer(bound[:-1], bound[-1])
        return out

    def _subscript_write(self, target: ast.Subscript, node: ast.Assign) -> Stmt:
        """`dst[...] = src` rebinds `dst` to the store (docs/coming-from-pypto.md#subscripts)."""
        if self._fn.strict_ssa:
            raise self.error(
                target,
                "a subscript write rebinds its target, so it is only supported before SSA conversion "
                "(this function has strict_ssa=True)",
                hint="store into a new name, out2 = pl.tensor.assemble(out, src, [i, j]), or drop strict_ssa=True",
                kind=UnsupportedFeatureError,
            )
        if not isinstance(target.value, ast.Name) or target.value.id not in self._fn.names:
            raise self.error(target.value, "a subscript assignment must write into a bound variable")
        var = self._fn.names[target.value.id]
        span = self.span(node)
        if isinstance(var.type, ArrayType):
            index_nodes = subscripts.index_nodes(target)
            if len(index_nodes) != 1 or isinstance(index_nodes[0], ast.Slice):
                raise self.error(target, "an array element write takes one index: arr[i] = v", kind=ParserTypeError)
            index = self.expr(index_nodes[0])
            value = self.element_literal(self.expr(node.value), var.type.dtype, node.value)
            call = Call("array.update_element", (var, index, value), span=span)
            return AssignStmt(var, call, annotated=False, span=span)
        return AssignStmt(var, subscripts.write(self, target, var, node.value, span), annotated=False, span=span)

    # -- expression statements ----------------------------------------------------------------

    def _expr_stmt(self, node: ast.Expr) -> list[Stmt]:
        value = node.value
        if isinstance(value, ast.Constant) and (isinstance(value.value, str) or value.value is Ellipsis):
            return []  # a string statement is a comment; `...` is a placeholder, like `pass`
        if isinstance(value, ast.Yield):
            args = [] if value.value is None else list(_tuple_elements(value.value))
            return self._yield(args, [], None, None, node)
        special = pl_call_name(value)
        if special is not None:
            assert isinstance(value, ast.Call)
            if special == "yield_":
                return self._yield(value.args, value.keywords, None, None, node)
            if special == "static_print":
                self._static_print(value)
                return []
            if special == "static_assert":
                self._static_assert(value)
                return []
            if special == "dump_tag":
                self._dump_tag(value, node)
                return []
            if special == "cond":
                raise self.error(node, "pl.cond(...) must be the first statement of a pl.while_ body")
            if special == "spmd_submit":
                raise self.error(
                    node,
                    "the result of pl.spmd_submit must be unpacked: it yields the kernel's results and the task id",
                    hint="write out, tid = pl.spmd_submit(self.kernel, ..., core_num=N)",
                )
        template = self._template_of(value)
        if template is not None:
            assert isinstance(value, ast.Call)
            return self._splice(template, value)[0]
        return [EvalStmt(self.expr(value), span=self.span(node))]

    # -- @pl.inline templates -----------------------------------------------------------------

    def _template_of(self, value: ast.expr | None) -> InlineFunction | None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return self._templates.get(value.func.id)
        return None

    def _splice_into(
        self,
        template: InlineFunction,
        call: ast.Call,
        target: ast.expr,
        annotation: Type | None,
        node: ast.stmt,
    ) -> list[Stmt]:
        """`target = template(args)`: the spliced body, then the target bound to the result(s)."""
        stmts, results = self._splice(template, call)
        names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
        if not all(isinstance(n, ast.Name) for n in names):
            raise self.error(target, "the result of a @pl.inline call may only bind plain names")
        if len(names) != len(results):
            raise self.error(
                node, f"'{template.name}' returns {len(results)} value(s) into {len(names)} name(s)"
            )
        for name, result in zip(names, results, strict=True):
            assert isinstance(name, ast.Name)
            var = self._bind(name, annotation if annotation is not None else self.type_of(result))
            if var is not result:  # `a = passthrough(a)` binds nothing
                stmts.append(AssignStmt(var, result, annotated=annotation is not None, span=self.span(node)))
        return stmts

    def _splice(self, template: InlineFunction, call: ast.Call) -> tuple[list[Stmt], tuple[Expr, ...]]:
        """The template's body parsed in the caller, its parameters bound to the arguments: the
        statements before its `return`, and the returned values.

        An argument that is a variable is the parameter (a rebinding of the parameter rebinds
        it, as InlineFunctions does); any other argument is first bound to a variable named as
        the parameter. Names the body binds are its own: the caller does not see them after.
        """
        if template.name in self._splicing:
            raise self.error(
                call,
                f"the @pl.inline function '{template.name}' calls itself: splicing it would never end",
                kind=UnsupportedFeatureError,
            )
        fn = template.definition()
        params = [a.arg for a in fn.args.args]
        if call.keywords or len(call.args) != len(params):
            raise self.error(
                call,
                f"'{template.name}' expects {len(params)} argument(s), got {len(call.args) + len(call.keywords)}",
                hint=f"pass them by position: {template.name}({', '.join(params)})",
                kind=ParserTypeError,
            )
        values = [self.expr(a) for a in self.positional(call)]
        stmts: list[Stmt] = []
        names: dict[str, Var] = {}
        for param, value, arg in zip(params, values, call.args, strict=True):
            if isinstance(value, Var):
                names[param] = value
            else:
                var = Var(param, self.type_of(value), span=self.span(arg))
                stmts.append(AssignStmt(var, value, annotated=False, span=self.span(arg)))
                names[param] = var
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        last = body[-1] if body else None
        returns = last.value if isinstance(last, ast.Return) else None
        if isinstance(last, ast.Return):
            body = body[:-1]
        saved = (self.file, self.lines, self.line_offset, self.col_offset, self._fn.names, self.constants)
        self.file, self.lines, self.line_offset = template.file, template.source.splitlines(), template.line_offset
        self.col_offset = template.col_offset
        self._fn.names = names
        self.constants = {k: v for k, v in template.closure.items() if is_static_value(v)}
        self._splicing.append(template.name)
        try:
            for stmt in body:
                if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
                    raise self.error(
                        stmt,
                        f"a @pl.inline function returns only as its last statement ('{template.name}')",
                        kind=UnsupportedFeatureError,
                    )
                stmts.extend(self._stmt(stmt))
            results = self._values(returns)
        finally:
            self._splicing.pop()
            self.file, self.lines, self.line_offset, self.col_offset, self._fn.names, self.constants = saved
        return stmts, results

    def _static_print(self, call: ast.Call) -> None:
        if not call.args or call.keywords:
            raise self.error(
                call, "pl.static_print requires at least 1 argument (and no keywords)", hint='write pl.static_print("x:", x)'
            )
        pieces: list[str] = []
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                text = ""
                for part in arg.values:
                    if isinstance(part, ast.Constant):
                        text += str(part.value)
                    elif isinstance(part, ast.FormattedValue):
                        if part.conversion != -1:
                            raise self.error(
                                part,
                                f"f-string conversion (!{chr(part.conversion)}) is not supported in pl.static_print",
                                hint="write {x}: it shows the value and its type",
                                kind=UnsupportedFeatureError,
                            )
                        if part.format_spec is not None:
                            raise self.error(
                                part,
                                "an f-string format spec is not supported in pl.static_print",
                                hint="write {x}: it shows the value and its type",
                                kind=UnsupportedFeatureError,
                            )
                        text += self.describe(part.value)
                pieces.append(text)
            else:
                pieces.append(self.describe(arg))
        line = call.lineno + self.line_offset
        print(f"static_print [{self.file}:{line}]: {' '.join(pieces)}")

    def _static_assert(self, call: ast.Call) -> None:
        if not 1 <= len(call.args) <= 2:
            raise self.error(
                call,
                "pl.static_assert takes 1 or 2 arguments: a condition and an optional message",
                hint='write pl.static_assert(N > 0, "N must be positive")',
            )
        message_node: ast.expr | None = call.args[1] if len(call.args) == 2 else None
        for kw in call.keywords:
            if kw.arg != "msg" or message_node is not None:
                raise self.error(call, "pl.static_assert takes a condition and an optional msg=")
            message_node = kw.value
        message = ""
        if message_node is not None:
            if not (isinstance(message_node, ast.Constant) and isinstance(message_node.value, str)):
                raise self.error(message_node, "the pl.static_assert message must be a string literal")
            message = message_node.value
        try:
            ok = static_eval(call.args[0], self.constants, sizes=self.static_sizes)
        except NotStatic as exc:
            raise self.error(
                exc.node,
                f"pl.static_assert condition is not compile-time evaluable: {exc.message}",
                hint="assert on literals and module-level constants; a runtime value is checked at run time",
            ) from None
        if not ok:
            raise self.error(call, f"static_assert failed: {message}" if message else "static_assert failed")

    def _dump_tag(self, call: ast.Call, node: ast.Expr) -> None:
        """`pl.dump_tag(t)` leaves no statement: it marks the value `t` names now, and each later
        dispatch of this function passed that value (and each later `pl.at` scope) lists it in its
        dump selection (docs/specification.md, "Dump tags")."""
        if self._fn.func_type not in _DUMP_TAG_FUNCTIONS:
            raise self.error(
                node,
                "pl.dump_tag is only valid inside an Orchestration or Inline function: a kernel body "
                "has no dispatch of its own to dump",
                hint="move the dump_tag into the orchestration function (or an Inline helper it calls)",
            )
        if len(call.args) != 1 or call.keywords:
            raise self.error(
                call, "pl.dump_tag takes exactly one positional argument, the tensor to mark", hint="write pl.dump_tag(t)"
            )
        arg = call.args[0]
        if not isinstance(arg, ast.Name):
            raise self.error(
                arg,
                "pl.dump_tag takes a bare variable name, not an expression",
                hint="bind the value to a name first, then write pl.dump_tag(name)",
            )
        var = self.lookup_local(arg.id)
        if var is None:
            raise self.error(
                arg, f"pl.dump_tag: '{arg.id}' is not bound at this point", hint="tag a value after it is assigned"
            )
        if not isinstance(var.type, (TensorType, UnknownType)):
            raise self.error(
                arg,
                f"pl.dump_tag: '{arg.id}' is not a tensor",
                hint="only tensors passed to a dispatch can be dumped",
                kind=ParserTypeError,
            )
        self._fn.tagged.setdefault(var.id, var)

    # -- yield --------------------------------------------------------------------------------

    def _yield(
        self,
        args: list[ast.expr],
        keywords: list[ast.keyword],
        target: ast.expr | None,
        annotation: Type | None,
        node: ast.stmt,
    ) -> list[Stmt]:
        if keywords:
            raise self.error(node, "pl.yield_ takes positional values only")
        if not self._fn.yields:
            raise self.error(node, "pl.yield_ is only valid inside a loop or if body")
        spliced: list[Stmt] = []
        values = tuple(self._yield_value(a, spliced) for a in args)
        names: tuple[ast.Name, ...] | None = None
        if isinstance(target, ast.Name):
            names = (target,)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not all(isinstance(e, ast.Name) for e in target.elts):
                raise self.error(target, "pl.yield_ results may only bind plain names")
            names = tuple(e for e in target.elts if isinstance(e, ast.Name))
        elif target is not None:
            raise self.error(target, "pl.yield_ results may only bind plain names")
        ctx = self._fn.yields[-1]
        if names is None and ctx.carried and ctx.kind in ("for", "while_"):
            loop = "pl.while_" if ctx.kind == "while_" else "a loop"
            raise self.error(
                node,
                f"{loop} with non-empty init_values requires an assignment-form pl.yield_",
                hint="bind the loop results: x_next = pl.yield_(...)",
            )
        if names is not None:
            for name in names:
                self.check_name(name.id, name)
            if len(names) != len(values):
                raise self.error(node, f"pl.yield_ yields {len(values)} value(s) into {len(names)} name(s)")
        if ctx.carried and len(values) != ctx.carried:
            raise self.error(node, f"pl.yield_ yields {len(values)} value(s) but the loop carries {ctx.carried}")
        key = None if names is None else tuple(n.id for n in names)
        if ctx.seen and key != ctx.names:
            raise self.error(node, "every pl.yield_ of one body must assign the same variables")
        if not ctx.seen:
            ctx.seen = True
            ctx.names = key
            ctx.value_types = tuple(self.type_of(v) for v in values)
            ctx.annotation = annotation
            ctx.node = node
        return [*spliced, YieldStmt(values, annotated=annotation is not None, span=self.span(node))]

    def _yield_value(self, arg: ast.expr, spliced: list[Stmt]) -> Expr:
        """A value of `pl.yield_(...)`; a `@pl.inline` call there is spliced before the yield,
        which yields what the helper returns (docs/coming-from-pypto.md#functions-outside-a-program)."""
        template = self._template_of(arg)
        if template is None:
            return self.expr(arg)
        assert isinstance(arg, ast.Call)
        stmts, results = self._splice(template, arg)
        if len(results) != 1:
            raise self.error(
                arg,
                f"'{template.name}' returns {len(results)} values where pl.yield_ takes one",
                hint=f"bind its results first: a, b = {template.name}(...)",
            )
        spliced.extend(stmts)
        return results[0]

    def _return_vars(self, ctx: _YieldContext, iter_args: tuple[IterArg, ...]) -> tuple[Var, ...]:
        if not ctx.names:
            return ()
        out: list[Var] = []
        for index, name in enumerate(ctx.names):
            existing = self._fn.names.get(name)
            if existing is not None and existing.id not in self._fn.header_ids:
                out.append(existing)
                continue
            ty: Type
            if ctx.annotation is not None and len(ctx.names) == 1:
                ty = ctx.annotation
            elif index < len(iter_args):
                ty = iter_args[index].type
            elif index < len(ctx.value_types):
                ty = ctx.value_types[index]
            else:
                ty = UnknownType()
            var = Var(name, ty, span=self.span(ctx.node) if ctx.node is not None else None)
            self._fn.names[name] = var
            out.append(var)
        return tuple(out)

    # -- control flow -------------------------------------------------------------------------

    def _condition(self, node: ast.expr, what: str) -> Expr:
        """An `if` / `while` / `pl.cond` condition: a scalar of a known dtype other than BOOL (`if 1:`,
        `while n:` on an INDEX) is rejected, as PyPTO does; an untyped one is left to the source."""
        cond = self.expr(node)
        ty = self.type_of(cond)
        if isinstance(ty, ScalarType) and ty.dtype is not DataType.BOOL:
            raise self.error(
                node,
                f"the {what} condition must be a Bool-typed scalar, not {ty.dtype.name}",
                hint="compare it: `n > 0`, `n != 0`",
                kind=ParserTypeError,
            )
        return cond

    def _if(self, node: ast.If) -> IfStmt:
        cond = self._condition(node.test, "if")
        then_ctx = _YieldContext("if")
        tagged = dict(self._fn.tagged)
        self._fn.yields.append(then_ctx)
        then_body = self._block(node.body, node)
        self._fn.yields.pop()
        untagged = [i for i in tagged if i not in self._fn.tagged]
        self._fn.tagged.update((i, tagged[i]) for i in untagged)  # the else branch reads the old values
        else_body: SeqStmts | None = None
        else_ctx = _YieldContext("if")
        if node.orelse:
            self._fn.yields.append(else_ctx)
            else_body = self._block(node.orelse, node.orelse[0])
            self._fn.yields.pop()
        for i in untagged:
            self._fn.tagged.pop(i, None)
        if then_ctx.names or else_ctx.names:
            if else_body is None:
                raise self.error(
                    node, "an if whose branch yields needs an else branch yielding the same variables"
                )
            if then_ctx.names != else_ctx.names:
                raise self.error(
                    else_ctx.node or node,
                    "Both branches must yield the same variables",
                    hint=f"yield into {', '.join(then_ctx.names or ())} in both branches",
                )
        return_vars = self._return_vars(then_ctx, ())
        return IfStmt(cond, then_body, else_body, return_vars, span=self.span(node))

    def _header_scope_enter(self, names: list[tuple[str, Var]]) -> dict[str, Var | None]:
        saved: dict[str, Var | None] = {}
        for name, var in names:
            if name in saved:
                line, col = (var.span.line - self.line_offset, var.span.col - self.col_offset) if var.span else (1, 0)
                raise self.error_at(line, col, f"'{name}' is bound twice in one loop header")
            saved[name] = self._fn.names.get(name)
            self._fn.names[name] = var
            self._fn.header_ids.add(var.id)
        return saved

    def _header_scope_exit(self, saved: dict[str, Var | None], names: list[tuple[str, Var]]) -> None:
        for _, var in names:
            self._fn.header_ids.discard(var.id)
        for name, previous in saved.items():
            if previous is None:
                self._fn.names.pop(name, None)
            else:
                self._fn.names[name] = previous

    def _for(self, node: ast.For) -> Stmt:
        if node.orelse:
            raise self.error(node, "for ... else is not supported", kind=UnsupportedFeatureError)
        kind = pl_call_name(node.iter)
        if not isinstance(node.iter, ast.Call) or kind is None:
            raise self.error(
                node.iter,
                "a for loop must use pl.range(), pl.parallel(), pl.unroll(), pl.while_(), pl.spmd() or pl.split_aiv()",
                hint="write `for i in pl.range(n):`",
            )
        if kind in _RANGE_LOOPS:
            return self._range_loop(node, node.iter, _RANGE_LOOPS[kind])
        if kind == "while_":
            return self._while_loop(node, node.iter)
        if kind in _FOR_SCOPES:
            return self._for_scope(node, node.iter, kind)
        raise self.error(node.iter, f"pl.{kind}(...) cannot be iterated by a for loop")

    def _init_values(self, call: ast.Call) -> tuple[list[ast.keyword], tuple[Expr, ...]]:
        rest: list[ast.keyword] = []
        inits: tuple[Expr, ...] = ()
        for kw in call.keywords:
            if kw.arg == "init_values":
                if not isinstance(kw.value, (ast.Tuple, ast.List)):
                    raise self.error(kw.value, "init_values must be a tuple: init_values=(x,)")
                inits = tuple(self.expr(e) for e in kw.value.elts)
            else:
                rest.append(kw)
        return rest, inits

    def _header_names(self, target: ast.expr) -> list[ast.Name]:
        if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
            raise self.error(target, "loop-carried values are declared as a tuple of names: (a, b)")
        return [e for e in target.elts if isinstance(e, ast.Name)]

    def _iter_args(self, names: list[ast.Name], inits: tuple[Expr, ...], node: ast.AST) -> tuple[IterArg, ...]:
        if len(names) != len(inits):
            raise self.error(node, f"Mismatch: the loop header declares {len(names)} carried value(s) but init_values has {len(inits)}")
        out: list[IterArg] = []
        for name, init in zip(names, inits, strict=True):
            self.check_name(name.id, name)
            out.append(IterArg(name.id, self.type_of(init), init_value=init, span=self.span(name)))
        return tuple(out)

    def _range_loop(self, node: ast.For, call: ast.Call, kind: ForKind) -> ForStmt:
        rest, inits = self._init_values(call)
        options = [kw for kw in rest if kw.arg in _LOOP_OPTIONS.get(kind, ())]
        rest = [kw for kw in rest if kw not in options]
        if rest:
            raise self.error(rest[0].value, f"pl.{kind.value} does not take the keyword '{rest[0].arg}'")
        attrs = tuple(Keyword(str(kw.arg), self.expr(kw.value), span=self.span(kw.value)) for kw in options)
        if not 1 <= len(call.args) <= 3 or any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(call, f"pl.{kind.value} takes 1 to 3 positional arguments: (stop), (start, stop) or (start, stop, step)")
        bounds = [self.expr(a) for a in call.args]
        span = self.span(call)
        start: Expr
        stop: Expr
        step: Expr
        if len(bounds) == 1:
            start, stop, step = ConstInt(0, span=span), bounds[0], ConstInt(1, span=span)
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], ConstInt(1, span=span)
        else:
            start, stop, step = bounds
        target = node.target
        carried: list[ast.Name] = []
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
            carried = self._header_names(target.elts[1])
            target = target.elts[0]
        if not isinstance(target, ast.Name):
            raise self.error(node.target, "the loop header must be `i` or `i, (a, b)`")
        if inits and not carried:
            raise self.error(node.target, "with init_values the loop target must be the index and the carried values: for i, (a,) in ...")
        self.check_name(target.id, target)
        loop_var = Var(target.id, ScalarType(DataType.INDEX), span=self.span(target))
        iter_args = self._iter_args(carried, inits, node.target)
        _, return_vars, body = self._loop_body(node, kind.value, "for", [(target.id, loop_var)], iter_args, node.body)
        return ForStmt(loop_var, start, stop, step, iter_args, body, return_vars, kind=kind, attrs=attrs, span=self.span(node))

    def _loop_body(
        self,
        node: ast.stmt,
        loop_kind: str,
        yield_kind: str,
        header: list[tuple[str, Var]],
        iter_args: tuple[IterArg, ...],
        body_nodes: list[ast.stmt],
        cond_node: ast.expr | None = None,
    ) -> tuple[Expr | None, tuple[Var, ...], SeqStmts]:
        """Parse a loop body with its header names in scope; also the pl.while_ condition."""
        names = header + [(a.name, a) for a in iter_args]
        cond: Expr | None = None
        saved = self._header_scope_enter_at(node, names)
        ctx = _YieldContext(yield_kind, carried=len(iter_args))
        self._fn.loops.append(loop_kind)
        self._fn.yields.append(ctx)
        try:
            if cond_node is not None:
                cond = self._condition(cond_node, "while")
            body = self._block(body_nodes, node)
        finally:
            self._fn.yields.pop()
            self._fn.loops.pop()
        self._header_scope_exit(saved, names)
        return cond, self._return_vars(ctx, iter_args), body

    def _header_scope_enter_at(self, node: ast.AST, names: list[tuple[str, Var]]) -> dict[str, Var | None]:
        try:
            return self._header_scope_enter(names)
        except ParserError as exc:
            raise self.error(node, exc.message) from None

    def _while_loop(self, node: ast.For, call: ast.Call) -> WhileStmt:
        rest, inits = self._init_values(call)
        if call.args or rest:
            raise self.error(call, "pl.while_ takes only init_values=(...)")
        names = self._header_names(node.target)
        iter_args = self._iter_args(names, inits, node.target)
        body_nodes = list(node.body)
        first = body_nodes[0] if body_nodes else None
        if not (isinstance(first, ast.Expr) and pl_call_name(first.value) == "cond"):
            raise self.error(
                first or node,
                "the first statement of a pl.while_ body must be pl.cond(<condition>)",
                hint="start the body with pl.cond(x < n)",
            )
        cond_call = first.value
        assert isinstance(cond_call, ast.Call)
        if len(cond_call.args) != 1 or cond_call.keywords:
            raise self.error(cond_call, "pl.cond takes exactly one condition")
        cond, return_vars, body = self._loop_body(
            node, "while", "while_", [], iter_args, body_nodes[1:], cond_node=cond_call.args[0]
        )
        assert cond is not None
        return WhileStmt(cond, iter_args, body, return_vars, natural=False, span=self.span(node))

    def _while(self, node: ast.While) -> WhileStmt:
        if node.orelse:
            raise self.error(node, "while ... else is not supported", kind=UnsupportedFeatureError)
        cond = self._condition(node.test, "while")
        _, return_vars, body = self._loop_body(node, "while", "while", [], (), node.body)
        return WhileStmt(cond, (), body, return_vars, natural=True, span=self.span(node))

    def _break_continue(self, node: ast.Break | ast.Continue) -> Stmt:
        word = "break" if isinstance(node, ast.Break) else "continue"
        loops = self._fn.loops
        if not loops:
            raise self.error(
                node, f"'{word}' outside a loop", hint=f"'{word}' belongs in a pl.range or while body", kind=InvalidOperationError
            )
        innermost = loops[-1]
        if innermost in ("parallel", "unroll"):
            kind = "a parallel" if innermost == "parallel" else "an unrolled"
            raise self.error(
                node,
                f"'{word}' is not supported when the innermost loop is pl.{innermost}() ({kind} loop)",
                hint="break/continue need a sequential innermost loop (pl.range or while)",
                kind=InvalidOperationError,
            )
        if innermost == "split_aiv":
            raise self.error(
                node,
                f"'{word}' not supported inside a pl.split_aiv region: its body is a scope, not a loop",
                hint="break/continue need a sequential innermost loop (pl.range or while)",
                kind=InvalidOperationError,
            )
        if innermost in _FOR_SCOPES:
            raise self.error(
                node,
                f"'{word}' cannot leave a pl.{innermost} body",
                hint="break/continue need a sequential innermost loop (pl.range or while)",
                kind=InvalidOperationError,
            )
        return BreakStmt(span=self.span(node)) if word == "break" else ContinueStmt(span=self.span(node))

    # -- scopes -------------------------------------------------------------------------------

    def _scope_arguments(self, call: ast.Call) -> tuple[tuple[Expr, ...], tuple[Keyword, ...], tuple[Var, ...]]:
        args = tuple(self.expr(a) for a in self.positional(call))
        kwargs: list[Keyword] = []
        dumps: tuple[Var, ...] = ()
        for kw in call.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs is not supported", kind=UnsupportedFeatureError)
            if kw.arg == "dumps":
                dumps = self.dumps(kw.value)
            elif kw.arg == "deps":
                kwargs.append(Keyword(kw.arg, self.deps_value(kw.value), span=self.span(kw.value)))
            elif kw.arg == "optimizations":
                entries = spmd_forms.canonical_optimizations(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
                kwargs += [entries] if entries is not None else []
            elif kw.arg == "predicate":
                kwargs.append(Keyword(kw.arg, self.predicate(kw.value), span=self.span(kw.value)))
            else:
                kwargs.append(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
        if pl_call_name(call) == "spmd":
            args = (self._block_count(call),)
            kwargs = [k for k in kwargs if k.name != "core_num"]
        return args, tuple(kwargs), dumps

    def _block_count(self, call: ast.Call) -> Expr:
        """The block count of `pl.spmd(N)` or `pl.spmd(core_num=N)`; folded when it is known while
        parsing (`MAX_BLOCKS // BATCH`), as PyPTO folds closure arithmetic."""
        node = call.args[0] if call.args else next(kw.value for kw in call.keywords if kw.arg == "core_num")
        try:
            value = static_eval(node, self.constants, sizes=self.static_sizes)
        except NotStatic:
            return self.expr(node)
        return ConstInt(value, span=self.span(node)) if type(value) is int else self.expr(node)

    def _for_scope(self, node: ast.For, call: ast.Call, constructor: str) -> ScopeStmt:
        if constructor == "split_aiv":
            return self._split_aiv_loop(node, call)
        if not isinstance(node.target, ast.Name):
            if constructor == "spmd":
                raise self.error(
                    node.target,
                    "for ... in pl.spmd(...) must use a single loop variable",
                    hint=_SPMD_FOR_HINT,
                )
            raise self.error(node.target, f"for ... in pl.{constructor}(...) binds one name")
        if constructor == "spmd":
            self._check_spmd_loop_keywords(call)
        self._check_scope_call(call, constructor)
        args, kwargs, dumps = self._scope_arguments(call)
        self.check_predicate_deps(kwargs, call, takes_deps=False)
        self.check_name(node.target.id, node.target)
        var = Var(node.target.id, ScalarType(DataType.INDEX), span=self.span(node.target))
        header = [(node.target.id, var)]
        at_entry = self.dump_tagged()
        saved = self._header_scope_enter_at(node, header)
        self._fn.loops.append(constructor)
        self._fn.scopes.append(constructor)
        try:
            body = self._block(node.body, node)
        finally:
            self._fn.loops.pop()
            self._fn.scopes.pop()
        self._header_scope_exit(saved, header)
        dumps = self._seeded(constructor, dumps, at_entry)
        span = self.span(node)
        if constructor == "spmd":
            inner = SeqStmts((spmd_forms.block_index(var, span), *body.stmts))
            return self._spmd_scope(inner, args, kwargs, dumps, None, wrap=True, span=span)
        return ScopeStmt(constructor, body, args, kwargs, var, True, dumps, span=span)

    def _split_aiv_loop(self, node: ast.For, call: ast.Call) -> ScopeStmt:
        """`for aiv_id in pl.split_aiv(2, mode=...)`: a region binding the lane index first, in the
        InCore scope the parser adds where no core context is open (`split_aiv_forms`)."""
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "for ... in pl.split_aiv(...) binds a single loop variable", hint="write for aiv_id in pl.split_aiv(2, mode=...)")
        if "split_aiv" in self._fn.scopes:
            raise self.error(node, "a pl.split_aiv region cannot be nested inside another pl.split_aiv region")
        keywords = {kw.arg: kw for kw in call.keywords}
        for name, kw in keywords.items():
            if name not in ("mode", "name_hint"):
                raise self.error(kw.value, f"pl.split_aiv does not accept '{name}='", hint="pl.split_aiv takes the lane count and mode=")
        count = call.args[0] if call.args else None
        if len(call.args) != 1 or not (isinstance(count, ast.Constant) and type(count.value) is int and count.value == 2):
            raise self.error(count or call, "pl.split_aiv requires n == 2: a region runs on the two AIV lanes", hint="write pl.split_aiv(2, mode=...)")
        if "mode" not in keywords:
            raise self.error(call, "pl.split_aiv requires mode=", hint="write pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)")
        args, kwargs, _ = self._scope_arguments(call)
        written = next(k.value for k in kwargs if k.name == "mode")
        mode = enum_of_symbol(written.path) if isinstance(written, Symbol) else None
        if not isinstance(mode, SplitMode):
            raise self.error(keywords["mode"].value, "mode= takes a pl.SplitMode member", hint="pl.SplitMode.UP_DOWN, LEFT_RIGHT or NONE")
        self.check_name(node.target.id, node.target)
        var = Var(node.target.id, ScalarType(DataType.INDEX), span=self.span(node.target))
        header = [(node.target.id, var)]
        at_entry = self.dump_tagged()
        saved = self._header_scope_enter_at(node, header)
        self._fn.loops.append("split_aiv")
        self._fn.scopes.append("split_aiv")
        self.split_modes.append(mode)
        try:
            body = self._block(node.body, node)
        finally:
            self._fn.loops.pop()
            self._fn.scopes.pop()
            self.split_modes.pop()
        self._header_scope_exit(saved, header)
        span = self.span(node)
        inner = SeqStmts((split_aiv_forms.lane_index(var, span), *body.stmts))
        region = ScopeStmt("split_aiv", inner, args, kwargs, span=span)
        core = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
        if self._fn.func_type in core or any(c in ("at", "spmd") for c in self._fn.scopes):
            return region
        return split_aiv_forms.core_wrapper(region, self._seeded("at", (), at_entry), span)

    def _with(self, node: ast.With) -> list[Stmt]:
        if len(node.items) != 1:
            raise self.error(node, "a with statement takes exactly one pl scope")
        item = node.items[0]
        constructor = pl_call_name(item.context_expr)
        if constructor not in _WITH_SCOPES or not isinstance(item.context_expr, ast.Call):
            raise self.error(
                item.context_expr,
                "a with statement must open a pl scope: "
                + ", ".join(f"pl.{name}(...)" for name in _WITH_SCOPES),
            )
        assert constructor is not None
        call = item.context_expr
        if item.optional_vars is not None:
            self._check_capture(item.optional_vars, call, constructor)
        elif constructor == "spmd" and any(kw.arg == "deps" for kw in call.keywords):
            deps = next(kw for kw in call.keywords if kw.arg == "deps")
            raise self.error(
                deps.value,
                "with pl.spmd(...) does not accept 'deps=' without a TaskId capture",
                hint="capture the dispatch's task id: with pl.spmd(N, deps=[...]) as tid:",
            )
        self._check_scope_call(call, constructor)
        args, kwargs, dumps = self._scope_arguments(call)
        self.check_predicate_deps(kwargs, call, takes_deps=item.optional_vars is not None or constructor != "spmd")
        var: Var | None = None
        if item.optional_vars is not None:
            assert isinstance(item.optional_vars, ast.Name)
            var = self._bind(item.optional_vars, ScalarType(DataType.TASK_ID))
        at_entry = self.dump_tagged()  # a carrier dumps what is tagged at its entry and read inside
        manual = constructor == "scope" and "MANUAL" in ast.unparse(call)  # a MANUAL scope, however spelled
        self._fn.scopes.append("manual_scope" if manual else constructor)
        try:
            body = self._block(node.body, node)
        finally:
            self._fn.scopes.pop()
        span = self.span(node)
        if constructor == "spmd":
            wrap = self._check_spmd_body(node, call, body)
        dumps = self._seeded(constructor, dumps, at_entry)
        if var is not None:  # what the scope's body writes, its task writes
            self._record_producer((n.var for n in walk(body) if isinstance(n, AssignStmt)), var)
        if constructor == "spmd":
            scope = self._spmd_scope(body, args, kwargs, dumps, var, wrap=wrap, span=span)
        else:
            scope = ScopeStmt(constructor, body, args, kwargs, var, False, dumps, span=span)
        if var is None:
            return [scope]
        # the capture's definition before the scope, as PyPTO's parser writes it; it prints as `as tid`
        placeholder = AssignStmt(var, Call(spmd_forms.TASK_INVALID_OP, (), span=span), annotated=False, span=span)
        return [placeholder, scope]

    def _spmd_scope(
        self,
        body: Stmt,
        args: tuple[Expr, ...],
        kwargs: tuple[Keyword, ...],
        dumps: tuple[Var, ...],
        var: Var | None,
        *,
        wrap: bool,
        span: Span | None,
    ) -> ScopeStmt:
        """A `pl.spmd` scope as PyPTO's parser builds it: the block count positional, a flag
        written False left out; with `wrap`, its body inside the InCore scope that carries the
        name and the `optimizations=` (`nanopto.ir_terms.spmd_forms`)."""
        count = args[0] if args else next(k.value for k in kwargs if k.name == "core_num")
        name = next((k.value for k in kwargs if k.name == "name_hint"), None)
        name_hint = name.value if isinstance(name, ConstStr) else ""
        optimizations = next((k for k in kwargs if k.name == "optimizations"), None)
        rest = [
            k
            for k in kwargs
            if k.name not in ("core_num", "name_hint", "optimizations")
            and not (k.name in ("sync_start", "allow_early_resolve") and k.value == ConstBool(False))
        ]
        if wrap:
            outer_name, inner_name = spmd_forms.split_name_hint(name_hint)
            body = spmd_forms.wrapped(body, inner_name, optimizations, span)
        else:
            outer_name = name_hint
        named = [Keyword("name_hint", ConstStr(outer_name))] if outer_name else []
        return ScopeStmt("spmd", body, (count,), (*named, *rest), var, False, dumps, span=span)

    # -- the rules on scope calls (docs/specification.md, "Statement forms") --------------------

    def _check_scope_call(self, call: ast.Call, constructor: str) -> None:
        """Reject the scope calls PyPTO's parser rejects, each at the offending argument."""
        form = f"pl.{constructor}"
        for kw in call.keywords:
            if kw.arg is None and constructor == "spmd":
                raise self.error(kw.value, "pl.spmd does not accept **kwargs", hint="write each keyword out")
        keywords: dict[str | None, ast.keyword] = {kw.arg: kw for kw in call.keywords if kw.arg is not None}
        for flag in ("allow_early_resolve", "sync_start"):
            if flag in keywords and constructor in ("spmd", "at"):
                self.check_bool_literal(keywords[flag], form)
        for flag in ("allow_early_resolve", "predicate"):
            if flag in keywords and constructor == "spmd" and "cluster" in self._fn.scopes:
                raise self.error(
                    keywords[flag].value,
                    f"pl.spmd({flag}=...) cannot be nested inside `pl.cluster()`: the scope is unwrapped "
                    f"into the Group function and never launched on its own, so the {flag} would be lost",
                    hint=f"drop {flag}= here, or move the pl.spmd out of the pl.cluster()",
                )
        no_dep = keywords.get("no_dep_args")
        if no_dep is not None:
            self._check_no_dep_args(no_dep.value)
        hint_kw = keywords.get("name_hint")
        if hint_kw is not None and constructor in ("spmd", "at") and isinstance(hint_kw.value, ast.Constant):
            value = hint_kw.value.value
            if not (isinstance(value, str) and value.isidentifier() and not keyword.iskeyword(value)):
                raise self.error(
                    hint_kw.value,
                    f"name_hint must be a valid non-keyword identifier, not {value!r}",
                    hint='name the scope like a variable: name_hint="load_tiles"',
                )
        optimizations = keywords.get("optimizations")
        if optimizations is not None and constructor in ("spmd", "at"):
            self._check_optimizations(optimizations, form)
        match constructor:
            case "graph":
                if len(call.args) != 1 or not (
                    isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
                ):
                    raise self.error(
                        call,
                        "pl.graph takes its name: the outlined function is named after it",
                        hint='write pl.graph("name")',
                    )
            case "spmd":
                self._check_block_count(call, keywords)
                for name, kw in keywords.items():
                    if name not in _SPMD_KEYWORDS:
                        raise self.error(
                            kw.value,
                            f"pl.spmd does not accept '{name}='",
                            hint="pl.spmd takes " + ", ".join(sorted(_SPMD_KEYWORDS)),
                        )
            case "at":
                self._check_at(call, keywords)
            case "scope" | "manual_scope" if call.args or (constructor == "manual_scope" and call.keywords):
                raise self.error(
                    call.args[0] if call.args else call.keywords[0].value,
                    f"pl.{constructor}() takes "
                    + ("no arguments" if constructor == "manual_scope" else "no positional arguments"),
                    hint=f"write with pl.{constructor}():",
                )
            case "scope" if "manual_scope" in self._fn.scopes and "MANUAL" not in ast.unparse(call):
                raise self.error(
                    call,
                    "pl.scope() cannot be nested inside a MANUAL scope (pl.manual_scope()): the runtime "
                    "forbids an AUTO scope inside a MANUAL one",
                    hint="close the enclosing pl.manual_scope() first",
                )
            case "scope":
                manual = keywords.get("mode")
                if self._fn.auto_scope and not (manual is not None and "MANUAL" in ast.unparse(manual.value)):
                    raise self.error(
                        call,
                        "a hand-placed pl.scope() needs @pl.function(auto_scope=False): with the "
                        "default auto_scope=True the compiler places AUTO scopes itself",
                        hint="decorate the function @pl.function(..., auto_scope=False), or use pl.manual_scope()",
                    )

    def _check_no_dep_args(self, value: ast.expr) -> None:
        """`no_dep_args=[a, b]` names tensors the scope reads, each once, as bare names."""
        hint = "write no_dep_args=[a, b] with the names of tensors the scope reads"
        if not isinstance(value, ast.List):
            raise self.error(value, "no_dep_args must be a list literal of tensor names", hint=hint, kind=ParserTypeError)
        seen: set[str] = set()
        for elt in value.elts:
            if not isinstance(elt, ast.Name):
                raise self.error(elt, "no_dep_args entries must be bare tensor names", hint=hint, kind=ParserTypeError)
            if self.lookup_local(elt.id) is None:
                raise self.error(elt, f"no_dep_args names an unknown name '{elt.id}'", hint=hint, kind=ParserTypeError)
            if elt.id in seen:
                raise self.error(
                    elt, f"'{elt.id}' is listed more than once in no_dep_args", hint="list each name once", kind=ParserTypeError
                )
            seen.add(elt.id)

    def _check_spmd_loop_keywords(self, call: ast.Call) -> None:
        """The for-form binds the block index and captures no task id: no loop keyword, no deps=."""
        for kw in call.keywords:
            if kw.arg in _SPMD_LOOP_REFUSED:
                raise self.error(
                    kw.value,
                    f"pl.spmd() loop form does not accept '{kw.arg}='",
                    hint=_SPMD_FOR_HINT
                    if kw.arg != "deps"
                    else "capture the dispatch's task id with the with-form: with pl.spmd(N, deps=[...]) as tid:",
                )

    def _check_capture(self, target: ast.expr, call: ast.Call, constructor: str) -> None:
        """`as tid` captures the task id of a `pl.at` or `pl.spmd` dispatch, into one name."""
        if constructor not in ("at", "spmd"):
            raise self.error(
                target,
                f"`with pl.{constructor}(...) as name`: `as` only applies to pl.at(...) and pl.spmd(...), "
                "whose dispatch yields a task id",
                hint=f"drop the `as` clause: with pl.{constructor}(...):",
            )
        if constructor == "spmd" and "cluster" in self._fn.scopes:
            raise self.error(
                call,
                "`with pl.spmd(...) as tid:` cannot capture a TaskId when nested inside pl.cluster(): "
                "a cluster-nested pl.spmd is unwrapped into the Group function and never launched on its own",
                hint="capture the task id of a pl.spmd outside the pl.cluster()",
            )
        if not isinstance(target, ast.Name):
            raise self.error(
                target,
                f"the `as` target of pl.{constructor}(...) must be a plain variable name",
                hint=f"write with pl.{constructor}(...) as tid:",
            )

    def _check_optimizations(self, kw: ast.keyword, form: str) -> None:
        """`optimizations=` is a list of `pl.split(MODE)` and `pl.cross_core_slot(slot_num=N)`, each
        at most once; `pl.split(MODE, slot_num=N)` is the slot count's deprecated spelling."""
        if not isinstance(kw.value, ast.List):
            raise self.error(
                kw.value,
                f"{form}(optimizations=...) must be a list literal",
                hint=f"write {form}(..., optimizations=[pl.split(pl.SplitMode.UP_DOWN)])",
            )
        seen: set[str] = set()
        slot_counts = 0
        for entry in kw.value.elts:
            name = pl_call_name(entry)
            name = name.removeprefix("optimizations.") if name is not None else None
            if name not in ("split", "cross_core_slot") or not isinstance(entry, ast.Call):
                raise self.error(
                    entry,
                    f"Unsupported entry in {form}(optimizations=[...]): {ast.unparse(entry)}",
                    hint="the entries are pl.split(MODE) and pl.cross_core_slot(slot_num=N)",
                )
            if name in seen:
                raise self.error(entry, f"Duplicate 'pl.{name}(...)' entry in {form}(optimizations=[...])")
            seen.add(name)
            if name == "cross_core_slot" and entry.args:
                raise self.error(
                    entry.args[0], "pl.cross_core_slot takes no positional arguments", hint="write slot_num=N"
                )
            for option in entry.keywords:
                if option.arg not in ("slot_num", "mode"):
                    raise self.error(
                        option.value if option.arg is not None else entry,
                        f"Unknown keyword argument '{option.arg}' of pl.{name}(...)",
                        hint="pl.split takes the mode and slot_num=; pl.cross_core_slot takes slot_num=",
                    )
            if name == "cross_core_slot" and not any(option.arg == "slot_num" for option in entry.keywords):
                raise self.error(
                    entry, "pl.cross_core_slot requires the slot_num= keyword", hint="write pl.cross_core_slot(slot_num=N)"
                )
            slot_counts += any(option.arg == "slot_num" for option in entry.keywords)
            if slot_counts > 1:
                raise self.error(
                    entry,
                    f"{form}(optimizations=[...]) sets the cross-core slot count twice",
                    hint="give it once, as pl.cross_core_slot(slot_num=N)",
                )
            for option in entry.keywords:
                value = option.value
                if option.arg != "slot_num":
                    continue
                if not isinstance(value, ast.Constant) or type(value.value) is not int:
                    raise self.error(value, f"slot_num must be an integer literal, not {ast.unparse(value)}")
                if value.value <= 0:
                    raise self.error(value, f"slot_num must be positive, not {value.value}")

    def _check_block_count(self, call: ast.Call, keywords: dict[str | None, ast.keyword]) -> None:
        if len(call.args) > 1:
            raise self.error(
                call.args[1],
                "pl.spmd takes at most one positional argument, the block count (core_num)",
                hint="pass the other options by keyword",
            )
        if call.args and "core_num" in keywords:
            raise self.error(
                keywords["core_num"].value,
                "pl.spmd got multiple values for argument 'core_num'",
                hint="give the block count once: pl.spmd(N)",
            )
        count: ast.expr | None = call.args[0] if call.args else None
        if count is None and "core_num" in keywords:
            count = keywords["core_num"].value
        if count is None:
            raise self.error(call, "pl.spmd requires core_num, the block count", hint="write pl.spmd(N) with N > 0 blocks")
        try:
            value = static_eval(count, self.constants, sizes=self.static_sizes)
        except NotStatic:
            return
        if type(value) is not int:
            raise self.error(count, "pl.spmd core_num must be an integer expression", hint="write pl.spmd(N)")
        if value <= 0:
            raise self.error(count, "pl.spmd core_num must be a positive integer", hint="write pl.spmd(N) with N > 0")

    _AT_KEYWORDS = frozenset(
        {"level", "role", "name_hint", "optimizations", "deps", "no_dep_args", "allow_early_resolve", "dumps"}
    )

    def _check_at(self, call: ast.Call, keywords: dict[str | None, ast.keyword]) -> None:
        if not call.args and "level" not in keywords:
            raise self.error(call, "pl.at needs a level", hint="write pl.at(level=pl.Level.CORE_GROUP)")
        for name, kw in keywords.items():
            if name not in self._AT_KEYWORDS:
                raise self.error(
                    kw.value,
                    f"Unknown keyword argument '{name}' of pl.at",
                    hint="pl.at takes " + ", ".join(sorted(self._AT_KEYWORDS)),
                )
        written = call.args[0] if call.args else keywords["level"].value
        level = Level.__members__.get(ast.unparse(written).rsplit(".", 1)[-1])
        role = keywords.get("role")
        if level is Level.CORE_GROUP and role is not None:
            raise self.error(
                role.value,
                "role= is not supported with level=pl.Level.CORE_GROUP: a CORE_GROUP scope is an InCore scope",
                hint="drop role=, or use a level above CORE_GROUP for a hierarchy scope",
            )
        if (
            level is not None
            and level_to_linqu_level(level) >= level_to_linqu_level(Level.HOST)
            and role is not None
            and ast.unparse(role.value).endswith("SubWorker")
        ):
            raise self.error(
                role.value,
                "an inline `with pl.at(level>=HOST, role=pl.Role.SubWorker)` is not supported",
                hint="declare the SubWorker as its own function: @pl.function(level=..., role=pl.Role.SubWorker)",
            )
        optimizations = keywords.get("optimizations")
        if optimizations is not None and level is not Level.CORE_GROUP:
            raise self.error(
                optimizations.value,
                "optimizations=[pl.split(...)] and [pl.cross_core_slot(...)] are only supported with "
                "level=pl.Level.CORE_GROUP",
                hint="write pl.at(level=pl.Level.CORE_GROUP, optimizations=[...])",
            )

    def _check_spmd_body(self, node: ast.With, call: ast.Call, body: SeqStmts) -> bool:
        """Whether a `with pl.spmd(N):` body gets the InCore scope (docs/specification.md,
        "Statement forms"): a lone `pl.at` CORE_GROUP scope is that scope already, and then
        `optimizations=` belongs on it; a body that reads the block index, or one with
        `optimizations=`, gets it; a dispatch body (one kernel launch) does not. An Inline call
        counts as what its helper's body does (`spmd_forms.body_work`)."""
        spmd_line = next((kw for kw in call.keywords if kw.arg == "optimizations"), None)
        written = spmd_forms.carrier(body)
        if written is not None:
            if spmd_line is not None:
                twice = any(k.name == "optimizations" for k in written.kwargs)
                where = (
                    "is specified twice: on pl.spmd(...) and on the inner"
                    if twice
                    else "belongs on the InCore scope, but the body already provides one as the inner"
                )
                raise self.error(
                    spmd_line.value,
                    f"`optimizations=` {where} pl.at(level=pl.Level.CORE_GROUP, ...)",
                    hint="keep optimizations=[...] on the inner pl.at(...) only",
                )
            return False
        work = spmd_forms.body_work(body, self._inline_parsed)
        if work.reads_block_index:
            return True
        launches = work.launches
        if not launches:
            raise self.error(
                node,
                "the `with pl.spmd(...)` body neither reads the per-block index via pl.tile.get_block_idx() "
                "nor dispatches a self.<kernel>(...) call, so every block would run identical work",
                hint="read i = pl.tile.get_block_idx() in the body, dispatch a kernel that reads it, "
                "or write for i in pl.spmd(N):",
            )
        if len(launches) > 1:
            span = launches[1].span
            raise self.error_at(
                span.line - self.line_offset if span else node.lineno,
                span.col - self.col_offset if span else node.col_offset,
                f"the `with pl.spmd(...)` dispatch body launches {len(launches)} kernels: "
                "a dispatch body may launch one kernel",
                "launch each kernel from its own pl.spmd scope, or read pl.tile.get_block_idx() "
                "so the whole body is one per-block kernel",
            )
        return spmd_line is not None


CHUNKED_FROM = 256 * 1024
"""Sources of this many characters or more are parsed a method at a time (`_chunked_module`)."""

BODY_PIECE_LINES = 4_000
"""A method body longer than twice this many lines is parsed in pieces of about this many
(`_body_pieces`): Python's parser takes some 200 bytes per byte of source while it builds a tree."""

_NOT_A_STATEMENT = (")", "]", "}", "else", "elif", "except", "finally", "case", "@", "#")
"""What a line at a body's indentation may start with that does not begin a statement of its own."""

_SIGNATURE_LINES = 40
"""Lines a method's decorators and signature may take before its chunk is parsed whole."""


class _ChunksDisagree(Exception):
    """A method's chunk did not parse as that one method: the cut was wrong, parse it all."""


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_BLANK_CHARACTERS))]


_BLANK_CHARACTERS = " \t"
_BLANK = (" ", "\t")
"""What `_leading` strips: a line that starts with neither is not indented."""


def _significant(line: str) -> bool:
    """Not blank and not only a comment."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _previous_member_line(lines: list[str], i: int, head_end: int, indent: str) -> str:
    """The nearest line before `i` (after the class line) at the class body's indentation."""
    for j in range(i - 1, head_end - 1, -1):
        if _significant(lines[j]) and _leading(lines[j]) == indent:
            return lines[j]
    return ""


_COMPOUND = (ast.If, ast.For, ast.While, ast.With)
"""Statements with a body: their own comments are those up to their header line."""


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header: a comment inside a header written over
    several lines is the statement's, not its body's."""
    match node:
        case ast.For():
            parts: list[ast.AST] = [node.target, node.iter]
        case ast.If() | ast.While():
            parts = [node.test]
        case ast.With():
            parts = [part for item in node.items for part in (item.context_expr, item.optional_vars) if part is not None]
        case _:
            parts = []
    return max([node.lineno, *(getattr(part, "end_lineno", None) or node.lineno for part in parts)])


_OPERATOR_CHARACTERS = "+-*/%@&|^~<>!.([{"
"""The characters that open a level of an expression (an operator, a call, an attribute, a bracket)."""


def _deepest_line(source: str) -> tuple[int, int]:
    """Where Python's parser most likely ran out of stack: the line with the most operators and
    open brackets, at its first (a RecursionError from `ast.parse` carries no location). Counted
    with `str.count`, so a 200 KB chain is located in milliseconds (tokenizing it took 0.5 s)."""
    best, where = -1, (1, 0)
    for number, line in enumerate(source.splitlines(), 1):
        count = sum(map(line.count, _OPERATOR_CHARACTERS)) + line.count(" and ") + line.count(" or ")
        if count > best:
            first = min((k for k in map(line.find, _OPERATOR_CHARACTERS) if k >= 0), default=0)
            best, where = count, (number, first)
    return where


def _func_attr_call(stmt: ast.stmt) -> ast.Call | None:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and dotted_name(call.func) == "pl.func_attr":
        return call
    return None


def _is_subworker(attrs: tuple[Keyword, ...]) -> bool:
    """`@pl.function(role=pl.Role.SubWorker)`: a function whose method takes no `self`."""
    return any(k.name == "role" and isinstance(k.value, Symbol) and k.value.path.endswith(".SubWorker") for k in attrs)


def _decorator_target(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _tuple_elements(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


ASTParser = _ProgramParser
"""PyPTO's name for its parser class (nanopto's is the one `ast` walk above)."""
