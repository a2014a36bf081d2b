"""The types of `pl` values.

Shapes hold expressions, not ints, because a dimension may be symbolic (`pl.dynamic("N")`) or
read a scalar parameter; inlining substitutes into types exactly as it does into statements.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from nanopto.ir_terms.dtypes import DataType, MemorySpace, PadValue, TensorLayout, register_symbol_enum

if TYPE_CHECKING:
    from nanopto.ir_terms.nodes import Expr, WindowBuffer


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


def _constant(dim: Expr) -> int | None:
    """The value of a constant dimension (a `ConstInt`), else None."""
    if type(dim) is _dimension:
        value: int = getattr(dim, "value")  # noqa: B009 - the class is only known at run time
        return value
    return None


def _shape(shape: Iterable[Expr | int]) -> tuple[Expr, ...]:
    """A shape given as PyPTO gives it, a list whose dimensions may be ints, as a tuple of Exprs."""
    return tuple(_dimension(d) if isinstance(d, int) else d for d in shape)


@dataclass(frozen=True)
class TensorType:
    shape: tuple[Expr, ...]
    dtype: DataType
    valid_shape: tuple[Expr, ...] = field(default=(), compare=False, kw_only=True)
    """The valid region the op that made the value gives it (`pl.set_validshape`, a slice's
    `valid_shape=`); empty when it is the whole tensor. The parser reads it where PyPTO does (a
    narrowed source written into a window, docs/coming-from-pypto.md#subscripts). An annotation
    does not spell it, so it is not part of the type's identity: it neither prints nor compares."""

    def __post_init__(self) -> None:
        if type(self.shape) is not tuple:
            object.__setattr__(self, "shape", _shape(self.shape))
        if type(self.valid_shape) is not tuple:
            object.__setattr__(self, "valid_shape", _shape(self.valid_shape))


@dataclass(frozen=True, slots=True)
class TensorView:
    """What a distributed tensor's annotation says beyond shape and dtype: its storage layout
    (`pld.DistributedTensor[[64], pl.FP32, pl.NZ]`)."""

    layout: TensorLayout


@dataclass(frozen=True)
class DistributedTensorType(TensorType):
    """`pld.DistributedTensor[[shape], dtype]`: a tensor in a window every rank can reach
    (docs/coming-from-pypto.md, "Distributed programs"). A tensor for every op that takes one, so
    an op whose result is its tensor argument keeps the kind; `layout` is the optional third
    annotation slot.

    `window_buffer` is the buffer the tensor views (a `WindowBuffer`), which PyPTO's
    comm-collection pass fills in: None in what nanopto parses, as in a freshly parsed PyPTO
    program. It is part of the type (two tensors over different buffers differ), it is not a
    shape expression (traversals do not visit it), and an annotation does not spell it: the
    printer shows it only with `explicit_layout=True`, as a `"window_buffer=NAME"` marker."""

    window_buffer: WindowBuffer | None = None
    layout: TensorLayout | None = None

    @property
    def tensor_view(self) -> TensorView | None:
        """PyPTO's name for the layout slot: None when the annotation gives no layout."""
        return None if self.layout is None else TensorView(self.layout)


@dataclass(frozen=True)
class PtrType:
    """`pl.Ptr`: the handle `pld.alloc_window_buffer(...)` returns, a raw window allocation that
    `pld.window(buf, shape, dtype=...)` views as a distributed tensor. Every handle has this one type."""


@dataclass(frozen=True)
class CommCtxType:
    """`pld.CommCtx`: the communication context of a distributed tensor, which
    `pld.rank(ctx)` and `pld.nranks(ctx)` read."""


class TileLayout(enum.Enum):
    """How a tile's elements are boxed: a `TileView`'s `blayout` (the order of the boxes) and
    `slayout` (the order inside a box; `none_box` for a flat, unboxed tile)."""

    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class CompactMode(enum.Enum):
    """Whether a partial boxed tile is stored packed to its valid region (`normal`) or as the
    whole physical box (`null`)."""

    null = "null"
    normal = "normal"


register_symbol_enum("TileLayout", TileLayout)
register_symbol_enum("CompactMode", CompactMode)


def _dims(values: Iterable[Expr | int]) -> tuple[Expr, ...]:
    return values if type(values) is tuple and not any(isinstance(v, int) for v in values) else _shape(values)


@dataclass(frozen=True, slots=True)
class TileView:
    """The layout and access pattern of a tile, `pl.TileView(blayout=pl.TileLayout.col_major, ...)`.

    Every field has a default, and a field left out reads as that default: an empty `valid_shape`
    is the whole tile, an empty `stride` the dense one, no `start_offset` none. Lists and ints are
    accepted where PyPTO accepts them (`valid_shape=[8, 16]`) and stored as tuples of Exprs.
    Whether a view says anything beyond its memory space's implicit one is `TileType`'s business.
    """

    valid_shape: tuple[Expr, ...] = ()
    stride: tuple[Expr, ...] = ()
    start_offset: Expr | None = None
    blayout: TileLayout = TileLayout.row_major
    slayout: TileLayout = TileLayout.none_box
    fractal: int = 512
    """The size of one box in bytes, not elements."""
    pad: PadValue = PadValue.null
    compact: CompactMode = CompactMode.null

    def __post_init__(self) -> None:
        object.__setattr__(self, "valid_shape", _dims(self.valid_shape))
        object.__setattr__(self, "stride", _dims(self.stride))
        if isinstance(self.start_offset, int):
            object.__setattr__(self, "start_offset", _dimension(self.start_offset))

    def non_default_fields(self) -> tuple[str, ...]:
        """The names of the fields that differ from `TileView()`'s, in declaration order."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name) != getattr(_DEFAULT_VIEW, f.name))


_DEFAULT_VIEW = TileView()

_ACC_FRACTAL = 1024
"""The accumulator is boxed 16 x 16 four-byte elements, 1024 bytes a box."""


def implicit_tile_view(shape: Sequence[Expr], memory_space: MemorySpace | None) -> TileView:
    """The view a tile has when its annotation gives none: the layout its memory space imposes.

    The matrix-engine buffers are boxed (Mat and Left column-major boxes of row-major boxes, Right
    the transpose inside, Acc like Mat with 1024-byte boxes); the flat spaces (Vec, Bias, DDR) and
    a tile without a space are unboxed, and there a static column `[n, 1]` (n > 1) is column-major.
    """
    rows, cols = (_constant(shape[0]), _constant(shape[1])) if len(shape) == 2 else (None, None)
    column = rows is not None and cols is not None and cols == 1 and rows > 1
    flat = TileLayout.col_major if column else TileLayout.row_major
    match memory_space:
        case MemorySpace.Mat | MemorySpace.Left:
            return TileView(blayout=TileLayout.col_major, slayout=TileLayout.row_major)
        case MemorySpace.Right:
            return TileView(blayout=flat, slayout=TileLayout.col_major)
        case MemorySpace.Acc:
            return TileView(blayout=TileLayout.col_major, slayout=TileLayout.row_major, fractal=_ACC_FRACTAL)
        case _:
            return TileView(blayout=flat)


@dataclass(frozen=True, slots=True, init=False)
class MemRef:
    """Where a tile's storage is: an allocation (`name`), a byte offset in it and a size in bytes.

    Built as PyPTO builds one: `MemRef("mem_vec_0", 0, 512)`, or in the older form
    `MemRef(MemorySpace.Vec, addr, size, id)`, which names the allocation `mem_vec_<id>`.
    Printed in a tile annotation as `pl.MemRef("mem_vec_0", 0, 512)`.
    """

    name: str
    byte_offset: Expr
    size: int

    def __init__(self, name: str | MemorySpace, byte_offset: Expr | int, size: int, id: int | None = None) -> None:
        if isinstance(name, MemorySpace):
            name = f"mem_{name.name.lower()}_{0 if id is None else id}"
        elif id is not None:
            raise TypeError("MemRef(name, byte_offset, size) takes no id; MemRef(space, addr, size, id) does")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "byte_offset", _dimension(byte_offset) if isinstance(byte_offset, int) else byte_offset)
        object.__setattr__(self, "size", int(size))

    @property
    def name_hint(self) -> str:
        """PyPTO's name for the allocation's name."""
        return self.name


@dataclass(frozen=True, slots=True, init=False)
class TileType:
    """`pl.Tile[shape, dtype, <memref>, <space>, <view>]`: a tile, where it lives and how it is laid out.

    Built positionally as PyPTO builds it, `TileType(shape, dtype, memref, tile_view, memory_space)`;
    `TileType(shape, dtype, MemorySpace.Vec)` (a space in the memref's place) is nanopto's short
    form for a tile with a space and nothing else. The view is canonical: a `valid_shape` equal
    to the shape is dropped, and a view equal to the memory space's implicit one
    (`implicit_tile_view`) is stored as None, so two spellings of one layout compare equal.
    """

    shape: tuple[Expr, ...]
    dtype: DataType
    memref: MemRef | None
    tile_view: TileView | None
    memory_space: MemorySpace | None

    def __init__(
        self,
        shape: Iterable[Expr | int],
        dtype: DataType,
        memref: MemRef | MemorySpace | None = None,
        tile_view: TileView | None = None,
        memory_space: MemorySpace | None = None,
    ) -> None:
        if isinstance(memref, MemorySpace):
            if memory_space is not None:
                raise TypeError("TileType got two memory spaces: give it once, as memory_space")
            memref, memory_space = None, memref
        if memref is not None and memory_space is None:
            raise ValueError("a tile with a MemRef needs its memory space: TileType(shape, dtype, memref, view, space)")
        dims = shape if type(shape) is tuple else _shape(shape)
        object.__setattr__(self, "shape", dims)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "memref", memref)
        object.__setattr__(self, "tile_view", _canonical_view(tile_view, dims, memory_space))
        object.__setattr__(self, "memory_space", memory_space)

    @property
    def memory(self) -> MemorySpace | None:
        """The memory space (`memory_space`)."""
        return self.memory_space

    @property
    def effective_tile_view(self) -> TileView:
        """The view the tile really has: its own, or its memory space's implicit one."""
        return implicit_tile_view(self.shape, self.memory_space) if self.tile_view is None else self.tile_view

    def get_effective_tile_view(self) -> TileView:
        """`effective_tile_view` by PyPTO's name."""
        return self.effective_tile_view


def _same_dims(a: tuple[Expr, ...], b: tuple[Expr, ...]) -> bool:
    """Whether two dimension lists are the same: constants by value, anything else by equality."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        cx, cy = _constant(x), _constant(y)
        if (cx != cy) if cx is not None and cy is not None else x != y:
            return False
    return True


def _canonical_view(view: TileView | None, shape: tuple[Expr, ...], space: MemorySpace | None) -> TileView | None:
    if view is None:
        return None
    if view.valid_shape and _same_dims(view.valid_shape, shape):
        view = replace(view, valid_shape=())
    return None if view == implicit_tile_view(shape, space) else view


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


Type = ScalarType | TensorType | TileType | ArrayType | TupleType | UnknownType | PtrType | CommCtxType

TYPE_DATACLASSES = (
    ScalarType,
    TensorType,
    DistributedTensorType,
    TileType,
    ArrayType,
    TupleType,
    UnknownType,
    PtrType,
    CommCtxType,
    TileView,
    MemRef,
)
"""Every dataclass a type is made of: the types, and the parts of a tile type that hold
expressions. Structural equality and serialization read them field by field."""
