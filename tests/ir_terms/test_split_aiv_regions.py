"""`for aiv_id in pl.split_aiv(2, mode=...)`: the region binds its lane first, sits in the InCore
scope the parser adds outside a core context, stamps its split on `pl.aiv_shard` /
`pl.aic_gather`, prints back as the loop it was written as, inlines like any statement, and runs
lane 0 in the reference interpreter (docs/specification.md, "Statement forms")."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir, passes
from nanopto.verify import InterpreterError, interpret

SOURCE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 4], pl.FP32]]) -> pl.Tensor[[2, 4], pl.FP32]:
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            t: pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [4, 4])
            half = pl.aiv_shard(t)
            out = pl.store(half, [aiv_id, 0], out)
        return out
"""


def _program(source: str) -> ir.Program:
    program = pl.parse_program(source)
    assert isinstance(program, ir.Program)
    return program


def test_the_region_binds_its_lane_inside_the_incore_scope_the_parser_adds() -> None:
    wrapper = _program(SOURCE).functions["main"].body.stmts[0]
    assert isinstance(wrapper, ir.InCoreScopeStmt)
    region = wrapper.body.stmts[0]
    assert isinstance(region, ir.SplitAivScopeStmt) and region.split is ir.SplitMode.UP_DOWN
    assert region.body.stmts[0].value.op.name == "tile.get_subblock_idx"
    shard = region.body.stmts[2].value
    assert shard.op.name == "tile.aiv_shard" and shard.kwargs["split"] == 1
    ir.assert_structural_equal(shard.type, ir.TileType([2, 4], ir.DataType.FP32, ir.MemorySpace.Vec))


def test_it_prints_as_the_loop_it_was_written_as_and_reads_back() -> None:
    program = _program(SOURCE)
    text = ir.python_print(program)
    assert "for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):" in text
    assert "pl.aiv_shard(t)" in text or "pl.tile.aiv_shard(t)" in text
    assert "split=" not in text and "with pl.at" not in text and "get_subblock_idx" not in text
    ir.assert_structural_equal(program, _program(text))


def test_the_interpreter_runs_lane_zero() -> None:
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = interpret(_program(SOURCE), "main", a, np.zeros((2, 4), np.float32))
    np.testing.assert_array_equal(out, a[:2])
    gather = _program(SOURCE.replace("pl.aiv_shard(t)", "pl.aic_gather(t)").replace("[2, 4]", "[8, 4]"))
    with pytest.raises(InterpreterError, match="runs one lane"):
        interpret(gather, "main", a, np.zeros((8, 4), np.float32))


def test_a_helper_with_a_region_inlines_the_region_and_its_lane() -> None:
    before = _program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def halves(self, a: pl.Tensor[[4, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 4], pl.FP32]]) -> pl.Tensor[[2, 4], pl.FP32]:
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            t: pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [4, 4])
            out = pl.store(pl.aiv_shard(t), [lane, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 4], pl.FP32], o: pl.Out[pl.Tensor[[2, 4], pl.FP32]]) -> pl.Tensor[[2, 4], pl.FP32]:
        o = self.halves(x, o)
        return o
"""
    )
    expected = _program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 4], pl.FP32], o: pl.Out[pl.Tensor[[2, 4], pl.FP32]]) -> pl.Tensor[[2, 4], pl.FP32]:
        for lane_inline0 in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            t_inline0: pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [4, 4])
            o = pl.store(pl.aiv_shard(t_inline0), [lane_inline0, 0], o)
        return o
"""
    )
    ir.assert_structural_equal(passes.inline_functions()(before), expected)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("for aiv_id in pl.split_aiv(4, mode=pl.SplitMode.UP_DOWN):", "requires n == 2"),
        ("for aiv_id in pl.split_aiv(2):", "requires mode="),
        ("for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN, init_values=(0,)):", "does not accept 'init_values='"),
    ],
)
def test_a_malformed_region_is_refused_at_its_header(header: str, message: str) -> None:
    source = SOURCE.replace("for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):", header)
    with pytest.raises(ir.ParserSyntaxError, match=message):
        _program(source)


def test_a_shard_outside_a_region_has_no_mode_to_inherit() -> None:
    source = SOURCE.replace("for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):", "with pl.at(level=pl.Level.CORE_GROUP):")
    source = source.replace("[aiv_id, 0]", "[0, 0]")
    with pytest.raises(ir.ParserSyntaxError, match=r"outside a pl\.split_aiv region"):
        _program(source)
