"""The immutable IR that nanopto's passes rewrite.

Every node is a frozen dataclass. A `Var` is identified by a unique integer id (its name is only a
hint), so two variables that print alike are still different variables; that is what lets the
inliner tell "the same Var on both sides" from "two Vars named `q`". Spans are carried for error
messages and ignored by equality.

The fields of each class are its grammar: `nanopto.ir_terms.schema` reads them to derive the generic
traversal and the egglog sorts, so adding a node here is the only step needed to make it flow
through the parser's output, the printer's input and the rewrite rules.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields, is_dataclass, replace
from typing import Any, TypeVar

from nanopto.ir_terms.dtypes import DataType, enum_of_symbol, register_symbol_enum, symbol_of_enum
from nanopto.ir_terms.types import PtrType, Type, UnknownType, register_dimension


@dataclass(frozen=True, slots=True)
class Span:
    """A source location: file, 1-based line, 0-based column (as Python's `ast`); the end is
    optional (-1 when unknown). Positional order as PyPTO's `Span(file, line, col, end_line,
    end_col)`."""

    file: str
    line: int
    col: int
    end_line: int = -1
    end_col: int = -1

    @staticmethod
    def unknown() -> Span:
        """The span of a node built without a source (PyPTO's `Span.unknown()`)."""
        return _UNKNOWN_SPAN

    def is_valid(self) -> bool:
        return self.line > 0 and self.col >= 0

    @property
    def filename(self) -> str:
        return self.file

    # PyPTO's names read PyPTO's 1-based columns; `col` and `end_col` are `ast`'s 0-based ones
    # (docs/coming-from-pypto.md#what-differs-and-why). Unknown stays -1.
    @property
    def begin_line(self) -> int:
        return self.line

    @property
    def begin_column(self) -> int:
        return self.col + 1 if self.col >= 0 else self.col

    @property
    def end_column(self) -> int:
        return self.end_col + 1 if self.end_col >= 0 else self.end_col

    def to_string(self) -> str:
        """`file:line:column`, the column 1-based (PyPTO's `Span.to_string`)."""
        return str(self)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


_UNKNOWN_SPAN = Span("", -1, -1)


def _span() -> Span | None:
    return field(default=None, compare=False, kw_only=True, repr=False)


def _last_span() -> Span | None:
    """The span of a node PyPTO builds as `Node(<fields>, span)`: positional after the fields."""
    return field(default=None, compare=False, repr=False)


class Node:
    """Base of every IR node (expressions, statements, keywords, params, functions).

    Every node class is a slotted dataclass and every base declares `__slots__ = ()`, so a node
    has no `__dict__`: its fields in slots take about 40 bytes less than in a dict, 40 MB of the
    5 MB bench program's (bench/large_program_bench.py)."""

    __slots__ = ()

    span: Span | None

    def same_as(self, other: object) -> bool:
        """PyPTO's `same_as`: the very same node object (`==` compares the fields)."""
        return self is other

    @property
    def __dict__(self) -> dict[str, object]:  # type: ignore[override]
        """The node's fields by name, as a fresh dict: its fields live in slots, and this keeps
        `vars(node)` working (reading it; a node is immutable)."""
        return {spec.name: getattr(self, spec.name) for spec in fields(self)}  # type: ignore[arg-type]

    def as_python(self, prefix: str = "pl", concise: bool = False) -> str:
        """This node as `pl` source (the printer's `python_print`)."""
        return _printer(self, prefix, concise=concise)

    def __str__(self) -> str:
        """`pl` source, as PyPTO's `str(node)`; `repr` keeps the dataclass view."""
        return self.as_python()


def _no_printer(node: Node, prefix: str = "pl", *, concise: bool = False) -> str:
    raise RuntimeError("the printer is not loaded: import nanopto.ir")


_printer: Callable[..., str] = _no_printer
"""The printer, registered by `nanopto.ir_terms.printer` (which imports this module)."""


def register_printer(printer: Callable[..., str]) -> None:
    global _printer
    _printer = printer


N = TypeVar("N", bound=Node)
S = TypeVar("S", bound="Stmt")
T = TypeVar("T")


def _no_inference(expr: Expr) -> Type:
    return UnknownType()


_type_of: Callable[[Expr], Type] = _no_inference
"""Type inference, registered by `nanopto.ir_terms.infer` (which imports this module)."""


def register_type_of(type_of: Callable[[Expr], Type]) -> None:
    global _type_of
    _type_of = type_of


class _InferredType:
    """PyPTO's `expr.type` for a node whose type nanopto infers rather than stores."""

    __slots__ = ()

    @property
    def type(self) -> Type:
        """The type the op registry's rules infer (a function call's: what the parser stored)."""
        return _type_of(self)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


class Expr(Node):
    """Base of expressions."""

    __slots__ = ()


_var_ids = itertools.count(1)


def fresh_var_id() -> int:
    """A process-wide unique Var id; ids only need to be unique, never dense."""
    return next(_var_ids)


def slot_constructor(cls: type[T], names: tuple[str, ...]) -> Callable[..., T]:
    """`lambda v0, v1, ...: cls(names[0]=v0, names[1]=v1, ...)`, `cls` a frozen slotted dataclass
    (a node, a `Span`), for a caller whose values are already checked (a field it leaves out, such
    as a statement's `comments`, takes its default).

    The decoder makes a node of every spliced statement and expression; a frozen dataclass's
    `__init__` goes through `object.__setattr__` and the class's defaults for each field, a C call
    with its arguments packed in a tuple per field. This makes the node as an instance of
    `_settable_twin(cls)`, whose slots plain attribute stores fill (the interpreter specializes
    them), then makes it a `cls`: its slots, and so its layout, are the class's own. Written out per
    class and fields as straight-line code. The values are stored as given: no `__post_init__` runs
    (a `Call`'s op must already be its `OpName` or `GlobalVar`, its kwargs `Keywords`)."""
    specs = fields(cls)  # type: ignore[arg-type]
    unknown = set(names) - {spec.name for spec in specs}
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    env: dict[str, object] = {"new": object.__new__, "cls": cls, "twin": _settable_twin(cls)}
    lines = [f"def make({', '.join(f'v{i}' for i in range(len(names)))}):", "    node = new(twin)"]
    for k, spec in enumerate(specs):
        if spec.name in names:
            value = f"v{names.index(spec.name)}"
        elif spec.default is not MISSING:
            env[f"default_{k}"], value = spec.default, f"default_{k}"
        elif spec.default_factory is not MISSING:
            env[f"factory_{k}"], value = spec.default_factory, f"factory_{k}()"
        else:
            raise TypeError(f"slot_constructor({cls.__name__}, ...) needs the field '{spec.name}'")
        lines.append(f"    node.{spec.name} = {value}")
    lines += ["    node.__class__ = cls", "    return node"]
    exec("\n".join(lines), env)  # code generated from the class's own fields, as dataclasses does
    make: Callable[..., T] = env["make"]  # type: ignore[assignment]
    return make


def _settable_twin(cls: type) -> type:
    """A class with `cls`'s bases and slots but the default `__setattr__` and `__delattr__` (a
    frozen dataclass and its frozen bases define both): an instance's slots are set by plain
    stores, and it can become a `cls` (`__class__` assignment accepts the same bases and slots)."""
    namespace = {"__slots__": vars(cls)["__slots__"], "__setattr__": object.__setattr__, "__delattr__": object.__delattr__}
    return type(f"_Settable{cls.__name__}", cls.__bases__, namespace)


@dataclass(frozen=True, eq=False, slots=True)
class Var(Expr):
    """A variable. Identity is `id`; `name` is a hint used by the printer."""

    name: str
    type: Type = field(default_factory=UnknownType)
    id: int = field(default_factory=fresh_var_id, kw_only=True)
    span: Span | None = _last_span()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.id == self.id

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.id))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}#{self.id})"

    @property
    def name_hint(self) -> str:
        """The name (PyPTO's spelling)."""
        return self.name


@dataclass(frozen=True, eq=False, init=False, slots=True)
class IterArg(Var):
    """A loop-carried variable of a `for`/`while`; `init_value` is evaluated before the loop.

    Built as PyPTO builds it, `IterArg(name, type, init_value, span)`; the fields keep Var's
    order with `init_value` last, so the constructor is written out.
    """

    init_value: Expr = field(default=None, kw_only=True)  # type: ignore[assignment]

    @property
    def initValue(self) -> Expr:
        """`init_value` (PyPTO's spelling)."""
        return self.init_value

    def __init__(
        self,
        name: str,
        type: Type | None = None,
        init_value: Expr | None = None,
        span: Span | None = None,
        *,
        id: int | None = None,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        setattr_(self, "type", UnknownType() if type is None else type)
        setattr_(self, "id", fresh_var_id() if id is None else id)
        setattr_(self, "span", span)
        setattr_(self, "init_value", init_value)


@dataclass(frozen=True, eq=False, init=False, repr=False, slots=True)
class WindowBuffer(Var):
    """A distributed tensor's window buffer, as a distributed tensor type refers to it
    (`DistributedTensorType.window_buffer`): the `pl.Ptr` Var `base` of a
    `pld.alloc_window_buffer` allocation, its per-rank byte `size`, and whether it is staged from
    the host before the run and to it after. Named after `base` and typed `pl.Ptr`.

    PyPTO's comm-collection pass makes these; nanopto has no such pass, so only IR built by hand
    holds one: the parser makes a plain `pl.Ptr` Var, and passes do not rewrite a type that refers
    to one (docs/coming-from-pypto.md, "Distributed programs")."""

    base: Var = field(default=None, kw_only=True)  # type: ignore[assignment]
    size: Expr = field(default=None, kw_only=True)  # type: ignore[assignment]
    load_from_host: bool = field(default=False, kw_only=True)
    store_to_host: bool = field(default=False, kw_only=True)

    def __init__(
        self,
        base: Var,
        size: Expr,
        load_from_host: bool = False,
        store_to_host: bool = False,
        span: Span | None = None,
        *,
        id: int | None = None,
    ) -> None:
        if not isinstance(base, Var) or not isinstance(base.type, PtrType):
            raise TypeError(f"a WindowBuffer's base is the pl.Ptr Var of its allocation, got {base!r}")
        setattr_ = object.__setattr__
        setattr_(self, "name", base.name)
        setattr_(self, "type", PtrType())
        setattr_(self, "id", fresh_var_id() if id is None else id)
        setattr_(self, "span", span)
        setattr_(self, "base", base)
        setattr_(self, "size", size)
        setattr_(self, "load_from_host", load_from_host)
        setattr_(self, "store_to_host", store_to_host)


@dataclass(frozen=True, slots=True)
class ConstInt(Expr):
    value: int
    dtype: DataType = DataType.INDEX
    span: Span | None = _last_span()


register_dimension(ConstInt)


@dataclass(frozen=True, slots=True)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class ConstBool(Expr):
    value: bool
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class ConstStr(Expr):
    """A string literal argument (a scope name, a `static_print` message)."""

    value: str
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class Symbol(Expr):
    """A dotted `pl` constant such as `pl.FP32`, `pl.Level.CORE_GROUP` or `pl.Mem.Vec`."""

    path: str
    span: Span | None = _span()


class BinOp(enum.Enum):
    Add = "+"
    Sub = "-"
    Mul = "*"
    FloorDiv = "//"
    FloorMod = "%"
    FloatDiv = "/"
    Pow = "**"
    Eq = "=="
    Ne = "!="
    Lt = "<"
    Le = "<="
    Gt = ">"
    Ge = ">="
    And = "and"
    Or = "or"
    Xor = "^"
    BitAnd = "&"
    BitOr = "|"
    BitShiftLeft = "<<"
    BitShiftRight = ">>"
    Min = "min"
    Max = "max"


class UnOp(enum.Enum):
    Neg = "-"
    Not = "not"
    BitNot = "~"
    Abs = "abs"


@dataclass(frozen=True, slots=True)
class BinaryExpr(_InferredType, Expr):
    op: BinOp
    lhs: Expr
    rhs: Expr
    span: Span | None = _span()

    @property
    def left(self) -> Expr:
        """`lhs` (PyPTO's spelling)."""
        return self.lhs

    @property
    def right(self) -> Expr:
        """`rhs` (PyPTO's spelling)."""
        return self.rhs


@dataclass(frozen=True, slots=True)
class UnaryExpr(_InferredType, Expr):
    op: UnOp
    operand: Expr
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class Keyword(Node):
    """A keyword argument `name=value` of a call, a scope or a submit."""

    name: str
    value: Expr
    span: Span | None = _span()


class IRInvariantError(ValueError):
    """A node built with fields that break an invariant of the IR, one no `pl` source can write
    (the parser refuses such source with a located error): refused where the node is made, so no
    such IR exists. PyPTO raises its `InternalError` for the same checks (docs/coming-from-pypto.md)."""


class Keywords(tuple[Keyword, ...]):
    """A call's keyword arguments: a tuple of `Keyword`s in source order, which also reads as
    PyPTO's `call.kwargs` dict: `call.kwargs["atomic"]` is the value as Python reads it
    (`attr_value`), `"dtype" in call.kwargs` asks for a name, and `call.kwargs == {}` compares by
    name and value. Indexing by position and equality with a tuple are the tuple's."""

    __slots__ = ()

    def _find(self, name: str) -> Keyword | None:
        return next((k for k in self if k.name == name), None)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            found = self._find(key)
            if found is None:
                raise KeyError(key)
            return attr_value(found.value)
        return tuple.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return self._find(key) is not None
        return tuple.__contains__(self, key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def keys(self) -> list[str]:
        return [k.name for k in self]

    def items(self) -> list[tuple[str, object]]:
        return [(k.name, attr_value(k.value)) for k in self]

    def get(self, name: str, default: object = None) -> object:
        found = self._find(name)
        return default if found is None else attr_value(found.value)


class OpName(str):
    """The callee of a `Call`: a string (the op's canonical name or the function's name) that also
    answers `.name`, as PyPTO's `call.op.name` does.

    A str subclass rather than a reference object, so every use of `Call.op` as a string (registry
    lookups, dict keys, comparison with a literal, printing) keeps working unchanged.
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        return str.__str__(self)


@dataclass(frozen=True, slots=True)
class Call(_InferredType, Expr):
    """A call of a builtin op (`op="tensor.add"`) or of a program function (`function=True`).

    For a builtin, `op` is the registry's canonical name, an `OpName`; for a function it is the
    callee's name, as written `self.<name>(...)`, a `GlobalVar`. Either way `call.op.name` reads
    as in PyPTO.
    `dumps` is the dump selection of a function call (a dispatch): the arguments a `pl.dump_tag`
    marked, printed `attrs={"dump_vars": [...]}`. A builtin's is always empty: a builtin op is no
    dispatch, so a `"dump_vars"` it is given is one of its `attr_items`, kept as written.
    `attr_items` are the call's other attributes, `attrs={"key": value, ...}` in source order:
    one `Keyword` per key, its value a literal (`ConstStr`, `ConstInt`, `ConstFloat`, `ConstBool`),
    a `Symbol` (`pl.Mem.Vec`), a `Var`, or a list (`MakeTuple(is_list=True)`) of those. Being
    nodes, a Var in a value is a use like any argument: traversals, substitution and renaming
    reach it. Structural equality compares them as a mapping (`nanopto.ir_terms.structural`).
    """

    op: str
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...] = ()
    function: bool = False
    dumps: tuple[Var, ...] = ()
    attr_items: tuple[Keyword, ...] = ()
    span: Span | None = _span()
    result_type: Type | None = field(default=None, compare=False, kw_only=True, repr=False)
    """A function call's type as the parser resolved it: the callee's declared return type with
    the callee's dynamic dimensions bound to this call's argument shapes (PyPTO's `call.type`;
    docs/coming-from-pypto.md, "Calls of program functions"). Metadata, as a span is: not
    compared, hashed or encoded; None where nothing resolved it (a builtin op's call, whose
    type is inferred, or a call a pass rebuilt), and `call.type` then infers."""

    def __post_init__(self) -> None:
        if type(self.args) is not tuple or not isinstance(self.kwargs, tuple):
            self._pypto_arguments()
        if type(self.kwargs) is tuple:
            object.__setattr__(self, "kwargs", Keywords(self.kwargs))
        if isinstance(self.op, GlobalVar):
            object.__setattr__(self, "function", True)
        callee = GlobalVar if self.function else OpName
        if type(self.op) is not callee:
            object.__setattr__(self, "op", callee(self.op))
        if self.attr_items:
            object.__setattr__(self, "attr_items", attr_keywords(self.attr_items, dispatch=self.function))

    def _pypto_arguments(self) -> None:
        """PyPTO's `Call(op, args, span)`, `Call(op, args, kwargs, span)`, `Call(gvar, args, type,
        span)` and `Call(op, args, kwargs, attrs, type, span)`: the args a list, the keywords and
        the attributes dicts, the span (and a result type, which nanopto infers rather than stores)
        after them."""
        object.__setattr__(self, "args", tuple(self.args))
        kwargs: object = self.kwargs
        if isinstance(kwargs, Type) and isinstance(self.op, GlobalVar):  # Call(gvar, args, type, span)
            object.__setattr__(self, "result_type", kwargs)
        if isinstance(kwargs, (Span, Type)):
            if isinstance(self.function, Span):
                object.__setattr__(self, "span", self.function)
                object.__setattr__(self, "function", False)
            if isinstance(kwargs, Span):
                object.__setattr__(self, "span", kwargs)
            kwargs = ()
        elif isinstance(kwargs, Mapping):
            if isinstance(self.function, Span):
                object.__setattr__(self, "span", self.function)
                object.__setattr__(self, "function", False)
            elif isinstance(self.function, Mapping):
                self._pypto_attrs(self.function)
                kwargs = self.kwargs
            assert isinstance(kwargs, Mapping)
            kwargs = tuple(Keyword(k, keyword_value(k, v)) for k, v in kwargs.items())
        object.__setattr__(self, "kwargs", tuple(kwargs))  # type: ignore[arg-type]

    def _pypto_attrs(self, attrs: Mapping[str, object]) -> None:
        """`Call(op, args, kwargs, attrs, type, span)`: `dump_vars` is the dump selection of a call
        of a program function (of a builtin op, an attribute like any other); a dummy task's `dummy_task` and `manual_dep_edges` are what
        `attrs` shows of the op and its `deps=` (given back, as when a call is rebuilt from its
        `attrs`, they must agree with them); any other key is an attribute."""
        span, items = self.attr_items, dict(attrs)  # the span came where `attr_items` is
        object.__setattr__(self, "span", span if isinstance(span, Span) else None)
        object.__setattr__(self, "function", isinstance(self.op, GlobalVar))
        if self.function and isinstance(self.dumps, Type):
            object.__setattr__(self, "result_type", self.dumps)
        dumps = items.pop("dump_vars", ()) if self.function else ()  # the type came where `dumps` is
        object.__setattr__(self, "dumps", tuple(dumps))  # type: ignore[arg-type]
        dependency = {key: items.pop(key) for key in DEPENDENCY_ATTRS if key in items}
        if dependency and (self.op != "system.task_dummy" or dependency.get("dummy_task", True) is not True):
            raise IRInvariantError(
                f"attribute {sorted(dependency)} on '{self.op}': a dependency edge exists only on a dummy task, "
                "pl.system.task_dummy(deps=[...])"
            )
        edges = dependency.get("manual_dep_edges")
        if edges is not None:
            kwargs: dict[str, object] = dict(self.kwargs)  # type: ignore[arg-type]  # still the dict given
            given = kwargs.setdefault("deps", edges)
            if _elements(given) != _elements(edges):
                raise ValueError("'manual_dep_edges' disagrees with deps=: give the dependency edges once")
            object.__setattr__(self, "kwargs", kwargs)
        object.__setattr__(self, "attr_items", items)

    @property
    def attrs(self) -> dict[str, object]:
        """The call's metadata as PyPTO names it: `{"dump_vars": [...]}` when the selection is
        not empty, then each of `attr_items` as a Python value (`attr_value`). A
        `pl.system.task_dummy` also answers PyPTO's `dummy_task` and `manual_dep_edges` (its
        `deps=`), which its source spells as the op and a keyword."""
        view = _attrs_view(self.dumps, self.attr_items)
        if self.function:  # `self.orch(..., device=r)`: the dispatch's device, as PyPTO's attrs hold it
            view.update((k.name, k.value) for k in self.kwargs if k.name == "device")
        if self.op == "system.task_dummy":
            deps = next((k.value for k in self.kwargs if k.name == "deps"), None)
            view["dummy_task"] = True
            view["manual_dep_edges"] = list(deps.elements) if isinstance(deps, MakeTuple) else []
        return view


Op = OpName
"""PyPTO's name for the callee of a `Call`: `Call(Op("add"), [x, y], span)`."""


class GlobalVar(OpName):
    """PyPTO's reference to a program function, `GlobalVar("kernel")`: a call's callee name.

    A `Call` built on one is a function call (`function=True`), and every function call's `op`
    is one, parsed or built, so `isinstance(call.op, GlobalVar)` tells a call of a program
    function from an op call, as in PyPTO."""

    __slots__ = ()


def _literal(value: object) -> Expr:
    """A Python value given where PyPTO's constructors take an attribute: an Expr as it is, an
    int, float, bool or str as the constant, a list or tuple as a list of them."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, enum.Enum):  # before int: an IntEnum member is an int too
        return Symbol(symbol_of_enum(value))
    if isinstance(value, bool):
        return ConstBool(value)
    if isinstance(value, int):
        return ConstInt(value)
    if isinstance(value, float):
        return ConstFloat(value)
    if isinstance(value, str):
        return ConstStr(value)
    if isinstance(value, (list, tuple)):
        return MakeTuple(tuple(_literal(v) for v in value), is_list=True)
    raise TypeError(f"cannot use {value!r} as an IR attribute value")


def attribute_literal(value: object) -> Expr:
    """A Python value as the IR attribute a `pl` source spells it (`_literal`): a constant, an enum
    member as its `pl` symbol, a list of those."""
    return _literal(value)


def _elements(value: object) -> list[object]:
    """The items of a list given as a Python list or tuple, or as a `MakeTuple`."""
    if isinstance(value, MakeTuple):
        return list(value.elements)
    return list(value) if isinstance(value, (list, tuple)) else [value]


DEPENDENCY_ATTRS = ("dummy_task", "manual_dep_edges")
"""PyPTO's attributes of a dummy task, which nanopto spells as the op and its `deps=`: an
attribute of no other call, nor written in `attrs={...}`."""


def attr_keywords(items: Iterable[Keyword] | Mapping[str, object], *, dispatch: bool = True) -> tuple[Keyword, ...]:
    """The attributes of a call or submit as its `attr_items`: Keywords as they are, a mapping
    (PyPTO's `attrs` dict) one Keyword per key with its value as an IR value (`_literal`). A key
    given twice is a ValueError, and so is `dump_vars` on a `dispatch` (there it is the dump
    selection, the node's `dumps`; a builtin op's is an attribute like any other)."""
    if isinstance(items, Mapping):
        entries = tuple(Keyword(str(k), _literal(v)) for k, v in items.items())
    else:
        entries = tuple(items)
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, Keyword):
            raise TypeError(f"an attribute is a Keyword, not {entry!r}")
        if entry.name == "dump_vars" and dispatch:
            raise ValueError("'dump_vars' is the dump selection: give it as dumps=")
        if entry.name in seen:
            raise ValueError(f"attribute '{entry.name}' is given twice")
        seen.add(entry.name)
    return entries


def attr_value(value: Expr) -> object:
    """An attribute value as Python reads it in PyPTO's `call.attrs`: a constant as its value, a
    list as a list, a `Symbol` as the enum member it names (`pl.Mem.Vec` is `MemorySpace.Vec`,
    `pl.adir.input` is `ArgDirection.Input`) or else itself, a Var as itself."""
    if isinstance(value, (ConstInt, ConstFloat, ConstBool, ConstStr)):
        return value.value
    if isinstance(value, MakeTuple):
        return [attr_value(v) for v in value.elements]
    if isinstance(value, Symbol):
        member = enum_of_symbol(value.path)
        return value if member is None else member
    return value


def _attrs_view(dumps: tuple[Var, ...], items: tuple[Keyword, ...]) -> dict[str, object]:
    view: dict[str, object] = {"dump_vars": list(dumps)} if dumps else {}
    view.update((k.name, attr_value(k.value)) for k in items)
    return view


@dataclass(frozen=True, slots=True)
class Submit(_InferredType, Expr):
    """`pl.submit(self.kernel, *args, ...)`: an asynchronous task launch; yields a task id.

    `attr_items` are its `attrs={...}`, as `Call.attr_items`.

    With `spmd`, `pl.spmd_submit(self.kernel, *args, core_num=N)`: the kernel launched on N
    blocks; it yields the kernel's return values followed by the dispatch's task id.
    """

    callee: str
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...] = ()
    dumps: tuple[Var, ...] = ()
    spmd: bool = False
    attr_items: tuple[Keyword, ...] = ()
    span: Span | None = _span()
    type: Type = field(default=UnknownType(), compare=False, kw_only=True, repr=False)
    """What the launch yields, the kernel's results then the task id, as the parser reads it off
    the kernel's declaration (PyPTO's `submit.type`). Derived from the program, so not compared;
    `UnknownType` for a launch built without one, whose type is then inferred."""

    def __post_init__(self) -> None:
        if type(self.args) is not tuple or type(self.kwargs) is not tuple:
            self._pypto_arguments()
        if self.attr_items:
            object.__setattr__(self, "attr_items", attr_keywords(self.attr_items))
        object.__setattr__(self, "kwargs", launch_keywords(self.kwargs))

    def _pypto_arguments(self) -> None:
        """PyPTO's `Submit(gvar, args, deps, type, span)`: the deps become the `deps=[...]`
        keyword the parser builds for `pl.submit(self.k, *args, deps=[...])`; the result type is
        inferred, not stored."""
        setattr_ = object.__setattr__
        setattr_(self, "callee", str(self.callee))
        setattr_(self, "args", tuple(self.args))
        entries: tuple[Keyword | Expr, ...] = tuple(self.kwargs)
        if entries and not all(isinstance(e, Keyword) for e in entries):
            deps = tuple(e for e in entries if isinstance(e, Expr))
            entries = (Keyword("deps", MakeTuple(deps, is_list=True)),)
        setattr_(self, "kwargs", entries)
        if isinstance(self.dumps, Type):
            setattr_(self, "type", self.dumps)
            setattr_(self, "dumps", ())
            if isinstance(self.spmd, Span):
                setattr_(self, "span", self.spmd)
                setattr_(self, "spmd", False)
        elif isinstance(self.dumps, Mapping):  # Submit(gvar, args, deps, kwargs, attrs, type, span)
            written = tuple(Keyword(k, keyword_value(k, v)) for k, v in self.dumps.items())
            attrs: object = self.spmd
            span = self.attr_items
            setattr_(self, "kwargs", (*entries, *written))  # type: ignore[arg-type]
            setattr_(self, "dumps", ())
            setattr_(self, "spmd", False)
            setattr_(self, "attr_items", dict(attrs) if isinstance(attrs, Mapping) else ())
            setattr_(self, "span", span if isinstance(span, Span) else self.span)
            if isinstance(span, Type):
                setattr_(self, "type", span)

    @property
    def attrs(self) -> dict[str, object]:
        """The dump selection and `attr_items` as PyPTO names them, as `Call.attrs`."""
        return _attrs_view(self.dumps, self.attr_items)

    # PyPTO's launch-spec fields, read off the keywords the source wrote (`LAUNCH_KEYWORDS`): one
    # submit form for parsed and built IR, so the generic traversal, the egglog encoding and the
    # printer reach a block count or a dependency as any other keyword value.
    @property
    def op(self) -> GlobalVar:
        """The launched kernel, as PyPTO's `submit.op` (a `GlobalVar`)."""
        return GlobalVar(self.callee)

    @property
    def deps(self) -> list[Expr]:
        """The task ids this launch waits for (`deps=[...]`), in order."""
        return _elements(self._keyword("deps") or MakeTuple(()))  # type: ignore[return-value]

    @property
    def core_num(self) -> Expr | None:
        """The block count of a `pl.spmd_submit` (None for a single-block `pl.submit`)."""
        return self._keyword("core_num")

    @property
    def sync_start(self) -> bool:
        """Whether every block of a `pl.spmd_submit` starts at once (`sync_start=True`)."""
        return _true(self._keyword("sync_start"))

    @property
    def allow_early_resolve(self) -> bool:
        """The early-dispatch opt-in (`allow_early_resolve=True`)."""
        return _true(self._keyword("allow_early_resolve"))

    @property
    def predicate(self) -> Expr | None:
        """The dispatch predicate (`predicate=(...)`), or None for an unconditional launch."""
        return self._keyword("predicate")

    def _keyword(self, name: str) -> Expr | None:
        return next((k.value for k in self.kwargs if k.name == name), None)


LAUNCH_KEYWORDS = ("deps", "core_num", "sync_start", "allow_early_resolve", "predicate")
"""A launch's keywords in the order a submit keeps them, whatever order the source wrote them in:
a launch written two ways is one launch (`Submit` and the `pl.spmd` scope's `attrs`)."""


def _true(value: Expr | None) -> bool:
    return isinstance(value, ConstBool) and value.value


def launch_keywords(kwargs: Iterable[Keyword]) -> tuple[Keyword, ...]:
    """`kwargs` in `LAUNCH_KEYWORDS` order (any other keyword after them, as written), a flag
    written False dropped: False is what an absent flag means."""
    kept = [k for k in kwargs if not (k.name in ("sync_start", "allow_early_resolve") and k.value == ConstBool(False))]
    rank = {name: i for i, name in enumerate(LAUNCH_KEYWORDS)}
    return tuple(sorted(kept, key=lambda k: rank.get(k.name, len(rank))))


def _submit_init(
    self: Submit,
    *args: object,
    core_num: Expr | int | None = None,
    sync_start: bool = False,
    allow_early_resolve: bool = False,
    predicate: Expr | None = None,
    **kwargs: object,
) -> None:
    """PyPTO's launch-spec keywords of `Submit(...)`: each becomes the keyword `pl.spmd_submit`
    writes, so a launch built by hand equals the parsed one. `sync_start` needs a block count and
    the block count is an integer, as PyPTO's constructor checks."""
    if len(args) == 7:  # PyPTO's span comes last, positionally
        *args, kwargs["span"] = args  # type: ignore[assignment]
    _dataclass_submit_init(self, *args, **kwargs)  # type: ignore[arg-type]
    if sync_start and core_num is None:
        raise ValueError("sync_start=True needs a block count: give core_num= too")
    extra: list[Keyword] = []
    if core_num is not None:
        count = ConstInt(core_num) if isinstance(core_num, int) and not isinstance(core_num, bool) else core_num
        dtype = getattr(getattr(count, "type", None), "dtype", None)
        if not isinstance(count, Expr) or isinstance(count, (ConstFloat, ConstBool, ConstStr)) or (
            isinstance(dtype, DataType) and not dtype.is_int
        ):
            raise TypeError(f"core_num must be an integer expression, not {core_num!r}")
        extra.append(Keyword("core_num", count))
        object.__setattr__(self, "spmd", True)
    if sync_start:
        extra.append(Keyword("sync_start", ConstBool(True)))
    if allow_early_resolve:
        extra.append(Keyword("allow_early_resolve", ConstBool(True)))
    if predicate is not None:
        extra.append(Keyword("predicate", predicate))
    if extra:
        object.__setattr__(self, "kwargs", launch_keywords((*self.kwargs, *extra)))


@dataclass(frozen=True, slots=True)
class MakeTuple(Expr):
    """A tuple `(a, b)`; as a call argument a list `[a, b]` when `is_list`."""

    elements: tuple[Expr, ...]
    is_list: bool = False
    span: Span | None = _span()

    def __post_init__(self) -> None:
        """`elements` built from a list, or PyPTO's `MakeTuple(elements, span)`: PyPTO spells
        every tuple it prints as a list, so a tuple built that way is list-spelled."""
        if isinstance(self.is_list, Span):
            object.__setattr__(self, "span", self.is_list)
            object.__setattr__(self, "is_list", True)
        if type(self.elements) is not tuple:
            object.__setattr__(self, "elements", tuple(self.elements))


@dataclass(frozen=True, slots=True)
class TupleGetItemExpr(Expr):
    tuple: Expr
    index: int
    span: Span | None = _span()


@dataclass(frozen=True, slots=True)
class SliceExpr(Expr):
    """`start:stop` inside a subscript; either bound may be absent."""

    start: Expr | None
    stop: Expr | None
    span: Span | None = _span()


# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stmt(Node):
    """Base of statements.

    `comments` are the source comment lines written directly above the statement (and a string
    statement before it), without the `#`: metadata like the span, ignored by equality and
    hashing, printed back above the statement. PyPTO reads them as `leading_comments`. They are
    the one thing about a statement that changes after it is built, and only through
    `attach_leading_comments` (docs/coming-from-pypto.md, "Leading comments and InlineStmt").
    """

    comments: tuple[str, ...] = field(default=(), compare=False, kw_only=True, repr=False)

    @property
    def leading_comments(self) -> list[str]:
        """The comment lines above this statement (PyPTO's spelling; a fresh list, read-only)."""
        return list(self.comments)


def attach_leading_comments(stmt: S, comments: Iterable[str]) -> S:
    """Replace the comment lines above `stmt` by `comments`, in place, and return `stmt`, as
    PyPTO does. Comments are metadata: equality, hashing and every rewrite ignore them, so a
    statement shared by several programs (a pass's output shares statements with its input)
    keeps its meaning in each, and every program holding it prints the new comments. Nothing
    caches a statement's printed text or comments past one call. A `SeqStmts` is a transparent
    container and takes none."""
    if isinstance(stmt, SeqStmts):
        raise ValueError("a SeqStmts carries no comments: attach them to a statement inside it")
    object.__setattr__(stmt, "comments", tuple(comments))
    return stmt


def _freeze(node: Node, *names: str) -> None:
    """Make the sequence fields `names` of a node being built tuples (PyPTO's callers pass lists)."""
    for name in names:
        value = getattr(node, name)
        if type(value) is not tuple:
            object.__setattr__(node, name, tuple(value))


@dataclass(frozen=True, slots=True)
class AssignStmt(Stmt):
    """`var = value`; `annotated` prints `var: T = value` (kept for printing, not compared).

    The parser records what the source wrote; an assignment built by hand has no source and
    prints its type, as PyPTO's (verbose) printer prints every assignment. A pass that adds an
    assignment says which it wants."""

    var: Var
    value: Expr
    annotated: bool = field(default=True, compare=False, kw_only=True)
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class EvalStmt(Stmt):
    """An expression evaluated for its effect: `pl.tile.store(t, [0, 0], out)`."""

    expr: Expr
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class _ValuesStmt(Stmt):
    """A statement that is a list of values: `ReturnStmt` and `YieldStmt`."""

    values: tuple[Expr, ...] = ()
    span: Span | None = _last_span()

    def __post_init__(self) -> None:
        """`values` built from a list, or PyPTO's `YieldStmt(span)` (the span alone)."""
        values = self.values
        if type(values) is not tuple:
            if isinstance(values, Span):
                object.__setattr__(self, "span", values)
                values = ()
            object.__setattr__(self, "values", tuple(values))

    @property
    def value(self) -> tuple[Expr, ...]:
        """`values` (PyPTO's spelling)."""
        return self.values


@dataclass(frozen=True, slots=True)
class ReturnStmt(_ValuesStmt):
    """`return v, ...`: the values the function returns."""


@dataclass(frozen=True, slots=True)
class YieldStmt(_ValuesStmt):
    """`pl.yield_(...)`: the values that flow to the enclosing if/loop `return_vars`.

    `annotated` prints a single result's type, `x: T = pl.yield_(v)`, as `AssignStmt.annotated`
    does for an assignment (kept for printing, not compared): the parser records what the source
    wrote, a yield built by hand prints the type as PyPTO's verbose printer does, and a pass that
    builds one says which it wants."""

    annotated: bool = field(default=True, compare=False, kw_only=True)


class InlineLanguage(enum.Enum):
    """The language of an `InlineStmt`'s verbatim body."""

    Python = "Python"


@dataclass(frozen=True, slots=True)
class InlineStmt(Stmt):
    """A verbatim source body in another language (PyPTO's host callback bodies): a leaf every
    pass leaves as it is; the printer writes the body back line for line; the reference
    interpreter does not run it."""

    body: str
    language: InlineLanguage = InlineLanguage.Python
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class BreakStmt(Stmt):
    span: Span | None = _last_span()


@dataclass(frozen=True, slots=True)
class ContinueStmt(Stmt):
    span: Span | None = _last_span()


class FrozenList(list[T]):
    """A sequence field that reads as the list PyPTO's field is (`seq.stmts`, `fn.return_types`)
    and cannot change. Every way to change it raises; it hashes, and compares equal to a list or
    a tuple of the same items; a slice, `+` and `*` give tuples, as the tuples these fields held
    before did (the generic traversals treat it as the tuple of children it stands for)."""

    __slots__ = ()

    def _refused(self, *args: object, **kwargs: object) -> Any:
        raise TypeError("an IR list cannot change: build a new node with the items you want (the IR is immutable)")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refused
    append = extend = insert = pop = remove = clear = sort = reverse = _refused  # type: ignore[assignment]

    def __getitem__(self, key: Any) -> Any:
        item = list.__getitem__(self, key)
        return tuple(item) if isinstance(key, slice) else item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return list.__eq__(self, other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __add__(self, other: Any) -> Any:  # type: ignore[override]
        return tuple(self) + tuple(other)

    def __radd__(self, other: Any) -> Any:
        return tuple(other) + tuple(self)

    def __mul__(self, count: Any) -> Any:  # type: ignore[override]
        return tuple(self) * count

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[type[FrozenList[T]], tuple[tuple[T, ...]]]:
        return (type(self), (tuple(self),))

    def __copy__(self) -> FrozenList[T]:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenList[T]:
        from copy import deepcopy

        return type(self)(deepcopy(tuple(self), memo))


StmtList = FrozenList
"""A `SeqStmts`' statements: the first field to read as a `FrozenList` (the name is kept)."""


@dataclass(frozen=True, slots=True)
class SeqStmts(Stmt):
    """Statements in order. `stmts` holds a `StmtList`, which reads as PyPTO's list and, declared
    as the tuple it behaves as (`+`, slices), is one more sequence of children to the schema."""

    stmts: tuple[Stmt, ...] = ()
    span: Span | None = _last_span()

    def __post_init__(self) -> None:
        if type(self.stmts) is not StmtList:  # type: ignore[comparison-overlap]
            object.__setattr__(self, "stmts", StmtList(self.stmts))


@dataclass(frozen=True, slots=True)
class IfStmt(Stmt):
    """An if; with `return_vars` it is SSA-style and both branches end in a `YieldStmt`."""

    cond: Expr
    then_body: Stmt
    else_body: Stmt | None = None
    return_vars: tuple[Var, ...] = ()
    span: Span | None = _last_span()

    def __post_init__(self) -> None:
        _freeze(self, "return_vars")

    @property
    def condition(self) -> Expr:
        """`cond` (PyPTO's spelling)."""
        return self.cond


class ForKind(enum.Enum):
    Sequential = "range"
    Parallel = "parallel"
    Unroll = "unroll"
    Pipeline = "pipeline"


@dataclass(frozen=True, slots=True)
class ForStmt(Stmt):
    """`for i, (acc,) in pl.range(start, stop, step, init_values=(...))`.

    The positional order is PyPTO's: `ForStmt(loop_var, start, stop, step, iter_args, body,
    return_vars, span, kind, attrs)`.
    """

    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    iter_args: tuple[IterArg, ...]
    body: Stmt
    return_vars: tuple[Var, ...] = ()
    span: Span | None = _last_span()
    kind: ForKind = ForKind.Sequential
    attrs: tuple[Keyword, ...] = ()
    """Loop options written as keywords, such as `stage=` of `pl.pipeline(n, stage=2)`."""

    def __post_init__(self) -> None:
        _freeze(self, "iter_args", "return_vars", "attrs")


@dataclass(frozen=True, slots=True)
class WhileStmt(Stmt):
    """A while loop; `natural` is `while cond:`, otherwise `pl.while_` with `pl.cond(cond)`.

    The positional order is PyPTO's: `WhileStmt(cond, iter_args, body, return_vars, span)`.
    """

    cond: Expr
    iter_args: tuple[IterArg, ...]
    body: Stmt
    return_vars: tuple[Var, ...] = ()
    natural: bool = field(default=True, kw_only=True)
    span: Span | None = _last_span()

    def __post_init__(self) -> None:
        _freeze(self, "iter_args", "return_vars")

    @property
    def condition(self) -> Expr:
        """`cond` (PyPTO's spelling)."""
        return self.cond


class ScopeKind(enum.Enum):
    InCore = "InCore"
    Hierarchy = "Hierarchy"
    Cluster = "Cluster"
    Graph = "Graph"
    Spmd = "Spmd"
    SplitAiv = "SplitAiv"
    Runtime = "Runtime"


class Level(enum.Enum):
    """The hierarchy level of a `pl.at(level=...)` scope (`pl.Level.HOST`, ...)."""

    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER_0 = "CLUSTER_0"
    CLUSTER_1 = "CLUSTER_1"
    CLUSTER_2 = "CLUSTER_2"
    GLOBAL = "GLOBAL"

    # PyPTO's readability aliases: another name for the same level (`Level.POD is Level.CLUSTER_0`);
    # the parser reads `pl.Level.POD` as `pl.Level.CLUSTER_0`, so the two spellings are one program.
    L2CACHE = "CHIP_DIE"
    PROCESSOR = "CHIP"
    UMA = "CHIP"
    NODE = "HOST"
    POD = "CLUSTER_0"
    CLOS1 = "CLUSTER_1"
    CLOS2 = "CLUSTER_2"


_LINQU_LEVELS: dict[Level, int] = {
    Level.AIV: 0,
    Level.AIC: 0,
    Level.CORE_GROUP: 0,
    Level.CHIP_DIE: 1,
    Level.CHIP: 2,
    Level.HOST: 3,
    Level.CLUSTER_0: 4,
    Level.CLUSTER_1: 5,
    Level.CLUSTER_2: 6,
    Level.GLOBAL: 7,
}


def level_to_linqu_level(level: Level) -> int:
    """The level's number (0 to 7) in the Linqu machine model, as PyPTO numbers it: the three core
    levels share 0, then one number a level up to the global coordinator."""
    return _LINQU_LEVELS[level]


class Role(enum.Enum):
    """The role of a hierarchy scope (`role=pl.Role.SubWorker`)."""

    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


class SplitMode(enum.Enum):
    """The cross-core split hint of an InCore scope (`pl.split(pl.SplitMode.UP_DOWN)`) and the mode of a
    `pl.split_aiv` region."""

    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"


class PipeType(enum.Enum):
    """A hardware pipe named by the sync ops (`pl.system.sync_src(set_pipe=pl.PipeType.MTE2, ...)`)."""

    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    V = "V"
    S = "S"
    FIX = "FIX"
    ALL = "ALL"


class CoreType(enum.Enum):
    """The core kind a cross-core sync op addresses."""

    CUBE = "CUBE"
    VECTOR = "VECTOR"


class AtomicType(enum.IntEnum):
    """How a store combines a tile with what its destination holds: `pl.tile.store(t, [0, 0], out,
    atomic=pl.AtomicType.Add)` adds into it. An int enum, as in PyPTO, whose builders take its int."""

    None_ = 0
    Add = 1


class WaitCmp(enum.IntEnum):
    """How `pld.system.wait(signal, offsets, expected, cmp=...)` compares a signal slot with what
    it expects: equal, or at least. An int enum, as in PyPTO."""

    Eq = 0
    Ge = 1


class NotifyOp(enum.IntEnum):
    """How `pld.system.notify(..., op=...)` deposits its value in the peer's slot: add it, or set it."""

    AtomicAdd = 0
    Set = 1


register_symbol_enum("AtomicType", AtomicType)
register_symbol_enum("WaitCmp", WaitCmp)
register_symbol_enum("NotifyOp", NotifyOp)
register_symbol_enum("Level", Level)
register_symbol_enum("Role", Role)
register_symbol_enum("SplitMode", SplitMode)

_KEYWORD_ENUMS: dict[str, type[enum.IntEnum]] = {"atomic": AtomicType}
"""Keywords whose value is a member of an int enum. Given as an int (what PyPTO's builders store),
the value is kept as the member's `pl` constant, so `atomic=1` prints `atomic=pl.AtomicType.Add`
and reads back as the same call."""


def keyword_value(name: str, value: object) -> Expr:
    """The IR value of keyword `name` given as a Python value (`_literal`), an int standing for
    the member of its enum where the keyword takes one (`_KEYWORD_ENUMS`)."""
    enum_cls = _KEYWORD_ENUMS.get(name)
    if enum_cls is not None and type(value) is int and value in enum_cls._value2member_map_:
        value = enum_cls(value)
    return _literal(value)


E = TypeVar("E", bound=enum.Enum)


def _member(enum_cls: type[E], value: Expr | None) -> E | None:
    """The member a `pl` constant such as `pl.Level.HOST` names, or None."""
    if not isinstance(value, Symbol):
        return None
    prefix, _, name = value.path.rpartition(".")
    if prefix.rpartition(".")[2] != enum_cls.__name__ or name not in enum_cls.__members__:
        return None
    return enum_cls[name]


@dataclass(frozen=True, slots=True)
class ScopeStmt(Stmt):
    """A scope context manager: `with pl.at(...)`, `pl.cluster()`, `pl.graph("g")`, `pl.spmd(N)`,
    `for i in pl.spmd(N)`, `for _ in pl.split_aiv(...)`, `pl.scope()`, `pl.manual_scope()`.

    `constructor` is the `pl` function written (`"at"`, `"spmd"`, ...); `var` is the `as tid`
    capture or the loop variable of the for-form; `dumps` are the `pl.dump_tag` selections that
    ride on this carrier.
    """

    constructor: str
    body: Stmt
    args: tuple[Expr, ...] = ()
    kwargs: tuple[Keyword, ...] = ()
    var: Var | None = None
    for_form: bool = False
    dumps: tuple[Var, ...] = ()
    span: Span | None = _span()

    @property
    def kind(self) -> ScopeKind:
        return scope_kind(self)

    @property
    def scope_kind(self) -> ScopeKind:
        """`kind` (PyPTO's spelling)."""
        return scope_kind(self)

    @property
    def level(self) -> Level | None:
        """The `level=` of a `pl.at` scope (None for other kinds)."""
        if self.constructor != "at":
            return None
        return _member(Level, self._keyword("level") or (self.args[0] if self.args else None))

    @property
    def role(self) -> Role | None:
        """The `role=` of a `pl.at` scope, or None when none was written."""
        return _member(Role, self._keyword("role"))

    @property
    def split(self) -> SplitMode | None:
        """The split mode: of a `pl.split_aiv` region (its mode), of a `pl.at` scope (its
        `optimizations=[pl.split(MODE)]`, `SplitMode.NONE` when absent); None for other kinds."""
        if self.constructor == "split_aiv":
            modes = [_member(SplitMode, a) for a in (*self.args, self._keyword("mode"))]
            return next((m for m in modes if m is not None), SplitMode.NONE)
        if self.constructor != "at":
            return None
        entry = self._optimization("split")
        if entry is not None and entry.args:
            return _member(SplitMode, entry.args[0]) or SplitMode.NONE
        return SplitMode.NONE

    @property
    def count(self) -> int | None:
        """The lane count of a `pl.split_aiv` region (2 unless written); None for other kinds."""
        if self.constructor != "split_aiv":
            return None
        written = next((a for a in self.args if isinstance(a, ConstInt)), None)
        return 2 if written is None else written.value

    # PyPTO's scope fields, read off the `pl` form (`nanopto.ir_terms.scope_classes` has the
    # per-kind class names).
    @property
    def name_hint(self) -> str:
        """`name_hint=` of the scope (a graph's positional name), or "" when none was written."""
        value = self._keyword("name_hint")
        if value is None and self.constructor == "graph" and self.args:
            value = self.args[0]
        return value.value if isinstance(value, ConstStr) else ""

    @property
    def core_num(self) -> Expr | None:
        """The block count of a `pl.spmd` scope (None for other kinds)."""
        if self.constructor != "spmd":
            return None
        return self.args[0] if self.args else self._keyword("core_num")

    @property
    def sync_start(self) -> bool:
        """Whether every block of a `pl.spmd` scope starts at once (`sync_start=True`)."""
        return _true(self._keyword("sync_start"))

    @property
    def allow_early_resolve(self) -> bool:
        """The early-dispatch opt-in of a `pl.at` or `pl.spmd` scope (`allow_early_resolve=True`)."""
        return _true(self._keyword("allow_early_resolve"))

    @property
    def attrs(self) -> dict[str, object]:
        """The scope's metadata under PyPTO's names, read off its `pl` form: `manual_dep_edges`
        (`deps=`), `arg_direction_overrides_vars` (`no_dep_args=`), `dump_vars` (the dump
        selection), `task_id_var` (`as tid`), `allow_early_resolve`, `predicate` and `slot_num`
        (`pl.cross_core_slot(slot_num=N)`), each present only when written."""
        view: dict[str, object] = {}
        for key, name in (("manual_dep_edges", "deps"), ("arg_direction_overrides_vars", "no_dep_args")):
            value = self._keyword(name)
            if isinstance(value, MakeTuple) and value.elements:
                view[key] = list(value.elements)
        if self.dumps:
            view["dump_vars"] = list(self.dumps)
        if self.var is not None and not self.for_form:
            view["task_id_var"] = self.var
        if self.allow_early_resolve:
            view["allow_early_resolve"] = True
        predicate = self._keyword("predicate")
        if predicate is not None:
            view["predicate"] = predicate
        slot = self._optimization("cross_core_slot")
        count = next((k.value for k in slot.kwargs if k.name == "slot_num"), None) if slot is not None else None
        if isinstance(count, ConstInt):
            view["slot_num"] = count.value
        return view

    def _optimization(self, op: str) -> Call | None:
        """The `optimizations=[...]` entry `pl.<op>(...)`, or None."""
        optimizations = self._keyword("optimizations")
        entries = optimizations.elements if isinstance(optimizations, MakeTuple) else ()
        return next((e for e in entries if isinstance(e, Call) and e.op == op), None)

    @property
    def manual(self) -> bool:
        """A runtime scope in manual dependency mode (`pl.manual_scope()` or `mode=MANUAL`)."""
        mode = self._keyword("mode")
        return self.constructor == "manual_scope" or (
            isinstance(mode, Symbol) and mode.path.endswith("MANUAL")
        )

    def _keyword(self, name: str) -> Expr | None:
        return next((k.value for k in self.kwargs if k.name == name), None)


def scope_kind(scope: ScopeStmt) -> ScopeKind:
    """The IR scope kind a `pl` scope constructor lowers to (docs/specification.md, "Statement forms")."""
    match scope.constructor:
        case "at":
            level = next((k.value for k in scope.kwargs if k.name == "level"), None)
            if level is None and scope.args:
                level = scope.args[0]
            if isinstance(level, Symbol) and level.path.endswith("CORE_GROUP"):
                return ScopeKind.InCore
            return ScopeKind.Hierarchy
        case "cluster":
            return ScopeKind.Cluster
        case "graph":
            return ScopeKind.Graph
        case "spmd":
            return ScopeKind.Spmd
        case "split_aiv":
            return ScopeKind.SplitAiv
        case _:
            return ScopeKind.Runtime


# ---------------------------------------------------------------------------------------------
# Functions and programs
# ---------------------------------------------------------------------------------------------


class FunctionType(enum.Enum):
    Opaque = "Opaque"
    Inline = "Inline"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Graph = "Graph"
    Spmd = "Spmd"


class ParamDirection(enum.Enum):
    In = "In"
    Out = "Out"
    InOut = "InOut"


_IMPLIED_LEVEL: dict[FunctionType, Level] = {
    FunctionType.Orchestration: Level.CHIP,
    FunctionType.Graph: Level.CHIP,
    FunctionType.InCore: Level.CHIP_DIE,
    FunctionType.AIC: Level.AIC,
    FunctionType.AIV: Level.AIV,
    FunctionType.Group: Level.CORE_GROUP,
}
"""The hierarchy level a function type implies when `level=` is not written (`Function.level`)."""


@dataclass(frozen=True, slots=True)
class Param(Node):
    var: Var
    direction: ParamDirection = ParamDirection.In
    span: Span | None = _span()

    @property
    def type(self) -> Type:
        """The parameter's type, its Var's (PyPTO's `func.params[i].type`)."""
        return self.var.type

    @property
    def name_hint(self) -> str:
        """The parameter's name, its Var's (PyPTO's `func.params[i].name_hint`)."""
        return self.var.name


DECORATOR_ATTRS = frozenset({"auto_scope", "level", "role", "external_source", "strict_ssa"})
"""Function attributes written on `@pl.function(...)`: the parser reads them before the body, so
`pl.func_attr({...})` cannot set them. Every other attribute is printed as a `pl.func_attr`."""


def places_auto_scopes(attrs: Iterable[Keyword]) -> bool:
    """Whether a function with these attributes lets the compiler place AUTO scopes: every
    function does unless it is declared `@pl.function(auto_scope=False)`."""
    return not any(k.name == "auto_scope" and isinstance(k.value, ConstBool) and not k.value.value for k in attrs)


def _param(param: Param | Var | tuple[Var, ParamDirection]) -> Param:
    if isinstance(param, Param):
        return param
    if isinstance(param, Var):
        return Param(param)
    var, direction = param
    return Param(var, direction)


@dataclass(frozen=True, init=False, slots=True)
class Function(Node):
    """A function. Built positionally in PyPTO's order, `Function(name, params, return_types, body,
    span, type)`, where a parameter may be a `Param`, a `Var` (an `In` parameter) or a `(Var,
    ParamDirection)` pair; `func_type=` is `type=` under the field's own name.

    `params` are the parameters' Vars and `param_directions` their directions, as in PyPTO; the
    field `param_list` holds them together as `Param` nodes, the form the passes rewrite.
    `attr_items` are the function's attributes, one `Keyword` each in source order; `attrs` reads
    them as PyPTO's mapping. `attrs=` takes either form."""

    name: str
    param_list: tuple[Param, ...]
    body: Stmt
    return_types: tuple[Type, ...] = ()
    func_type: FunctionType = FunctionType.Opaque
    attr_items: tuple[Keyword, ...] = ()
    span: Span | None = _span()

    def __init__(
        self,
        name: str,
        params: Iterable[Param | Var | tuple[Var, ParamDirection]] = (),
        return_types: Iterable[Type] = (),
        body: Stmt | None = None,
        span: Span | None = None,
        type: FunctionType | None = None,
        *,
        func_type: FunctionType = FunctionType.Opaque,
        attrs: Iterable[Keyword] | Mapping[str, object] = (),
        attr_items: Iterable[Keyword] | None = None,
        param_list: Iterable[Param] | None = None,
        param_directions: Iterable[ParamDirection] | None = None,
    ) -> None:
        if body is None:
            raise TypeError(f"Function {name!r} needs a body")
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        built = tuple(_param(p) for p in (params if param_list is None else param_list))
        if param_directions is not None:  # PyPTO's Function(..., param_directions=[...])
            directions = tuple(param_directions)
            if len(directions) != len(built):
                raise ValueError(f"Function {name!r}: {len(built)} parameter(s) but {len(directions)} direction(s)")
            built = tuple(replace(p, direction=d) for p, d in zip(built, directions, strict=True))
        setattr_(self, "param_list", built)
        setattr_(self, "body", body)
        setattr_(self, "return_types", return_types if isinstance(return_types, FrozenList) else FrozenList(return_types))
        setattr_(self, "func_type", func_type if type is None else type)
        if attr_items is not None:
            attrs = attr_items
        if isinstance(attrs, Mapping):  # PyPTO's attrs={"key": value}
            attrs = [Keyword(str(key), _function_attr(str(key), value)) for key, value in attrs.items()]
        setattr_(self, "attr_items", tuple(attrs))
        setattr_(self, "span", span)

    @property
    def type(self) -> FunctionType:
        """`func_type` (PyPTO's spelling)."""
        return self.func_type

    @property
    def params(self) -> tuple[Var, ...]:
        """The parameters' Vars, in order (PyPTO's `Function.params`)."""
        return tuple(p.var for p in self.param_list)

    @property
    def param_directions(self) -> tuple[ParamDirection, ...]:
        """Each parameter's direction, beside `params` (PyPTO's `Function.param_directions`)."""
        return tuple(p.direction for p in self.param_list)

    @property
    def attrs(self) -> dict[str, object]:
        """The attributes as PyPTO's `Function.attrs` mapping: a constant as its value, a list as a
        list, a Var (a parameter) as itself, an enum symbol as its member, and `split` as the
        member's value (`SplitMode.UP_DOWN.value`), as PyPTO stores a function's split."""
        return {k.name: _function_attr_value(k.value) if k.name == "split" else attr_value(k.value) for k in self.attr_items}

    @property
    def split(self) -> SplitMode | None:
        """The `split` attribute as the `SplitMode` member it names; None when unset or when it
        names no split (`NONE`, or PyPTO's stored 0), which the parser drops and the printer omits."""
        return next((function_split(k.value) for k in self.attr_items if k.name == "split"), None)

    @property
    def level(self) -> object:
        """`@pl.function(level=...)` as the member it names (`ir.Level.HOST`); unset, the level
        the function's type implies (an InCore kernel runs on a chip die, docs/coming-from-pypto.md#function-attributes),
        None for a type that implies none."""
        written = next((attr_value(k.value) for k in self.attr_items if k.name == "level"), None)
        return written if written is not None else _IMPLIED_LEVEL.get(self.func_type)

    @property
    def role(self) -> object:
        """`@pl.function(role=...)` as the member it names (`ir.Role.SubWorker`); unset, the role
        the function's type implies (an orchestration body orchestrates), else None."""
        written = next((attr_value(k.value) for k in self.attr_items if k.name == "role"), None)
        if written is not None or self.func_type not in _IMPLIED_LEVEL:
            return written
        return Role.Orchestrator if self.func_type in (FunctionType.Orchestration, FunctionType.Graph) else Role.SubWorker

    @property
    def requires_runtime_binding(self) -> bool:
        """An abstract SubWorker, written with the body `...`: the runtime supplies its code."""
        return self.role is Role.SubWorker and isinstance(self.body, SeqStmts) and not self.body.stmts

    def __repr__(self) -> str:
        return pl_repr(self)

    def _repr_html_(self) -> str:
        return html_repr(self)


def _function_attr(key: str, value: object) -> Expr:
    """A function attribute given in PyPTO's `attrs` mapping, as the parser builds it from source:
    a `split` that names a mode as its `pl.SplitMode` symbol (`function_split`), so the printed
    `pl.func_attr({"split": pl.SplitMode.UP_DOWN})` reads back as this function."""
    literal = _literal(value)
    mode = function_split(literal) if key == "split" else None
    return literal if mode is None else Symbol(symbol_of_enum(mode))


def function_split(value: Expr) -> SplitMode | None:
    """A function's `split` attribute as the mode it names: a `pl.SplitMode` symbol, a mode's value
    (`SplitMode.UP_DOWN.value`) or PyPTO's stored integer, 0 for none (PyPTO's declaration order,
    which nanopto's `SplitMode` keeps); None for no split (`NONE`) or a value that names no mode."""
    read = attr_value(value)
    if isinstance(read, str) and read in SplitMode.__members__:
        read = SplitMode[read]
    elif isinstance(read, int) and not isinstance(read, bool) and 0 <= read < len(SplitMode):
        read = list(SplitMode)[read]
    return read if isinstance(read, SplitMode) and read is not SplitMode.NONE else None


def _function_attr_value(value: Expr) -> object:
    read = attr_value(value)
    if isinstance(read, list):
        return [_function_attr_value(v) for v in value.elements] if isinstance(value, MakeTuple) else read
    return read.value if isinstance(read, enum.Enum) else read


REPR_LINES = 60
"""Lines of `pl` text a Program's or Function's repr shows before it says how many more there are."""

HTML_VIEWS: dict[type, Callable[[Any], str]] = {}
"""Richer notebook views by class, registered from above (`nanopto.tools.repr_hooks`): the IR
knows no HTML beyond its own `pl` text in a `<pre>`."""


def _pl_text(node: Program | Function) -> str | None:
    """The node as `pl` (the registered printer), or None when it cannot be printed."""
    try:
        return node.as_python()
    except Exception:  # no printer loaded, or a node it refuses: still a repr
        return None


def pl_repr(node: Program | Function) -> str:
    """A short repr that reads as `pl`: the printed source (cut after REPR_LINES lines), so a
    failing assertion or property shows the program, not a dump of its dataclasses."""
    text = _pl_text(node)
    if text is None:
        return f"<{type(node).__name__} {node.name}>"
    lines = text.rstrip("\n").splitlines()
    while lines and (lines[0].startswith(("# ", "import ")) or not lines[0].strip()):
        lines.pop(0)  # `# nanopto.program: NAME`, `import nanopto.language as pl` and the blank lines after them
    if len(lines) > REPR_LINES:
        lines = [*lines[:REPR_LINES], f"... ({len(lines) - REPR_LINES} more lines)"]
    return f"<{type(node).__name__} {node.name}:\n" + "\n".join("    " + line for line in lines) + "\n>"


def html_repr(node: Program | Function) -> str:
    """`_repr_html_`: the view registered for the class, else the `pl` text in a `<pre>`."""
    view = HTML_VIEWS.get(type(node))
    if view is not None:
        return view(node)
    from html import escape

    return f'<pre class="nanopto-code">{escape(_pl_text(node) or pl_repr(node))}</pre>'


class FunctionMap(Mapping[str, Function]):
    """The read-only, ordered name -> Function mapping of a program."""

    __slots__ = ("_items",)

    def __init__(self, functions: tuple[Function, ...]) -> None:
        self._items = {f.name: f for f in functions}

    def __getitem__(self, name: str) -> Function:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        """The names, each a `GlobalVar` (a str answering `.name`), as PyPTO's map is keyed."""
        return (GlobalVar(name) for name in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"FunctionMap({list(self._items)})"


@dataclass(frozen=True, slots=True)
class Program(Node):
    """A named, ordered collection of functions. `functions` maps names to `Function`s."""

    name: str
    function_list: tuple[Function, ...]
    span: Span | None = _last_span()

    def __post_init__(self) -> None:
        if type(self.function_list) is not tuple:
            self._pypto_arguments()

    def _pypto_arguments(self) -> None:
        """PyPTO's `Program(functions, name, span)`: the functions first, as a list."""
        name, functions = self.name, self.function_list
        if not isinstance(name, str):
            if isinstance(functions, Span):  # Program(functions, span): no name
                object.__setattr__(self, "span", functions)
                functions = ""
            name, functions = functions, name  # type: ignore[assignment]
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "function_list", tuple(functions))

    def __repr__(self) -> str:
        return pl_repr(self)

    def _repr_html_(self) -> str:
        return html_repr(self)

    @property
    def functions(self) -> FunctionMap:
        return FunctionMap(self.function_list)

    def get_function(self, name: str) -> Function | None:
        """The function called `name`, or None (PyPTO's `Program.get_function`)."""
        return next((f for f in self.function_list if f.name == name), None)

    def get_global_var(self, name: str) -> GlobalVar | None:
        """PyPTO's reference to the function called `name` (None if there is none): a key of
        `functions`, as `program.functions[program.get_global_var("f")]` reads it."""
        return GlobalVar(name) if self.get_function(name) is not None else None


AnyNode = Expr | Stmt | Keyword | Param | Function | Program


def _assignment_refused(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _deletion_refused(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


# Python 3.11's frozen slotted dataclasses refuse an assignment to a name that is not a field with a
# TypeError (their `__setattr__` names the class as it was before `slots=True` replaced it), where
# the unslotted ones raised FrozenInstanceError, an AttributeError. Every name is refused alike.
for _cls in [c for c in list(globals().values()) if isinstance(c, type) and is_dataclass(c) and c.__module__ == __name__]:
    _cls.__setattr__ = _assignment_refused  # type: ignore[method-assign,assignment]
    _cls.__delattr__ = _deletion_refused  # type: ignore[method-assign,assignment]
del _cls

_dataclass_submit_init = Submit.__init__
Submit.__init__ = _submit_init  # type: ignore[method-assign,assignment]
