"""Spliced locals take their types from their definitions (seed 000, "Derive locals ...")."""

from __future__ import annotations

import textwrap

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import walk

SOURCE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def accumulate(self, x, n):
        y = pl.add(x, x)
        for i, (acc,) in pl.range(n, init_values=(y,)):
            nxt = pl.add(acc, x)
            acc_out = pl.yield_(nxt)
        if n > 1:
            r = pl.yield_(acc_out)
        else:
            r = pl.yield_(y)
        return r

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], k: pl.Scalar[pl.INDEX]):
        z = self.accumulate(a, k)
        return z
"""

TENSOR = "pl.Tensor[[4], pl.FP32]"


def _types(program: ir.Program) -> dict[str, str]:
    return {
        node.name: ir.python_print(node.type)  # type: ignore[arg-type]
        for node in walk(program.functions["main"].body)
        if isinstance(node, ir.Var)
    }


def test_unannotated_helper_locals_take_the_callers_types() -> None:
    before = parse_program(textwrap.dedent(SOURCE))
    assert isinstance(before.functions["accumulate"].param_list[0].var.type, ir.UnknownType)
    types = _types(passes.inline_functions()(before))
    local = {name: ty for name, ty in types.items() if "_inline" in name}
    assert local["y_inline0"] == TENSOR  # first assignment: pl.add of the caller's tensor
    carry = next(name for name in local if name.startswith("acc_inline"))
    assert local[carry] == TENSOR  # the loop carry: its actual initialiser
    result = next(name for name in local if name.startswith("acc_out_inline"))
    assert local[result] == TENSOR  # the loop result: the carry
    merged = next(name for name in local if name.startswith("r_inline"))
    assert local[merged] == TENSOR  # the if result: the yielded values
    assert types["z"] == TENSOR  # the receiver


def test_a_receiver_typed_by_the_helpers_declared_return_keeps_it_when_printed() -> None:
    """The helper declares `[8]` and returns a `[16]` value: the receiver keeps the declared type,
    and its assignment prints it, so the output reads back as the same program."""
    before = parse_program(
        textwrap.dedent(
            """
            import nanopto.language as pl

            @pl.program
            class P:
                @pl.function(type=pl.FunctionType.Inline)
                def scaled(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
                    y = pl.mul(x, x)
                    return y

                @pl.function
                def main(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
                    b = self.scaled(a)
                    return b
            """
        )
    )
    expected = parse_program(
        textwrap.dedent(
            """
            import nanopto.language as pl

            @pl.program
            class P:
                @pl.function
                def main(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
                    y_inline0 = pl.mul(a, a)
                    b: pl.Tensor[[8], pl.FP32] = y_inline0
                    return b
            """
        )
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, expected, enable_auto_mapping=True)
    ir.assert_structural_equal(parse_program(ir.python_print(after)), after, enable_auto_mapping=True)
    assert "b: pl.Tensor[[8], pl.FP32] = y_inline0" in ir.python_print(after)
