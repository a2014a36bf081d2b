"""The IR as egglog terms: sorts derived from the node classes, an encoder and a decoder.

One egglog constructor per IR node class, with the same name and the fields in declaration order
(read from `schema.fields_of`), so the encoding never drifts from the IR and the substitution
rules in `nanopto.rules` can be generated from the same table. Sorts:

    Ex   expressions (and keywords, params)      ExL  lists of Ex       (ExNil) (ExCons x xs)
    St   statements                              SL   statement lists   (SNil) (SOne s) (SCat a b)
    Ty   types                                   TyL  lists of Ty

Statement lists are balanced concatenation trees, not cons lists: a prototype showed cons lists
make extraction superlinear in the number of statements.

Variables are `(Var name type id)`: their identity is the integer id, so two variables that
print alike never merge. Inlining creates renamed copies `(RVar name type id site)` and
`(RIterArg name type id site init)`; the decoder turns each distinct copy into one fresh `Var`,
named by `names.inline_name` in program order. An inline call site is
`(At site template bindings actuals)`: the template is the helper body Python chose for that site
(usually the helper itself), `bindings` the statements that bind arguments to fresh locals before
the body, `actuals` what each formal stands for (also given one by one as `Arg` facts); the call
itself stays in Python, and the decoder reads an unspliced site back as its call, so
`decode(encode(p))` is `p` when no rule fires.

Terms go into egglog through `term_rows` (bulk rows read by egglog's `input`) and come out
here, read from the extracted term DAG. Those two modules hold what depends on the shape of egglog's
low-level `bindings` API; the engine and the tools only run commands and read reports through it.
`tests/test_encoding.py` pins the egglog version they were written against, and
`tests/test_term_rows.py` checks the `input` behaviour the loader relies on.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import egglog.bindings as eb

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.names import inline_name
from nanopto.ir_terms.schema import NODE_CLASSES, FieldKind, FieldSpec, fields_of
from nanopto.ir_terms.term_rows import (
    SPAN,
    FactTable,
    TermRows,
    load_declarations,
    load_rows,
    run_text,
    unescape,
)

EGGLOG_VERSION = "13.2.0"

# ---------------------------------------------------------------------------------------------
# The term grammar
# ---------------------------------------------------------------------------------------------

_EX_NODES = {"Expr", "Var", "IterArg", "Keyword", "Param"}
_I64_FIELDS = {("Var", "id"), ("IterArg", "id"), ("TupleGetItemExpr", "index")}
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
            return "i64" if (cls.__name__, spec.name) in _I64_FIELDS else "String"


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

    def declaration(self) -> str:
        flags = " :unextractable" if self.unextractable else ""
        return f"(constructor {self.name} ({' '.join(self.args)}) {self.sort}{flags})"


def carries_span(cls: type[n.Node]) -> bool:
    """Statements and calls keep their source span as a last String field.

    Spans survive rewriting that way: an unspliced call is still reported at its own line, and a
    spliced statement carries the helper line it was copied from (its provenance).
    """
    return issubclass(cls, n.Stmt) or cls in (n.Call, n.Submit)


def ir_constructors() -> tuple[Constructor, ...]:
    """Every constructor of the IR sorts, node classes first, then lists, types and markers."""
    generated = tuple(
        Constructor(
            cls.__name__,
            tuple(field_sort(cls, f) for f in fields_of(cls)) + (("String",) if carries_span(cls) else ()),
            sort_of_class(cls),
        )
        for cls in _ENCODED_CLASSES
    )
    structural = (
        Constructor("ExNil", (), "ExL"),
        Constructor("ExCons", ("Ex", "ExL"), "ExL"),
        Constructor("SNil", (), "SL"),
        Constructor(
            "Skip",
            (),
            "SL",
            doc="nothing, as produced by a rule: kept apart from SNil, which template bodies share",
        ),
        Constructor("SOne", ("St",), "SL"),
        Constructor("SCat", ("SL", "SL"), "SL"),
        Constructor("TyNil", (), "TyL"),
        Constructor("TyCons", ("Ty", "TyL"), "TyL"),
        Constructor("TScalar", ("String",), "Ty"),
        Constructor("TTensor", ("ExL", "String"), "Ty"),
        Constructor("TTile", ("ExL", "String", "String"), "Ty"),
        Constructor("TArray", ("Ex", "String"), "Ty"),
        Constructor("TTuple", ("TyL",), "Ty"),
        Constructor("TUnknown", (), "Ty"),
        Constructor("NoEx", (), "Ex", doc="an absent optional expression"),
        Constructor("NoSt", (), "St", doc="an absent optional statement"),
        Constructor("Root", ("i64",), "St", unextractable=True, doc="(Root i): the body of the i-th function"),
        Constructor("Opaque", ("i64",), "SL", doc="caller statements no rule looks inside, kept in Python"),
        Constructor(
            "At",
            ("i64", "String", "SL", "ExL"),
            "Ex",
            doc="an inline call site: (At site template bindings actuals), the bindings placed before "
            "the body and what each formal stands for",
        ),
        Constructor(
            "Inst",
            ("String", "i64", "ExL"),
            "SL",
            doc="(Inst template site actuals): the template's body copied for the site, made by the decoder",
        ),
        Constructor("RVar", ("String", "Ty", "i64", "i64"), "Ex", doc="callee local `id` renamed for `site`"),
        Constructor(
            "RIterArg", ("String", "Ty", "i64", "i64", "Ex"), "Ex", doc="callee iter_arg renamed for `site`"
        ),
    )
    return generated + structural


SORTS = ("Ex", "ExL", "St", "SL", "Ty", "TyL")


def ir_declarations() -> str:
    """The egglog text declaring the IR sorts and constructors."""
    lines = [f"(sort {s})" for s in SORTS]
    lines += [c.declaration() for c in ir_constructors()]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Encoding: IR -> term rows
# ---------------------------------------------------------------------------------------------


def attr_value(value: Any) -> str:
    """The String literal an attribute field is encoded as (decoded back by `_ENUMS`)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, n.BinOp | n.UnOp | DataType | MemorySpace | n.ForKind):
        return value.name
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return ""
    return str(value)


def span_value(span: n.Span | None) -> str:
    return "" if span is None else f"{span.line}:{span.col}:{span.file}"


def parse_span(text: str) -> n.Span | None:
    if not text:
        return None
    line, col, file = text.split(":", 2)
    return n.Span(file, int(line), int(col))


_E_NODE, _E_OPT_EX, _E_OPT_ST, _E_STMTS, _E_EXPRS, _E_TYPE, _E_TYPES, _E_I64, _E_ATTR = range(9)
_ENCODE_PLANS: dict[type, tuple[tuple[tuple[str, int], ...], bool]] = {}


def _encode_plan(cls: type[n.Node]) -> tuple[tuple[tuple[str, int], ...], bool]:
    """Each field of `cls` with how it is encoded, and whether a span follows (cached per class)."""
    plan = _ENCODE_PLANS.get(cls)
    if plan is None:
        fields: list[tuple[str, int]] = []
        for spec in fields_of(cls):
            sort = field_sort(cls, spec)
            how = {
                FieldKind.NODE: _E_NODE,
                FieldKind.OPT_NODE: _E_OPT_ST if sort == "St" else _E_OPT_EX,
                FieldKind.NODES: _E_STMTS if sort == "SL" else _E_EXPRS,
                FieldKind.TYPE: _E_TYPE,
                FieldKind.TYPES: _E_TYPES,
                FieldKind.ATTR: _E_I64 if sort == "i64" else _E_ATTR,
            }[spec.kind]
            fields.append((spec.name, how))
        plan = _ENCODE_PLANS[cls] = (tuple(fields), carries_span(cls))
    return plan


class Encoder:
    """Turns IR into term rows (`term_rows.TermRows`); remembers every Var so decoding restores
    identity. Every method returns the handle of the term it encoded.

    `site_of` lets the inliner mark chosen calls as sites: it maps a `Call` node (by identity) to
    its site number and template name, and the encoder writes that call as `(At site template)`,
    keeping the call in `site_calls` for the decoder.
    """

    def __init__(
        self,
        site_of: dict[int, tuple[int, str]] | None = None,
        opaque: set[int] | None = None,
        rows: TermRows | None = None,
    ) -> None:
        self.rows = rows if rows is not None else TermRows()
        self.vars: dict[int, n.Var] = {}
        self.site_of = site_of or {}
        self.opaque_ids = opaque or set()
        """Statements (by identity) no rule looks inside: each run of them in a statement list is
        encoded as one `(Opaque k)` and kept in Python."""
        self.opaque: list[tuple[n.Stmt, ...]] = []
        self.site_calls: dict[int, n.Node] = {}
        self.site_parts: dict[int, tuple[int, int]] = {}
        """Site number -> handles of its `At` term's bindings (SL) and actuals (ExL), set by the
        inliner before the bodies are encoded; a site without them gets `(Skip)` and `(ExNil)`."""
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
        site = self.site_of.get(id(node))
        if site is not None:
            self.site_calls[site[0]] = node
            bindings, actuals = self.site_parts.get(site[0]) or (self.rows.term("Skip"), self.rows.term("ExNil"))
            return self.rows.term("At", site[0], site[1], bindings, actuals)
        if isinstance(node, n.Var):
            self.vars.setdefault(node.id, node)
        cls = type(node)
        fields, has_span = _encode_plan(cls)
        args: list[int | str] = []
        for name, how in fields:
            value = getattr(node, name)
            if how == _E_NODE:
                args.append(self.expr(value))
            elif how == _E_ATTR:
                args.append(attr_value(value))
            elif how == _E_I64:
                args.append(int(value))
            elif how == _E_STMTS:
                args.append(self.stmts(value))
            elif how == _E_EXPRS:
                args.append(self.exprs(value))
            elif how == _E_TYPE:
                args.append(self.type(value))
            elif how == _E_TYPES:
                args.append(self.types(value))
            elif value is not None:  # an optional node
                args.append(self.expr(value))
            else:
                args.append(self.rows.term("NoSt" if how == _E_OPT_ST else "NoEx"))
        if has_span:
            args.append(span_value(node.span))
        return self.rows.term(cls.__name__, *args)

    def roots(self, functions: Sequence[n.Function]) -> None:
        """Each function's body as `(Root i)`, the name extraction starts from; its parameters are
        encoded too, so decoding gives them back as the very same Vars."""
        for i, fn in enumerate(functions):
            for param in fn.params:
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
        for stmt in values:
            if id(stmt) in self.opaque_ids:
                run.append(stmt)
                continue
            if run:
                items.append(self._opaque_run(run))
                run = []
            items.append(self.rows.term("SOne", self.expr(stmt)))
        if run:
            items.append(self._opaque_run(run))
        return self.stmt_tree(items)

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
        match ty:
            case t.ScalarType(dtype):
                return term("TScalar", dtype.name)
            case t.TensorType(shape, dtype):
                return term("TTensor", self.exprs(shape), dtype.name)
            case t.TileType(shape, dtype, mem):
                return term("TTile", self.exprs(shape), dtype.name, mem.name if mem else "")
            case t.ArrayType(size, dtype):
                return term("TArray", self.expr(size), dtype.name)
            case t.TupleType(types):
                return term("TTuple", self.types(types))
            case _:
                return term("TUnknown")

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
    "str": lambda s: s,
    "int": int,
    "float": float,
    "bool": lambda s: s == "True",
}


class DecodeError(RuntimeError):
    """An extracted term that is not an IR term: a rule produced something extraction must not."""


@dataclass
class Decoder:
    """Turns an extracted term DAG back into IR.

    Original variables come back as the very `Var` objects that were encoded. Each renamed copy
    `(RVar name type id site)` becomes one fresh `Var`, numbered by `counter` in the order the
    decoder meets it (program order), so names are deterministic.
    """

    vars: dict[int, n.Var]
    counter: int = 0
    opaque: list[tuple[n.Stmt, ...]] = field(default_factory=list)
    site_calls: dict[int, n.Node] = field(default_factory=dict)
    """Site number -> its call, for a site that comes back unspliced."""
    taken: set[str] = field(default_factory=set)
    """Names already used where the copies land: a fresh name skips them, so the printed program
    never makes two Vars one name (the counter still numbers every copy uniquely)."""
    origins: dict[int, str] = field(default_factory=dict)
    """Fresh Var id -> the name it was derived from. Shared across the stages of one pass run, so
    a local copied through nested helpers is named once from its original (`y_inline7`, not
    `y_inline0_inline7`); the counter keeps every name unique."""
    renamed: dict[tuple[int, int], n.Var] = field(default_factory=dict)
    provenance: dict[int, int] = field(default_factory=dict)
    """Fresh Var id -> the call site it was created for (the rebinding checker reads it)."""
    instantiate: Instantiate | None = None
    """Copies a template body for `(Inst template site actuals)` (see `rules.instantiate`)."""

    def decode(self, termdag: eb.TermDag, term: int) -> Any:
        self._dag = termdag
        self._memo: dict[int, Any] = {}
        self._spans: dict[str, n.Span | None] = {}
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            return self._term(term)
        finally:
            sys.setrecursionlimit(limit)

    def _lit(self, term: int) -> Any:
        node = self._dag.get(term)
        if not isinstance(node, eb.TermLit) or isinstance(node.value, eb.Unit):
            raise DecodeError(f"expected a literal, found {node}")
        value = node.value.value
        return unescape(value) if isinstance(value, str) else value

    def _term(self, term: int) -> Any:
        cached = self._memo.get(term)
        if cached is not None:
            return cached
        node = self._dag.get(term)
        if not isinstance(node, eb.TermApp):
            raise DecodeError(f"expected a constructor, found {node}")
        result = self._app(node.name, node.args)
        self._memo[term] = result
        return result

    def _app(self, name: str, args: list[int]) -> Any:
        special = _SPECIAL_DECODERS.get(name)
        if special is not None:
            return special(self, args)
        plan = _decode_plan(name)
        if plan is None:
            raise DecodeError(f"extraction produced the helper term '{name}', which has no IR meaning")
        cls, fields, has_span = plan
        values: dict[str, Any] = {}
        for (field_name, convert), arg in zip(fields, args, strict=False):
            values[field_name] = self._term(arg) if convert is None else convert(self._lit(arg))
        span = None
        if has_span:
            text = self._lit(args[-1])
            span = self._spans.get(text)
            if span is None:
                span = self._spans[text] = parse_span(text)
        values["span"] = span
        return n.build(cls, values)

    def _list(self, args: list[int]) -> tuple[Any, ...]:
        return (self._term(args[0]), *self._term(args[1]))

    def _nothing(self, args: list[int]) -> tuple[Any, ...]:
        return ()

    def _none(self, args: list[int]) -> None:
        return None

    def _one(self, args: list[int]) -> tuple[Any, ...]:
        return (self._term(args[0]),)

    def _cat(self, args: list[int]) -> tuple[Any, ...]:
        left: tuple[Any, ...] = self._term(args[0])
        right: tuple[Any, ...] = self._term(args[1])
        return left + right

    def _at(self, args: list[int]) -> n.Node:
        site = self._lit(args[0])
        if site not in self.site_calls:
            raise DecodeError(f"extraction produced call site {site}, whose call the decoder was not given")
        return self.site_calls[site]

    def _opaque(self, args: list[int]) -> tuple[n.Stmt, ...]:
        index: int = self._lit(args[0])
        return self.opaque[index]

    def _inst(self, args: list[int]) -> tuple[n.Stmt, ...]:
        if self.instantiate is None:
            raise DecodeError("extraction produced an instantiation, but the decoder has no templates")
        return self.instantiate(self, self._lit(args[0]), self._lit(args[1]), self._term(args[2]))

    def _scalar_type(self, args: list[int]) -> t.Type:
        return t.ScalarType(DataType[self._lit(args[0])])

    def _tensor_type(self, args: list[int]) -> t.Type:
        return t.TensorType(self._term(args[0]), DataType[self._lit(args[1])])

    def _tile_type(self, args: list[int]) -> t.Type:
        mem = self._lit(args[2])
        return t.TileType(self._term(args[0]), DataType[self._lit(args[1])], MemorySpace[mem] if mem else None)

    def _array_type(self, args: list[int]) -> t.Type:
        return t.ArrayType(self._term(args[0]), DataType[self._lit(args[1])])

    def _tuple_type(self, args: list[int]) -> t.Type:
        return t.TupleType(self._term(args[0]))

    def _unknown_type(self, args: list[int]) -> t.Type:
        return t.UnknownType()

    def _var(self, args: list[int]) -> n.Var:
        var_id = self._lit(args[2])
        known = self.vars.get(var_id)
        if known is not None:
            return known
        var = n.Var(self._lit(args[0]), self._term(args[1]), id=var_id)
        self.vars[var_id] = var
        return var

    def _rvar(self, args: list[int]) -> n.Var:
        return self.fresh_copy(
            self._lit(args[2]), self._lit(args[3]), self._lit(args[0]), lambda: self._term(args[1]), None
        )

    def _riterarg(self, args: list[int]) -> n.Var:
        return self.fresh_copy(
            self._lit(args[2]),
            self._lit(args[3]),
            self._lit(args[0]),
            lambda: self._term(args[1]),
            lambda: self._term(args[4]),
        )

    def fresh_copy(
        self,
        var_id: int,
        site: int,
        name: str,
        make_type: Callable[[], t.Type],
        make_init: Callable[[], n.Expr] | None,
    ) -> n.Var:
        """The one fresh Var (an IterArg when `make_init` is given) standing for callee variable
        `var_id` at `site`, named when first met; the type and init are built after the name, so
        the names they contain are numbered after it."""
        existing = self.renamed.get((var_id, site))
        if existing is not None:
            return existing
        base = self.origins.get(var_id, name)
        fresh_name = inline_name(base, self.counter)
        self.counter += 1
        while fresh_name in self.taken:
            fresh_name = inline_name(base, self.counter)
            self.counter += 1
        self.taken.add(fresh_name)
        ty = make_type()
        var = n.Var(fresh_name, ty) if make_init is None else n.IterArg(fresh_name, ty, init_value=make_init())
        self.renamed[(var_id, site)] = var
        self.origins[var.id] = base
        self.provenance[var.id] = site
        return var


_SPECIAL_DECODERS: dict[str, Callable[[Decoder, list[int]], Any]] = {
    "ExNil": Decoder._nothing,
    "TyNil": Decoder._nothing,
    "SNil": Decoder._nothing,
    "Skip": Decoder._nothing,
    "ExCons": Decoder._list,
    "TyCons": Decoder._list,
    "SOne": Decoder._one,
    "SCat": Decoder._cat,
    "NoEx": Decoder._none,
    "NoSt": Decoder._none,
    "At": Decoder._at,
    "Opaque": Decoder._opaque,
    "Inst": Decoder._inst,
    "TScalar": Decoder._scalar_type,
    "TTensor": Decoder._tensor_type,
    "TTile": Decoder._tile_type,
    "TArray": Decoder._array_type,
    "TTuple": Decoder._tuple_type,
    "TUnknown": Decoder._unknown_type,
    "Var": Decoder._var,
    "RVar": Decoder._rvar,
    "RIterArg": Decoder._riterarg,
}
"""Constructors that are not one IR class field for field: lists, markers, types and variables."""

_DecodePlan = tuple[type[n.Node], tuple[tuple[str, Callable[[Any], Any] | None], ...], bool]
_DECODE_PLANS: dict[str, _DecodePlan | None] = {}


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
                    (int if (name, spec.name) in _I64_FIELDS else _ENUMS[_annotation(cls, spec.name)])
                    if spec.kind is FieldKind.ATTR
                    else None
                ),
            )
            for spec in fields_of(cls)
        )
        plan = (cls, fields, carries_span(cls))
    _DECODE_PLANS[name] = plan
    return plan


Instantiate = Callable[[Decoder, str, int, tuple[Any, ...]], tuple[n.Stmt, ...]]
"""(decoder, template, site, decoded actuals) -> the statements of the copied body."""


def decode_functions(decoder: Decoder, functions: Sequence[n.Function], extracted: Sequence[Any]) -> list[n.Function]:
    """Each function with its body replaced by its decoded extraction (`extracted[i]` is an
    `ExtractBest` of the i-th body); params, types and attributes stay the very same objects."""
    return [
        dataclasses.replace(fn, body=decoder.decode(out.termdag, out.term))
        for fn, out in zip(functions, extracted, strict=True)
    ]


# ---------------------------------------------------------------------------------------------
# Round trip through an e-graph (no rules): the lossless-encoding property
# ---------------------------------------------------------------------------------------------


def roundtrip_program(program: n.Program) -> n.Program:
    """Encode every function body into one e-graph, extract each, decode: the identity on IR."""
    encoder = Encoder()
    encoder.roots(program.function_list)
    egraph = eb.EGraph()
    run_text(egraph, ir_declarations() + "\n" + ir_load_declarations())
    load_rows(egraph, encoder.rows)
    extracted = extract_roots(egraph, len(program.function_list))
    functions = decode_functions(Decoder(vars=dict(encoder.vars)), program.function_list, extracted)
    return n.Program(program.name, tuple(functions), span=program.span)


def ir_load_declarations(extra: Sequence[Constructor] = (), facts: Sequence[FactTable] = ()) -> str:
    """Load tables and rules for the IR constructors plus `extra` ones (see `term_rows`)."""
    return load_declarations(SORTS, (*ir_constructors(), *extra), facts)


def extract_roots(egraph: eb.EGraph, count: int) -> list[eb.ExtractBest]:
    """Extract `(Root 0)` ... `(Root count-1)`: the cheapest term of each root's e-class."""
    commands = [eb.Extract(SPAN, eb.Call(SPAN, "Root", [eb.Lit(SPAN, eb.Int(i))]), eb.Lit(SPAN, eb.Int(0))) for i in range(count)]
    outputs = egraph.run_program(*commands)
    return [o for o in outputs if isinstance(o, eb.ExtractBest)]


