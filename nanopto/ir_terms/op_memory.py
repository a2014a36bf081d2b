"""Where each builtin tile op wants its operands and puts its result: the memory specs of the ops.

Data beside the op registry (`nanopto.ir_terms.ops`), read by `infer-tile-memory-space`
(docs/architecture.md#infer-tile-memory-space). An op's `MemorySpec` says:

- `inputs`: for each constrained operand position, the spaces a tile there may live in, the
  preferred one first (a tile elsewhere is moved to the first);
- `output`: the space the result always lives in (`matmul` -> `Acc`), or None;
- `from_kwarg` / `kwarg_default`: the result lives where `target_memory=` says; without the
  keyword, `kwarg_default` (`tile.move` -> `Vec`), or, when that is None, the op is *retargetable*:
  the pass chooses the space from what the consumers demand (`tile.load`, `tile.create`);
- `inherits_input`: the result lives where its first tile operand does (views and reshapes).

An op of the registry without a spec (a distributed or system op) keeps the space its result type
names; a call of a program function or of an op the registry does not know makes a `Vec` tile.
"""

from __future__ import annotations

from dataclasses import dataclass

from nanopto.ir_terms.dtypes import MemorySpace, enum_of_symbol
from nanopto.ir_terms.nodes import Expr, Symbol
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.types import TileType, TileView, implicit_tile_view

Vec, Mat, Left, Right, Acc = MemorySpace.Vec, MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc


@dataclass(frozen=True)
class MemorySpec:
    """The memory contract of one op (see the module docstring)."""

    inputs: tuple[tuple[MemorySpace, ...], ...] = ()
    output: MemorySpace | None = None
    from_kwarg: bool = False
    kwarg_default: MemorySpace | None = None
    inherits_input: bool = False

    @property
    def retargetable(self) -> bool:
        """The pass may choose the result's space and write it into `target_memory=`."""
        return self.from_kwarg and self.kwarg_default is None

    def allowed(self, index: int) -> tuple[MemorySpace, ...]:
        """The spaces operand `index` may live in; empty when it is not constrained."""
        return self.inputs[index] if index < len(self.inputs) else ()


_VECTOR_UNIT = MemorySpec(inputs=((Vec,), (Vec,)), output=Vec)
"""An op of the vector unit: its tile operands and its result in `Vec`."""

_VIEW = MemorySpec(inherits_input=True)

_VECTOR_OPS = (
    "add", "sub", "mul", "div", "maximum", "minimum", "exp",
    "adds", "subs", "muls", "divs", "row_max", "row_min", "row_sum",
    "and", "or", "not", "cast",
)  # fmt: skip

MEMORY_SPECS: dict[str, MemorySpec] = {
    **dict.fromkeys(_VECTOR_OPS, _VECTOR_UNIT),
    "read": MemorySpec(inputs=((Vec,),)),
    "write": MemorySpec(inputs=((Vec,),), output=Vec),
    "tile.full": MemorySpec(output=Vec),
    "tile.store": MemorySpec(inputs=((Vec, Acc),)),
    "matmul": MemorySpec(inputs=((Left,), (Right,)), output=Acc),
    "matmul_acc": MemorySpec(inputs=((Acc,), (Left,), (Right,)), output=Acc),
    "tile.load": MemorySpec(from_kwarg=True),
    "tile.create": MemorySpec(from_kwarg=True),
    "tile.move": MemorySpec(from_kwarg=True, kwarg_default=Vec),
    "tile.slice": _VIEW,
    "subscript": _VIEW,
    "tile.reshape": _VIEW,
    "tile.set_validshape": _VIEW,
    "tile.assemble": _VIEW,
    "reinterpret_view": _VIEW,
}
"""Memory specs by the op's canonical registry name (`OpDef.name`)."""


def memory_spec(op: str) -> MemorySpec | None:
    """The memory spec of the op spelled `op` (any of its spellings), or None."""
    found = OPS.lookup(op)
    return None if found is None else MEMORY_SPECS.get(found.name)


def target_memory(value: Expr | None) -> MemorySpace | None:
    """The space a `target_memory=` keyword's value names, or None."""
    space = enum_of_symbol(value.path) if isinstance(value, Symbol) else None
    return space if isinstance(space, MemorySpace) else None


def retyped(tile: TileType, space: MemorySpace) -> TileType:
    """`tile` moved to `space` in place (the pass's retyping of a value): the box layout and box
    size become the new space's implicit ones; the valid region, strides, offset, padding and
    MemRef describe the data and stay. Unchanged when the space is the same."""
    if tile.memory_space is space:
        return tile
    view = tile.effective_tile_view
    layout = implicit_tile_view(tile.shape, space)
    new_view = TileView(
        valid_shape=view.valid_shape,
        stride=view.stride,
        start_offset=view.start_offset,
        blayout=layout.blayout,
        slayout=layout.slayout,
        fractal=layout.fractal,
        pad=view.pad,
        compact=view.compact,
    )
    return TileType(tile.shape, tile.dtype, tile.memref, new_view, space)
