"""The `pl` module users import: `import nanopto.language as pl`.

A `@pl.program` class is never run. The decorator reads the class's source text and hands it to
`parse_program`, so method bodies are only ever parsed. Python does evaluate a few things at class
creation (decorators, parameter and return annotations), so every name those may use exists here
as a harmless value: dtypes and enums are the IR's own, `pl.Tensor[...]`-style annotation heads
are inert placeholders that accept any subscript, and `pl.function` returns the method unchanged.
A placeholder used as a value at run time (iterated, tested, computed with) raises a TypeError
saying so: `for i in pl.range(10)` outside a parsed body must not loop forever.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from nanopto.ir_terms import parser
from nanopto.ir_terms.dtypes import ArgDirection, DataType, MemorySpace, PadValue, TensorLayout
from nanopto.ir_terms.nodes import AtomicType, ForKind, Function, FunctionType, ParamDirection, Program
from nanopto.ir_terms.parse_error import (
    InvalidOperationError,
    ParserSyntaxError,
    ParserTypeError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)
from nanopto.ir_terms.parser import DynamicDim, ParserError, parse_function, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.scope_classes import SplitMode
from nanopto.ir_terms.source_lookup import get_class_source_lines, source_lines_without_inspect
from nanopto.ir_terms.system_ops import check_cacheinvalid, check_syncall
from nanopto.ir_terms.templates import InlineFunction
from nanopto.ir_terms.types import CompactMode, MemRef, TileLayout, TileView

if TYPE_CHECKING:
    from nanopto.jit import jit

__all__ = [
    "BF16",
    "BOOL",
    "FP4",
    "FP8",
    "FP16",
    "FP32",
    "HF4",
    "HF8",
    "INDEX",
    "INT4",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "TASK_ID",
    "UINT4",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "Array",
    "AtomicType",
    "CompactMode",
    "DataType",
    "DynamicDim",
    "ForKind",
    "FunctionType",
    "InOut",
    "InlineFunction",
    "InvalidOperationError",
    "Level",
    "Mem",
    "MemRef",
    "MemorySpace",
    "Out",
    "PadValue",
    "ParamDirection",
    "ParserError",
    "ParserSyntaxError",
    "ParserTypeError",
    "Scalar",
    "SplitMode",
    "TaskId",
    "Tensor",
    "TensorLayout",
    "Tile",
    "TileLayout",
    "TileView",
    "Tuple",
    "UndefinedVariableError",
    "UnsupportedFeatureError",
    "adir",
    "cross_core_slot",
    "dynamic",
    "function",
    "inline",
    "jit",
    "loads",
    "loads_program",
    "parse",
    "parse_function",
    "parse_program",
    "parser",
    "program",
    "python_print",
    "split",
    "split_aiv",
    "spmd",
    "system",
]

INT4 = DataType.INT4
INT8 = DataType.INT8
INT16 = DataType.INT16
INT32 = DataType.INT32
INT64 = DataType.INT64
UINT4 = DataType.UINT4
UINT8 = DataType.UINT8
UINT16 = DataType.UINT16
UINT32 = DataType.UINT32
UINT64 = DataType.UINT64
FP4 = DataType.FP4
FP8 = DataType.FP8
FP16 = DataType.FP16
FP32 = DataType.FP32
BF16 = DataType.BF16
HF4 = DataType.HF4
HF8 = DataType.HF8
BOOL = DataType.BOOL
INDEX = DataType.INDEX
TASK_ID = DataType.TASK_ID

Mem = MemorySpace


class adir:  # PyPTO spells it `pl.adir.input`
    """The per-argument directions of a dispatch's `arg_directions` attribute, by their `pl` names."""

    input = ArgDirection.Input
    output = ArgDirection.Output
    inout = ArgDirection.InOut
    output_existing = ArgDirection.OutputExisting
    no_dep = ArgDirection.NoDep
    scalar = ArgDirection.Scalar


_ANNOTATION_HEADS = frozenset({"pl.Tensor", "pl.Tile", "pl.Scalar", "pl.Ptr", "pl.Array", "pl.Tuple", "pl.Out", "pl.InOut"})
"""The `pl` names that, subscripted, write a type."""


class _Inert:
    """A placeholder for a `pl` name that only appears in annotations or decorator arguments.

    Subscripting, calling and attribute access all give another placeholder, so
    `pl.Tensor[[4], pl.FP32]` or `pl.Level.CORE_GROUP` evaluate at class creation without error;
    what they mean is decided by the parser from the source text.
    """

    __slots__ = ("_path",)

    def __init__(self, path: str) -> None:
        self._path = path

    def __getitem__(self, item: object) -> _Inert:
        return _Inert(f"{self._path}[...]")

    def __call__(self, *args: object, **kwargs: object) -> _Inert:
        return _Inert(f"{self._path}(...)")

    def __getattr__(self, name: str) -> _Inert:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Inert(f"{self._path}.{name}")

    def __repr__(self) -> str:
        return self._path

    def _annotation_head(self) -> str | None:
        """`pl.Scalar` for `pl.Scalar[pl.INT32]` (a type written as an annotation), else None:
        the parser rejects such an object where a value is expected."""
        head, bracket, _ = self._path.partition("[")
        return head if bracket and head in _ANNOTATION_HEADS else None

    def _not_run(self, *args: object) -> Any:
        raise TypeError(
            f"{self._path} has no value at run time: `pl` programs are parsed by @pl.program (or "
            "parse_program), never run, so a placeholder cannot be iterated, tested, converted or "
            "computed with; to compute, run a parsed program with nanopto.verify.interpret"
        )


_RUNTIME_USES = (
    "__iter__", "__len__", "__contains__", "__bool__", "__int__", "__float__", "__complex__", "__index__",
    "__round__", "__trunc__", "__floor__", "__ceil__", "__enter__", "__exit__", "__aenter__", "__aexit__",
    "__await__", "__aiter__", "__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__",
    "__ge__", "__setitem__", "__delitem__", "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__",
    "__floordiv__", "__mod__", "__divmod__", "__pow__", "__lshift__", "__rshift__", "__and__", "__xor__",
    "__or__", "__radd__", "__rsub__", "__rmul__", "__rmatmul__", "__rtruediv__", "__rfloordiv__",
    "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__", "__rrshift__", "__rand__", "__rxor__", "__ror__",
)
"""What using a placeholder as a value would call: each raises. `pl.range(10)` is a placeholder,
and without `__iter__` Python would iterate it through `__getitem__` forever."""

for _use in _RUNTIME_USES:
    setattr(_Inert, _use, _Inert._not_run)


class _Annotation:
    """`pl.Tensor((64, 128), pl.FP16)`, `pl.Scalar(pl.FP32)`: a type written as a call, as PyPTO's
    older notation allows. It holds what was written (`shape`, `dtype`) and has no IR value."""

    __slots__ = ("_head", "dtype", "shape")

    def __init__(self, head: str, shape: tuple[object, ...] | None, dtype: object) -> None:
        self._head = head
        self.shape = shape
        self.dtype = dtype

    def unwrap(self) -> Any:
        raise ValueError(
            f"pl.{self._head}(...) here is an annotation-only {self._head}: it names a type and holds no "
            "IR expression to unwrap"
        )

    def __repr__(self) -> str:
        return f"pl.{self._head}(...)"

    def _annotation_head(self) -> str | None:
        return f"pl.{self._head}"


def _tensor_signature(
    shape: object = None, dtype: object = None, expr: object = None, layout: object = None, memref: object = None
) -> None:
    """The arguments of `pl.Tensor(...)` / `pl.Tile(...)` written as a call (Python checks them)."""


def _scalar_signature(dtype: object = None, expr: object = None) -> None:
    """The arguments of `pl.Scalar(...)` written as a call (Python checks them)."""


class _TypeHead(_Inert):
    """`pl.Tensor`, `pl.Tile`, `pl.Scalar`: subscripted in annotations (`pl.Tensor[[4], pl.FP32]`),
    or called in the older notation, which checks its arguments as a Python call would."""

    __slots__ = ()

    def __call__(self, *args: object, **kwargs: object) -> Any:
        head = self._path.removeprefix("pl.")
        signature = inspect.signature(_scalar_signature if head == "Scalar" else _tensor_signature)
        try:
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError as exc:
            raise TypeError(f"pl.{head}(): {exc}") from None
        if bound.get("expr") is not None:  # PyPTO's run-time wrapper of an IR value: a placeholder here
            return super().__call__(*args, **kwargs)
        shape = bound.get("shape")
        return _Annotation(head, tuple(shape) if isinstance(shape, (list, tuple)) else None, bound.get("dtype"))


Tensor = _TypeHead("pl.Tensor")
Tile = _TypeHead("pl.Tile")
Scalar = _TypeHead("pl.Scalar")
Array = _Inert("pl.Array")
Out = _Inert("pl.Out")
InOut = _Inert("pl.InOut")
Tuple = _Inert("pl.Tuple")
Level = _Inert("pl.Level")
TaskId = _Annotation("Scalar", None, DataType.TASK_ID)
"""`pl.Scalar[pl.TASK_ID]`, the type of a task id, under PyPTO's short name."""


class _System(_Inert):
    """`pl.system`: inert as every `pl` op outside a parsed body, except that the ops whose
    arguments PyPTO checks when called from Python check them here too (the rules of
    `nanopto.ir_terms.system_ops`), so a wrong call fails where it is made."""

    __slots__ = ()

    def syncall(
        self, *, mode: str | None = None, core_type: str = "mix", gm_workspace: object = None, used_cores: object = None
    ) -> _Inert:
        check_syncall(mode, core_type, gm_workspace is not None, used_cores)
        return _Inert("pl.system.syncall(...)")

    def cacheinvalid(self, tensor: object = None, shapes: object = None, offsets: object = None) -> _Inert:
        check_cacheinvalid(tensor is not None, shapes, offsets)
        return _Inert("pl.system.cacheinvalid(...)")


system = _System("pl.system")


def split_aiv(n: object, *, mode: SplitMode) -> _Inert:
    """`pl.split_aiv(2, mode=...)` as a value outside a parsed body: the lane count is the
    hardware's two AIV lanes, so anything else is refused where it is written."""
    if type(n) is not int or n != 2:
        raise ValueError(f"pl.split_aiv(n, mode=...): n must be the integer 2 (the AIV lane count), got {n!r}")
    return _Inert("pl.split_aiv(...)")


@dataclass(frozen=True)
class split:
    """`pl.split(MODE)` as a value: what an `optimizations=[...]` entry holds outside a parsed body.
    `slot_num=` is the deprecated spelling of `pl.cross_core_slot(slot_num=N)` and warns."""

    mode: SplitMode
    slot_num: int | None = None

    def __post_init__(self) -> None:
        if self.slot_num is not None:
            _check_slot_num(self.slot_num)
            warnings.warn(
                "pl.split(MODE, slot_num=N) is deprecated: write the slot count as its own entry, "
                "optimizations=[pl.split(MODE), pl.cross_core_slot(slot_num=N)]",
                DeprecationWarning,
                stacklevel=3,
            )


@dataclass(frozen=True)
class cross_core_slot:
    """`pl.cross_core_slot(slot_num=N)` as a value: the slot count of the cross-core pipe."""

    slot_num: int

    def __post_init__(self) -> None:
        _check_slot_num(self.slot_num)


def _check_slot_num(slot_num: object) -> None:
    if type(slot_num) is not int or slot_num <= 0:
        raise ValueError(f"slot_num must be a positive integer, not {slot_num!r}")


@dataclass(frozen=True)
class spmd:
    """`pl.spmd(N, ...)` as a value outside a parsed body: the options a `pl.spmd` scope was
    written with (docs/specification.md, "Statement forms"). The parser reads the source; this
    object only answers what was passed."""

    core_num: object = None
    sync_start: bool = False
    name_hint: str = ""
    optimizations: tuple[object, ...] = ()
    deps: tuple[object, ...] = ()
    allow_early_resolve: bool = False
    predicate: object = None


def __getattr__(name: str) -> Any:
    """`pl.jit` is the JIT front end, imported on first use: it needs the passes and the
    interpreter, which a `@pl.program` user never loads. Any other `pl.<name>` (ops, enums such as
    `pl.SplitMode`) is inert outside a parsed body."""
    if name == "jit":
        from nanopto.jit import jit as front_end

        return front_end
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _Inert(f"pl.{name}")


def parse(source: str, filename: str = "<string>") -> Program | Function:
    """PyPTO's `pl.parse`: the `@pl.program` class of `source`, or, with no class, its one
    module-level `@pl.function`. `source` may leave out `import nanopto.language as pl`."""
    has_class = any(line.lstrip().startswith("class ") for line in source.splitlines())
    return parse_program(source, filename) if has_class else parse_function(source, filename)


def loads(filepath: str) -> Program | Function:
    """PyPTO's `pl.loads`: `parse` of a file's text, its errors located in that file. A file that
    cannot be read is the `OSError` reading it raises."""
    with open(filepath, encoding="utf-8") as source:
        return parse(source.read(), filepath)


def loads_program(filepath: str) -> Program:
    """PyPTO's `pl.loads_program`: the `@pl.program` class of a file."""
    with open(filepath, encoding="utf-8") as source:
        return parse_program(source.read(), filepath)


def dynamic(name: str) -> DynamicDim:
    """A symbolic dimension: `N = pl.dynamic("N")` at module level."""
    return DynamicDim(name)


F = TypeVar("F", bound=Callable[..., Any])


@overload
def function(fn: F, /) -> Any: ...


@overload
def function(fn: None = None, /, **options: object) -> Callable[[F], Any]: ...


def function(fn: F | None = None, /, **options: object) -> Any:
    """Marks a method of a `@pl.program` class (returned unchanged: the class's source is what is
    parsed). Written outside a class, the function is parsed on its own into an `ir.Function`; a
    program that calls it by name gets it as one of its functions."""
    if fn is not None:
        return _standalone(fn, inspect.currentframe()) if _outside_a_class(fn) else fn

    def mark(inner: F) -> Any:
        return _standalone(inner, inspect.currentframe()) if _outside_a_class(inner) else inner

    return mark


def inline(fn: Callable[..., Any]) -> InlineFunction:
    """A module-level template the parser splices at each call site in a `@pl.program`, leaving
    no function behind. Its body is checked now, so a mistake is reported at its definition."""
    source, filename, start, closure, indent = _source_of(fn, inspect.currentframe())
    parse_function(source, filename, closure=closure, line_offset=start - 1, col_offset=indent)
    return InlineFunction(fn.__name__, source, filename, start - 1, closure, indent)


def _outside_a_class(fn: Callable[..., Any]) -> bool:
    """True for a function defined at module level or in a function body, not in a class body."""
    scope, _, _ = getattr(fn, "__qualname__", "").rpartition(".")
    return not scope or scope.endswith("<locals>")


def _standalone(fn: Callable[..., Any], frame: FrameType | None) -> Function:
    source, filename, start, closure, indent = _source_of(fn, frame)
    return parse_function(source, filename, closure=closure, line_offset=start - 1, col_offset=indent)


def _source_of(obj: Any, frame: FrameType | None) -> tuple[str, str, int, dict[str, object], int]:
    """The dedented source of a decorated class or function, its file, first line, the names it
    may use without defining them (the defining module's and the decorating frame's caller's),
    and the indentation dedenting removed (so columns count in the file)."""
    try:
        lines, start = get_class_source_lines(obj) if isinstance(obj, type) else inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as exc:
        found = source_lines_without_inspect(obj)
        if found is None:
            raise ParserSyntaxError(
                f"Cannot retrieve source code for {obj.__name__!r}: {exc}",
                hint="define it in a file, or give its source text to pl.parse() or pl.parse_program()",
            ) from None
        lines, start, filename = found
    closure: dict[str, object] = {}
    module = sys.modules.get(obj.__module__)
    if module is not None:
        closure.update(vars(module))
    if frame is not None and frame.f_back is not None:
        closure.update(frame.f_back.f_locals)
    del frame
    closure = {name: value for name, value in closure.items() if not name.startswith("__")}
    source = textwrap.dedent("".join(lines))
    return source, filename, start, closure, _indent(lines) - _indent(source.splitlines())


def _indent(lines: list[str]) -> int:
    """The indentation of the first line that is not blank."""
    first = next((line for line in lines if line.strip()), "")
    return len(first) - len(first.lstrip())


def program(cls: type) -> Program:
    """Parse the decorated class's source into a `Program`; no method body is ever run.

    Names the class uses but does not define (module constants, `pl.dynamic` dims, module-level
    `@pl.function`s and `@pl.inline` templates) are taken from the defining module and the
    enclosing function, as plain data only.
    """
    source, filename, start, closure, indent = _source_of(cls, inspect.currentframe())
    return parse_program(source, filename, closure=closure, line_offset=start - 1, col_offset=indent)
