"""The types of `pl` values.

Shapes hold expressions, not ints, because a dimension may be symbolic (`pl.dynamic("N")`) or
read a scalar parameter; inlining substitutes into types exactly as it does into statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nanopto.ir_terms.dtypes import DataType, MemorySpace

if TYPE_CHECKING:
    from nanopto.ir_terms.nodes import Expr


@dataclass(frozen=True)
class ScalarType:
    dtype: DataType


def _no_dimension(value: int) -> Expr:
    raise RuntimeError("the IR nodes are not loaded: import nanopto.ir")


_dimension: Callable[[int], Expr] = _no_dimension
"""`ConstInt`, registered by `nanopto.ir_terms.nodes` (which imports this module)."""


def register_dimension(make: Callable[[int], Expr]) -> None:
    global _dimension
    _dimension = make


def _shape(shape: Iterable[Expr | int]) -> tuple[Expr, ...]:
    """A shape given as PyPTO gives it, a list whose dimensions may be ints, as a tuple of Exprs."""
    return tuple(_dimension(d) if isinstance(d, int) else d for d in shape)


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Expr, ...]
    dtype: DataType

    def __post_init__(self) -> None:
        if type(self.shape) is not tuple:
            object.__setattr__(self, "shape", _shape(self.shape))


@dataclass(frozen=True)
class TileType:
    shape: tuple[Expr, ...]
    dtype: DataType
    memory_space: MemorySpace | None = None

    def __post_init__(self) -> None:
        if type(self.shape) is not tuple:
            object.__setattr__(self, "shape", _shape(self.shape))


@dataclass(frozen=True)
class ArrayType:
    """`pl.Array[size, dtype]`; built positionally in PyPTO's order, `ArrayType(dtype, size)`."""

    dtype: DataType
    size: Expr

    def __post_init__(self) -> None:
        if isinstance(self.size, int):
            object.__setattr__(self, "size", _dimension(self.size))


@dataclass(frozen=True)
class TupleType:
    types: tuple[Type, ...]


@dataclass(frozen=True)
class UnknownType:
    """The type of an unannotated parameter or a value whose type nanopto cannot infer."""


Type = ScalarType | TensorType | TileType | ArrayType | TupleType | UnknownType
