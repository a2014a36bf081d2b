"""Arguments for any function the reference interpreter can run, drawn by hypothesis.

`inputs_for` in `strategies` serves the drawn programs, whose tensors are all `[4]`; this module
serves programs a user wrote: each parameter gets a value of its own type, with its annotated
shape and dtype. A symbolic dimension (`pl.dynamic("N")`, or a scalar parameter used as an extent)
is drawn once per call and shared by every parameter that mentions it, so `a: [N]` and `b: [N]`
always agree. Values are small integers (as floats for float dtypes), so results are exact and a
difference is a real one.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import ConstInt, Expr, Function, Var
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, Type, UnknownType

MAX_EXTENT = 4
"""Symbolic dimensions are drawn from 1..MAX_EXTENT: small enough to run fast, big enough to see."""

MAX_ELEMENTS = 1 << 20
"""The most elements one drawn argument may have: a `pl.Tensor[[100000, 100000], pl.FP32]` is
40 GB, which no check can draw; such a parameter is refused, naming it, before anything is drawn."""

UNANNOTATED = TensorType((ConstInt(4),), DataType.FP32)
"""What an unannotated parameter is drawn as: a `[4]` FP32 tensor, what the shipped examples
without annotations are written for (the command line says so when it draws one)."""


class UnsupportedParameter(ValueError):
    """A parameter whose value cannot be drawn (an unannotated or unknown type)."""


def _symbols(ty: Type) -> list[Var]:
    dims: tuple[Expr, ...] = ()
    if isinstance(ty, TensorType | TileType):
        dims = ty.shape
    elif isinstance(ty, ArrayType):
        dims = (ty.size,)
    return [d for d in dims if isinstance(d, Var)]


def _extent(dim: Expr, sizes: dict[int, int], param: str) -> int:
    if isinstance(dim, ConstInt):
        if dim.value < 0:
            raise UnsupportedParameter(f"parameter '{param}': its shape has the negative extent {dim.value}")
        return int(dim.value)
    if isinstance(dim, Var):
        return sizes[dim.id]
    raise UnsupportedParameter(f"parameter '{param}': a dimension that is neither a constant nor a symbol")


def _elements(dtype: DataType, shape: tuple[int, ...], param: str) -> st.SearchStrategy[Any]:
    """Small integer values of `dtype` (hypothesis' array strategy fills big arrays cheaply)."""
    count = 1
    for extent in shape:
        count *= extent
    if count > MAX_ELEMENTS:
        raise UnsupportedParameter(
            f"parameter '{param}' of shape {list(shape)} has {count:,} elements, more than the "
            f"{MAX_ELEMENTS:,} nanopto check draws; check the function with smaller extents (or a pl.dynamic one)"
        )
    low = 0 if dtype.name.startswith("UINT") or dtype is DataType.BOOL else -3
    high = 1 if dtype is DataType.BOOL else 5
    elements = st.booleans() if dtype is DataType.BOOL else st.integers(low, high)
    return arrays(dtype.numpy(), shape, elements=elements)


def _value(ty: Type, sizes: dict[int, int], param: str) -> st.SearchStrategy[Any]:
    match ty:
        case ScalarType(dtype=dtype):
            if dtype is DataType.BOOL:
                return st.booleans()
            if dtype.is_float:
                return st.integers(-3, 5).map(float)
            if dtype.name.startswith("UINT"):  # an unsigned scalar is never negative
                return st.integers(0, 12)
            return st.integers(-4, 12)
        case TensorType(shape=shape, dtype=dtype) | TileType(shape=shape, dtype=dtype):
            return _elements(dtype, tuple(_extent(d, sizes, param) for d in shape), param)
        case ArrayType(size=size, dtype=dtype):
            return _elements(dtype, (_extent(size, sizes, param),), param)
        case UnknownType():
            return _value(UNANNOTATED, sizes, param)
    raise UnsupportedParameter(f"parameter '{param}' has no annotated type to draw a value of")


def arguments_for(fn: Function) -> st.SearchStrategy[tuple[Any, ...]]:
    """One argument per parameter of `fn`, symbolic extents drawn once and shared.

    A scalar parameter that is also used as an extent gets the drawn extent as its value.
    Raises UnsupportedParameter, naming the parameter, when a type cannot be drawn.
    """
    symbols: dict[int, Var] = {}
    for param in fn.param_list:
        for dim in _symbols(param.var.type):
            symbols.setdefault(dim.id, dim)
    for param in fn.param_list:  # fail now, naming the parameter and its line, rather than inside hypothesis
        try:
            _value(param.var.type, dict.fromkeys(symbols, 1), param.var.name)
        except UnsupportedParameter as exc:
            span = param.var.span if param.var.span is not None and param.var.span.is_valid() else fn.span
            where = f"{span.file}:{span.line}:{span.col + 1}: " if span is not None and span.is_valid() else ""
            raise UnsupportedParameter(f"{where}cannot draw inputs for '{fn.name}': {exc}") from None

    @st.composite
    def draw(draw: st.DrawFn) -> tuple[Any, ...]:
        sizes = {symbol: draw(st.integers(1, MAX_EXTENT)) for symbol in sorted(symbols)}
        values = []
        for param in fn.param_list:
            if param.var.id in sizes:
                values.append(sizes[param.var.id])
            else:
                values.append(draw(_value(param.var.type, sizes, param.var.name)))
        return tuple(values)

    return draw()
