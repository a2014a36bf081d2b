"""The hardware system ops (`pl.system.sync_set`, `fence`, `cacheinvalid`, `syncall`, the
cross-core pipe ops): printed as PyPTO prints them, read back to the same IR, their argument rules
checked where they are written, and what the one-core reference interpreter makes of them."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms import system_ops
from nanopto.verify import InterpreterError, interpret

SOURCE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def main(self, x: pl.Tensor[[4, 4], pl.FP32], ws: pl.Tensor[[16], pl.INT32], e: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 4], pl.FP32]:
        pl.system.sync_set(event_id=3, pipe=pl.PipeType.MTE3, ffts_mode=1)
        pl.system.sync_wait(e, pipe=pl.PipeType.MTE2)
        pl.system.fence()
        pl.system.cacheinvalid(x, [4, 4], [0, 0])
        pl.system.syncall()
        pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=0)
        pl.aiv_initialize_pipe(dir_mask=2, slot_size=512)
        n = pl.system.available_aiv_count()
        y = pl.tensor.muls(x, n)
        return y
"""


def _program(source: str) -> ir.Program:
    program = pl.parse_program(source)
    assert isinstance(program, ir.Program)
    return program


def test_system_ops_print_as_pypto_prints_them_and_read_back() -> None:
    program = _program(SOURCE)
    text = ir.python_print(program)
    for line in (
        "pl.system.sync_set(pipe=pl.PipeType.MTE3, event_id=3, ffts_mode=1)",
        "pl.system.sync_wait(e, pipe=pl.PipeType.MTE2)",
        'pl.system.syncall(core_type="mix")',
        'pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=0)',
        "pl.system.aiv_initialize_pipe(dir_mask=2, slot_size=512)",
    ):
        assert line in text
    ir.assert_structural_equal(program, _program(text))


def test_on_one_core_an_ordering_op_has_no_effect() -> None:
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    result = interpret(_program(SOURCE), "main", x, np.zeros(16, np.int32), 3)
    np.testing.assert_array_equal(result, x)


def test_a_pop_from_the_other_core_is_not_interpretable() -> None:
    program = _program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def main(self) -> pl.Tile[[64], pl.FP32]:
        received: pl.Tile[[64], pl.FP32] = pl.tpop_from_aic()
        return received
"""
    )
    assert "pl.tile.tpop_from_aic()" in ir.python_print(program)
    with pytest.raises(InterpreterError, match="tpop_from_aic receives from another core"):
        interpret(program, "main")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('pl.system.syncall(core_type="bogus")', "core_type"),
        ('pl.system.syncall(mode="soft", core_type="mix", used_cores=4)', "gm_workspace"),
        ("pl.system.cacheinvalid(shapes=[1])", "whole-GM form takes no shapes/offsets"),
    ],
)
def test_a_broken_argument_rule_is_refused_where_it_is_written(call: str, message: str) -> None:
    with pytest.raises(ir.ParserTypeError, match=message):
        _program(SOURCE.replace("pl.system.fence()", call))


def test_the_rules_hold_when_called_from_python_and_in_the_builders() -> None:
    with pytest.raises(ValueError, match="explicit used_cores"):
        pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=object())
    tensor = ir.Var("x", ir.TensorType([16, 16], ir.DataType.FP32))
    with pytest.raises(ValueError, match="offsets must match tensor rank 2"):
        system_ops.cacheinvalid(tensor, [1, 1], [0])
    with pytest.raises(TypeError, match="offsets must be integers"):
        system_ops.cacheinvalid(tensor, [1, 1], [0, 3.5])
    count = ir.ConstInt(1 << 31, ir.DataType.INT32)
    with pytest.raises(ValueError, match="INT32 range"):
        system_ops.syncall_soft("aiv_only", tensor, count)
    assert system_ops.available_cluster_count().type == ir.ScalarType(ir.DataType.INT32)
