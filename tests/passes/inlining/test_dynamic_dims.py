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


_UNREAD_COMPUTED_ARGUMENT = """\
import nanopto.language as pl

N = pl.dynamic("N")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h(self, x: pl.Tensor[[4], pl.FP32], t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
        return x

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y = self.h(a, a)
{last}
"""


@pytest.mark.parametrize(
    "last",
    ["return self.h(a, pl.add(a, y))", "z = self.h(a, pl.add(a, y))\nreturn z"],
    ids=["return", "assign"],
)
def test_a_computed_argument_the_helper_never_reads_is_evaluated_once(last: str) -> None:
    """Found by fuzzing: `y`'s type is derived afresh after inlining (`[N]` becomes `[4]`), and
    the rebinding checker, which keyed expressions by every Var below them, types included, took
    the caller's `pl.add(a, y)` for another expression and counted 0 evaluations."""
    import numpy as np

    from nanopto.passes.inlining import inline_program
    from nanopto.verify.interpreter import interpret, values_equal

    source = _UNREAD_COMPUTED_ARGUMENT.format(last=textwrap.indent(last, " " * 8))
    before = parse_program(source, "unread.py")
    result = inline_program(before)
    text = ir.python_print(result.program)
    assert text.count("pl.add(a, y)") == 1
    assert "t_inline0: pl.Tensor[[4], pl.FP32] = pl.add(a, y)" in text
    [site] = [s for s in result.sites if s.number == 1]
    assert [b.bind_local for b in site.bindings] == [False, True]
    a = np.arange(4, dtype=np.float32)
    assert values_equal(interpret(before, "main", a), interpret(result.program, "main", a))
