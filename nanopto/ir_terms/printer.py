"""IR -> `pl` source text that the parser reads back into the same IR.

Printed programs are how people (and tests) read the result of a pass, so the printer writes the
style PyPTO programs are written in rather than a dump format, and it is the parser's inverse: `parse(print(p))`
is structurally equal to `p`. That is why it re-sugars exactly what the parser desugars (a tuple
unpack through a `*__tmp_v*` temporary), prints yield targets from the enclosing statement's
`return_vars`, declares free symbolic dimensions as `N = pl.dynamic("N")`, and never re-sugars a
`tensor.assemble` / `array.update_element` assignment (the explicit call is what the IR holds).
It prints `var.name`, after `printed_names` has renamed the Vars whose names the parser would
confuse (IR built by hand only) and marked a function's free uses.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import math
import tokenize
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from keyword import iskeyword

from nanopto.ir_terms import split_aiv_forms, spmd_forms
from nanopto.ir_terms.dtypes import DataType, symbol_of_enum
from nanopto.ir_terms.nodes import (
    DECORATOR_ATTRS,
    AssignStmt,
    BinaryExpr,
    BinOp,
    BreakStmt,
    Call,
    ConstBool,
    ConstFloat,
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
    InlineStmt,
    Keyword,
    MakeTuple,
    Node,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    SliceExpr,
    Span,
    SplitMode,
    Stmt,
    Submit,
    Symbol,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    WhileStmt,
    YieldStmt,
    function_split,
    register_printer,
)
from nanopto.ir_terms.ops import source_spelling
from nanopto.ir_terms.printed_names import definitions, printed_names, renamed
from nanopto.ir_terms.schema import SIMPLE_TYPES, children_of, nodes_of_class, type_holds_none
from nanopto.ir_terms.types import (
    ArrayType,
    CommCtxType,
    DistributedTensorType,
    MemRef,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)

__all__ = [
    "LANGUAGE_MODULES",
    "language_module",
    "print_expr",
    "print_type",
    "program_imports",
    "python_print",
    "set_language_module",
]

INDENT = "    "
LANGUAGE_MODULES = ("nanopto.language", "pypto.language")
"""The modules a `pl` source may import as `pl` (and whose `.distributed` as `pld`): the parser
reads both, so a program printed under either name reads back (docs/coming-from-pypto.md,
"The printed header")."""
DISTRIBUTED_PREFIX = "pld."
ALLOC = "pld.tensor.alloc_window_buffer"
TMP_MARKER = "__tmp_v"

# Python operator precedence, loosest first; 13 is an atom (name, call, subscript, literal).
_ATOM = 13
_UNARY = 11
_PREC: dict[BinOp, int] = {
    BinOp.Or: 1,
    BinOp.And: 2,
    BinOp.Eq: 4,
    BinOp.Ne: 4,
    BinOp.Lt: 4,
    BinOp.Le: 4,
    BinOp.Gt: 4,
    BinOp.Ge: 4,
    BinOp.BitOr: 5,
    BinOp.Xor: 6,
    BinOp.BitAnd: 7,
    BinOp.BitShiftLeft: 8,
    BinOp.BitShiftRight: 8,
    BinOp.Add: 9,
    BinOp.Sub: 9,
    BinOp.Mul: 10,
    BinOp.FloatDiv: 10,
    BinOp.FloorDiv: 10,
    BinOp.FloorMod: 10,
    BinOp.Pow: 12,
    BinOp.Min: _ATOM,
    BinOp.Max: _ATOM,
}
_COMPARISON = 4


_language_module = LANGUAGE_MODULES[0]


def language_module() -> str:
    """The module a printed program imports as `pl` (`set_language_module`)."""
    return _language_module


def set_language_module(name: str) -> None:
    """Print programs as reading `name` (one of `LANGUAGE_MODULES`): under the header
    `# <package>.program: NAME`, importing `name` as `pl` (and `name.distributed` as `pld`).
    nanopto's own `nanopto.language` by default; the shim that runs PyPTO's tests against nanopto
    names it `pypto.language`, the name those programs give nanopto's module
    (docs/coming-from-pypto.md, "The printed header")."""
    global _language_module
    if name not in LANGUAGE_MODULES:
        raise ValueError(f"a printed program imports one of {', '.join(LANGUAGE_MODULES)} (the modules the parser reads), got {name!r}")
    _language_module = name


def program_imports(name: str, prefix: str = "pl", *, distributed: bool = False) -> str:
    """The lines a printed program starts with: `# nanopto.program: NAME` and the import of
    `language_module()` under `prefix` (`from nanopto import language as ir` for another prefix),
    then `pld`'s import if the program uses it (docs/coming-from-pypto.md, "Distributed programs")."""
    package, _, leaf = _language_module.rpartition(".")
    if prefix == "pl":
        language = f"import {_language_module} as pl"
    else:
        language = f"from {package} import {leaf}" + ("" if prefix == leaf else f" as {prefix}")
    lines = [f"# {package}.program: {name}", language]
    if distributed:
        lines.append(f"import {_language_module}.distributed as pld")
    return "\n".join(lines)


def python_print(
    node: Node | Type | MemRef | TileView,
    prefix: str = "pl",
    *,
    concise: bool = False,
    format: bool = True,
    explicit_layout: bool = False,
) -> str:
    """`pl` source for a Program, Function, statement, expression or type.

    An assignment prints its type annotation where the source wrote one (`AssignStmt.annotated`,
    and `YieldStmt.annotated` for a yield into one result); `concise=True` leaves every
    assignment's annotation out (signatures keep theirs).
    `explicit_layout=True` prints every tile's layout in full, the one its memory space implies
    included (see `print_type`). `prefix` is the name the text gives `nanopto.language`
    (`with_prefix`); `format` is PyPTO's and changes nothing: nanopto prints one layout."""
    _check_prefix(prefix)
    token = _EXPLICIT_LAYOUT.set(explicit_layout)
    try:
        if isinstance(node, Program):
            return _print_program(node, concise, prefix)
        return with_prefix(_python_print(node, concise), prefix)
    finally:
        _EXPLICIT_LAYOUT.reset(token)


def _check_prefix(prefix: str) -> None:
    if prefix == "pl":  # the default, asked at every call
        return
    if not prefix.isidentifier() or iskeyword(prefix) or prefix == DISTRIBUTED_PREFIX[:-1]:
        raise ValueError(f"the printer's prefix names the module `nanopto.language`: a Python name other than 'pld', got {prefix!r}")


def with_prefix(text: str, prefix: str) -> str:
    """`text` (printed `pl` source) with the module `nanopto.language` named `prefix` instead of
    `pl`: every `pl` name token, and nothing inside a string or a comment (a program's import is
    `program_imports`'s). The parser reads the `pl` spelling, so printed text reads back as printed with the
    default prefix (docs/coming-from-pypto.md, "What differs, and why")."""
    if prefix == "pl":
        return text
    lines = text.split("\n")
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME]
    except (tokenize.TokenError, SyntaxError) as exc:  # only hand-built InlineStmt text can get here
        raise ValueError(f"cannot print with prefix {prefix!r}: the text does not tokenize ({exc})") from exc
    if any(t.string == prefix for t in tokens):  # `ir` already a variable: the text would conflate them
        raise ValueError(f"cannot print with prefix {prefix!r}: the text already has a name {prefix!r}")
    tokens = [t for t in tokens if t.string == "pl"]
    for token in reversed(tokens):  # right to left, so earlier columns stay valid
        row, col = token.start
        line = lines[row - 1]
        lines[row - 1] = line[:col] + prefix + line[col + 2 :]
    return "\n".join(lines)


def _python_print(node: Node | Type | MemRef | TileView, concise: bool) -> str:
    match node:
        case Function():
            defs: list[Var] = []
            occurrences = _var_occurrences(node, defs)
            fn = _named_function(node, occurrences, defs)
            return "\n".join(_FunctionPrinter(fn, occurrences, concise=concise).function(fn, "", method=False))
        case Stmt():
            occurrences = _var_occurrences(node)
            stmt = renamed(node, printed_names(occurrences, (), node, closed=False))
            assert isinstance(stmt, Stmt)
            return "\n".join(_FunctionPrinter(stmt, occurrences, concise=concise).stmt_lines(stmt, "", None))
        case Expr():
            return print_expr(node)
        case Keyword():
            return f"{node.name}={print_expr(node.value)}"
        case Param():
            return _param(node)
        case ScalarType() | TensorType() | TileType() | ArrayType() | TupleType() | UnknownType() | PtrType() | CommCtxType():
            return print_type(node)
        case MemRef():
            return _memref(node)
        case TileView():
            return _tile_view(node, in_full=_EXPLICIT_LAYOUT.get())
        case _:
            raise TypeError(f"python_print cannot print {type(node).__name__}")


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def _dtype(dtype: DataType) -> str:
    return f"pl.{dtype.name}"


def _shape(shape: Sequence[Expr]) -> str:
    return "[" + ", ".join(_dim(d) for d in shape) + "]"


def _dim(dim: Expr) -> str:
    """A shape dimension: a constant prints bare, whatever its integer dtype (an annotation does
    not spell a dimension's dtype); a composite one prints typed constants, `n + pl.const(1,
    pl.INDEX)`, so a parser that folds constant dimensions (PyPTO's) rebuilds the tree."""
    if type(dim) is ConstInt:  # bare when it reads back (an integer literal is a pl.INDEX)
        low, high = _INDEX_RANGE
        return str(dim.value) if low <= dim.value <= high else _literal_const(dim)
    if type(dim) is Var:
        return dim.name
    return print_expr(dim, typed_consts=True)


_INDEX_RANGE = DataType.INDEX.int_range
"""The values a bare integer literal reads back as (asked once per printed dimension)."""


register_printer(python_print)


def python_print_type(ty: Type, prefix: str = "pl", *, explicit_layout: bool = False) -> str:
    """PyPTO's name for `print_type`: a type's annotation spelling (`prefix` as in `python_print`)."""
    _check_prefix(prefix)
    return with_prefix(print_type(ty, explicit_layout=explicit_layout or _EXPLICIT_LAYOUT.get()), prefix)


_EXPLICIT_LAYOUT: ContextVar[bool] = ContextVar("explicit_layout", default=False)
"""Whether the `python_print` call under way prints tile layouts in full (`explicit_layout`)."""


def print_type(ty: Type, *, explicit_layout: bool | None = None) -> str:
    """The annotation spelling of a type (`...` for an unknown type).

    A tile prints its memref, memory space and view after shape and dtype, each only when it has
    one: `pl.Tile[[16, 16], pl.FP16, pl.MemRef("mem_vec_0", 0, 512), pl.Mem.Vec]`. A view is
    canonical (None when its memory space implies it), so a printed `pl.TileView(...)` always
    says something. With `explicit_layout` (by default, what the `python_print` call under way
    asked for) a tile in a memory space prints its effective view with the layout in full."""
    explicit = _EXPLICIT_LAYOUT.get() if explicit_layout is None else explicit_layout
    match ty:
        case ScalarType(dtype):
            return f"pl.Scalar[{_dtype(dtype)}]"
        case DistributedTensorType(shape=shape, dtype=dtype, layout=layout, window_buffer=window):
            layout_part = "" if layout is None else f", pl.TensorLayout.{layout.name}"
            # The window buffer is no annotation slot: shown for reading, with the layout in full.
            window_part = f', "window_buffer={window.name}"' if explicit and window is not None else ""
            return f"pld.DistributedTensor[{_shape(shape)}, {_dtype(dtype)}{layout_part}{window_part}]"
        case TensorType(shape, dtype):
            return f"pl.Tensor[{_shape(shape)}, {_dtype(dtype)}]"
        case PtrType():
            return "pl.Ptr"
        case CommCtxType():
            return "pld.CommCtx"
        case TileType(shape=shape, dtype=dtype, memref=memref, tile_view=view, memory_space=memory):
            parts = [_shape(shape), _dtype(dtype)]
            if memref is not None:
                parts.append(_memref(memref))
            if memory is not None:
                parts.append(f"pl.Mem.{memory.name}")
                if explicit:
                    view = ty.effective_tile_view
            if view is not None:
                parts.append(_tile_view(view, in_full=explicit))
            return f"pl.Tile[{', '.join(parts)}]"
        case ArrayType(size=size, dtype=dtype):
            return f"pl.Array[{print_expr(size)}, {_dtype(dtype)}]"
        case TupleType(types):
            inner = ", ".join(print_type(t, explicit_layout=explicit) for t in types) if types else "()"
            return f"tuple[{inner}]"
        case _:
            return "..."


def _memref(memref: MemRef) -> str:
    return f"pl.MemRef({json.dumps(memref.name)}, {print_expr(memref.byte_offset)}, {memref.size})"


_LAYOUT_FIELDS = ("blayout", "slayout", "fractal")


def _tile_view(view: TileView, in_full: bool) -> str:
    """`pl.TileView(...)` with the fields that differ from `TileView()`'s; the layout fields all
    `in_full`, and also when nothing else would be printed: a bare `pl.TileView()` reads back as
    the memory space's implicit view, which this one is not (it would be None)."""
    wanted = set(view.non_default_fields())
    if in_full or not wanted:
        wanted.update(_LAYOUT_FIELDS)
    parts: list[str] = []
    for name in (f.name for f in dataclasses.fields(view) if f.name in wanted):
        value = getattr(view, name)
        match value:
            case tuple():
                parts.append(f"{name}={_shape(value)}")
            case Expr():
                parts.append(f"{name}={print_expr(value)}")
            case int():
                parts.append(f"{name}={value}")
            case _:
                parts.append(f"{name}=pl.{symbol_of_enum(value)}")
    return f"pl.TileView({', '.join(parts)})"


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


def _precedence(expr: Expr, typed_consts: bool = False) -> int:
    if typed_consts and type(expr) is ConstInt:
        return _ATOM  # `pl.const(-3, pl.INDEX)`
    match expr:
        case BinaryExpr(op=op):
            return _PREC[op]
        case UnaryExpr(op=UnOp.Not):
            return 3
        case UnaryExpr(op=UnOp.Abs):
            return _ATOM
        case UnaryExpr():
            return _UNARY
        case ConstInt(value=value, dtype=DataType.INDEX) if value < 0:
            return _UNARY
        case ConstFloat(value=value, dtype=DataType.FP32) if value < 0 or str(value).startswith("-"):
            return _UNARY
        case _:
            return _ATOM


_Piece = str | Expr
"""What an expression prints as: text, and the sub-expressions printed in between."""


def _wrap(expr: Expr, parenthesize: bool) -> list[_Piece]:
    piece = _piece(expr)
    return ["(", piece, ")"] if parenthesize else [piece]


def _piece(expr: Expr) -> _Piece:
    """A variable or an index literal as its text (most operands are one), else the expression."""
    if type(expr) is Var:
        return expr.name
    return expr


def _keyword_value(k: Keyword) -> str:
    """A keyword's value; a launch's predicate in parentheses, `predicate=(pl.read(t, [0]) > 0)`."""
    text = print_expr(k.value)
    return f"({text})" if k.name == "predicate" else text


def _args(args: Sequence[Expr], kwargs: Sequence[Keyword], extra: Sequence[str] = ()) -> str:
    parts = [print_expr(a) for a in args]
    parts += [f"{k.name}={_keyword_value(k)}" for k in kwargs]
    parts += list(extra)
    return ", ".join(parts)


def _arg_pieces(args: Sequence[Expr], kwargs: Sequence[Keyword], extra: Sequence[str] = ()) -> list[_Piece]:
    """`_args` as pieces: the arguments, `name=` and each keyword value, `extra`, comma-separated."""
    pieces: list[_Piece] = []
    for arg in args:
        pieces += [_piece(arg), ", "]
    for keyword in kwargs:
        if keyword.name == "predicate":  # a launch's predicate in parentheses (`_keyword_value`)
            pieces += ["predicate=(", _piece(keyword.value), ")", ", "]
            continue
        pieces += [f"{keyword.name}=", _piece(keyword.value), ", "]
    for text in extra:
        pieces += [text, ", "]
    return pieces[:-1]


def _joined(items: Sequence[Expr]) -> list[_Piece]:
    pieces: list[_Piece] = []
    for item in items:
        pieces += [_piece(item), ", "]
    return pieces[:-1]


def _literal_const(expr: ConstInt | ConstFloat) -> str:
    value = _float(expr) if type(expr) is ConstFloat else repr(expr.value)
    return f"pl.const({value}, {_dtype(expr.dtype)})"


def _float(expr: ConstFloat) -> str:
    """A finite float's repr, which reads back to the same float; `inf` or `nan` has none."""
    if not math.isfinite(expr.value):
        raise ConstantNotPrintableError(expr.value, expr.span)
    return repr(expr.value)


def _first_span(stmt: Stmt) -> Span | None:
    """The first statement of a block that has a valid span."""
    while isinstance(stmt, SeqStmts) and stmt.stmts:
        stmt = stmt.stmts[0]
    return stmt.span if stmt.span is not None and stmt.span.is_valid() else None


def print_expr(expr: Expr, *, typed_consts: bool = False) -> str:
    """The `pl` source of an expression, with the fewest parentheses that keep its structure;
    `typed_consts` spells every integer constant `pl.const(value, dtype)`.

    Left to right on an explicit stack, not by recursion, each character written once: a
    hand-built expression 100,000 levels deep prints, in time linear in its text."""
    if type(expr) is Var:  # a copy's value, `y1 = d_inline3`: a tenth of a large program's statements
        return expr.name
    if type(expr) is Call and not typed_consts and expr.op != "subscript":
        # Most statements of a large program call an op or a function on variables alone.
        names = _plain_call_names(expr)
        if names is not None:
            head = _CALL_HEADS.get((expr.op, expr.function))
            if head is None:
                head = f"self.{expr.op}(" if expr.function else f"pl.{source_spelling(expr.op)}("
                if len(_CALL_HEADS) >= 4096:  # a long-lived process (the playground's worker) sees many names
                    _CALL_HEADS.clear()
                _CALL_HEADS[expr.op, expr.function] = head
            return head + ", ".join(names) + ")"
    if typed_consts and type(expr) is ConstInt:
        return _literal_const(expr)
    if not typed_consts and type(expr) is BinaryExpr and _constant_arithmetic(expr):
        typed_consts = True
    first = _typed_pieces(expr) if typed_consts else _pieces(expr)
    if isinstance(first, str):
        return first
    if all(type(piece) is str for piece in first):  # operands that were all variables or literals
        return "".join(first)  # type: ignore[arg-type]
    out: list[str] = []
    stack: list[_Piece] = first[::-1]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if typed_consts and type(item) is ConstInt:
            out.append(_literal_const(item))
            continue
        if not typed_consts and type(item) is BinaryExpr and _constant_arithmetic(item):
            out.append(print_expr(item, typed_consts=True))
            continue
        pieces = _typed_pieces(item) if typed_consts else _pieces(item)
        if isinstance(pieces, str):
            out.append(pieces)
        else:
            stack += reversed(pieces)
    return "".join(out)


_CALL_HEADS: dict[tuple[str, bool], str] = {}
"""`pl.tile.add(` for the op `tile.add`, `self.h(` for the function `h`: each spelled once."""


def _plain_call_names(call: Call, var_free: dict[int, Type] | None = None) -> list[str] | None:
    """The argument names of a call without keywords or attributes whose arguments are all plain
    Vars (it prints as `_pieces` would print it, those names comma-separated), else None. Given
    `var_free`, None also when a Var's type holds a Var (`type_holds_none`), asked in the same loop
    (`_var_occurrences`)."""
    if call.kwargs or call.dumps or call.attr_items:
        return None
    names: list[str] = []
    for arg in call.args:  # a loop: for two or three arguments all()'s generator costs more than the test
        if type(arg) is not Var:
            return None
        if var_free is not None and type(arg.type) not in SIMPLE_TYPES and not type_holds_none(arg.type, _VAR, var_free):
            return None
        names.append(arg.name)
    return names


def _constant_arithmetic(expr: BinaryExpr) -> bool:
    """Whether `expr` is arithmetic on integer constants alone (`32 + 32`). It prints typed
    constants, `pl.const(32, pl.INDEX) + pl.const(32, pl.INDEX)`: Python would fold the bare text
    to one number in a parser that evaluates constant expressions (PyPTO's), and folding is a
    pass's business, not the printer's. Most operands are variables, so most checks stop at once."""
    if type(expr.lhs) not in _CONSTANT_TREE or type(expr.rhs) not in _CONSTANT_TREE:
        return False
    todo: list[Expr] = [expr]
    while todo:
        node = todo.pop()
        if type(node) is BinaryExpr:
            todo += (node.lhs, node.rhs)
        elif type(node) is not ConstInt:
            return False
    return True


_CONSTANT_TREE = (ConstInt, BinaryExpr)


def _pieces(expr: Expr) -> str | list[_Piece]:
    """What `expr` prints as: its whole text, or text and sub-expressions in order."""
    match expr:
        case Var(name=name):
            return name
        case ConstBool(value=value):
            return "True" if value else "False"
        case ConstInt(value=value, dtype=dtype):
            return str(value) if dtype is DataType.INDEX else _literal_const(expr)
        case ConstFloat(value=value, dtype=dtype):
            return _float(expr) if dtype is DataType.FP32 else _literal_const(expr)
        case ConstStr(value=value):
            return _string(value)
        case Symbol(path=path):
            return f"pl.{path}"
        case BinaryExpr(op=op, lhs=lhs, rhs=rhs):
            return _binary(op, lhs, rhs)
        case UnaryExpr(op=op, operand=operand):
            return _unary(op, operand)
        case Call(op="subscript", args=args, kwargs=(), function=False) if len(args) > 1:
            return [*_wrap(args[0], _precedence(args[0]) < _ATOM), "[", *_joined(args[1:]), "]"]
        case Call(op=op, args=args, kwargs=kwargs, function=True, dumps=dumps, attr_items=items):
            return [f"self.{op}(", *_arg_pieces(args, kwargs, _call_attrs(args, dumps, items)), ")"]
        case Call(op=op, args=args, kwargs=kwargs, attr_items=items) if op.startswith(DISTRIBUTED_PREFIX):
            if op == ALLOC:  # the buffer's name is its variable's: the parser gives it again
                kwargs = tuple(k for k in kwargs if k.name != "name")
            return [f"{op}(", *_arg_pieces(args, kwargs, _call_attrs(args, (), items)), ")"]
        case Call(op=op, args=args, kwargs=kwargs, attr_items=items):
            return [f"pl.{source_spelling(op)}(", *_arg_pieces(args, kwargs, _call_attrs(args, (), items)), ")"]
        case Submit(callee=callee, args=args, kwargs=kwargs, dumps=dumps, spmd=spmd, attr_items=items):
            extra = [f"dumps=[{', '.join(d.name for d in dumps)}]"] if dumps else []
            extra += _call_attrs(args, (), items)
            rest = _arg_pieces(args, kwargs, extra)
            form = "spmd_submit" if spmd else "submit"
            return [f"pl.{form}(self.{callee}", *([", ", *rest] if rest else []), ")"]
        case MakeTuple(elements=elements, is_list=True):
            return ["[", *_joined(elements), "]"]
        case MakeTuple(elements=elements):
            if len(elements) == 1:
                return ["(", elements[0], ",)"]
            return ["(", *_joined(elements), ")"]
        case TupleGetItemExpr(tuple=base, index=index):
            return [*_wrap(base, _precedence(base) < _ATOM), f"[{index}]"]
        case SliceExpr(start=start, stop=stop):
            return ["" if start is None else start, ":", "" if stop is None else stop]
        case _:
            raise TypeError(f"cannot print expression {type(expr).__name__}")


def _typed_pieces(expr: Expr) -> str | list[_Piece]:
    """`_pieces` where integer constants print typed, so they are atoms to the operators."""
    if type(expr) is BinaryExpr:
        return _binary(expr.op, expr.lhs, expr.rhs, typed_consts=True)
    return _pieces(expr)


def _binary(op: BinOp, lhs: Expr, rhs: Expr, typed_consts: bool = False) -> list[_Piece]:
    if op in (BinOp.Min, BinOp.Max):
        return [f"pl.{op.value}(", lhs, ", ", rhs, ")"]
    prec = _PREC[op]
    left, right = _precedence(lhs, typed_consts), _precedence(rhs, typed_consts)
    if op is BinOp.Pow:  # right-associative
        wrap_left, wrap_right = left <= prec, right < prec
    elif prec == _COMPARISON:  # comparisons chain, so an operand comparison needs parentheses
        wrap_left, wrap_right = left <= prec, right <= prec
    else:
        wrap_left, wrap_right = left < prec, right <= prec
    return [*_wrap(lhs, wrap_left), f" {op.value} ", *_wrap(rhs, wrap_right)]


def _unary(op: UnOp, operand: Expr) -> str | list[_Piece]:
    if op is UnOp.Abs:
        return ["abs(", operand, ")"]
    if op is UnOp.Not:
        return ["not ", *_wrap(operand, _precedence(operand) < 3)]
    if op is UnOp.Neg and isinstance(operand, (ConstInt, ConstFloat)):
        # `-3` reads back as the literal ConstInt(-3); spell the operand so it stays a negation.
        return f"-{_literal_const(operand)}"
    return [op.value, *_wrap(operand, _precedence(operand) < _UNARY)]


# ---------------------------------------------------------------------------------------------
# Statements, functions and programs
# ---------------------------------------------------------------------------------------------


def _is_subworker(fn: Function) -> bool:
    return any(k.name == "role" and isinstance(k.value, Symbol) and k.value.path.endswith(".SubWorker") for k in fn.attr_items)


def _param(param: Param) -> str:
    var = param.var
    if param.direction is ParamDirection.In:
        if isinstance(var.type, UnknownType):
            return var.name
        return f"{var.name}: {print_type(var.type)}"
    return f"{var.name}: pl.{param.direction.value}[{print_type(var.type)}]"


def _decorator(fn: Function) -> str:
    parts: list[str] = []
    if fn.func_type is not FunctionType.Opaque:
        parts.append(f"type=pl.FunctionType.{fn.func_type.name}")
    parts += [f"{k.name}={print_expr(k.value)}" for k in fn.attr_items if k.name in DECORATOR_ATTRS]
    return f"@pl.function({', '.join(parts)})" if parts else "@pl.function"


def _func_attr_prologue(fn: Function) -> list[str]:
    """The other attributes as PyPTO prints them, a `pl.func_attr({...})` first statement; a
    `split` that names no split is left out, as the parser leaves out `pl.SplitMode.NONE`."""
    items = [
        f"{json.dumps(k.name)}: {print_expr(k.value)}"
        for k in fn.attr_items
        if k.name not in DECORATOR_ATTRS and not (k.name == "split" and _names_no_split(k.value))
    ]
    return [f"pl.func_attr({{{', '.join(items)}}})"] if items else []


def _names_no_split(value: Expr) -> bool:
    """A `split` attribute that names `SplitMode.NONE` (its symbol, its value, or PyPTO's 0)."""
    return function_split(value) is None and (
        (isinstance(value, Symbol) and value.path == "SplitMode.NONE")
        or (isinstance(value, ConstStr) and value.value == SplitMode.NONE.value)
        or (type(value) is ConstInt and value.value == 0)
    )


def _named_function(
    fn: Function, occurrences: list[Var], defs: list[Var], dimensions: list[Var] | None = None
) -> Function:
    """`fn` with the Vars renamed that would print as another variable (`printed_names`, which
    appends the function's symbolic dimensions to `dimensions`, if given); `occurrences` and
    `defs` are what `_var_occurrences(fn, defs)` found."""
    params = [p.var for p in fn.param_list]
    named = renamed(fn, printed_names(occurrences, params, fn.body, closed=True, defs=defs, dimensions=dimensions))
    assert isinstance(named, Function)
    return named


def _var_occurrences(root: Node, defs: list[Var] | None = None) -> list[Var]:
    """Every Var occurrence below `root`, in walk order (`nodes_of_class`'s): the one walk that
    the renaming, the symbolic-dimension scan and the use counts share. Given `defs`, the Vars
    the statements bind are appended to it in statement order, what `definitions` finds (the
    renaming's other question), read in the same walk.

    A function's blocks are opened here, and an assignment of a variable or of a plain call on
    variables whose types hold no variable (most statements of a large program) is read directly
    as its target then its value's variables, what the generic walk finds there at about three
    times the cost; every other statement is walked. Whether a type holds a variable is asked once
    per type object: after inlining, one type object is the type of every copy of a Var."""
    out: list[Var] = []
    bound: list[Var] = [] if defs is None else defs
    todo: list[Node] = [root]
    var_free: dict[int, Type] = {}
    while todo:
        node = todo.pop()
        cls = type(node)
        if cls is AssignStmt:
            var, value = node.var, node.value  # type: ignore[attr-defined]
            if type(var.type) in SIMPLE_TYPES or type_holds_none(var.type, _VAR, var_free):
                if type(value) is Var and (type(value.type) in SIMPLE_TYPES or type_holds_none(value.type, _VAR, var_free)):
                    out += (var, value)  # a copy: `y1 = d_inline3`
                    bound.append(var)
                    continue
                if type(value) is Call and _plain_call_names(value, var_free) is not None:
                    out.append(var)
                    out += value.args  # type: ignore[arg-type]  # Vars: `_plain_call_names`
                    bound.append(var)
                    continue
        elif cls is SeqStmts or cls is Function:
            todo += reversed(children_of(node))
            continue
        out += nodes_of_class(node, (Var,))  # type: ignore[arg-type]  # only Vars are kept
        if isinstance(node, Stmt):  # not a function's parameter
            bound += definitions(node)
    return out


_VAR = (Var,)
"""What `_var_occurrences` looks for in a type (`type_holds_none`)."""


def _comment_lines(stmt: Stmt, indent: str) -> list[str]:
    """A statement's comment lines, as `# text` above it."""
    return [f"{indent}# {text}".rstrip() for text in stmt.comments]


def _print_program(program: Program, concise: bool, prefix: str) -> str:
    """The program's text, its imports (`program_imports`) first, with `prefix` (`with_prefix`)."""
    lines = [""]
    # The functions are named first: naming each finds its symbolic dimensions, which the
    # program's text declares before any function.
    dimensions: list[Var] = []
    named: list[Function] = []
    occurrences: list[list[Var]] = []
    for fn in program.function_list:
        defs: list[Var] = []
        occurrences.append(_var_occurrences(fn, defs))
        named.append(_named_function(fn, occurrences[-1], defs, dimensions))
    dims = list(dict.fromkeys(var.name for var in dimensions))  # a dimension's name, once
    if dims:
        lines += [f'{name} = pl.dynamic("{name}")' for name in dims]
        lines.append("")
    lines += ["", "@pl.program", f"class {program.name}:"]
    if not program.function_list:
        lines.append(f"{INDENT}pass")
    # Each function's lines are joined as soon as it is printed: a large program's lines, a string
    # each, take more than twice the memory of its text.
    texts = ["\n".join(lines)]
    for index, fn in enumerate(named):
        printed = _FunctionPrinter(fn, occurrences[index], concise=concise).function(fn, INDENT)
        occurrences[index] = []  # done with: a large program's occurrences are megabytes
        texts.append("\n".join(["", *printed] if index else printed))
    texts.append("")  # the final newline, without a copy of the whole text to add it
    imports = program_imports(program.name, prefix, distributed=any(DISTRIBUTED_PREFIX in text for text in texts[1:]))
    if prefix == "pl":
        return "\n".join([imports, *texts])
    return imports + "\n" + with_prefix("\n".join(texts), prefix)


MAX_PRINTED_BLOCKS = 99
"""The deepest indentation, in levels, the printer writes (a function's body is at level 2): Python's
tokenizer refuses a 100th level ("too many levels of indentation", measured on CPython 3.11 and
held by tests/ir_terms/test_deep_ir.py), so deeper text could not be read back. The parser accepts
only what Python parses, so only hand-built IR, or a pass that nests helpers inside each other (a
helper 50 `if`s deep inlined 50 `if`s deep), gets there."""


class NestingTooDeepToPrintError(ValueError):
    """A statement indented more than `MAX_PRINTED_BLOCKS` levels, given to the printer; located
    at the statement (after inlining, the helper's line it came from)."""

    def __init__(self, depth: int, span: Span | None = None) -> None:
        where = f"{span}: " if span is not None and span.is_valid() else ""
        super().__init__(
            f"{where}cannot print statements indented more than {MAX_PRINTED_BLOCKS:,} levels (reached {depth:,}): "
            "Python reads back at most 99 levels of indentation; split the deepest blocks into functions "
            "that are not Inline, or nest fewer blocks"
        )
        self.depth = depth


class ConstantNotPrintableError(ValueError):
    """A constant `pl` source cannot spell (an infinite or NaN float, from hand-built IR or a
    rule that folded one); located at the constant."""

    def __init__(self, value: float, span: Span | None = None) -> None:
        where = f"{span}: " if span is not None and span.is_valid() else ""
        super().__init__(
            f"{where}cannot print the float constant {value!r}: pl source has no literal for it "
            "(the parser reads only finite float constants)"
        )
        self.value = value


@dataclass(frozen=True)
class _Lines:
    """A statement still to print, as `stmt_lines` prints it."""

    stmt: Stmt
    indent: str
    yield_vars: tuple[Var, ...] | None


@dataclass(frozen=True)
class _Body(_Lines):
    """A block body still to print: its lines, or `pass` when it has none."""


@dataclass(frozen=True)
class _EndBody:
    """Where a body's lines end: `pass` goes here if nothing was printed since `start`."""

    indent: str
    start: int


_BLOCKS = (SeqStmts, IfStmt, ForStmt, WhileStmt, ScopeStmt)
"""The statements that hold statements: the printer's stack takes them one at a time."""

_Todo = str | _Lines
"""A line already printed, or a statement still to print."""


class _FunctionPrinter:
    """Prints one function (or statement); knows how often each Var is used, for re-sugaring."""

    def __init__(self, root: Node, occurrences: list[Var] | None = None, *, concise: bool = False) -> None:
        self.concise = concise
        """`occurrences`: `_var_occurrences(root)`, when the caller has it already."""
        self._root = root
        self._occurrences = occurrences
        self._use_counts: Counter[int] | None = None
        self._type_texts: dict[int, tuple[Type, str]] = {}
        """`print_type` of each type annotated so far, by the type's identity: after inlining, one
        type object annotates every copy of a helper's statement (the type is kept beside its text,
        so its id is not reused while this printer lives)."""

    def _assignment(self, stmt: AssignStmt, indent: str) -> str:
        var = stmt.var
        if stmt.annotated and not self.concise and not isinstance(var.type, UnknownType):
            known = self._type_texts.get(id(var.type))
            if known is None:
                known = self._type_texts[id(var.type)] = (var.type, print_type(var.type))
            return f"{indent}{var.name}: {known[1]} = {print_expr(stmt.value)}"
        return f"{indent}{var.name} = {print_expr(stmt.value)}"

    def _uses(self, var: Var) -> int:
        """How often `var` occurs below the root. Counted on the first question: only a tuple
        unpacking's temporary asks, and most functions have none."""
        if self._use_counts is None:
            vars_ = _var_occurrences(self._root) if self._occurrences is None else self._occurrences
            self._use_counts = Counter(v.id for v in vars_)
        return self._use_counts[var.id]

    def function(self, fn: Function, indent: str, *, method: bool = True) -> list[str]:
        """`method=False` for a function printed by itself: a module-level `@pl.function` has no
        `self`, so the text parses back with `pl.parse` (PyPTO prints it so too)."""
        method = method and not _is_subworker(fn)  # a SubWorker takes no self (docs/coming-from-pypto.md)
        params = ", ".join(["self"] * method + [_param(p) for p in fn.param_list])
        returns = ""
        if len(fn.return_types) == 1:
            returns = f" -> {print_type(fn.return_types[0])}"
        elif fn.return_types:
            returns = f" -> tuple[{', '.join(print_type(t) for t in fn.return_types)}]"
        header = [f"{indent}{_decorator(fn)}", f"{indent}def {fn.name}({params}){returns}:"]
        prologue = [indent + INDENT + line for line in _func_attr_prologue(fn)]
        body = self.body(_yield_returns(fn.body), indent + INDENT, None)
        if prologue and body == [f"{indent}{INDENT}pass"]:
            body = []
        return header + prologue + body

    def body(self, body: Stmt, indent: str, yield_vars: tuple[Var, ...] | None) -> list[str]:
        return self._emit([_Body(body, indent, yield_vars)])

    def stmt_lines(self, stmt: Stmt, indent: str, yield_vars: tuple[Var, ...] | None) -> list[str]:
        if not isinstance(stmt, _BLOCKS):  # a simple statement is its lines: no stack to run (a site's record prints one)
            return self._stmt_todo(stmt, indent, yield_vars)  # type: ignore[return-value]  # only text
        return self._emit([_Lines(stmt, indent, yield_vars)])

    def _emit(self, todo: list[_Todo]) -> list[str]:
        """The lines of `todo`, in order, from an explicit stack rather than recursion: nested
        blocks and `SeqStmts` chains built by hand, deeper than Python's recursion limit, print."""
        lines: list[str] = []
        stack: list[_Todo | _EndBody] = list(reversed(todo))
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                lines.append(item)
            elif isinstance(item, _EndBody):
                if len(lines) == item.start:
                    lines.append(f"{item.indent}pass")
            elif isinstance(item, _Body):
                if len(item.indent) > MAX_PRINTED_BLOCKS * len(INDENT):
                    raise NestingTooDeepToPrintError(len(item.indent) // len(INDENT), _first_span(item.stmt))
                stack.append(_EndBody(item.indent, len(lines)))
                stack.append(_Lines(item.stmt, item.indent, item.yield_vars))
            else:
                todo = self._stmt_todo(item.stmt, item.indent, item.yield_vars)
                # its leading lines would be popped next: they go to `lines` at once
                done = 0
                for piece in todo:
                    if type(piece) is not str:
                        break
                    done += 1
                if done == len(todo):
                    lines += todo  # type: ignore[arg-type]
                else:
                    lines += todo[:done]  # type: ignore[arg-type]
                    stack += reversed(todo[done:])
        return lines

    def _stmt_todo(self, stmt: Stmt, indent: str, yield_vars: tuple[Var, ...] | None) -> list[_Todo]:
        if not isinstance(stmt, SeqStmts):
            if stmt.comments:
                return _comment_lines(stmt, indent) + self._stmt(stmt, indent, yield_vars)
            return self._stmt(stmt, indent, yield_vars)
        todo: list[_Todo] = []
        items = tuple(stmt.stmts)  # a FrozenList's (a rewritten block's) index is a Python call: copied once
        i = 0
        last = len(items) - 1
        while i <= last:
            item = items[i]
            # the two checks below, each first asked cheaply: most statements are neither
            count = self._unpack_count(items, i) if isinstance(item, AssignStmt) and TMP_MARKER in item.var.name else 0
            if count:
                head = items[i]
                assert isinstance(head, AssignStmt)
                targets = ", ".join(s.var.name for s in items[i + 1 : i + 1 + count] if isinstance(s, AssignStmt))
                todo += _comment_lines(head, indent)
                todo.append(f"{indent}{targets} = {print_expr(head.value)}")
                i += 1 + count
                continue
            if i < last and isinstance(items[i + 1], ScopeStmt) and spmd_forms.is_task_placeholder(item, items[i + 1]):
                todo += _comment_lines(item, indent)  # the `as tid` of the scope after it prints it
                i += 1
                continue
            if type(item) is AssignStmt and not item.comments:
                todo.append(self._assignment(item, indent))  # most statements: `_stmt`'s first case, without its match
            elif isinstance(item, _BLOCKS):
                todo.append(_Lines(item, indent, yield_vars))
            elif item.comments:  # a simple statement is its lines
                todo += _comment_lines(item, indent) + self._stmt(item, indent, yield_vars)
            else:
                todo += self._stmt(item, indent, yield_vars)
            i += 1
        return todo

    def _unpack_count(self, items: Sequence[Stmt], i: int) -> int:
        """How many `x_k = tmp[k]` follow a `tmp = value` that the parser made from `x0, ... = value`."""
        head = items[i]
        if not isinstance(head, AssignStmt) or TMP_MARKER not in head.var.name:
            return 0
        tmp = head.var
        count = 0
        targets: set[int] = set()
        for follower in itertools.islice(items, i + 1, None):  # no copy of the block's rest at each temporary
            if not (
                isinstance(follower, AssignStmt)
                and not follower.annotated
                and isinstance(follower.value, TupleGetItemExpr)
                and follower.value.tuple == tmp
                and follower.value.index == count
                and follower.var.id not in targets
                and follower.var.id != tmp.id
            ):
                break
            targets.add(follower.var.id)
            count += 1
        return count if count and self._uses(tmp) == count + 1 else 0

    def _stmt(self, stmt: Stmt, indent: str, yield_vars: tuple[Var, ...] | None) -> list[_Todo]:
        match stmt:
            case AssignStmt():
                return [self._assignment(stmt, indent)]
            case EvalStmt(expr=expr):
                return [f"{indent}{print_expr(expr)}"]
            case ReturnStmt(values=values):
                if not values:
                    return [f"{indent}return"]
                return [f"{indent}return {', '.join(print_expr(v) for v in values)}"]
            case YieldStmt(values=values, annotated=annotated):
                call = f"pl.yield_({', '.join(print_expr(v) for v in values)})"
                if yield_vars:
                    targets = ", ".join(v.name for v in yield_vars)
                    single = yield_vars[0].type if len(yield_vars) == 1 else UnknownType()
                    if annotated and not self.concise and not isinstance(single, UnknownType):
                        targets += f": {print_type(single)}"
                    return [f"{indent}{targets} = {call}"]
                return [f"{indent}{call}"]
            case InlineStmt(body=body):
                return [f"{indent}{line}" if line else "" for line in body.split("\n")]
            case BreakStmt():
                return [f"{indent}break"]
            case ContinueStmt():
                return [f"{indent}continue"]
            case IfStmt(cond=cond, then_body=then_body, else_body=else_body, return_vars=return_vars):
                todo: list[_Todo] = [f"{indent}if {print_expr(cond)}:", _Body(then_body, indent + INDENT, return_vars)]
                if else_body is not None:
                    todo += [f"{indent}else:", _Body(else_body, indent + INDENT, return_vars)]
                return todo
            case ForStmt():
                return self._for(stmt, indent)
            case WhileStmt():
                return self._while(stmt, indent)
            case ScopeStmt():
                return self._scope(stmt, indent, yield_vars)
            case _:
                raise TypeError(f"cannot print statement {type(stmt).__name__}")

    def _for(self, stmt: ForStmt, indent: str) -> list[_Todo]:
        one, zero = ConstInt(1), ConstInt(0)
        if stmt.step == one and stmt.start == zero:
            bounds: list[Expr] = [stmt.stop]
        elif stmt.step == one:
            bounds = [stmt.start, stmt.stop]
        else:
            bounds = [stmt.start, stmt.stop, stmt.step]
        extra: list[str] = []
        target = stmt.loop_var.name
        if stmt.iter_args:
            target += f", {_name_tuple(stmt.iter_args)}"
            extra.append(f"init_values={_value_tuple([a.init_value for a in stmt.iter_args])}")
        kind = stmt.kind.value if isinstance(stmt.kind, ForKind) else "range"
        header = f"{indent}for {target} in pl.{kind}({_args(bounds, stmt.attrs, extra)}):"
        return [header, _Body(stmt.body, indent + INDENT, stmt.return_vars)]

    def _while(self, stmt: WhileStmt, indent: str) -> list[_Todo]:
        if stmt.natural and not stmt.iter_args:
            return [f"{indent}while {print_expr(stmt.cond)}:", _Body(stmt.body, indent + INDENT, stmt.return_vars)]
        inits = _value_tuple([a.init_value for a in stmt.iter_args])
        return [
            f"{indent}for {_name_tuple(stmt.iter_args)} in pl.while_(init_values={inits}):",
            f"{indent}{INDENT}pl.cond({print_expr(stmt.cond)})",
            _Lines(stmt.body, indent + INDENT, stmt.return_vars),
        ]

    def _scope(self, stmt: ScopeStmt, indent: str, yield_vars: tuple[Var, ...] | None) -> list[_Todo]:
        extra = [f"dumps=[{', '.join(d.name for d in stmt.dumps)}]"] if stmt.dumps else []
        loop = spmd_forms.for_form(stmt)
        if loop is not None:  # the scopes `for i in pl.spmd(...)` parses to (nanopto.ir_terms.spmd_forms)
            inner = [k for k in loop.incore.kwargs if k.name != "level"]
            kwargs = [k for k in stmt.kwargs if k.name != "name_hint"]
            call = f"pl.spmd({_args(stmt.args, [*inner, *kwargs], extra)})"
            body = SeqStmts(loop.body)
            return [f"{indent}for {loop.var.name} in {call}:", _Body(body, indent + INDENT, yield_vars)]
        region = split_aiv_forms.wrapped_region(stmt)
        if region is not None:  # the InCore scope the parser adds around a region: printed bare
            return self._scope(region, indent, yield_vars)
        lane = split_aiv_forms.loop_form(stmt)
        if lane is not None:  # `for aiv_id in pl.split_aiv(...)` (nanopto.ir_terms.split_aiv_forms)
            call = f"pl.split_aiv({_args(stmt.args, stmt.kwargs, extra)})"
            return [f"{indent}for {lane[0]} in {call}:", _Body(split_aiv_forms.printed_body(lane[1]), indent + INDENT, yield_vars)]
        call = f"pl.{stmt.constructor}({_args(stmt.args, stmt.kwargs, extra)})"
        if stmt.for_form:
            name = stmt.var.name if stmt.var is not None else "_"
            header = f"{indent}for {name} in {call}:"
        elif stmt.var is not None:
            header = f"{indent}with {call} as {stmt.var.name}:"
        else:
            header = f"{indent}with {call}:"
        return [header, _Body(stmt.body, indent + INDENT, yield_vars)]


def _yield_returns(body: Stmt) -> Stmt:
    """A function returns and loops yield: a function body whose last statement (outside any
    loop, if or scope) is a `YieldStmt`, as IR built by hand may have, with a `ReturnStmt` there."""
    spine: list[SeqStmts] = []
    last = body
    while isinstance(last, SeqStmts) and last.stmts:
        spine.append(last)
        last = last.stmts[-1]
    if not isinstance(last, YieldStmt):
        return body
    rebuilt: Stmt = ReturnStmt(last.values, span=last.span, comments=last.comments)
    for seq in reversed(spine):
        rebuilt = SeqStmts((*seq.stmts[:-1], rebuilt), span=seq.span, comments=seq.comments)
    return rebuilt


def _call_attrs(args: Sequence[Expr], dumps: Sequence[Var], items: Sequence[Keyword]) -> list[str]:
    """A call's `attrs={...}` as PyPTO prints it: a dispatch's dump selection first as
    `"dump_vars": [...]`, in argument order (the order the parser builds it in, so a round trip
    keeps it), then the other attributes in their order."""
    entries: list[str] = []
    if dumps:
        by_id = {d.id: d for d in dumps}
        ordered = {a.id: a for a in args if isinstance(a, Var) and a.id in by_id}
        ordered.update(by_id)
        names = ", ".join(v.name for v in ordered.values())
        entries.append(f'"dump_vars": [{names}]')
    entries += [f"{json.dumps(k.name)}: {_attr_text(k.value)}" for k in items]
    return [f"attrs={{{', '.join(entries)}}}"] if entries else []


def _attr_text(value: Expr) -> str:
    """An attribute value; a string in double quotes, as PyPTO prints it (a JSON string literal
    is a Python one)."""
    if isinstance(value, ConstStr):
        return json.dumps(value.value)
    if isinstance(value, MakeTuple) and value.is_list:
        return f"[{', '.join(_attr_text(v) for v in value.elements)}]"
    return print_expr(value)


def _string(value: str) -> str:
    """A string literal in double quotes, as PyPTO prints one (`name_hint="k"`); one holding a
    quote keeps Python's own spelling."""
    text = repr(value)
    return f'"{text[1:-1]}"' if text[0] == "'" and "'" not in value and '"' not in value else text


def _name_tuple(vars_: Sequence[Var]) -> str:
    names = [v.name for v in vars_]
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"


def _value_tuple(values: Sequence[Expr]) -> str:
    printed = [print_expr(v) for v in values]
    return f"({printed[0]},)" if len(printed) == 1 else f"({', '.join(printed)})"
