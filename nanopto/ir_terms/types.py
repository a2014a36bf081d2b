"""The types of `pl` values.

Shapes hold expressions, not ints, because a dimension may be symbolic (`pl.dynamic("N")`) or
read a scalar parameter; inlining substitutes into types exactly as it does into statements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nanopto.ir_terms.dtypes import DataType, MemorySpace

if TYPE_CHECKING:
    from nanopto.ir_terms.nodes import Expr


@dataclass(frozen=True)
class ScalarType:
    dtype: DataType


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Expr, ...]
    dtype: DataType


@dataclass(frozen=True)
class TileType:
    shape: tuple[Expr, ...]
    dtype: DataType
    memory_space: MemorySpace | None = None


@dataclass(frozen=True)
class ArrayType:
    size: Expr
    dtype: DataType


@dataclass(frozen=True)
class TupleType:
    types: tuple[Type, ...]


@dataclass(frozen=True)
class UnknownType:
    """The type of an unannotated parameter or a value whose type nanopto cannot infer."""


Type = ScalarType | TensorType | TileType | ArrayType | TupleType | UnknownType
