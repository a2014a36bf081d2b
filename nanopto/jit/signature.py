"""What a jit entry's parameters declare, and what a call's arguments make of them.

A parameter is either *fully annotated* (`a: pl.Tensor[[N, 4], pl.FP32]`), and the argument must
fit the declaration, or *bare* (`a: pl.Tensor`, `c: pl.Out[pl.Tensor]`, `n: pl.Scalar`, or no
annotation at all), and the argument supplies the type: a numpy array (or a CPU torch tensor, when
torch is installed) its shape and dtype, a Python int a `pl.INDEX` scalar, a float a `pl.FP32`
scalar, a bool a `pl.BOOL` scalar. A `pl.dynamic` dimension of a declared shape stays symbolic in
the specialized program and is bound per call: every argument that uses it must agree on its
extent. The cache key is what decides the specialized program (bare shapes and dtypes, not the
extents a dynamic dimension takes), so one specialization serves every extent.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import ConstInt, ParamDirection, Var
from nanopto.ir_terms.parse_exprs import DynamicDim, ExprParser, dotted_name
from nanopto.ir_terms.parse_static import is_static_value
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, Type
from nanopto.jit.source import FunctionSource

__all__ = ["ArgumentBinding", "ParamSpec", "bind_arguments", "numpy_dtype_of", "read_params"]

Kind = Literal["tensor", "scalar", "array", "any"]

_BARE_HEADS: dict[str, Kind] = {"pl.Tensor": "tensor", "pl.Tile": "tensor", "pl.Scalar": "scalar", "pl.Array": "array"}

_FROM_NUMPY: dict[str, DataType] = {
    "int8": DataType.INT8,
    "int16": DataType.INT16,
    "int32": DataType.INT32,
    "int64": DataType.INT64,
    "uint8": DataType.UINT8,
    "uint16": DataType.UINT16,
    "uint32": DataType.UINT32,
    "uint64": DataType.UINT64,
    "float16": DataType.FP16,
    "float32": DataType.FP32,
    "bool": DataType.BOOL,
}


@dataclass(frozen=True)
class ParamSpec:
    """One entry parameter as the user wrote it."""

    name: str
    direction: ParamDirection
    kind: Kind
    declared: Type | None
    """The full annotation's type; None for a bare parameter, whose type the argument gives."""
    node: ast.arg


@dataclass(frozen=True)
class ArgumentBinding:
    """One call's arguments, checked: the values to run with, the types, and the cache key."""

    values: tuple[Any, ...]
    types: tuple[Type, ...]
    key: tuple[Any, ...]
    dims: Mapping[str, int]
    """The extent each `pl.dynamic` dimension takes in this call."""


class _AnnotationReader(ExprParser):
    """The `pl` annotation grammar of the parser, for one signature outside a program."""

    def __init__(self, source: FunctionSource, closure: Mapping[str, object]) -> None:
        super().__init__(source.text, source.file, 0)
        for name, value in closure.items():
            if isinstance(value, DynamicDim):
                self.bind_dynamic(name, value.name, None)
            elif is_static_value(value):
                self.constants[name] = value

    def lookup_local(self, name: str) -> Var | None:
        return None

    def function_return_types(self, name: str) -> tuple[Type, ...] | None:
        return None


def read_params(source: FunctionSource, closure: Mapping[str, object]) -> tuple[ParamSpec, ...]:
    """The entry's parameters: direction, kind and (when fully annotated) declared type."""
    args = source.node.args
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        raise source.error(source.node, "a jit function takes plain positional parameters only")
    reader = _AnnotationReader(source, closure)
    specs: list[ParamSpec] = []
    for arg in args.args:
        direction, inner = _direction(arg.annotation)
        kind: Kind = "any"
        declared: Type | None = None
        head = dotted_name(inner) if inner is not None else None
        if inner is None or (isinstance(inner, ast.Constant) and inner.value is Ellipsis):
            pass
        elif head in _BARE_HEADS:
            kind = _BARE_HEADS[head]
        else:
            declared = reader.type_annotation(inner)
            kind = _kind_of(declared)
        specs.append(ParamSpec(arg.arg, direction, kind, declared, arg))
    return tuple(specs)


def bare_annotation(node: ast.expr | None) -> bool:
    """Whether an annotation leaves the type to the argument (`pl.Tensor`, `pl.Out[pl.Tensor]`)."""
    _, inner = _direction(node)
    if inner is None or (isinstance(inner, ast.Constant) and inner.value is Ellipsis):
        return True
    return dotted_name(inner) in _BARE_HEADS


def _direction(node: ast.expr | None) -> tuple[ParamDirection, ast.expr | None]:
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("pl.Out", "pl.InOut"):
        direction = ParamDirection.Out if dotted_name(node.value) == "pl.Out" else ParamDirection.InOut
        return direction, node.slice
    return ParamDirection.In, node


def _kind_of(ty: Type) -> Kind:
    if isinstance(ty, (TensorType, TileType)):
        return "tensor"
    if isinstance(ty, ScalarType):
        return "scalar"
    if isinstance(ty, ArrayType):
        return "array"
    return "any"


def numpy_dtype_of(dtype: np.dtype[Any]) -> DataType | None:
    """The `pl` dtype of a numpy dtype, or None when `pl` has none (float64, complex, ...)."""
    return _FROM_NUMPY.get(dtype.name)


def _as_array(value: Any) -> np.ndarray[Any, Any] | None:
    """A numpy array, or a CPU torch tensor seen through numpy (sharing its memory), else None."""
    if isinstance(value, np.ndarray):
        return value
    torch = sys.modules.get("torch")  # only a tensor of the torch the caller imported, never an
    tensor_class = getattr(torch, "Tensor", None)  # object whose class merely says "torch"
    if not isinstance(tensor_class, type) or not isinstance(value, tensor_class):
        return None
    device = getattr(value, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        return None
    try:
        array = value.detach().numpy()  # type: ignore[attr-defined]
    except Exception:  # a tensor numpy cannot see (one that needs grad, a meta tensor)
        return None
    return array if isinstance(array, np.ndarray) else None


def _describe(value: Any) -> str:
    array = _as_array(value)
    if array is not None:
        return f"an array of shape {tuple(array.shape)} and dtype {array.dtype.name}"
    if isinstance(value, bool):
        return f"the bool {value!r}"
    if isinstance(value, (int, float)):
        return f"the {type(value).__name__} {value!r}"
    return f"a value of type {type(value).__name__}"


def _scalar_dtype(value: Any) -> DataType | None:
    if isinstance(value, (bool, np.bool_)):
        return DataType.BOOL
    if isinstance(value, np.generic):
        return numpy_dtype_of(value.dtype)
    if isinstance(value, int):
        return DataType.INDEX
    if isinstance(value, float):
        return DataType.FP32
    return None


def bind_arguments(source: FunctionSource, specs: Sequence[ParamSpec], args: Sequence[Any]) -> ArgumentBinding:
    """Check `args` against the entry's parameters; raise a `JITError` naming the parameter."""
    name = source.node.name
    if len(args) != len(specs):
        listed = ", ".join(s.name for s in specs)
        raise source.error(
            source.node,
            f"{name}() takes {len(specs)} argument(s) ({listed}) but {len(args)} were given",
        )
    values: list[Any] = []
    types: list[Type] = []
    key: list[Any] = []
    dims: dict[str, int] = {}
    dim_owner: dict[str, str] = {}
    low_index, high_index = DataType.INDEX.int_range
    for spec, value in zip(specs, args, strict=True):
        array = _as_array(value)
        kind = spec.kind
        if kind == "any":
            kind = "tensor" if array is not None else "scalar"
        if kind in ("tensor", "array"):
            what = "a tensor" if kind == "tensor" else "a pl.Array"
            if array is None:
                raise _param_error(source, spec, f"expects {what} (a numpy array), got {_describe(value)}")
            dtype = numpy_dtype_of(array.dtype)
            if dtype is None:
                raise _param_error(
                    source,
                    spec,
                    f"has dtype {array.dtype.name}, which pl has no dtype for",
                    hint="convert it, e.g. np.asarray(x, dtype=np.float32)",
                )
            if kind == "array" and array.ndim != 1:
                raise _param_error(source, spec, f"expects a pl.Array (one dimension), got {_describe(value)}")
            array_type = _check_array(source, spec, array, dtype, dims, dim_owner)
            values.append(array)
            types.append(array_type)
            key.append((kind, spec.direction.value, python_print(array_type) if spec.declared is None else "declared"))
        else:
            if array is not None or _scalar_dtype(value) is None:
                raise _param_error(source, spec, f"expects a scalar (a Python int, float or bool), got {_describe(value)}")
            if spec.direction is not ParamDirection.In:
                raise _param_error(
                    source,
                    spec,
                    f"is a pl.{spec.direction.value} scalar, which a Python number cannot receive",
                    hint="return the scalar from the entry instead",
                )
            dtype = _scalar_dtype(value)
            assert dtype is not None
            if dtype is DataType.INDEX and not low_index <= int(value) <= high_index and not isinstance(spec.declared, ScalarType):
                raise _param_error(
                    source, spec, f"is {value}, which does not fit pl.INDEX ({low_index} to {high_index})"
                )
            declared = spec.declared
            if isinstance(declared, ScalarType) and declared.dtype.is_int and dtype.is_int:
                low, high = declared.dtype.int_range
                if not low <= int(value) <= high:
                    raise _param_error(
                        source, spec, f"is {value}, which does not fit {python_print(declared)} ({low} to {high})"
                    )
            if isinstance(declared, ScalarType):
                if declared.dtype.is_int and not (dtype.is_int or dtype is DataType.BOOL):
                    raise _param_error(
                        source, spec, f"expects an integer scalar ({python_print(declared)}), got {_describe(value)}"
                    )
                ty: Type = declared
            elif declared is not None:
                raise _param_error(source, spec, f"expects {python_print(declared)}, got {_describe(value)}")
            else:
                ty = ScalarType(dtype)
            values.append(value.item() if isinstance(value, np.generic) else value)
            types.append(ty)
            key.append(("scalar", spec.direction.value, python_print(ty)))
    return ArgumentBinding(tuple(values), tuple(types), tuple(key), dims)


def _check_array(
    source: FunctionSource,
    spec: ParamSpec,
    array: np.ndarray[Any, Any],
    dtype: DataType,
    dims: dict[str, int],
    dim_owner: dict[str, str],
) -> Type:
    declared = spec.declared
    if declared is None:
        if spec.kind == "array":
            return ArrayType(size=ConstInt(int(array.shape[0]), DataType.INDEX), dtype=dtype)
        return TensorType(tuple(ConstInt(int(n), DataType.INDEX) for n in array.shape), dtype)
    shown = python_print(declared)
    if isinstance(declared, ArrayType):
        shape: tuple[Any, ...] = (declared.size,)
        want_dtype = declared.dtype
    elif isinstance(declared, (TensorType, TileType)):
        shape = declared.shape
        want_dtype = declared.dtype
    else:
        raise _param_error(source, spec, f"expects {shown}, got {_describe(array)}")
    if array.ndim != len(shape):
        raise _param_error(
            source, spec, f"expects rank {len(shape)} ({shown}), got rank {array.ndim}: {_describe(array)}"
        )
    if dtype is not want_dtype and want_dtype.numpy() != array.dtype:
        raise _param_error(source, spec, f"expects dtype pl.{want_dtype.value} ({shown}), got {_describe(array)}")
    for axis, (dim, extent) in enumerate(zip(shape, array.shape, strict=True)):
        if isinstance(dim, ConstInt):
            if dim.value != extent:
                raise _param_error(
                    source, spec, f"expects extent {dim.value} in dimension {axis} ({shown}), got {_describe(array)}"
                )
        elif isinstance(dim, Var):
            bound = dims.get(dim.name)
            if bound is None:
                dims[dim.name] = int(extent)
                dim_owner[dim.name] = spec.name
            elif bound != extent:
                raise _param_error(
                    source,
                    spec,
                    f"binds the dynamic dimension {dim.name} to {extent}, but '{dim_owner[dim.name]}' bound it to {bound}",
                    hint=f"every argument that uses {dim.name} in this call must have the same extent there",
                )
    return declared


def _param_error(source: FunctionSource, spec: ParamSpec, what: str, *, hint: str | None = None) -> Exception:
    return source.error(spec.node, f"argument '{spec.name}' of {source.node.name}() {what}", hint=hint, parameter=spec.name)


