"""Structural comparison as PyPTO users expect it: names are labels, not structure."""

from __future__ import annotations

import pytest

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


IDX = ir.ScalarType(ir.DataType.INDEX)


def test_a_var_read_before_it_is_defined_is_free() -> None:
    # `if p < q: p = q`: the condition reads p and q before the branch assigns p, so both are
    # free where they are first met, and without auto-mapping free Vars must be the very same.
    def guarded(p: ir.Var, q: ir.Var) -> ir.IfStmt:
        return ir.IfStmt(ir.Lt(p, q, None), ir.AssignStmt(p, q), None, [])

    p, q, r, s = (ir.Var(name, IDX) for name in "pqrs")
    assert not ir.structural_equal(guarded(p, q), guarded(r, s))
    assert ir.structural_equal(guarded(p, q), guarded(r, s), enable_auto_mapping=True)
    assert ir.structural_equal(guarded(p, q), guarded(p, q))
    assert ir.structural_hash(guarded(p, q)) != ir.structural_hash(guarded(r, s))
    auto = {"enable_auto_mapping": True}
    assert ir.structural_hash(guarded(p, q), **auto) == ir.structural_hash(guarded(r, s), **auto)


def test_a_defined_var_is_renamed_with_its_type() -> None:
    # The type of a defined Var is compared under the definition: its dynamic extent maps too.
    def sized(extent: ir.Var) -> ir.AssignStmt:
        held = ir.Var("held", ir.TensorType([extent], ir.DataType.FP16))
        return ir.AssignStmt(held, extent)

    first, second = ir.Var("n", IDX), ir.Var("m", IDX)
    ir.assert_structural_equal(sized(first), sized(second))
    assert ir.structural_hash(sized(first)) == ir.structural_hash(sized(second))


def test_a_while_condition_reads_the_carried_vars() -> None:
    def countdown() -> ir.WhileStmt:
        left = ir.IterArg("left", IDX, ir.ConstInt(3, ir.DataType.INDEX))
        done = ir.Var("done", IDX)
        step = ir.YieldStmt([ir.Sub(left, ir.ConstInt(1, ir.DataType.INDEX), None)])
        return ir.WhileStmt(ir.Gt(left, ir.ConstInt(0, ir.DataType.INDEX), None), [left], step, [done])

    ir.assert_structural_equal(countdown(), countdown())
    assert ir.structural_hash(countdown()) == ir.structural_hash(countdown())


def test_standalone_vars_compare_as_themselves_by_default() -> None:
    one, other = ir.IterArg("it", IDX, ir.ConstInt(0)), ir.IterArg("it", IDX, ir.ConstInt(0))
    assert ir.structural_equal(one, one) and not ir.structural_equal(one, other)
    assert ir.structural_hash(one) != ir.structural_hash(other)
    assert ir.structural_equal(one, other, enable_auto_mapping=True)


def test_an_enum_field_names_its_enum_in_the_mismatch() -> None:
    i = ir.Var("i", IDX)
    body = ir.AssignStmt(ir.Var("t", IDX), i)
    bounds = (ir.ConstInt(0), ir.ConstInt(4), ir.ConstInt(1))
    serial = ir.ForStmt(i, *bounds, [], body, [], None, ir.ForKind.Sequential)
    unrolled = ir.ForStmt(i, *bounds, [], body, [], None, ir.ForKind.Unroll)
    with pytest.raises(ValueError, match=r"ForKind mismatch \(Sequential != Unroll\)"):
        ir.assert_structural_equal(serial, unrolled)
