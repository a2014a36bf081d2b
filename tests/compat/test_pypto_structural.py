"""Structural comparison as PyPTO users expect it: names are labels, not structure."""

from __future__ import annotations

import nanopto.language as pl
from nanopto import ir


def test_before_and_expected_classes_compare_equal() -> None:
    @pl.program
    class Before:
        @pl.function
        def main(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
            b: pl.Tensor[[8], pl.FP32] = pl.add(a, a)
            return b

    @pl.program
    class Expected:
        @pl.function
        def main(self, q: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
            r: pl.Tensor[[8], pl.FP32] = pl.add(q, q)
            return r

    assert Before.name != Expected.name
    ir.assert_structural_equal(Before, Expected)
    assert ir.structural_hash(Before) == ir.structural_hash(Expected)


def test_a_different_body_still_differs() -> None:
    @pl.program
    class Left:
        @pl.function
        def main(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
            b: pl.Tensor[[8], pl.FP32] = pl.add(a, a)
            return b

    @pl.program
    class Right:
        @pl.function
        def main(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
            b: pl.Tensor[[8], pl.FP32] = pl.mul(a, a)
            return b

    assert not ir.structural_equal(Left, Right)
