"""A spliced `pl.add`/`sub`/`mul`/`div` whose operands became scalars is read as the scalar
operator, as the parser reads it (docs/specification.md, "Derive locals"; the `subst-scalar-*`
rules), so the printed output parses back to the program the pass produced."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.verify.interpreter import interpret, values_equal

HELPERS = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def combine(self, x, y):
        s = pl.{op}(x, y)
        return pl.{op}(s, y) + s
"""


def _program(body: str, op: str) -> ir.Program:
    return parse_program(textwrap.dedent(HELPERS.format(op=op) + textwrap.indent(textwrap.dedent(body), "    ")))


@pytest.mark.parametrize(("op", "symbol"), [("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/")])
def test_an_op_on_two_spliced_scalars_is_the_scalar_operator(op: str, symbol: str) -> None:
    before = _program(
        """
        @pl.function
        def main(self, k: pl.Scalar[pl.FP32], m: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
            r = self.combine(k, m)
            return r
        """,
        op,
    )
    expected = parse_program(
        textwrap.dedent(f"""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def main(self, k: pl.Scalar[pl.FP32], m: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
                s_inline0 = k {symbol} m
                r = s_inline0 {symbol} m + s_inline0
                return r
        """)
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, expected)
    ir.assert_structural_equal(parse_program(ir.python_print(after)), after)
    args = (np.float32(6.0), np.float32(2.0))
    assert values_equal(interpret(after, "main", *args), interpret(before, "main", *args))


def test_an_op_on_a_spliced_tensor_stays_the_op() -> None:
    before = _program(
        """
        @pl.function
        def main(self, t: pl.Tensor[[4], pl.FP32], m: pl.Scalar[pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            r = self.combine(t, m)
            return r
        """,
        "mul",
    )
    expected = parse_program(
        textwrap.dedent("""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def main(self, t: pl.Tensor[[4], pl.FP32], m: pl.Scalar[pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                s_inline0 = pl.mul(t, m)
                r = pl.mul(s_inline0, m) + s_inline0
                return r
        """)
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, expected)
    ir.assert_structural_equal(parse_program(ir.python_print(after)), after)
