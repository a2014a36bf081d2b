"""The `pl` module users import: `import nanopto.language as pl`.

A `@pl.program` class is never run. The decorator reads the class's source text and hands it to
`parse_program`, so method bodies are only ever parsed. Python does evaluate a few things at class
creation (decorators, parameter and return annotations), so every name those may use exists here
as a harmless value: dtypes and enums are the IR's own, `pl.Tensor[...]`-style annotation heads
are inert placeholders that accept any subscript, and `pl.function` returns the method unchanged.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.nodes import ForKind, FunctionType, ParamDirection, Program
from nanopto.ir_terms.parser import DynamicDim, ParserError, parse_program
from nanopto.ir_terms.printer import python_print

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
    "DataType",
    "DynamicDim",
    "ForKind",
    "FunctionType",
    "InOut",
    "Level",
    "Mem",
    "MemorySpace",
    "Out",
    "ParamDirection",
    "ParserError",
    "Scalar",
    "Tensor",
    "Tile",
    "Tuple",
    "dynamic",
    "function",
    "jit",
    "parse_program",
    "program",
    "python_print",
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


Tensor = _Inert("pl.Tensor")
Tile = _Inert("pl.Tile")
Scalar = _Inert("pl.Scalar")
Array = _Inert("pl.Array")
Out = _Inert("pl.Out")
InOut = _Inert("pl.InOut")
Tuple = _Inert("pl.Tuple")
Level = _Inert("pl.Level")


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


def dynamic(name: str) -> DynamicDim:
    """A symbolic dimension: `N = pl.dynamic("N")` at module level."""
    return DynamicDim(name)


F = TypeVar("F", bound=Callable[..., Any])


@overload
def function(fn: F, /) -> F: ...


@overload
def function(fn: None = None, /, **options: object) -> Callable[[F], F]: ...


def function(fn: F | None = None, /, **options: object) -> F | Callable[[F], F]:
    """Marks a method of a `@pl.program` class; the method itself is returned unchanged."""
    if fn is not None:
        return fn

    def mark(inner: F) -> F:
        return inner

    return mark


def program(cls: type) -> Program:
    """Parse the decorated class's source into a `Program`; no method body is ever run.

    Names the class uses but does not define (module constants, `pl.dynamic` dims) are taken from
    the defining module and the enclosing function, as plain data only.
    """
    try:
        lines, start = inspect.getsourcelines(cls)
        filename = inspect.getsourcefile(cls) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise ParserError(f"cannot read the source of class {cls.__name__!r}: {exc}") from None
    closure: dict[str, object] = {}
    module = sys.modules.get(cls.__module__)
    if module is not None:
        closure.update(vars(module))
    caller = inspect.currentframe()
    if caller is not None and caller.f_back is not None:
        closure.update(caller.f_back.f_locals)
    del caller
    closure = {name: value for name, value in closure.items() if not name.startswith("__")}
    source = textwrap.dedent("".join(lines))
    return parse_program(source, filename, closure=closure, line_offset=start - 1)
