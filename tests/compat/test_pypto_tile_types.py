"""PyPTO's tile-type API: `ir.TileType(shape, dtype, memref, tile_view, memory_space)`,
`ir.TileView`, `ir.TileLayout`, `ir.MemRef`, `ir.Mem`, `python_print(..., explicit_layout=True)`,
and the `atomic=` keyword of a store as `pl.AtomicType`."""

from __future__ import annotations

import numpy as np

import nanopto.language as pl
from nanopto import ir
from nanopto.verify.interpreter import interpret

SPAN = ir.Span.unknown()
HEAD = "import nanopto.language as pl\n"


def test_the_names_are_where_pypto_has_them() -> None:
    for name in ("TileView", "TileLayout", "PadValue", "CompactMode", "MemRef", "AtomicType", "Mem"):
        assert name in ir.__all__ and hasattr(ir, name)
    for name in ("TileView", "TileLayout", "PadValue", "CompactMode", "MemRef", "AtomicType"):
        assert getattr(pl, name) is getattr(ir, name)
    assert ir.Mem is ir.MemorySpace
    assert [m.name for m in ir.TileLayout] == ["none_box", "row_major", "col_major"]
    assert (int(ir.AtomicType.None_), int(ir.AtomicType.Add)) == (0, 1)


def test_an_attribute_value_reads_as_the_layout_enum_member_it_names() -> None:
    members = [ir.TileLayout.col_major, ir.CompactMode.normal, ir.AtomicType.Add, ir.PadValue.zero]
    call = ir.Call(ir.Op("tile.store"), [], attr_items={f"k{i}": m for i, m in enumerate(members)})
    assert list(call.attrs.values()) == members


def test_pypto_builds_a_tile_type_positionally() -> None:
    dims = [ir.ConstInt(32, ir.DataType.INDEX, SPAN)] * 2
    memref = ir.MemRef("mem_left_0", 0, 2048)
    view = ir.TileView(valid_shape=[16, 32], stride=[1, 32], start_offset=0)
    ty = ir.TileType(dims, ir.DataType.FP16, memref, view, ir.Mem.Left)
    assert (ty.memref, ty.memory_space) == (memref, ir.Mem.Left)
    assert ty.tile_view == view and ty.tile_view.valid_shape == (ir.ConstInt(16), ir.ConstInt(32))
    assert ir.python_print_type(ty) == (
        'pl.Tile[[32, 32], pl.FP16, pl.MemRef("mem_left_0", 0, 2048), pl.Mem.Left, '
        "pl.TileView(valid_shape=[16, 32], stride=[1, 32], start_offset=0)]"
    )


def test_an_acc_tile_names_its_layout_only_when_asked() -> None:
    acc = ir.TileType([64, 64], ir.DataType.FP32, None, None, ir.Mem.Acc)
    boxed = ir.TileView(blayout=ir.TileLayout.col_major, slayout=ir.TileLayout.row_major, fractal=1024)
    assert ir.python_print(acc) == "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]"
    explicit = ir.python_print(acc, explicit_layout=True)
    assert explicit == f"pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc, {ir.python_print(boxed, explicit_layout=True)}]"
    assert ir.TileType([64, 64], ir.DataType.FP32, None, boxed, ir.Mem.Acc).tile_view is None


def test_explicit_layout_reaches_every_annotation_of_a_program() -> None:
    program = ir.parse_program(
        HEAD
        + """
@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 16])
        return a
"""
    )
    explicit = ir.python_print(program, explicit_layout=True)
    assert "pl.Mem.Mat, pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major, fractal=512)]" in explicit
    ir.assert_structural_equal(ir.parse_program(explicit), program)
    assert "TileView" not in ir.python_print(program)  # the keyword held for that call only


def test_a_memref_in_the_older_four_argument_form() -> None:
    memref = ir.MemRef(ir.MemorySpace.Vec, ir.ConstInt(0, ir.DataType.INDEX, SPAN), 256, 0)
    assert ir.python_print(memref) == 'pl.MemRef("mem_vec_0", 0, 256)'
    assert memref.name_hint == "mem_vec_0"


STORE = HEAD + """
@pl.program
class P:
    @pl.function
    def main(self, src: pl.Tensor[[4, 4], pl.FP32], dst: pl.InOut[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:
        t: pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec] = pl.tile.load(src, [0, 0], [4, 4])
        dst = pl.tile.store(t, [0, 0], dst, atomic=pl.AtomicType.Add)
        return dst
"""


def test_an_atomic_store_prints_its_mode_by_name() -> None:
    tile = ir.Var("tile", ir.TileType([4, 4], ir.DataType.FP32), SPAN)
    out = ir.Var("out", ir.TensorType([4, 4], ir.DataType.FP32), SPAN)
    offsets = ir.MakeTuple([ir.ConstInt(0), ir.ConstInt(0)], SPAN)
    for mode in ir.AtomicType:
        call = ir.Call(ir.Op("tile.store"), [tile, offsets, out], {"atomic": int(mode)}, SPAN)
        assert f"atomic=pl.AtomicType.{mode.name}" in call.as_python()
    built = ir.op.tile.store(tile, [0, 0], out, atomic=1)
    assert built.as_python() == "pl.tile.store(tile, [0, 0], out, atomic=pl.AtomicType.Add)"


def test_an_atomic_store_round_trips_and_adds_into_its_destination() -> None:
    program = ir.parse_program(STORE)
    text = ir.python_print(program)
    assert "atomic=pl.AtomicType.Add" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    src, dst = np.full((4, 4), 2.0, np.float32), np.full((4, 4), 1.0, np.float32)
    np.testing.assert_array_equal(interpret(program, "main", src, dst), np.full((4, 4), 3.0, np.float32))
    plain = ir.parse_program(STORE.replace(", atomic=pl.AtomicType.Add", ""))
    np.testing.assert_array_equal(interpret(plain, "main", src, np.ones((4, 4), np.float32)), src)
