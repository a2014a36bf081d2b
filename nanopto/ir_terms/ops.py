"""The op registry: one declaration per builtin op.

A declaration gives the op's spellings (`pl.add`, `pl.tensor.add`, ...), how its result type is
inferred, which argument its result aliases (the write-back contract the inliner relies on), which
arguments it writes, and its reference semantics on numpy values. Adding an op is adding one
`OpDef` to `_DECLARATIONS`; the parser, the rebinding classifier and the interpreter all read it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import keyword
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from nanopto.ir_terms.dtypes import DataType, MemorySpace, enum_of_symbol
from nanopto.ir_terms.nodes import BinOp, ConstInt, Expr, MakeTuple, SliceExpr, Symbol
from nanopto.ir_terms.types import (
    ArrayType,
    ScalarType,
    TensorType,
    TileLayout,
    TileType,
    TileView,
    Type,
    UnknownType,
    implicit_tile_view,
)

TypeRule = Callable[[Sequence[Type], Sequence[Expr], dict[str, Expr]], Type]
Semantics = Callable[["OpContext", list[Any], dict[str, Any]], Any]


class OpContext:
    """What an op's semantics may ask of the interpreter running it."""

    block_idx: int = 0
    block_num: int = 1
    subblock_idx: int = 0
    """The AIV lane a `pl.split_aiv` region runs on: the interpreter runs lane 0."""

    def __init__(self) -> None:
        self.task_ids: Iterator[int] = itertools.count()
        """The run's task ids: each launch (and each `pl.system.task_dummy`) takes the next one."""


class OpError(ValueError):
    """An op applied to values it cannot take (shape mismatch, out-of-bounds window, ...)."""


@dataclass(frozen=True)
class OpDef:
    """One builtin op.

    `aliases_arg`: the index of the argument whose storage the result *is* (so `t = op(t, ...)` is
    a proven self-update); `None` for ops that make a new value. `writes`: the arguments written
    in place. (Every discarded call is kept, whatever the op: docs/specification.md, "Discarding a
    return value".)
    """

    name: str
    spellings: tuple[str, ...]
    infer: TypeRule
    semantics: Semantics
    aliases_arg: int | None = None
    writes: tuple[int, ...] = ()
    doc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    """The arguments the source may give, as a Python parameter list (`(lhs, rhs)`); the parser
    checks each call against it, so `pl.add(k, k, k)` is refused where it is written. Every op also
    takes `attrs=`. Empty for an op the source never calls by name (`subscript`)."""

    @property
    def parameters(self) -> inspect.Signature | None:
        return _parse_signature(self.signature) if self.signature else None


@functools.cache
def _parse_signature(text: str) -> inspect.Signature:
    """`(a, b, c=None, *, d)` as an `inspect.Signature` (defaults are only ever None: the check
    is about which arguments may be given, not their values)."""
    (fn,) = ast.parse(f"def op{text}: pass").body
    assert isinstance(fn, ast.FunctionDef)
    spec = fn.args
    kind = inspect.Parameter
    params: list[inspect.Parameter] = []
    positional = spec.args
    first_default = len(positional) - len(spec.defaults)
    for i, arg in enumerate(positional):
        default = None if i >= first_default else kind.empty
        params.append(kind(arg.arg, kind.POSITIONAL_OR_KEYWORD, default=default))
    for arg, value in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
        params.append(kind(arg.arg, kind.KEYWORD_ONLY, default=kind.empty if value is None else None))
    return inspect.Signature(params)


# ---------------------------------------------------------------------------------------------
# Type rules
# ---------------------------------------------------------------------------------------------


def _first_shaped(types: Sequence[Type]) -> Type:
    """The first tensor or tile operand's type; else unknown if an operand is (it may be the tensor
    that decides the result); else the first scalar's. One pass: it runs once per spliced op."""
    unknown, scalar = False, None
    for ty in types:
        if isinstance(ty, (TensorType, TileType)):
            return ty
        if isinstance(ty, UnknownType):
            unknown = True
        elif scalar is None and isinstance(ty, ScalarType):
            scalar = ty
    if unknown or scalar is None:
        return UnknownType()
    return scalar


def _same_as_first_shaped(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    return _first_shaped(types)


def _same_as(index: int) -> TypeRule:
    def rule(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
        return types[index] if index < len(types) else UnknownType()

    return rule


def _const(ty: Type) -> TypeRule:
    def rule(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
        return ty

    return rule


def _dtype_of(ty: Type) -> DataType | None:
    if isinstance(ty, (TensorType, TileType, ScalarType, ArrayType)):
        return ty.dtype
    return None


def _symbol_dtype(expr: Expr | None) -> DataType | None:
    if isinstance(expr, Symbol):
        name = expr.path.rsplit(".", 1)[-1]
        if name in DataType.__members__:
            return DataType[name]
    return None


def _list_elements(expr: Expr | None) -> tuple[Expr, ...] | None:
    if isinstance(expr, MakeTuple):
        return expr.elements
    return None


def _target_memory(kw: dict[str, Expr]) -> MemorySpace:
    """The memory space a `target_memory=pl.Mem.<space>` keyword names; `Vec` without one."""
    target = kw.get("target_memory")
    space = enum_of_symbol(target.path) if isinstance(target, Symbol) else None
    return space if isinstance(space, MemorySpace) else MemorySpace.Vec


def _load_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    shape = _list_elements(args[2] if len(args) > 2 else kw.get("shapes"))
    dtype = _dtype_of(types[0]) if types else None
    if shape is None or dtype is None:
        return UnknownType()
    return TileType(shape, dtype, _target_memory(kw))


def _move_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    source = types[0] if types else UnknownType()
    if not isinstance(source, TileType):
        return UnknownType()
    return moved_type(source, _target_memory(kw), _layout(kw.get("blayout")), _layout(kw.get("slayout")))


def _layout(value: Expr | None) -> TileLayout | None:
    """The layout a `blayout=` / `slayout=` keyword names (`pl.TileLayout.row_major`), or None."""
    layout = enum_of_symbol(value.path) if isinstance(value, Symbol) else None
    return layout if isinstance(layout, TileLayout) else None


def moved_type(
    source: TileType, space: MemorySpace, blayout: TileLayout | None = None, slayout: TileLayout | None = None
) -> TileType:
    """The result of `tile.move(source, target_memory=space)`, a copy (so no MemRef).

    A boxed destination (Mat, Left, Right, Acc) imposes its own box layout; a flat one (Vec)
    keeps the source's, since the move copies the boxes as they are. Right takes row-major boxes
    even for a column. `blayout=` / `slayout=` override either; the valid region and the padding
    follow the data."""
    source_view = source.effective_tile_view
    destination = implicit_tile_view(source.shape, space)
    flat = implicit_tile_view(source.shape, None)
    keeps_source = (destination.blayout, destination.slayout) == (flat.blayout, flat.slayout)
    b_layout = source_view.blayout if keeps_source else destination.blayout
    s_layout = source_view.slayout if keeps_source else destination.slayout
    if space is MemorySpace.Right:
        b_layout = TileLayout.row_major
    view = TileView(
        valid_shape=source_view.valid_shape,
        blayout=b_layout if blayout is None else blayout,
        slayout=s_layout if slayout is None else slayout,
        fractal=destination.fractal,
        pad=source_view.pad,
    )
    return TileType(source.shape, source.dtype, None, view, space)


def _create_tile_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    tensor = _create_tensor_type(types, args, kw)
    return (
        TileType(tensor.shape, tensor.dtype, _target_memory(kw)) if isinstance(tensor, TensorType) else tensor
    )


def _create_tensor_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    shape = _list_elements(args[0] if args else kw.get("shape"))
    dtype = _symbol_dtype(args[1] if len(args) > 1 else kw.get("dtype"))
    if shape is None or dtype is None:
        return UnknownType()
    return TensorType(shape, dtype)


def _row_reduced_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    """A row reduction keeps every axis but the last, which becomes 1: [64, 64] -> [64, 1]."""
    source = types[0] if types else UnknownType()
    if not isinstance(source, (TensorType, TileType)) or not source.shape:
        return UnknownType()
    shape = (*source.shape[:-1], ConstInt(1, DataType.INDEX))
    if isinstance(source, TensorType):
        return TensorType(shape, source.dtype)
    return TileType(shape, source.dtype, source.memory_space or MemorySpace.Vec)


def _array_create_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    size = args[0] if args else kw.get("size")
    dtype = _symbol_dtype(args[1] if len(args) > 1 else kw.get("dtype"))
    if size is None or dtype is None:
        return UnknownType()
    return ArrayType(size=size, dtype=dtype)


def _subscript_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    base = types[0] if types else UnknownType()
    indices = args[1:]
    if isinstance(base, ArrayType):
        return ScalarType(base.dtype)
    if not isinstance(base, (TensorType, TileType)):
        return UnknownType()
    shape: list[Expr] = []
    for i, dim in enumerate(base.shape):
        if i >= len(indices):
            shape.append(dim)
            continue
        idx = indices[i]
        if isinstance(idx, SliceExpr):
            start = idx.start if idx.start is not None else ConstInt(0)
            stop = idx.stop if idx.stop is not None else dim
            if isinstance(start, ConstInt) and isinstance(stop, ConstInt):
                shape.append(ConstInt(stop.value - start.value))
            elif isinstance(start, ConstInt) and start.value == 0:
                shape.append(stop)
            else:
                return UnknownType()
    if not shape:
        return ScalarType(base.dtype)
    if isinstance(base, TileType):
        return TileType(tuple(shape), base.dtype, base.memory_space)
    return TensorType(tuple(shape), base.dtype)


# ---------------------------------------------------------------------------------------------
# Semantics on numpy values
# ---------------------------------------------------------------------------------------------


def _elementwise(fn: Callable[..., Any]) -> Semantics:
    """numpy's arithmetic on the element dtype: integers wrap as the fixed-width type does and
    floats follow IEEE 754 (inf, nan), without numpy's overflow warnings (the interpreter's
    definition of overflow, `nanopto.verify.interpreter.SCALAR_INT_RANGE`)."""

    def run(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
        try:
            with np.errstate(all="ignore"):
                result = fn(*args)
        except ValueError as exc:
            raise OpError(f"operands do not broadcast: {exc}") from None
        shapes = [np.shape(a) for a in args if isinstance(a, np.ndarray)]
        if len(shapes) > 1 and any(s != shapes[0] for s in shapes):
            raise OpError(f"shape mismatch: {' vs '.join(str(list(s)) for s in shapes)}")
        if isinstance(result, np.ndarray):
            # pl has no 64-bit float: an integer tensor times a Python float is an FP32 tensor
            return np.array(result, dtype=np.float32 if result.dtype == np.float64 else result.dtype, copy=True)
        return result.item() if isinstance(result, np.generic) else result

    return run


def _check_store(target: Any, source: Any) -> None:
    """A write keeps the buffer's dtype: float values into an integer or bool buffer, or integers
    into a bool one, would be silently truncated by numpy, so they are an OpError."""
    to, kind = np.asarray(target).dtype, np.asarray(source).dtype
    if (kind.kind == "f" and to.kind in "iub") or (kind.kind in "iu" and to.kind == "b"):
        raise OpError(f"writes {kind} values into the {to} buffer (cast them first: pl.cast(x, ...))")


def _window(
    target: np.ndarray[Any, Any], offsets: Sequence[int], extents: Sequence[int]
) -> tuple[slice, ...]:
    if len(offsets) != target.ndim:
        raise OpError(f"{len(offsets)} offsets for a rank-{target.ndim} destination")
    window: list[slice] = []
    for dim, (off, ext) in enumerate(zip(offsets, extents, strict=True)):
        if off < 0 or off + ext > target.shape[dim]:
            raise OpError(
                f"window [{off}, {off + ext}) is out of bounds for dimension {dim} of extent {target.shape[dim]}"
            )
        window.append(slice(off, off + ext))
    return tuple(window)


def _extents_for(source: np.ndarray[Any, Any], rank: int) -> list[int]:
    # A rank-reduced source (`c[0:4, j] = v`) fills the leading dims; the rest are extent 1.
    extents = list(np.shape(source))
    return extents + [1] * (rank - len(extents))


def _assemble(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    target, source, offsets = args[0], np.asarray(args[1]), [int(o) for o in args[2]]
    window = _window(target, offsets, _extents_for(source, target.ndim))
    _check_store(target, source)
    target[window] = source.reshape(target[window].shape)
    return target


def _load(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    source = args[0]
    offsets = [int(o) for o in (args[1] if len(args) > 1 else kw["offsets"])]
    shapes = [int(s) for s in (args[2] if len(args) > 2 else kw["shapes"])]
    return np.array(source[_window(source, offsets, shapes)], copy=True)


def _copy(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return np.array(args[0], copy=True)


def _store(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    tile, offsets, target = np.asarray(args[0]), [int(o) for o in args[1]], args[2]
    window = _window(target, offsets, _extents_for(tile, target.ndim))
    _check_store(target, tile)
    if kw.get("atomic") == "AtomicType.Add":  # `atomic=pl.AtomicType.Add` adds into the window
        target[window] += tile.reshape(target[window].shape)
    else:
        target[window] = tile.reshape(target[window].shape)
    return target


def _subscript(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    base, indices = args[0], args[1:]
    key = tuple(indices)
    try:
        result = base[key]
    except IndexError as exc:
        raise OpError(f"subscript out of bounds: {exc}") from None
    return result.item() if isinstance(result, np.generic) else result


def _create_tensor(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    shape = args[0] if args else kw["shape"]
    dtype = args[1] if len(args) > 1 else kw.get("dtype", DataType.FP32)
    return np.zeros([int(s) for s in shape], dtype=dtype.numpy())


def _array_create(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    size = args[0] if args else kw["size"]
    dtype = args[1] if len(args) > 1 else kw.get("dtype", DataType.INT64)
    return np.zeros(int(size), dtype=dtype.numpy())


def _update_element(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    array, index, value = args
    if not 0 <= int(index) < len(array):
        raise OpError(f"index {index} is out of bounds for an array of size {len(array)}")
    array[int(index)] = value
    return array


def _get_element(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    array, index = args
    if not 0 <= int(index) < len(array):
        raise OpError(f"index {index} is out of bounds for an array of size {len(array)}")
    element = array[int(index)]
    return element.item() if isinstance(element, np.generic) else element


def _element_of_array(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    return ScalarType(types[0].dtype) if types and isinstance(types[0], ArrayType) else UnknownType()


def _task_dummy(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    # Tasks run to completion when launched, so every dependency has finished already.
    return next(ctx.task_ids)


def _nothing(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return None


INVALID_TASK_ID = -1
"""`pl.system.task_invalid()`: a task id no launch takes, so a dependency on it is always met."""


def _task_invalid(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return INVALID_TASK_ID


def _block_idx(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return ctx.block_idx


def _full_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    shape = _list_elements(args[0] if args else kw.get("shape"))
    dtype = _symbol_dtype(args[1] if len(args) > 1 else kw.get("dtype"))
    if shape is None or dtype is None:
        return UnknownType()
    return TileType(shape, dtype, MemorySpace.Vec)


def _full_tensor_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    tile = _full_type(types, args, kw)
    return TensorType(tile.shape, tile.dtype) if isinstance(tile, TileType) else tile


def _full(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    shape = args[0] if args else kw["shape"]
    dtype = args[1] if len(args) > 1 else kw["dtype"]
    value = args[2] if len(args) > 2 else kw.get("value", 0)
    return np.full([int(s) for s in shape], value, dtype=dtype.numpy())


def _dim(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    tensor, axis = args[0], int(args[1] if len(args) > 1 else kw["axis"])
    if not -tensor.ndim <= axis < tensor.ndim:
        raise OpError(f"axis {axis} of a rank-{tensor.ndim} tensor")
    return int(tensor.shape[axis])


def _cast_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    base = types[0] if types else UnknownType()
    dtype = _symbol_dtype(args[1] if len(args) > 1 else kw.get("target_type"))
    if dtype is None:
        return UnknownType()
    if isinstance(base, TensorType):
        return TensorType(base.shape, dtype)
    if isinstance(base, TileType):
        return TileType(base.shape, dtype, base.memory_space)
    if isinstance(base, ScalarType):
        return ScalarType(dtype)
    return UnknownType()


def _cast(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    value, dtype = args[0], args[1] if len(args) > 1 else kw["target_type"]
    if isinstance(value, np.ndarray):
        return value.astype(dtype.numpy())
    result = np.asarray(value).astype(dtype.numpy())
    return result.item()


def _element_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    dtype = _dtype_of(types[0]) if types else None
    return ScalarType(dtype) if dtype is not None else UnknownType()


def _read(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    tensor, indices = args[0], [int(i) for i in (args[1] if len(args) > 1 else kw["indices"])]
    if len(indices) != tensor.ndim:
        raise OpError(f"{len(indices)} indices for a rank-{tensor.ndim} tensor")
    try:
        return tensor[tuple(indices)].item()
    except IndexError as exc:
        raise OpError(f"read out of bounds: {exc}") from None


def _write(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    tensor = args[0]
    indices = [int(i) for i in (args[1] if len(args) > 1 else kw["indices"])]
    value = args[2] if len(args) > 2 else kw["value"]
    if len(indices) != tensor.ndim:
        raise OpError(f"{len(indices)} indices for a rank-{tensor.ndim} tensor")
    try:
        with np.errstate(all="ignore"):
            tensor[tuple(indices)] = value
    except IndexError as exc:
        raise OpError(f"write out of bounds: {exc}") from None
    return tensor


def _dropped_axes(args: Sequence[Expr], kw: dict[str, Expr]) -> frozenset[int]:
    """The axes a slice's `drop_dims` operand (the fifth) erases from its result."""
    drops = _list_elements(args[4] if len(args) > 4 else kw.get("drop_dims")) or ()
    return frozenset(d.value for d in drops if isinstance(d, ConstInt))


def _kept(dims: Sequence[Expr], dropped: frozenset[int], *, tile: bool) -> tuple[Expr, ...]:
    """`dims` without the dropped axes; a tile is physically 2D, so a tile result that would be
    of rank < 2 gets leading unit axes back (docs/coming-from-pypto.md#subscripts)."""
    kept = tuple(dim for axis, dim in enumerate(dims) if axis not in dropped)
    if tile and dropped and len(kept) < 2:
        kept = (ConstInt(1),) * (2 - len(kept)) + kept
    return kept


def _slice_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    base = types[0] if types else UnknownType()
    shape = _list_elements(args[1] if len(args) > 1 else kw.get("shape"))
    if shape is None or not isinstance(base, (TensorType, TileType)):
        return UnknownType()
    dropped = _dropped_axes(args, kw)
    if isinstance(base, TileType):
        valid = _list_elements(args[3] if len(args) > 3 else kw.get("valid_shape")) or ()
        kept = _kept(shape, dropped, tile=True)
        view = TileView(valid_shape=_kept(valid, dropped, tile=True)) if len(valid) == len(shape) else None
        return TileType(kept, base.dtype, None, view, base.memory_space)
    # a slice of a distributed tensor is one too; a valid_shape= narrows its valid region
    valid = _list_elements(args[3] if len(args) > 3 else kw.get("valid_shape")) or ()
    narrowed = _kept(valid, dropped, tile=False) if len(valid) == len(shape) else ()
    return replace(base, shape=_kept(shape, dropped, tile=False), valid_shape=narrowed)


def _slicer(*, tile: bool) -> Semantics:
    """A slice is a view of its source (numpy basic indexing), as a subscript is: a write through
    it reaches the source. Scalar-indexed axes (`drop_dims`) are erased; a tile keeps rank 2."""

    def run(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
        source = args[0]
        shapes = [int(s) for s in (args[1] if len(args) > 1 else kw["shape"])]
        offsets = [int(o) for o in (args[2] if len(args) > 2 else kw["offset"])]
        dropped = {int(d) for d in (args[4] if len(args) > 4 else kw.get("drop_dims") or ())}
        view = source[_window(source, offsets, shapes)]
        if dropped:
            view = view[tuple(0 if axis in dropped else slice(None) for axis in range(view.ndim))]
            if tile and view.ndim < 2:
                view = view[(None,) * (2 - view.ndim)]
        return view

    return run


def _unit(dim: Expr) -> bool:
    return isinstance(dim, ConstInt) and dim.value == 1


def _valid_through_units(
    source: Sequence[Expr], valid: Sequence[Expr], shape: Sequence[Expr]
) -> tuple[Expr, ...]:
    """The valid region of a reshape that only inserts or removes unit axes (the other axes kept in
    order): each kept axis keeps its valid extent, a unit axis is valid. Empty for any other reshape."""
    pairs = [(dim, ext) for dim, ext in zip(source, valid, strict=False) if not _unit(dim)]
    kept = [dim for dim in shape if not _unit(dim)]
    if not valid or len(valid) != len(source) or len(pairs) != len(kept):
        return ()
    for (dim, _), new in zip(pairs, kept, strict=True):
        same = (
            dim.value == new.value if isinstance(dim, ConstInt) and isinstance(new, ConstInt) else dim == new
        )
        if not same:
            return ()
    extents = iter(ext for _, ext in pairs)
    return tuple(ConstInt(1) if _unit(dim) else next(extents) for dim in shape)


def _reshape_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    base = types[0] if types else UnknownType()
    shape = _list_elements(args[1] if len(args) > 1 else kw.get("shape"))
    if shape is None or not isinstance(base, (TensorType, TileType)):
        return UnknownType()
    if isinstance(base, TileType):
        view = base.tile_view
        valid = _valid_through_units(base.shape, view.valid_shape, shape) if view is not None else ()
        return TileType(
            shape, base.dtype, None, TileView(valid_shape=valid) if valid else None, base.memory_space
        )
    given = _list_elements(args[2] if len(args) > 2 else kw.get("valid_shape"))
    valid = given if given is not None else _valid_through_units(base.shape, base.valid_shape, shape)
    return replace(base, shape=shape, valid_shape=valid)


def _validshape_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    base = types[0] if types else UnknownType()
    rows = args[1] if len(args) > 1 else kw.get("valid_rows")
    cols = args[2] if len(args) > 2 else kw.get("valid_cols")
    if rows is None or cols is None or not isinstance(base, (TensorType, TileType)):
        return UnknownType()
    if isinstance(base, TileType):
        view = replace(base.effective_tile_view, valid_shape=(rows, cols))
        return TileType(base.shape, base.dtype, base.memref, view, base.memory_space)
    return replace(base, valid_shape=(rows, cols))


def _same_value(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return args[0]


def _reshape(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    source = np.asarray(args[0])
    shape = [int(s) for s in (args[1] if len(args) > 1 else kw["shape"])]
    if int(np.prod(shape)) != source.size:
        raise OpError(f"reshape of {list(source.shape)} to {shape}: the element counts differ")
    return np.array(source.reshape(shape), copy=True)


def _reinterpret_view_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    """The same bytes read as `dtype`: in `shape=` when given, else the source's shape with the last
    axis scaled by the ratio of the element sizes (`[8, 16]` FP32 as INT16 is `[8, 32]`). A tile
    keeps its memory space; a last axis that does not scale to whole elements has no type."""
    base = types[0] if types else UnknownType()
    dtype = _symbol_dtype(args[1] if len(args) > 1 else kw.get("dtype"))
    if dtype is None or not isinstance(base, (TensorType, TileType)) or not base.shape:
        return UnknownType()
    shape = _list_elements(args[2] if len(args) > 2 else kw.get("shape"))
    if shape is None:
        last = base.shape[-1]
        if not isinstance(last, ConstInt) or (last.value * base.dtype.bits) % dtype.bits:
            return UnknownType()
        shape = (*base.shape[:-1], ConstInt(last.value * base.dtype.bits // dtype.bits, last.dtype))
    if isinstance(base, TileType):
        return TileType(shape, dtype, base.memory_space)
    return replace(base, shape=shape, dtype=dtype, valid_shape=())


def _reinterpret_view(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    """A view of the bytes the interpreter holds (numpy `view`): a write through it reaches the
    source. A target type the interpreter holds widened (`DataType.numpy`: BF16, FP8, the 4-bit
    types) has no such bytes, so reading bytes as one is refused; a source of such a type is
    held widened too, and its bytes are the widened ones."""
    source = np.asarray(args[0])
    dtype: DataType = args[1] if len(args) > 1 else kw["dtype"]
    given = args[2] if len(args) > 2 else kw.get("shape")
    if dtype.numpy().itemsize * 8 != dtype.bits:
        raise OpError(f"reinterpret_view as {dtype.name}: the interpreter holds {dtype.name} widened, not as its bytes")
    if source.ndim == 0 or (source.shape[-1] * source.itemsize) % dtype.numpy().itemsize:
        raise OpError(f"reinterpret_view of shape {list(source.shape)} ({source.dtype}) as {dtype.name}: the last axis is not whole elements")
    flat = np.ascontiguousarray(source).view(dtype.numpy())
    shape = [int(s) for s in given] if given is not None else list(flat.shape)
    if int(np.prod(shape)) != flat.size:
        raise OpError(f"reinterpret_view of {source.nbytes} bytes as {dtype.name} in shape {shape}: the sizes differ")
    return flat.reshape(shape)


def _matmul_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    if len(types) < 2:
        return UnknownType()
    lhs, rhs = types[0], types[1]
    if not (isinstance(lhs, (TensorType, TileType)) and isinstance(rhs, (TensorType, TileType))):
        return UnknownType()
    if len(lhs.shape) != 2 or len(rhs.shape) != 2:
        return UnknownType()
    shape = (lhs.shape[0], rhs.shape[1])
    if isinstance(lhs, TileType):
        return TileType(shape, lhs.dtype, lhs.memory_space)
    return TensorType(shape, lhs.dtype)


def _matmul(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    lhs, rhs = np.asarray(args[0]), np.asarray(args[1])
    if lhs.ndim != 2 or rhs.ndim != 2 or lhs.shape[1] != rhs.shape[0]:
        raise OpError(f"matmul of shapes {list(lhs.shape)} and {list(rhs.shape)}")
    return np.matmul(lhs, rhs).astype(lhs.dtype)


def _matmul_acc(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    acc = np.asarray(args[0])
    product = np.asarray(_matmul(ctx, args[1:], kw))
    if product.shape != acc.shape:
        raise OpError(f"matmul_acc of shape {list(product.shape)} into an accumulator of shape {list(acc.shape)}")
    return (acc + product).astype(acc.dtype)


def _bitwise(fn: Callable[..., Any]) -> Semantics:
    """`fn` on integer or boolean operands (bitwise on integers, logical on booleans)."""
    elementwise = _elementwise(fn)

    def run(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
        for value in args:
            kind = np.asarray(value).dtype.kind
            if kind not in "biu":
                raise OpError(f"a bitwise op takes integers or booleans, not {np.asarray(value).dtype}")
        return elementwise(ctx, args, kw)

    return run


def _row_reduction(fn: Callable[..., Any]) -> Semantics:
    """numpy's reduction along the last axis, which is kept with extent 1."""

    def run(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
        source = args[0]
        if not isinstance(source, np.ndarray) or source.ndim == 0:
            raise OpError("a row reduction takes a tensor or tile of rank 1 or more")
        with np.errstate(all="ignore"):
            return np.asarray(fn(source, axis=-1, keepdims=True), dtype=source.dtype)

    return run


def _row(name: str, fn: Callable[..., Any], doc: str) -> OpDef:
    """A row reduction; the tile form's scratch tile (`tmp_tile`) is accepted and unused."""
    return OpDef(
        name,
        (name, f"tensor.{name}", f"tile.{name}"),
        _row_reduced_type,
        _row_reduction(fn),
        doc=doc,
        signature="(input, tmp_tile=None)",
    )


def _scalar_operand(name: str, fn: Callable[..., Any], doc: str) -> OpDef:
    """PyPTO's tensor-scalar spellings (`pl.tensor.muls(t, 2.0)`): the elementwise op with a
    scalar second operand."""
    return OpDef(
        name,
        (f"tensor.{name}", f"tile.{name}"),
        _same_as(0),
        _elementwise(fn),
        doc=doc,
        signature="(lhs, rhs)",
    )


def _keyword_named(name: str, fn: Callable[..., Any], doc: str, signature: str = "(lhs, rhs)") -> OpDef:
    """An op named by a Python keyword: the IR keeps `and`, the source writes `pl.and_`."""
    return OpDef(
        name,
        (name, f"tensor.{name}", f"tile.{name}"),
        _same_as_first_shaped,
        _bitwise(fn),
        doc=doc,
        signature=signature,
    )


def _binary(name: str, fn: Callable[..., Any], doc: str, signature: str = "(lhs, rhs)") -> OpDef:
    return OpDef(
        name,
        (name, f"tensor.{name}", f"tile.{name}"),
        _same_as_first_shaped,
        _elementwise(fn),
        doc=doc,
        signature=signature,
    )


_DECLARATIONS: tuple[OpDef, ...] = (
    _binary("add", np.add, "elementwise a + b; a new value"),
    _binary("sub", np.subtract, "elementwise a - b; a new value"),
    _binary("mul", np.multiply, "elementwise a * b; a new value"),
    _binary("div", np.divide, "elementwise a / b; a new value", "(lhs, rhs, high_precision=None)"),
    _binary("maximum", np.maximum, "elementwise max(a, b); a new value"),
    _binary("minimum", np.minimum, "elementwise min(a, b); a new value"),
    OpDef(
        "exp",
        ("exp", "tensor.exp", "tile.exp"),
        _same_as(0),
        _elementwise(np.exp),
        doc="elementwise e^x",
        signature="(input)",
    ),
    _scalar_operand("adds", np.add, "elementwise t + s for a scalar s; a new value"),
    _scalar_operand("subs", np.subtract, "elementwise t - s for a scalar s; a new value"),
    _scalar_operand("muls", np.multiply, "elementwise t * s for a scalar s; a new value"),
    _scalar_operand("divs", np.divide, "elementwise t / s for a scalar s; a new value"),
    _row("row_max", np.max, "the maximum of each row: [m, n] -> [m, 1]; a new value"),
    _row("row_min", np.min, "the minimum of each row: [m, n] -> [m, 1]; a new value"),
    _row("row_sum", np.sum, "the sum of each row: [m, n] -> [m, 1]; a new value"),
    _keyword_named("and", np.bitwise_and, "elementwise a & b (logical on booleans); a new value"),
    _keyword_named("or", np.bitwise_or, "elementwise a | b (logical on booleans); a new value"),
    _keyword_named("not", np.invert, "elementwise ~a (logical on booleans); a new value", "(input)"),
    OpDef(
        "tensor.assemble",
        ("tensor.assemble", "assemble"),
        _same_as(0),
        _assemble,
        aliases_arg=0,
        writes=(0,),
        doc="write `source` into `target` at `offsets`; the result is `target`",
        signature="(target, source, offset, *, atomic=None)",
    ),
    OpDef(
        "tile.assemble",
        ("tile.assemble",),
        _same_as(0),
        _assemble,
        aliases_arg=0,
        writes=(0,),
        doc="`t[0:16, 0:32] = src` on a tile: write `source` into `target` at `offset`; the result is `target`",
        signature="(target, source, offset)",
    ),
    OpDef(
        "subscript",
        ("subscript",),
        _subscript_type,
        _subscript,
        aliases_arg=0,
        doc="`a[i, j:k]`: a view of `a` (a scalar for a full-rank scalar index)",
    ),
    OpDef(
        "tile.load",
        ("tile.load", "load"),
        _load_type,
        _load,
        doc="copy a window of a tensor into a new tile",
        signature="(tensor, offsets, shapes, valid_shape=None, target_memory=None, clamp=None)",
    ),
    OpDef(
        "tile.store",
        ("tile.store", "store"),
        _same_as(2),
        _store,
        aliases_arg=2,
        writes=(2,),
        doc="write a tile into a tensor window; the result is the tensor",
        signature="(tile, offsets, output_tensor, shapes=None, *, atomic=None)",
    ),
    OpDef(
        "tile.move",
        ("tile.move", "move"),
        _move_type,
        _copy,
        doc="`pl.move(t, target_memory=pl.Mem.Left)`: a copy of a tile in another memory space",
        signature="(tile, target_memory, blayout=None, slayout=None)",
    ),
    OpDef(
        "tile.create",
        ("tile.create", "create_tile"),
        _create_tile_type,
        _create_tensor,
        doc="`pl.tile.create(shape, dtype=, target_memory=)` (or `pl.create_tile`): a new zeroed tile",
        signature="(shape, dtype, target_memory=None, transpose=None, *, flat_layout=None)",
    ),
    OpDef(
        "create_tensor",
        ("create_tensor", "tensor.create"),
        _create_tensor_type,
        _create_tensor,
        doc="a new zeroed tensor",
        signature="(shape, dtype, layout=None, manual_dep=None, init_value=None)",
    ),
    OpDef(
        "array.create",
        ("array.create",),
        _array_create_type,
        _array_create,
        doc="a new zeroed array",
        signature="(extent, dtype)",
    ),
    OpDef(
        "array.update_element",
        ("array.update_element",),
        _same_as(0),
        _update_element,
        aliases_arg=0,
        writes=(0,),
        doc="`arr[i] = v`: write element i in place; the result is the array",
        signature="(array, index, value)",
    ),
    OpDef(
        "array.get_element",
        ("array.get_element",),
        _element_of_array,
        _get_element,
        doc="`arr[i]`: element i of an array, as a scalar",
        signature="(array, index)",
    ),
    OpDef(
        "system.set_ffts",
        ("system.set_ffts",),
        _const(UnknownType()),
        _nothing,
        doc="hand the FFTS unit its workspace (hardware set-up; writes no argument)",
        signature="(workspace)",
    ),
    *(
        OpDef(
            f"system.{name}",
            (f"system.{name}",),
            _const(UnknownType()),
            _nothing,
            doc=f"{what}; the reference interpreter runs one statement at a time, so it has no effect",
            signature="(*, set_pipe, wait_pipe, event_id)" if name.startswith("sync") else "()",
        )
        for name, what in (
            (
                "sync_src",
                "`pl.system.sync_src(set_pipe=..., wait_pipe=..., event_id=N)`: signal an event between pipes",
            ),
            (
                "sync_dst",
                "`pl.system.sync_dst(set_pipe=..., wait_pipe=..., event_id=N)`: wait for that event",
            ),
            ("bar_v", "`pl.system.bar_v()`: a barrier on the vector pipe"),
            ("bar_m", "`pl.system.bar_m()`: a barrier on the matrix pipe"),
            ("bar_all", "`pl.system.bar_all()`: a barrier on every pipe"),
        )
    ),
    OpDef(
        "system.task_dummy",
        ("system.task_dummy",),
        _const(ScalarType(DataType.TASK_ID)),
        _task_dummy,
        doc="`pl.system.task_dummy(deps=[...])`: a task that does nothing once its deps are done; its task id",
        signature="(*, deps=None)",
    ),
    OpDef(
        "system.task_invalid",
        ("system.task_invalid",),
        _const(ScalarType(DataType.TASK_ID)),
        _task_invalid,
        doc="`pl.system.task_invalid()`: the task id of no task; a dependency on it is always met",
        signature="()",
    ),
    OpDef(
        "tile.get_block_idx",
        ("tile.get_block_idx", "get_block_idx"),
        _const(ScalarType(DataType.INDEX)),
        _block_idx,
        doc="the index of the current pl.spmd block",
        signature="()",
    ),
    OpDef(
        "tile.full",
        ("tile.full", "full"),
        _full_type,
        _full,
        doc="`pl.tile.full(shape, dtype, value)`: a new tile filled with `value`",
        signature="(shape, dtype, value)",
    ),
    OpDef(
        "tensor.full",
        ("tensor.full",),
        _full_tensor_type,
        _full,
        doc="`pl.tensor.full(shape, dtype, value)`: a new tensor filled with `value`",
        signature="(shape, dtype, value)",
    ),
    OpDef(
        "tensor.dim",
        ("tensor.dim",),
        _const(ScalarType(DataType.INDEX)),
        _dim,
        doc="`pl.tensor.dim(t, axis)`: the extent of one axis of a tensor",
        signature="(tensor, axis)",
    ),
    OpDef(
        "cast",
        ("cast", "tensor.cast", "tile.cast"),
        _cast_type,
        _cast,
        doc="`pl.cast(x, pl.FP16)`: the value converted to another dtype; a new value",
        signature="(input, target_type, mode=None)",
    ),
    OpDef(
        "read",
        ("read", "tensor.read", "tile.read"),
        _element_type,
        _read,
        doc="`pl.read(t, [i, j])`: one element as a scalar",
        signature="(tensor, indices)",
    ),
    OpDef(
        "write",
        ("write", "tensor.write", "tile.write"),
        _same_as(0),
        _write,
        aliases_arg=0,
        writes=(0,),
        doc="`pl.write(t, [i, j], v)`: store one element in place; the result is `t`",
        signature="(tensor, indices, value)",
    ),
    OpDef(
        "slice",
        ("slice", "tensor.slice"),
        _slice_type,
        _slicer(tile=False),
        aliases_arg=0,
        doc="`pl.slice(t, shape, offset)`, `t[i, 0:4]`: a view of the window of `shape` at `offset`",
        signature="(tensor, shape, offset, valid_shape=None, drop_dims=None, pad_value=None, clamp=None)",
    ),
    OpDef(
        "tile.slice",
        ("tile.slice",),
        _slice_type,
        _slicer(tile=True),
        aliases_arg=0,
        doc="`pl.tile.slice(t, shape, offset)`, `t[0:16, :]`: a view of a window of a tile (rank 2 at least)",
        signature="(tile, shape, offset, valid_shape=None, drop_dims=None, pad_value=None)",
    ),
    OpDef(
        "tensor.reshape",
        ("tensor.reshape", "reshape"),
        _reshape_type,
        _reshape,
        doc="`pl.tensor.reshape(t, shape)`: the same elements in another shape; a new value",
        signature="(tensor, shape, valid_shape=None)",
    ),
    OpDef(
        "tensor.set_validshape",
        ("tensor.set_validshape", "set_validshape"),
        _validshape_type,
        _same_value,
        aliases_arg=0,
        doc="`pl.set_validshape(t, rows, cols)`: the same tensor, its valid region narrowed (no data moves)",
        signature="(input, valid_rows, valid_cols)",
    ),
    OpDef(
        "tile.set_validshape",
        ("tile.set_validshape",),
        _validshape_type,
        _same_value,
        aliases_arg=0,
        doc="`pl.tile.set_validshape(t, rows, cols)`: the same tile, its valid region narrowed (no data moves)",
        signature="(tile, valid_rows, valid_cols)",
    ),
    OpDef(
        "tile.reshape",
        ("tile.reshape",),
        _reshape_type,
        _reshape,
        doc="`pl.tile.reshape(t, shape)`: the same elements in another shape; a new value",
        signature="(tile, shape)",
    ),
    OpDef(
        "reinterpret_view",
        ("reinterpret_view", "tensor.reinterpret_view", "tile.reinterpret_view"),
        _reinterpret_view_type,
        _reinterpret_view,
        aliases_arg=0,
        doc="`pl.reinterpret_view(t, pl.INT16, shape=None)`: the same bytes read as another dtype; a view",
        signature="(input, dtype, shape=None)",
    ),
    OpDef(
        "matmul",
        ("matmul", "tensor.matmul", "tile.matmul"),
        _matmul_type,
        _matmul,
        doc="`pl.matmul(a, b)`: the matrix product of two rank-2 values; a new value",
        signature="(lhs, rhs, out_dtype=None, a_trans=None, b_trans=None, c_matrix_nz=None)",
    ),
    OpDef(
        "matmul_acc",
        ("matmul_acc", "tensor.matmul_acc", "tile.matmul_acc"),
        _same_as(0),
        _matmul_acc,
        doc="`pl.matmul_acc(acc, a, b)`: `acc + a @ b`, the accumulator's shape and dtype; a new value",
        signature="(acc, lhs, rhs)",
    ),
    OpDef(
        "split",
        ("split", "optimizations.split"),
        _const(UnknownType()),
        _nothing,
        doc="`optimizations=[pl.split(pl.SplitMode.UP_DOWN)]`: the cross-core split hint of an InCore scope",
        signature="(mode, *, slot_num=None)",
    ),
    OpDef(
        "cross_core_slot",
        ("cross_core_slot", "optimizations.cross_core_slot"),
        _const(UnknownType()),
        _nothing,
        doc="`optimizations=[pl.cross_core_slot(slot_num=N)]`: the slot count of the cross-core pipe",
        signature="(*, slot_num)",
    ),
)


class OpRegistry:
    """Look up ops by any of their spellings."""

    def __init__(self, declarations: Sequence[OpDef]) -> None:
        self._by_spelling: dict[str, OpDef] = {}
        self._ops: list[OpDef] = []
        for op in declarations:
            self.register(op)

    def register(self, op: OpDef) -> None:
        for spelling in op.spellings:
            if spelling in self._by_spelling:
                raise ValueError(f"op spelling 'pl.{spelling}' is declared twice")
        self._ops.append(op)
        for spelling in op.spellings:
            self._by_spelling[spelling] = op

    def lookup(self, spelling: str) -> OpDef | None:
        return self._by_spelling.get(spelling)

    def ir_name(self, spelling: str) -> str:
        """The op name the IR stores for a source spelling: `tensor.and_` is `tensor.and` (a
        Python keyword takes a trailing underscore in source only); anything else as written."""
        head, _, last = spelling.rpartition(".")
        bare = f"{head}.{last[:-1]}" if head else last[:-1]
        if last.endswith("_") and keyword.iskeyword(last[:-1]) and bare in self._by_spelling:
            return bare
        return spelling

    def __contains__(self, spelling: str) -> bool:
        return spelling in self._by_spelling

    def __iter__(self) -> Any:
        return iter(self._ops)


OPS = OpRegistry(_DECLARATIONS)


def source_spelling(op: str) -> str:
    """How an op name is written in `pl` source: `tile.and` as `tile.and_` (see `OpRegistry.ir_name`)."""
    last = op.rpartition(".")[2]
    return f"{op}_" if keyword.iskeyword(last) else op


SCALAR_OPERATORS: dict[str, BinOp] = {
    "add": BinOp.Add,
    "sub": BinOp.Sub,
    "mul": BinOp.Mul,
    "div": BinOp.FloatDiv,
    "min": BinOp.Min,
    "max": BinOp.Max,
}
"""The `pl` ops that, given two scalars, are the scalar operator (`pl.min(a, b)` is `min(a, b)`),
as PyPTO dispatches them: the parser reads them so, and the inlining rules re-read a spliced call
whose operands became scalars (`subst-scalar-<op>`), so a printed result parses back to itself."""
