"""The teaching hook that plants a wrong binding policy (nanopto.tools.planting)."""

from __future__ import annotations

import pytest

from nanopto import ir, passes
from nanopto.passes.inlining import inline_program
from nanopto.tools.planting import inline_with_policy, never_bind, splice_unchecked
from nanopto.verify import RebindingCheckError
from nanopto.verify.interpreter import interpret

BUMP = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def bump(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        n = n + 1
        return n

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m: pl.Scalar[pl.INDEX] = self.bump(k)
        return k + m
"""

WRONG = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = k + 1
        m: pl.Scalar[pl.INDEX] = k
        return k + m
"""


def test_splice_unchecked_with_the_wrong_policy_emits_the_2k_plus_2_program() -> None:
    program = ir.parse_program(BUMP)
    wrong = splice_unchecked(program, never_bind)
    ir.assert_structural_equal(wrong, ir.parse_program(WRONG))
    assert interpret(program, "main", 5) == 11 and interpret(wrong, "main", 5) == 12


def test_splice_unchecked_with_the_real_policy_matches_the_pass() -> None:
    from nanopto.passes.inlining.call_sites import bind_argument

    program = ir.parse_program(BUMP)
    ir.assert_structural_equal(splice_unchecked(program, bind_argument), passes.inline_functions()(program))


def test_the_planted_policy_is_caught_by_the_checker_and_touches_nothing_else() -> None:
    program = ir.parse_program(BUMP)
    with pytest.raises(RebindingCheckError, match="caller's Var 'k'"):
        inline_with_policy(program, never_bind)
    assert interpret(inline_program(program).program, "main", 5) == 11


def test_splice_unchecked_runs_the_stages_of_helpers_calling_helpers() -> None:
    """The planting hook is the pass's own driver, so nested helpers are spliced callee-first."""
    nested = BUMP.replace("n = n + 1", "n = self.bump2(n)").replace(
        "    @pl.function\n    def main",
        "    @pl.function(type=pl.FunctionType.Inline)\n    def bump2(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        n = n + 1\n        return n\n\n    @pl.function\n    def main",
    )
    program = ir.parse_program(nested)
    assert interpret(program, "main", 5) == 11
    assert interpret(splice_unchecked(program, never_bind), "main", 5) == 12


def test_inline_with_policy_runs_the_whole_pass_with_the_policy() -> None:
    from nanopto.passes.inlining.call_sites import bind_argument

    program = ir.parse_program(BUMP)
    ir.assert_structural_equal(inline_with_policy(program, bind_argument), passes.inline_functions()(program))
    with pytest.raises(RebindingCheckError, match="caller's Var 'k'"):
        inline_with_policy(program, never_bind)
