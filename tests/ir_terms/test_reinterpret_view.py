"""`pl.reinterpret_view(t, dtype, shape=None)` (also `pl.tensor.` / `pl.tile.`): the same bytes read
as another dtype. Its result type, its printed form reading back, and its meaning in the reference
interpreter: a view whose bytes are the source's."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms.op_memory import memory_spec
from nanopto.ir_terms.ops import OPS, OpError
from nanopto.verify import interpret

SOURCE = """
import nanopto.language as pl

@pl.program
class Views:
    @pl.function
    def main(self, data: pl.Tensor[[2, 4], pl.FP32]) -> pl.Tensor[[2, 4], pl.FP32]:
        halves = pl.reinterpret_view(data, pl.INT16)
        square = pl.tensor.reinterpret_view(data, pl.INT16, shape=[4, 4])
        one = pl.const(1, pl.INT16)
        halves = pl.write(halves, [0, 0], one)
        return data
"""


def _program(source: str = SOURCE) -> ir.Program:
    program = pl.parse_program(source)
    assert isinstance(program, ir.Program)
    return program


def test_the_last_axis_scales_by_the_element_sizes_unless_a_shape_is_given() -> None:
    stmts = _program().functions["main"].body.stmts
    ir.assert_structural_equal(stmts[0].var.type, ir.TensorType([2, 8], ir.DataType.INT16))
    ir.assert_structural_equal(stmts[1].var.type, ir.TensorType([4, 4], ir.DataType.INT16))
    tile = ir.TileType([16, 16], ir.DataType.FP16, ir.MemorySpace.Vec)
    call = ir.create_op_call("tile.reinterpret_view", [ir.Var("t", tile), ir.Symbol("pl.FP32")], {})
    ir.assert_structural_equal(call.type, ir.TileType([16, 8], ir.DataType.FP32, ir.MemorySpace.Vec))
    odd = ir.create_op_call("reinterpret_view", [ir.Var("t", ir.TensorType([3], ir.DataType.INT8)), ir.Symbol("pl.INT16")], {})
    assert isinstance(odd.type, ir.UnknownType)  # 3 bytes are not whole INT16s
    spec = memory_spec("tile.reinterpret_view")  # a view: its tile lives where its source does
    assert spec is not None and spec.inherits_input


def test_it_prints_as_written_and_reads_back() -> None:
    program = _program()
    text = ir.python_print(program)
    assert "halves = pl.reinterpret_view(data, pl.INT16)" in text
    assert "square = pl.tensor.reinterpret_view(data, pl.INT16, shape=[4, 4])" in text
    ir.assert_structural_equal(_program(text), program)


def test_the_interpreter_reads_the_sources_bytes_and_writes_through_the_view() -> None:
    data = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 7.0, -1.5, 2.0]], dtype=np.float32)
    expected = data.copy()
    expected.view(np.int16)[0, 0] = 1  # the write through the view reaches the source
    np.testing.assert_array_equal(interpret(_program(), "main", data.copy()), expected)


def test_the_interpreter_refuses_a_target_it_holds_widened_and_mismatched_sizes() -> None:
    op = OPS.lookup("reinterpret_view")
    assert op is not None
    run = op.semantics
    data = np.zeros((2, 4), dtype=np.float32)
    with pytest.raises(OpError, match="BF16 widened"):
        run(None, [data, ir.DataType.BF16], {})  # type: ignore[arg-type]
    with pytest.raises(OpError, match="the sizes differ"):
        run(None, [data, ir.DataType.INT16, [3, 4]], {})  # type: ignore[arg-type]


def test_every_dtype_knows_its_width_in_bits() -> None:
    widths = {ir.DataType.INT4: 4, ir.DataType.BOOL: 8, ir.DataType.BF16: 16, ir.DataType.UINT32: 32, ir.DataType.INDEX: 64}
    assert {dtype: dtype.bits for dtype in widths} == widths
    assert all(dtype.bits in (4, 8, 16, 32, 64) for dtype in ir.DataType)
