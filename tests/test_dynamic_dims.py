"""Symbolic dimensions bind per call site (seed 000, "Bind dynamic symbols ...")."""

from __future__ import annotations

import textwrap

import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining.call_sites import InlineError

SOURCE = """
import nanopto.language as pl
N = pl.dynamic("N")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def double(self, x: pl.Tensor[[N, 4], pl.FP32]) -> pl.Tensor[[N, 4], pl.FP32]:
        y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.Inline)
    def both(self, x: pl.Tensor[[N, 4], pl.FP32], p: pl.Tensor[[N, 4], pl.FP32]) -> pl.Tensor[[N, 4], pl.FP32]:
        y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)
        return y

    @pl.function
    def main(self, a: pl.Tensor[[8, 4], pl.FP32], b: pl.Tensor[[16, 4], pl.FP32]) -> pl.Tensor[[8, 4], pl.FP32]:
        r = self.double(a)
        t = self.double(b)
        s = self.both(a, b)
        return r
"""


def _local_shapes(program: ir.Program) -> dict[str, str]:
    main = program.functions["main"]
    return {
        s.var.name: ir.python_print(s.var.type)  # type: ignore[arg-type]
        for s in main.body.stmts  # type: ignore[attr-defined]
        if isinstance(s, ir.AssignStmt) and s.var.name.startswith("y_")
    }


def test_each_site_binds_the_symbol_to_its_own_argument_extent() -> None:
    after = passes.inline_functions()(parse_program(textwrap.dedent(SOURCE)))
    shapes = _local_shapes(after)
    assert shapes["y_inline0"] == "pl.Tensor[[8, 4], pl.FP32]"
    assert shapes["y_inline1"] == "pl.Tensor[[16, 4], pl.FP32]"


def test_disagreeing_arguments_do_not_equate_a_shared_placeholder() -> None:
    """`both(a, b)` binds N to 8 and to 16: no global binding; `y = pl.add(x, x)` takes its extent
    from its own operand (x is a: [8, 4])."""
    after = passes.inline_functions()(parse_program(textwrap.dedent(SOURCE)))
    assert _local_shapes(after)["y_inline2"] == "pl.Tensor[[8, 4], pl.FP32]"


def test_an_unresolvable_callee_only_dimension_is_rejected() -> None:
    source = SOURCE.replace(
        "y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)\n        return y\n\n    @pl.function\n",
        "y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)\n        return y\n\n    @pl.function\n",
    ).replace(
        "def both(self, x: pl.Tensor[[N, 4], pl.FP32], p: pl.Tensor[[N, 4], pl.FP32]) -> pl.Tensor[[N, 4], pl.FP32]:\n"
        "        y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)",
        "def both(self, x: pl.Tensor[[N, 4], pl.FP32], p: pl.Tensor[[N, 4], pl.FP32]) -> pl.Tensor[[N, 4], pl.FP32]:\n"
        "        y: pl.Tensor[[N, 4], pl.FP32] = pl.create_tensor([N, 4], dtype=pl.FP32)",
    )
    assert "create_tensor([N, 4]" in source
    with pytest.raises(InlineError, match=r"has dimension 'N', which the call's arguments bind to different extents"):
        passes.inline_functions()(parse_program(textwrap.dedent(source)))
