"""The IR as egglog terms: sorts derived from the node classes, an encoder and a decoder.

One egglog constructor per IR node class, with the same name and the fields in declaration order
(read from `schema.fields_of`), so the encoding never drifts from the IR and the substitution
rules in `nanopto.rules` can be generated from the same table. Sorts:

    Ex   expressions (and keywords, params)      ExL  lists of Ex       (ExNil) (ExCons x xs)
                                                                    (ExL2 x1 x2) ... (ExL8 x1 ... x8)
    St   statements                              SL   statement lists   (SNil) (SOne s) (SCat a b)
                                                                    (SL2 s1 s2) ... (SL8 s1 ... s8)
    Ty   types                                   TyL  lists of Ty

Statement lists are balanced concatenation trees, not cons lists: a prototype showed cons lists
make extraction superlinear in the number of statements.

Variables are `(Var name type id)`: their identity is the integer id, so two variables that
print alike never merge. A pass may add constructors of its own (InlineFunctions adds its call
sites and renamed copies, `nanopto.terms.inlining`) by extending `Encoder` and
`Decoder`; this module knows only the IR.

Terms go into egglog through `term_rows` (bulk rows read by egglog's `input`) and come out
here, read from the extracted term DAG. Those two modules hold what depends on the shape of egglog's
low-level `bindings` API; the engine and the tools only run commands and read reports through it.
`tests/terms/test_encoding.py` pins the egglog version they were written against, and
`tests/terms/test_term_rows.py` checks the `input` behaviour the loader relies on.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from nanopto.egglog_bindings import bindings as eb
from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.dtypes import DataType, MemorySpace, PadValue, TensorLayout
from nanopto.ir_terms.schema import NODE_CLASSES, FieldKind, FieldSpec, fields_of
from nanopto.terms.term_rows import (
    Cell,
    FactTable,
    TermRows,
    handle,
    load_declarations,
    unescape,
)

EGGLOG_VERSION = "13.2.0"

# ---------------------------------------------------------------------------------------------
# The term grammar
# ---------------------------------------------------------------------------------------------

_EX_NODES = {"Expr", "Var", "IterArg", "Keyword", "Param"}
_I64_FIELDS = {("Var", "id"), ("IterArg", "id"), ("TupleGetItemExpr", "index"), ("ConstInt", "value")}
_F64_FIELDS = {("ConstFloat", "value")}
_BOOL_FIELDS = {("ConstBool", "value")}
"""Constants carry their values as egglog's own primitives, so a rule can compute on them
(`(ConstInt (+ a b) d)`); every other attribute is a String (an enum's name, a name, a flag)."""
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
_ENCODED_CLASSES: tuple[type[n.Node], ...] = tuple(
    c for c in NODE_CLASSES if c not in (n.Param, n.Function, n.Program)
)
CLASS_BY_NAME: dict[str, type[n.Node]] = {c.__name__: c for c in _ENCODED_CLASSES}


def sort_of_class(cls: type[n.Node]) -> str:
    return "St" if issubclass(cls, n.Stmt) else "Ex"


def _element_annotation(spec_type: str) -> str:
    ann = spec_type.replace(" ", "")
    if ann.startswith("tuple["):
        return ann[len("tuple[") : -len(",...]")]
    return ann.removesuffix("|None")


def field_sort(cls: type[n.Node], spec: FieldSpec) -> str:
    """The egglog sort of one field of a node class."""
    ann = _element_annotation(_annotation(cls, spec.name))
    match spec.kind:
        case FieldKind.NODE | FieldKind.OPT_NODE:
            return "St" if ann == "Stmt" else "Ex"
        case FieldKind.NODES:
            return "SL" if ann == "Stmt" else "ExL"
        case FieldKind.TYPE:
            return "Ty"
        case FieldKind.TYPES:
            return "TyL"
        case FieldKind.ATTR:
            key = (cls.__name__, spec.name)
            if key in _I64_FIELDS:
                return "i64"
            return "f64" if key in _F64_FIELDS else "bool" if key in _BOOL_FIELDS else "String"


def _annotation(cls: type[n.Node], name: str) -> str:
    for klass in cls.__mro__:
        ann = getattr(klass, "__annotations__", {}).get(name)
        if ann is not None:
            return str(ann)
    raise KeyError(name)


@dataclass(frozen=True)
class Constructor:
    """One egglog constructor: its name, argument sorts and result sort."""

    name: str
    args: tuple[str, ...]
    sort: str
    unextractable: bool = False
    doc: str = ""
    fields: tuple[str, ...] = ()
    """The arguments' names (what `nanopto.terms.language` calls them); default a0, a1, ..."""

    def declaration(self) -> str:
        flags = " :unextractable" if self.unextractable else ""
        return f"(constructor {self.name} ({' '.join(self.args)}) {self.sort}{flags})"

    @property
    def field_names(self) -> tuple[str, ...]:
        return self.fields or tuple(f"a{i}" for i in range(len(self.args)))


@dataclass(frozen=True)
class Fact:
    """A fact that is not a term: a relation over its columns' sorts, or (`value` set) a function
    whose newest value wins."""

    name: str
    columns: tuple[str, ...]
    doc: str
    value: str | None = None
    fields: tuple[str, ...] = ()

    def declaration(self) -> str:
        if self.value is None:
            return f"(relation {self.name} ({' '.join(self.columns)}))"
        return f"(function {self.name} ({' '.join(self.columns)}) {self.value} :merge new)"

    @property
    def field_names(self) -> tuple[str, ...]:
        return self.fields or tuple(f"a{i}" for i in range(len(self.columns)))


ANALYSIS_FACTS: tuple[Fact, ...] = (
    Fact("IsScalar", ("Ex",), "`(IsScalar e)`: e is a scalar, by the types its variables and constants carry", fields=("e",)),
    Fact(
        "Fresh",
        ("Ex",),
        "`(Fresh e)`: e is a buffer of its own, made by an op that returns new storage and bound to a variable "
        "no statement writes in place, so another name may share it (docs/your-own-rules.md#side-conditions)",
        fields=("e",),
    ),
    Fact(
        "Unwritten",
        ("Ex",),
        "`(Unwritten x)`: no statement writes variable x's buffer in place (through x or a name sharing it), "
        "passes it to a function, or carries it through a loop or a branch",
        fields=("x",),
    ),
)
"""The analysis facts a rule may require, given for the program a rewrite pass runs on."""

ANALYSIS_FACT_TABLES: tuple[FactTable, ...] = tuple(
    FactTable(f.name, ("i64",), f"({f.name} ({handle('Ex')} c0))") for f in ANALYSIS_FACTS
)
"""How the analysis facts are loaded: one row per expression handle."""


MAX_GROUP = 8
"""The most statements one group term `(SL<k> s1 ... sk)` holds (see `Encoder.singles`)."""


def group_constructor(k: int) -> str:
    return f"SL{k}"


def args_constructor(k: int) -> str:
    return f"ExL{k}"


FUSED_ASSIGN_CALL = "AssignCall"
"""An assignment of a call, `(AssignStmt lhs (Call ...))`, written as one term when grouped."""


def assign_op_constructor(k: int) -> str:
    """`x = op(a1, ..., ak)` of a builtin op with nothing but its arguments, as one term."""
    return f"AssignOp{k}"


def carries_span(cls: type[n.Node]) -> bool:
    """Statements and calls keep their source span as a last String field.

    Spans survive rewriting that way: an unspliced call is still reported at its own line, and a
    spliced statement carries the helper line it was copied from (its provenance).
    """
    return issubclass(cls, n.Stmt) or cls in (n.Call, n.Submit)


def _class_doc(cls: type[n.Node]) -> str:
    """The first paragraph of a node class's docstring (none for a dataclass's generated one)."""
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(f"{cls.__name__}("):
        return f"the IR node `{cls.__name__}`"
    return " ".join(doc.split("\n\n")[0].split())


def ir_constructors() -> tuple[Constructor, ...]:
    """Every constructor of the IR sorts, node classes first, then lists, types and markers."""
    generated = tuple(
        Constructor(
            cls.__name__,
            tuple(field_sort(cls, f) for f in fields_of(cls)) + (("String",) if carries_span(cls) else ()),
            sort_of_class(cls),
            doc=_class_doc(cls),
            fields=tuple(f.name for f in fields_of(cls)) + (("span",) if carries_span(cls) else ()),
        )
        for cls in _ENCODED_CLASSES
    )
    call = next(c for c in generated if c.name == "Call")
    structural = (
        Constructor(
            FUSED_ASSIGN_CALL,
            ("Ex", *call.args, "String", "String"),
            "St",
            fields=("var", *call.fields[:-1], "call_span", "annotated", "span"),
            doc="`lhs = op(args)` as one term (AssignCall lhs <the Call's fields> annotated span), for a "
            "statement no rule matches alone",
        ),
        Constructor("ExNil", (), "ExL"),
        Constructor("ExCons", ("Ex", "ExL"), "ExL", fields=("head", "tail")),
        *(
            Constructor(
                args_constructor(k),
                ("Ex",) * k,
                "ExL",
                doc=f"the {k} arguments of a call, where no rule looks at the list (one node, not {k})",
            )
            for k in range(2, MAX_GROUP + 1)
        ),
        Constructor("SNil", (), "SL"),
        Constructor(
            "Skip",
            (),
            "SL",
            doc="nothing, as produced by a rule: kept apart from SNil, which template bodies share",
        ),
        Constructor("SOne", ("St",), "SL", fields=("stmt",)),
        Constructor("SCat", ("SL", "SL"), "SL", fields=("first", "rest")),
        Constructor("SCat3", ("SL", "SL", "SL"), "SL", doc="three lists in a row: a splice's bindings, body and result"),
        *(
            Constructor(
                group_constructor(k),
                ("St",) * k,
                "SL",
                doc=f"{k} statements in a row, no rule looks at one of them alone (one node, not {2 * k - 1})",
            )
            for k in range(2, MAX_GROUP + 1)
        ),
        Constructor("TyNil", (), "TyL"),
        Constructor("TyCons", ("Ty", "TyL"), "TyL", fields=("head", "tail")),
        Constructor("TScalar", ("String",), "Ty", fields=("dtype",)),
        Constructor("TTensor", ("ExL", "String"), "Ty", fields=("shape", "dtype")),
        Constructor(
            "TTile",
            ("ExL", "String", "Ty", "Ty", "String"),
            "Ty",
            doc="shape, dtype, memref, view, memory space",
            fields=("shape", "dtype", "memref", "view", "memory_space"),
        ),
        Constructor(
            "TView",
            ("ExL", "ExL", "Ex", "String", "String", "i64", "String", "String"),
            "Ty",
            doc="a tile view: valid_shape, stride, start_offset, blayout, slayout, fractal, pad, compact",
        ),
        Constructor("TMemRef", ("String", "Ex", "i64"), "Ty", doc="a tile's memref: allocation, byte offset, size"),
        Constructor("TNone", (), "Ty", doc="a tile without a memref, or whose view its memory space implies"),
        Constructor(
            "TDistTensor",
            ("ExL", "String", "String"),
            "Ty",
            doc="a distributed tensor: shape, dtype, layout ('' for none)",
            fields=("shape", "dtype", "layout"),
        ),
        Constructor("TPtr", (), "Ty", doc="a window buffer handle, pl.Ptr"),
        Constructor("TCommCtx", (), "Ty", doc="a communication context, pld.CommCtx"),
        Constructor("TArray", ("Ex", "String"), "Ty"),
        Constructor("TTuple", ("TyL",), "Ty"),
        Constructor("TUnknown", (), "Ty"),
        Constructor("NoEx", (), "Ex", doc="an absent optional expression"),
        Constructor("NoSt", (), "St", doc="an absent optional statement"),
        Constructor("Root", ("i64",), "St", unextractable=True, doc="(Root i): the body of the i-th function"),
        Constructor("Opaque", ("i64",), "SL", doc="caller statements no rule looks inside, kept in Python"),
        # Declared last: egglog's extraction visits tables in declaration order, and breaks ties
        # between equal-cost terms by it, so the constructors above keep their places.
        *(
            Constructor(
                assign_op_constructor(k),
                ("Ex", "String", *("Ex",) * k, "String", "String", "String"),
                "St",
                fields=("var", "op", *(f"arg{i}" for i in range(k)), "call_span", "annotated", "span"),
                doc=f"`var = op({', '.join(f'arg{i}' for i in range(k))})` of a builtin op without keywords, dumps or "
                "attributes, as one term whose arguments are its own (an `AssignCall` with none of its lists), "
                "for a statement no rule matches alone",
            )
            for k in range(MAX_GROUP + 1)
        ),
    )
    return generated + structural


SORTS = ("Ex", "ExL", "St", "SL", "Ty", "TyL")


def cost_table_declarations(tables: Iterable[str], prefix: str = "cost_table_") -> str:
    """The functions egglog-python's `set_cost` writes, one per constructor it gives costs to:
    `(function cost_table_Call (<Call's sorts>) i64 :merge (min old new))`. Two costs set on one
    term keep the lower, whatever order the rules fired in. Raises KeyError naming a table that is
    no constructor's."""
    constructors = {c.name: c for c in ir_constructors()}
    lines = []
    for table in sorted(tables):
        ctor = constructors.get(table.removeprefix(prefix))
        if ctor is None or not table.startswith(prefix):
            raise KeyError(f"{table} sets the cost of no constructor of the term language")
        lines.append(f"(function {table} ({' '.join(ctor.args)}) i64 :merge (min old new))")
    return "\n".join(lines)


def ir_declarations() -> str:
    """The egglog text declaring the IR sorts and constructors, and the analysis facts."""
    lines = [f"(sort {s})" for s in SORTS]
    lines += [c.declaration() for c in ir_constructors()]
    lines += [f.declaration() for f in ANALYSIS_FACTS]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Encoding: IR -> term rows
# ---------------------------------------------------------------------------------------------


_NAMED = (n.BinOp, n.UnOp, DataType, MemorySpace, n.ForKind, n.InlineLanguage)
"""The enums an attribute is encoded as by member name."""


def attr_value(value: Any) -> str:
    """The String literal an attribute field is encoded as (decoded back by `_ENUMS`)."""
    if type(value) is str:  # a name, the commonest attribute: itself
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, _NAMED):
        return value.name
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return ""
    return str(value)


COMMENT_MARK = "\x1f"
"""Starts each comment line of a statement in its span String (a unit separator: no source line
holds one)."""


def span_value(span: n.Span | None, comments: tuple[str, ...] = ()) -> str:
    """The span String of a term: `line:col:file` (`line:col+end_line+end_col:file` when the span
    has its end), then the statement's comment lines, each after a `COMMENT_MARK`. Comments ride
    with the span, so a statement keeps them through every rule that keeps its span, and the terms
    of the IR sorts need no field for them."""
    if span is None:
        text = ""
    elif span.end_line >= 0:
        text = f"{span.line}:{span.col}+{span.end_line}+{span.end_col}:{span.file}"
    else:
        text = f"{span.line}:{span.col}:{span.file}"
    if comments:
        return text + "".join(COMMENT_MARK + c for c in comments)
    return text


def parse_span(text: str) -> n.Span | None:
    if COMMENT_MARK in text:
        text = text.split(COMMENT_MARK, 1)[0]
    if not text:
        return None
    line, col, file = text.split(":", 2)
    if "+" in col:
        start, end_line, end_col = col.split("+")
        return n.Span(file, int(line), int(start), int(end_line), int(end_col))
    return n.Span(file, int(line), int(col))


def parse_comments(text: str) -> tuple[str, ...]:
    """The comment lines a span String carries (see `span_value`)."""
    return tuple(text.split(COMMENT_MARK)[1:])


_E_NODE, _E_OPT_EX, _E_OPT_ST, _E_STMTS, _E_EXPRS, _E_TYPE, _E_TYPES, _E_I64, _E_ATTR, _E_ARGS, _E_F64, _E_BOOL = range(12)
_ARGS_FIELDS = {(n.Call, "args"), (n.Submit, "args")}
"""The expression lists no stock rule looks into as a list: encoded as one `(ExL<k> ...)` term
when the encoder groups (see `Encoder.singles`)."""
_ENCODE_PLANS: dict[type, tuple[tuple[tuple[str, int], ...], int]] = {}
_SPANNED, _COMMENTED = 1, 2
"""What follows the fields of a term: nothing (0), its span String, or (a statement) its span
String with its comment lines."""


def _encode_plan(cls: type[n.Node]) -> tuple[tuple[tuple[str, int], ...], int]:
    """Each field of `cls` with how it is encoded, and what follows them (cached per class)."""
    plan = _ENCODE_PLANS.get(cls)
    if plan is None:
        fields: list[tuple[str, int]] = []
        for spec in fields_of(cls):
            sort = field_sort(cls, spec)
            how = {
                FieldKind.NODE: _E_NODE,
                FieldKind.OPT_NODE: _E_OPT_ST if sort == "St" else _E_OPT_EX,
                FieldKind.NODES: _E_STMTS if sort == "SL" else _E_ARGS if (cls, spec.name) in _ARGS_FIELDS else _E_EXPRS,
                FieldKind.TYPE: _E_TYPE,
                FieldKind.TYPES: _E_TYPES,
                FieldKind.ATTR: {"i64": _E_I64, "f64": _E_F64, "bool": _E_BOOL}.get(sort, _E_ATTR),
            }[spec.kind]
            fields.append((spec.name, how))
        follows = 0 if not carries_span(cls) else _COMMENTED if issubclass(cls, n.Stmt) else _SPANNED
        plan = _ENCODE_PLANS[cls] = (tuple(fields), follows)
    return plan


_CELL_CODE = {
    _E_NODE: "expr({})",
    _E_ATTR: "attr_value({})",
    _E_I64: "i64({}, node)",
    _E_F64: "float({})",
    _E_BOOL: "1 if {} else 0",  # egglog's `input` reads no bool column: see term_rows
    _E_STMTS: "self.stmts({})",
    _E_EXPRS: "self.exprs({})",
    _E_ARGS: "self._args({})",
    _E_TYPE: "self.type({})",
    _E_TYPES: "self.types({})",
    _E_OPT_EX: 'self._optional({}, "NoEx")',
    _E_OPT_ST: 'self._optional({}, "NoSt")',
}
"""How `Encoder._cells` writes a field of each kind (`{}` the field's value)."""
_CELLS: dict[type, Callable[[Any, Any], list[Cell]]] = {}


def _cells_function(cls: type[n.Node]) -> Callable[[Any, Any], list[Cell]]:
    """`Encoder._cells` for the nodes of `cls`, from its `_encode_plan`, written out as one list
    display (fields in order, then the span), since it runs once per encoded node: a loop over the
    plan tested each field's kind with a chain of comparisons."""
    fields, follows = _encode_plan(cls)
    cells = [_CELL_CODE[how].format(f"node.{name}") for name, how in fields]
    if follows:
        cells.append("self.span_text(node.span, node.comments)" if follows == _COMMENTED else "self.span_text(node.span)")
    env: dict[str, Any] = {"attr_value": attr_value, "i64": _i64}
    source = f"def cells(self, node):\n    expr = self.expr\n    return [{', '.join(cells)}]"
    exec(source, env)  # code generated from the class's own fields, as dataclasses does
    function: Callable[[Any, Any], list[Cell]] = env["cells"]
    _CELLS[cls] = function
    return function


_PLAIN_CALL: tuple[tuple[str, object], ...] = tuple(
    (spec.name, spec.default) for spec in dataclasses.fields(n.Call) if spec.name not in ("op", "args", "span")
)
"""What a call written as `AssignOp<k>` holds besides its op, arguments and span: every other
field at its default (a builtin, no keywords, dumps or attributes), which is how it decodes."""
_is_plain_call: Callable[[n.Call], bool] = eval(  # written out: all() over a generator costs more than the reads
    "lambda call: " + " and ".join(f"call.{name} == plain[{i}][1]" for i, (name, _) in enumerate(_PLAIN_CALL)),
    {"plain": _PLAIN_CALL},
)
"""Whether a call holds nothing but its op, arguments and span (`_PLAIN_CALL`)."""


class ConstantRangeError(ValueError):
    """An integer constant egglog's i64 cannot hold."""


def _i64(value: int, node: n.Node) -> int:
    number = int(value)
    if not I64_MIN <= number <= I64_MAX:
        span = getattr(node, "span", None)
        where = f" at line {span.line}" if span is not None else ""
        raise ConstantRangeError(f"the integer {number}{where} does not fit in 64 bits, which nanopto's terms carry")
    return number


class Encoder:
    """Turns IR into term rows (`term_rows.TermRows`); remembers every Var so decoding restores
    identity. Every method returns the handle of the term it encoded. A pass that encodes some
    nodes as terms of its own overrides `_expr`.
    """

    def __init__(
        self, opaque: set[int] | None = None, rows: TermRows | None = None, singles: set[int] | None = None
    ) -> None:
        self.rows = rows if rows is not None else TermRows()
        self.singles = singles
        """When given, the statements (by identity) a rule matches one by one, as `(SOne st)` (call
        site statements, projected reads); the other statements of a list are encoded in groups
        `(SL<k> s1 ... sk)`, one node where a concatenation tree has 2k - 1, and a call's arguments
        are one `(ExL<k> a1 ... ak)`, so a copied body costs fewer rows to substitute, extract and
        decode. None: every statement is its own `(SOne st)`, every list a cons list."""
        self.vars: dict[int, n.Var] = {}
        self.opaque_ids = opaque or set()
        """Statements (by identity) no rule looks inside: each run of them in a statement list is
        encoded as one `(Opaque k)` and kept in Python."""
        self.opaque: list[tuple[n.Stmt, ...]] = []
        self.spans: dict[str, n.Span | None] = {}
        """Each span String written -> the Span it was written from (what `Decoder.spans` starts from)."""
        self._memo: dict[int, int] = {}
        self._keep: list[Any] = []

    def expr(self, node: n.Node) -> int:
        key = id(node)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        handle = self._expr(node)
        self._memo[key] = handle
        self._keep.append(node)
        return handle

    def _expr(self, node: n.Node) -> int:
        if isinstance(node, n.Var):
            self.vars.setdefault(node.id, node)
        cls = type(node)
        return self.rows.term(cls.__name__, *(_CELLS.get(cls) or _cells_function(cls))(self, node))

    def _cells(self, node: n.Node) -> list[Cell]:
        """The row cells of `node`'s own term: its fields' handles and literals, then its span
        (what `_expr` reads, inline)."""
        cls = type(node)
        return (_CELLS.get(cls) or _cells_function(cls))(self, node)

    def _args(self, values: Sequence[n.Node]) -> int:
        """A call's arguments: one `(ExL<k> a1 ... ak)` when the encoder groups, else a list."""
        if self.singles is not None and 2 <= len(values) <= MAX_GROUP:
            return self.rows.term(args_constructor(len(values)), *[self.expr(v) for v in values])
        return self.exprs(values)

    def _optional(self, value: n.Node | None, absent: str) -> int:
        """An optional node's handle, or the `(NoEx)` / `(NoSt)` term standing for its absence."""
        return self.rows.term(absent) if value is None else self.expr(value)

    def span_text(self, span: n.Span | None, comments: tuple[str, ...] = ()) -> str:
        """`span_value(span, comments)`, remembered in `spans`."""
        text = span_value(span, comments)
        self.spans[text] = span
        return text

    def _grouped(self, stmt: n.Stmt) -> int:
        """A statement of a group: `lhs = op(a1, ..., ak)` of a builtin op with nothing but its
        arguments as one `(AssignOp<k> lhs op a1 ... ak ...)` term, any other `lhs = f(...)` as one
        `(AssignCall ...)` (a call site is never grouped: its statement is one of `singles`),
        anything else as itself. The fewer terms a copied statement takes, the fewer rows the
        e-graph substitutes, extracts and decodes per call site."""
        if type(stmt) is n.AssignStmt and type(stmt.value) is n.Call:
            call = stmt.value
            lhs = self.expr(stmt.var)
            meta = self.span_text(stmt.span, stmt.comments)
            if len(call.args) <= MAX_GROUP and _is_plain_call(call):
                return self.rows.term(
                    assign_op_constructor(len(call.args)),
                    lhs,
                    attr_value(call.op),
                    *[self.expr(arg) for arg in call.args],
                    self.span_text(call.span),
                    attr_value(stmt.annotated),
                    meta,
                )
            return self.rows.term(FUSED_ASSIGN_CALL, lhs, *self._cells(call), attr_value(stmt.annotated), meta)
        return self.expr(stmt)

    def roots(self, functions: Sequence[n.Function]) -> None:
        """Each function's body as `(Root i)`, the name extraction starts from; its parameters are
        encoded too, so decoding gives them back as the very same Vars."""
        for i, fn in enumerate(functions):
            for param in fn.param_list:
                self.expr(param.var)
            self.rows.union("St", self.rows.term("Root", i), self.expr(fn.body))

    def exprs(self, values: Sequence[n.Node]) -> int:
        handle = self.rows.term("ExNil")
        for value in reversed(values):
            handle = self.rows.term("ExCons", self.expr(value), handle)
        return handle

    def stmts(self, values: Sequence[n.Stmt]) -> int:
        """A balanced concatenation tree, so term depth is logarithmic in the statement count."""
        items: list[int] = []
        run: list[n.Stmt] = []
        group: list[int] = []
        singles, opaque_ids = self.singles, self.opaque_ids
        for stmt in values:
            if id(stmt) in opaque_ids:
                if group:
                    items.append(self._group(group))
                run.append(stmt)
                continue
            if run:
                items.append(self._opaque_run(run))
                run = []
            if singles is None or id(stmt) in singles:
                if group:
                    items.append(self._group(group))
                items.append(self._single(stmt))
                continue
            group.append(self._grouped(stmt))
            if len(group) == MAX_GROUP:
                items.append(self._group(group))
        if run:
            items.append(self._opaque_run(run))
        if group:
            items.append(self._group(group))
        return self.stmt_tree(items)

    def _single(self, stmt: n.Stmt) -> int:
        """A statement a rule matches by itself: `(SOne st)`."""
        return self.rows.term("SOne", self.expr(stmt))

    def _group(self, group: list[int]) -> int:
        """One `(SOne s)` or `(SL<k> s1 ... sk)` for the statement handles in `group` (emptied)."""
        handle = self.rows.term("SOne" if len(group) == 1 else group_constructor(len(group)), *group)
        group.clear()
        return handle

    def _opaque_run(self, run: list[n.Stmt]) -> int:
        self.opaque.append(tuple(run))
        return self.rows.term("Opaque", len(self.opaque) - 1)

    def stmt_tree(self, items: list[int]) -> int:
        """`(SCat ...)` pairs over statement-list handles, balanced; `(SNil)` when empty."""
        if not items:
            return self.rows.term("SNil")
        while len(items) > 1:
            paired = [self.rows.term("SCat", items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
            if len(items) % 2:
                paired.append(items[-1])
            items = paired
        return items[0]

    def type(self, ty: t.Type) -> int:
        term = self.rows.term
        if type(ty) is t.UnknownType:  # every unannotated Var's: decided before the eight patterns below
            return term("TUnknown")
        match ty:
            case t.ScalarType(dtype):
                return term("TScalar", dtype.name)
            case t.DistributedTensorType(window_buffer=t_window) if t_window is not None:
                # Only hand-built IR refers to a window buffer (nanopto has no comm-collection
                # pass, docs/coming-from-pypto.md#distributed-programs): refused, not dropped.
                raise ValueError(
                    f"cannot rewrite a program whose distributed tensor type refers to the window buffer "
                    f"'{t_window.name}': nanopto's passes take the types the parser makes, which refer to none"
                )
            case t.DistributedTensorType(shape=shape, dtype=dtype, layout=layout):
                return term("TDistTensor", self.exprs(shape), dtype.name, "" if layout is None else layout.name)
            case t.TensorType(shape, dtype):
                return term("TTensor", self.exprs(shape), dtype.name)
            case t.PtrType():
                return term("TPtr")
            case t.CommCtxType():
                return term("TCommCtx")
            case t.TileType(shape=shape, dtype=dtype, memref=memref, tile_view=view, memory_space=mem):
                return term(
                    "TTile",
                    self.exprs(shape),
                    dtype.name,
                    term("TNone") if memref is None else term("TMemRef", memref.name, self.expr(memref.byte_offset), memref.size),
                    term("TNone") if view is None else self._tile_view(view),
                    mem.name if mem else "",
                )
            case t.ArrayType(size=size, dtype=dtype):
                return term("TArray", self.expr(size), dtype.name)
            case t.TupleType(types):
                return term("TTuple", self.types(types))
            case _:
                return term("TUnknown")

    def _tile_view(self, view: t.TileView) -> int:
        start = self.rows.term("NoEx") if view.start_offset is None else self.expr(view.start_offset)
        return self.rows.term(
            "TView",
            self.exprs(view.valid_shape),
            self.exprs(view.stride),
            start,
            view.blayout.name,
            view.slayout.name,
            view.fractal,
            view.pad.name,
            view.compact.name,
        )

    def types(self, types: Iterable[t.Type]) -> int:
        handle = self.rows.term("TyNil")
        for ty in reversed(tuple(types)):
            handle = self.rows.term("TyCons", self.type(ty), handle)
        return handle


# ---------------------------------------------------------------------------------------------
# Decoding: egglog term DAG -> IR
# ---------------------------------------------------------------------------------------------

_ENUMS: dict[str, Callable[[str], Any]] = {
    "BinOp": lambda s: n.BinOp[s],
    "UnOp": lambda s: n.UnOp[s],
    "DataType": lambda s: DataType[s],
    "ForKind": lambda s: n.ForKind[s],
    "InlineLanguage": lambda s: n.InlineLanguage[s],
    "str": lambda s: s,
    "int": int,
    "float": float,
    "bool": lambda s: s == "True",
}


class DecodeError(RuntimeError):
    """An extracted term that is not an IR term: a rule produced something extraction must not."""


NOT_LITERAL: Any = object()
"""A `DagRead` value of a node that is no literal (a constructor)."""


@dataclass(frozen=True)
class DagRead:
    """Extracted terms as the decoder reads them, by node number: each node's constructor name and
    children (None and no children for a literal), or its literal's value, unescaped when a String
    (`NOT_LITERAL` for a constructor). Either a term DAG read once, node by node (`of`), or the
    terms `nanopto.egraph.extraction` chose from the frozen e-graph, which never make a DAG.

    An extracted DAG holds only the extracted terms, so reading every node in one loop crosses into
    egglog as often as reading each when first met; afterwards a visit, and every read of a
    literal shared by many terms (a span, a name, a site number), is a list index."""

    size: int
    names: list[str | None]
    children: list[list[int]]
    values: list[Any]

    @staticmethod
    def of(dag: eb.TermDag) -> DagRead:
        term_app = eb.TermApp
        size = dag.size()
        # One comprehension per column over the nodes fetched once: each `.name`/`.args` read
        # crosses into egglog, and a loop of appends costs a fifth more than the comprehensions.
        nodes = list(map(dag.get, range(size)))
        none: list[int] = []
        names = [node.name if type(node) is term_app else None for node in nodes]
        children = [node.args if type(node) is term_app else none for node in nodes]
        values = [NOT_LITERAL if type(node) is term_app else _literal_value(node) for node in nodes]
        return DagRead(size, names, children, values)

    def describe(self, term: int) -> str:
        """Node `term` for an error message: its constructor's name, or its literal's value."""
        name = self.names[term]
        return f"({name} ...)" if name is not None else repr(self.values[term])


def _literal_value(node: eb.TermLit | eb.TermVar | eb.TermApp) -> Any:
    """A literal node's value, unescaped when a String (`NOT_LITERAL` for a unit or a variable)."""
    if type(node) is not eb.TermLit or isinstance(node.value, eb.Unit):
        return NOT_LITERAL
    value = node.value.value
    return unescape(value) if isinstance(value, str) else value


@dataclass
class Decoder:
    """Turns an extracted term DAG back into IR.

    Variables come back as the very `Var` objects that were encoded. A pass that added
    constructors of its own decodes them by extending `SPECIAL` in a subclass.
    """

    vars: dict[int, n.Var]
    opaque: list[tuple[n.Stmt, ...]] = field(default_factory=list)
    spans: dict[str, n.Span | None] = field(default_factory=dict)
    """Span String -> its Span, known before decoding (the encoder's `Encoder.spans`) and added to
    by it: a decoded statement shares the Span its String was written from instead of parsing it."""
    _read: tuple[eb.TermDag, DagRead] | None = field(default=None, init=False, repr=False, compare=False)
    """The DAG last decoded from, and its reading, shared by all the roots it holds."""
    _memo: tuple[DagRead, list[Any]] | None = field(default=None, init=False, repr=False, compare=False)
    """The reading last decoded from, and its memo: node number -> decoded value (None when not
    decoded), emptied after each root."""

    SPECIAL: ClassVar[dict[str, Callable[[Any, list[int]], Any]]] = {}
    """Constructors that are not one IR class field for field: lists, markers, types, variables."""

    def decode(self, termdag: eb.TermDag | DagRead, term: int) -> Any:
        """The IR of `term`, from a term DAG or from terms already read (`DagRead`)."""
        if isinstance(termdag, DagRead):
            read = termdag
        else:
            # A DAG only grows (each extraction into a shared one appends its terms): same size, same DAG.
            last = self._read
            if last is None or last[0] is not termdag or last[1].size != termdag.size():
                last = self._read = (termdag, DagRead.of(termdag))
            read = last[1]
        names, children, values = read.names, read.children, read.values
        handlers = self._handlers = _handlers(type(self))
        # A list indexed by node number, not a dict: a decode looks a node up for every child it
        # reads (280,000 lookups at flat-10000, half of them hits). The list is made once per
        # reading (a reading holds every root: `[None] * size` per root would cost its size each
        # time) and emptied of what this root set on the way out, so each root is decoded apart.
        if self._memo is None or self._memo[0] is not read:
            self._memo = (read, [None] * read.size)
        memo = self._memo[1]
        decoded: list[int] = []
        self._callees: dict[tuple[type, str], n.OpName] = {}
        self._shapes: dict[tuple[int, ...], tuple[Any, ...]] = {}

        # `_term` and `lit` run once per node and per literal child: closures over this decode's
        # tables, set on the instance so that the handlers' `decoder._term(...)` finds them first.
        def _term(term: int) -> Any:
            cached = memo[term]
            if cached is not None:
                return cached
            name = names[term]
            if name is None:
                raise DecodeError(f"expected a constructor, found {read.describe(term)}")
            handler = handlers.get(name) or _handler(handlers, name)
            result = memo[term] = handler(self, children[term])
            decoded.append(term)
            return result

        def lit(term: int) -> Any:
            value = values[term]
            if value is NOT_LITERAL:
                raise DecodeError(f"expected a literal, found {read.describe(term)}")
            return value

        self._term = _term  # type: ignore[method-assign]
        self.lit = lit  # type: ignore[method-assign]
        # The decoder recurses once per term level; statement lists are balanced trees, so the
        # depth is that of the deepest expression. The interpreter's recursion limit is
        # process-wide: it is raised for this call only and restored on the way out.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            return _term(term)
        finally:
            sys.setrecursionlimit(limit)
            for node in decoded:
                memo[node] = None
            # The closures hold this decoder: left on it, they would make it, its memo and the
            # reading a reference cycle, freed only by a full collection (nanopto/gc_pause.py).
            del self._term, self.lit

    def lit(self, term: int) -> Any:
        """The value of a literal child (unescaped when a String), read with its DAG (`DagRead`).
        (`decode` replaces it with a closure over its own tables.)"""
        raise DecodeError("a decoder reads literals only while decoding")

    def term(self, term: int) -> Any:
        """The decoded value of a constructor child."""
        return self._term(term)

    def _term(self, term: int) -> Any:
        """The decoded value of a constructor child (`decode` replaces it with a closure)."""
        raise DecodeError("a decoder reads terms only while decoding")

    def callee(self, kind: type[n.OpName], name: str) -> n.OpName:
        """The `OpName` (or `GlobalVar`) of a decoded call, one object per name and decode: an
        immutable string, shared as the parser's interned names are."""
        key = (kind, name)
        found = self._callees.get(key)
        if found is None:
            found = self._callees[key] = name if type(name) is kind else kind(name)
        return found

    def _list(self, args: list[int]) -> tuple[Any, ...]:
        return (self._term(args[0]), *self._term(args[1]))

    def _nothing(self, args: list[int]) -> tuple[Any, ...]:
        return ()

    def _none(self, args: list[int]) -> None:
        return None

    def _one(self, args: list[int]) -> tuple[Any, ...]:
        return (self._term(args[0]),)

    def _assign_call(self, args: list[int]) -> n.AssignStmt:
        var = self._term(args[0])
        call = (self._handlers.get("Call") or _handler(self._handlers, "Call"))(self, args[1:-2])
        return self._assignment(var, call, args[-2], args[-1])

    def _assign_shape(
        self, op: int, call_span: int, annotated: int, span_text: int
    ) -> tuple[n.OpName, n.Span | None, bool, n.Span | None, tuple[str, ...]]:
        """What an `AssignOp<k>` takes from its literals: the op, the call's span, then the
        statement's own (`_statement_literals`)."""
        return (
            self.callee(n.OpName, self.lit(op)),
            self._span(self.lit(call_span)),
            *self._statement_literals(annotated, span_text),
        )

    def _statement_literals(self, annotated: int, span_text: int) -> tuple[bool, n.Span | None, tuple[str, ...]]:
        """A fused assignment's annotated flag, span and comments, from its two literals."""
        text = self.lit(span_text)
        return self.lit(annotated) == "True", self._span(text), parse_comments(text) if COMMENT_MARK in text else ()

    def _span(self, text: str) -> n.Span | None:
        """The span a span literal spells, parsed once per decoder (the per-class decoders
        generated below inline the same lookup)."""
        span = self.spans.get(text)
        if span is None:
            span = self.spans[text] = parse_span(text)
        return span

    def _assignment(self, var: n.Var, value: n.Call, annotated: int, span_text: int) -> n.AssignStmt:
        """The `AssignStmt` of a fused assignment, from its annotated flag and span literals."""
        return _assign_node(var, value, *self._statement_literals(annotated, span_text))

    def _cat3(self, args: list[int]) -> tuple[Any, ...]:
        return (*self._term(args[0]), *self._term(args[1]), *self._term(args[2]))

    def _cat(self, args: list[int]) -> tuple[Any, ...]:
        left: tuple[Any, ...] = self._term(args[0])
        right: tuple[Any, ...] = self._term(args[1])
        return left + right

    def _opaque(self, args: list[int]) -> tuple[n.Stmt, ...]:
        index: int = self.lit(args[0])
        return self.opaque[index]

    def _scalar_type(self, args: list[int]) -> t.Type:
        return t.ScalarType(DataType[self.lit(args[0])])

    def _tensor_type(self, args: list[int]) -> t.Type:
        return t.TensorType(self._term(args[0]), DataType[self.lit(args[1])])

    def _distributed_tensor_type(self, args: list[int]) -> t.Type:
        layout = self.lit(args[2])
        return t.DistributedTensorType(self._term(args[0]), DataType[self.lit(args[1])], layout=TensorLayout[layout] if layout else None)

    def _ptr_type(self, args: list[int]) -> t.Type:
        return t.PtrType()

    def _comm_ctx_type(self, args: list[int]) -> t.Type:
        return t.CommCtxType()

    def _tile_type(self, args: list[int]) -> t.Type:
        mem = self.lit(args[4])
        space = MemorySpace[mem] if mem else None
        return t.TileType(self._term(args[0]), DataType[self.lit(args[1])], self._term(args[2]), self._term(args[3]), space)

    def _tile_view(self, args: list[int]) -> t.TileView:
        valid, stride, start = self._term(args[0]), self._term(args[1]), self._term(args[2])
        blayout, slayout = t.TileLayout[self.lit(args[3])], t.TileLayout[self.lit(args[4])]
        pad, compact = PadValue[self.lit(args[6])], t.CompactMode[self.lit(args[7])]
        return t.TileView(valid, stride, start, blayout, slayout, self.lit(args[5]), pad, compact)

    def _memref(self, args: list[int]) -> t.MemRef:
        return t.MemRef(self.lit(args[0]), self._term(args[1]), self.lit(args[2]))

    def _array_type(self, args: list[int]) -> t.Type:
        return t.ArrayType(size=self._term(args[0]), dtype=DataType[self.lit(args[1])])

    def _tuple_type(self, args: list[int]) -> t.Type:
        return t.TupleType(self._term(args[0]))

    def _unknown_type(self, args: list[int]) -> t.Type:
        return t.UnknownType()

    def _var(self, args: list[int]) -> n.Var:
        var_id = self.lit(args[2])
        known = self.vars.get(var_id)
        if known is not None:
            return known
        var = n.Var(self.lit(args[0]), self._term(args[1]), id=var_id)
        self.vars[var_id] = var
        return var


_assign_node = n.slot_constructor(n.AssignStmt, ("var", "value", "annotated", "span", "comments"))
"""`AssignStmt(var, value, annotated=..., span=..., comments=...)` built slot by slot: the one
builder of both fused assignments, `AssignCall` and `AssignOp<k>`, the commonest spliced terms."""
_NO_KEYWORDS = n.Keywords(())
_plain_call = n.slot_constructor(n.Call, ("op", "args", "kwargs", "span"))
"""The `Call` of an `AssignOp<k>`: its op, arguments and span, `kwargs` the empty `Keywords` (as
`Call.__post_init__` makes it), every other field its default (`_PLAIN_CALL`)."""


def _group_decoder(count: int) -> Callable[[Any, list[int]], tuple[Any, ...]]:
    """The handler of a group `(SL<k> s1 ... sk)` or `(ExL<k> a1 ... ak)`: `(term(args[0]), ...,
    term(args[k - 1]))`, written out per count: a comprehension over a group's few children costs
    about three times their reads (its frame, its list), and groups are most spliced terms."""
    reads = "".join(f"term(args[{i}]), " for i in range(count))
    env: dict[str, Any] = {}
    exec(f"def decode(decoder, args):\n    term = decoder._term\n    return ({reads})", env)  # generated, as _node_decoder's
    decode: Callable[[Any, list[int]], tuple[Any, ...]] = env["decode"]
    return decode


def _assign_op_decoder(count: int) -> Callable[[Any, list[int]], n.AssignStmt]:
    """The handler of `(AssignOp<k> lhs op a1 ... ak call_span annotated span)`: the `AssignStmt`
    of the `Call` that `(AssignCall ...)` with empty lists decodes to, field for field, written out
    per count (the commonest spliced statement: one call, its arguments read inline). A helper
    statement's literals (op, spans, annotated flag) are the same terms at every site it is spliced
    into: read and converted once per decode (`Decoder._assign_shape`), not once per copy."""
    reads = "".join(f"term(args[{2 + i}]), " for i in range(count))
    literals = ", ".join(f"args[{i}]" for i in (1, count + 2, count + 3, count + 4))
    source = f"""def decode(decoder, args):
    term = decoder._term
    var = term(args[0])
    key = ({literals})
    shape = decoder._shapes.get(key)
    if shape is None:
        shape = decoder._shapes[key] = decoder._assign_shape(*key)
    op, call_span, annotated, span, comments = shape
    return assign(var, call(op, ({reads}), NO_KEYWORDS, call_span), annotated, span, comments)"""
    env: dict[str, Any] = {"assign": _assign_node, "call": _plain_call, "NO_KEYWORDS": _NO_KEYWORDS}
    exec(source, env)  # generated, as _node_decoder's
    decode: Callable[[Any, list[int]], n.AssignStmt] = env["decode"]
    return decode


Decoder.SPECIAL = {
    "ExNil": Decoder._nothing,
    "TyNil": Decoder._nothing,
    "SNil": Decoder._nothing,
    "Skip": Decoder._nothing,
    "ExCons": Decoder._list,
    "TyCons": Decoder._list,
    "SOne": Decoder._one,
    "SCat": Decoder._cat,
    "SCat3": Decoder._cat3,
    FUSED_ASSIGN_CALL: Decoder._assign_call,
    **{assign_op_constructor(k): _assign_op_decoder(k) for k in range(MAX_GROUP + 1)},
    **{group_constructor(k): _group_decoder(k) for k in range(2, MAX_GROUP + 1)},
    **{args_constructor(k): _group_decoder(k) for k in range(2, MAX_GROUP + 1)},
    "NoEx": Decoder._none,
    "NoSt": Decoder._none,
    "Opaque": Decoder._opaque,
    "TScalar": Decoder._scalar_type,
    "TTensor": Decoder._tensor_type,
    "TDistTensor": Decoder._distributed_tensor_type,
    "TPtr": Decoder._ptr_type,
    "TCommCtx": Decoder._comm_ctx_type,
    "TTile": Decoder._tile_type,
    "TView": Decoder._tile_view,
    "TMemRef": Decoder._memref,
    "TNone": Decoder._none,
    "TArray": Decoder._array_type,
    "TTuple": Decoder._tuple_type,
    "TUnknown": Decoder._unknown_type,
    "Var": Decoder._var,
}


_DecodePlan = tuple[type[n.Node], tuple[tuple[str, Callable[[Any], Any] | None], ...], bool]
_DECODE_PLANS: dict[str, _DecodePlan | None] = {}
_Handler = Callable[[Any, list[int]], Any]
_HANDLERS: dict[type[Decoder], dict[str, _Handler]] = {}
"""Decoder class -> constructor name -> how it builds that constructor: its `SPECIAL` entries,
and one function per IR class made from the class's plan on first use. Looked up once per node."""


def _handlers(cls: type[Decoder]) -> dict[str, _Handler]:
    table = _HANDLERS.get(cls)
    if table is None:
        table = _HANDLERS[cls] = dict(cls.SPECIAL)
    return table


def _handler(table: dict[str, _Handler], name: str) -> _Handler:
    """Add the decoding function of IR constructor `name` to `table` (one built from its plan)."""
    plan = _decode_plan(name)
    if plan is None:
        raise DecodeError(f"extraction produced the helper term '{name}', which has no IR meaning")
    handler = table[name] = _node_decoder(plan)
    return handler


def _node_decoder(plan: _DecodePlan) -> _Handler:
    """Decodes an IR node field for field from its constructor's arguments, by the class's `plan`,
    written out per class as straight-line code (no dictionary, no loop), since it runs once per
    decoded node; the node is made by the class's `nodes.slot_constructor`."""
    cls, fields, has_span = plan
    slot_names = {spec.name for spec in dataclasses.fields(cast(Any, cls))}
    given = tuple(name for name, _ in fields)
    if has_span:
        given += ("span", "comments") if "comments" in slot_names else ("span",)
    env: dict[str, Any] = {
        "make": n.slot_constructor(cls, given),
        "parse_span": parse_span,
        "parse_comments": parse_comments,
        "MARK": COMMENT_MARK,
        "GlobalVar": n.GlobalVar,
        "OpName": n.OpName,
        "NO_KEYWORDS": _NO_KEYWORDS,
        "Keywords": n.Keywords,
    }
    lines = ["def decode(decoder, args):", "    term, lit = decoder._term, decoder.lit"]
    for i, (_, convert) in enumerate(fields):
        if convert is None:
            lines.append(f"    v{i} = term(args[{i}])")
        else:
            env[f"convert_{i}"] = convert
            lines.append(f"    v{i} = convert_{i}(lit(args[{i}]))")
    values = [f"v{i}" for i in range(len(fields))]
    if has_span:
        lines += [
            "    text = lit(args[-1])",
            "    spans = decoder.spans",
            "    span = spans.get(text)",
            "    if span is None:",
            "        span = spans[text] = parse_span(text)",
        ]
        values.append("span")
        if "comments" in slot_names:
            values.append("parse_comments(text) if MARK in text else ()")
    if cls is n.Call:
        # `Call.__post_init__`'s normalisation, which `slot_constructor` leaves to its caller.
        index = {name: i for i, (name, _) in enumerate(fields)}
        op, function, kwargs = (f"v{index[name]}" for name in ("op", "function", "kwargs"))
        lines += [
            f"    {op} = decoder.callee(GlobalVar if {function} else OpName, {op})",
            f"    if type({kwargs}) is tuple:",
            f"        {kwargs} = NO_KEYWORDS if not {kwargs} else Keywords({kwargs})",
        ]
    lines.append(f"    return make({', '.join(values)})")
    exec("\n".join(lines), env)  # code generated from the class's own fields, as dataclasses does
    decode: _Handler = env["decode"]
    return decode


def _decode_plan(name: str) -> _DecodePlan | None:
    """The IR class of constructor `name`, each field with its literal converter (None for a
    child term), and whether a span String follows (cached per constructor)."""
    if name in _DECODE_PLANS:
        return _DECODE_PLANS[name]
    cls = CLASS_BY_NAME.get(name)
    plan: _DecodePlan | None = None
    if cls is not None:
        fields = tuple(
            (
                spec.name,
                (
                    (
                        int
                        if (name, spec.name) in _I64_FIELDS
                        else float
                        if (name, spec.name) in _F64_FIELDS
                        else bool
                        if (name, spec.name) in _BOOL_FIELDS
                        else _ENUMS[_annotation(cls, spec.name)]
                    )
                    if spec.kind is FieldKind.ATTR
                    else None
                ),
            )
            for spec in fields_of(cls)
        )
        plan = (cls, fields, carries_span(cls))
    _DECODE_PLANS[name] = plan
    return plan


def ir_load_declarations(extra: Sequence[Constructor] = (), facts: Sequence[FactTable] = ()) -> str:
    """Load tables and rules for the IR constructors plus `extra` ones (see `term_rows`)."""
    return load_declarations(SORTS, (*ir_constructors(), *extra), facts)
