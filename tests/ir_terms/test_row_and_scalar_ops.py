"""The row reductions (`pl.row_max`, `pl.row_min`, `pl.row_sum`) and PyPTO's tensor-scalar
spellings (`pl.tensor.adds`, `.subs`, `.muls`, `.divs`): their result types and their meaning in
the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.verify import interpret

SOURCE = """
import nanopto.language as pl

@pl.program
class Rows:
    @pl.function
    def main(self, a: pl.Tensor[[2, 3], pl.FP32]) -> pl.Tensor[[2, 1], pl.FP32]:
        hi = pl.row_max(a)
        lo = pl.tile.row_min(a)
        total = pl.tensor.row_sum(a)
        twice = pl.tensor.muls(total, 2.0)
        shifted = pl.tensor.adds(hi, 1.0)
        less = pl.tensor.subs(shifted, 0.5)
        half = pl.tensor.divs(lo, 2.0)
        out = pl.add(pl.add(twice, less), half)
        return out
"""


def test_a_row_reduction_keeps_each_row_as_one_column() -> None:
    program = pl.parse(SOURCE)
    assert isinstance(program, ir.Program)
    main = program.functions["main"]
    first = main.body.stmts[0]
    assert isinstance(first, ir.AssignStmt)
    ir.assert_structural_equal(first.var.type, ir.TensorType([2, 1], ir.DataType.FP32))


def test_the_interpreter_reduces_each_row_and_applies_the_scalar() -> None:
    program = pl.parse(SOURCE)
    assert isinstance(program, ir.Program)
    a = np.array([[1.0, 5.0, 3.0], [-2.0, 0.0, 4.0]], dtype=np.float32)
    expected = 2 * a.sum(axis=1, keepdims=True) + (a.max(axis=1, keepdims=True) + 0.5) + a.min(axis=1, keepdims=True) / 2
    np.testing.assert_allclose(interpret(program, "main", a), expected, rtol=1e-6)


def test_a_row_reduction_of_a_scalar_is_refused() -> None:
    source = SOURCE.replace("pl.Tensor[[2, 3], pl.FP32]) ->", "pl.Scalar[pl.FP32]) ->")
    program = pl.parse(source)
    assert isinstance(program, ir.Program)
    with pytest.raises(Exception, match="row reduction"):
        interpret(program, "main", 1.0)
