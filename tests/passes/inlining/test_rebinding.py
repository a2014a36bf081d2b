"""The rebinding table: every row structurally, semantically (reference interpreter), and the
checker that guards it — including a deliberately wrong policy the checker must catch."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining import call_sites, inline_program
from nanopto.passes.inlining.rebinding import RebindingRow, classify_params
from nanopto.passes.inlining.steps import inline_steps
from nanopto.verify import RebindingCheckError, check_rebinding
from nanopto.verify.interpreter import interpret, values_equal


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


TWICE = pl(
    """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def twice(self, t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            t = pl.add(t, t)
            return t

        @pl.function
        def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            u = self.twice(a)
            w = pl.add(a, u)
            return w
    """
)

BUMP = pl(
    """
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
)

SELF_UPDATE = pl(
    """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def fill(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
            for i in pl.range(2):
                out = pl.tensor.assemble(out, x, [i * 4])
            return out

        @pl.function
        def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
            o = self.fill(a, o)
            return o
    """
)

ARRAY = pl(
    """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def mark(self, arr: pl.Array[4, pl.INT64], i: pl.Scalar[pl.INDEX]):
            arr[i] = 7
            return arr

        @pl.function
        def main(self, xs: pl.Array[4, pl.INT64], j: pl.Scalar[pl.INDEX]) -> pl.Array[4, pl.INT64]:
            ys = self.mark(xs, j)
            return ys
    """
)

COMPUTED = pl(
    """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def f(self, x: pl.Tensor[[4], pl.FP32], c: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            y = pl.add(x, x)
            c = pl.tensor.assemble(c, y, [0])
            return c

        @pl.function
        def main(self, a: pl.Tensor[[2, 4], pl.FP32], c: pl.Tensor[[2, 4], pl.FP32], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 4], pl.FP32]:
            z = self.f(a[r], c[r])
            return c
    """
)


@pytest.mark.parametrize(
    ("program", "helper", "rows"),
    [
        (TWICE, "twice", (RebindingRow.REBOUND_SHAPED,)),
        (BUMP, "bump", (RebindingRow.REBOUND_SCALAR,)),
        (SELF_UPDATE, "fill", (RebindingRow.READ_ONLY, RebindingRow.SELF_UPDATED_SHAPED)),
        (ARRAY, "mark", (RebindingRow.ARRAY, RebindingRow.READ_ONLY)),
        (COMPUTED, "f", (RebindingRow.READ_ONLY, RebindingRow.SELF_UPDATED_SHAPED)),
    ],
)
def test_each_parameter_lands_on_its_table_row(program: ir.Program, helper: str, rows: tuple[RebindingRow, ...]) -> None:
    assert classify_params(program.functions[helper]) == rows


def test_out_scalar_rebinds_the_callers_var() -> None:
    program = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def count(self, n: pl.Out[pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
                n = n + 1
                return n

            @pl.function
            def main(self, k: pl.Out[pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
                k = self.count(k)
                return k
        """
    )
    assert classify_params(program.functions["count"]) == (RebindingRow.OUT_SCALAR,)
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, k: pl.Out[pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
                k = k + 1
                return k
        """
    )
    ir.assert_structural_equal(passes.inline_functions()(program), expected)


def test_array_param_stays_the_callers_var() -> None:
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, xs: pl.Array[4, pl.INT64], j: pl.Scalar[pl.INDEX]) -> pl.Array[4, pl.INT64]:
                xs[j] = 7
                ys = xs
                return ys
        """
    )
    ir.assert_structural_equal(passes.inline_functions()(ARRAY), expected)


def test_self_update_in_a_loop_rebinds_the_callers_var() -> None:
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
                for i in pl.range(2):
                    o = pl.tensor.assemble(o, a, [i * 4])
                return o
        """
    )
    ir.assert_structural_equal(passes.inline_functions()(SELF_UPDATE), expected)


def _run(program: ir.Program, *args: object) -> object:
    return interpret(program, "main", *args)


@pytest.mark.parametrize(
    ("program", "make_args"),
    [
        (TWICE, lambda: (np.arange(4, dtype=np.float32),)),
        (BUMP, lambda: (5,)),
        (SELF_UPDATE, lambda: (np.arange(4, dtype=np.float32), np.zeros(8, dtype=np.float32))),
        (ARRAY, lambda: (np.zeros(4, dtype=np.int64), 2)),
        (COMPUTED, lambda: (np.arange(8, dtype=np.float32).reshape(2, 4), np.zeros((2, 4), np.float32), 1)),
    ],
)
def test_inlining_preserves_what_the_caller_computes(program: ir.Program, make_args: object) -> None:
    before_args, after_args = make_args(), make_args()  # type: ignore[operator]
    before = _run(program, *before_args)
    after = _run(passes.inline_functions()(program), *after_args)
    assert values_equal(before, after)
    for x, y in zip(before_args, after_args, strict=True):
        assert values_equal(x, y)


def test_the_traps_compute_3a_and_2k_plus_1() -> None:
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    assert values_equal(_run(passes.inline_functions()(TWICE), a.copy()), 3 * a)
    assert _run(passes.inline_functions()(BUMP), 5) == 11


def test_checker_accepts_the_pass_output() -> None:
    for program in (TWICE, BUMP, SELF_UPDATE, ARRAY, COMPUTED):
        result = inline_program(program)
        assert check_rebinding(program, result.program, result.sites, result.copies) == []
        assert check_rebinding(program, result.program, result.sites) == []  # copies found by name


def _never_bind(param: ir.Var, row: RebindingRow, actual: ir.Expr) -> tuple[bool, str]:
    """The wrong policy: substitute the caller's expression at def-sites for every parameter."""
    return False, "wrongly substituted"


@pytest.mark.parametrize(("program", "needle"), [(TWICE, "'a'"), (BUMP, "'k'")])
def test_a_wrong_policy_is_caught_by_the_checker(program: ir.Program, needle: str) -> None:
    with pytest.raises(RebindingCheckError) as info:
        inline_program(program, binding_policy=_never_bind)
    message = str(info.value)
    assert needle in message and "fresh local" in message and "call site #0" in message


@pytest.mark.parametrize(("program", "needle"), [(TWICE, "'a'"), (BUMP, "'k'")])
def test_a_wrong_policy_is_caught_by_the_checker_when_stepping_too(program: ir.Program, needle: str) -> None:
    """The stepper checks each step as the pass checks its run: no step with the wrong binding is shown."""
    steps = inline_steps(program, binding_policy=_never_bind)
    with pytest.raises(RebindingCheckError) as info:
        next(steps)
    message = str(info.value)
    assert needle in message and "fresh local" in message and "call site #0" in message


def test_a_wrong_policy_computes_the_wrong_answer() -> None:
    """What the checker prevents: 2k + 2 instead of 2k + 1."""
    from nanopto.passes.inlining.stage import Stage

    sites: list[call_sites.CallSite] = []
    fn = BUMP.functions["main"]
    templates = {"bump": call_sites.make_template(BUMP.functions["bump"])}
    sites = call_sites.find_sites(fn, templates, 0, _never_bind)
    (wrong,), _, _ = Stage([fn], templates, sites).run(0)
    program = ir.Program("P", (wrong,))
    assert _run(program, 5) == 12
    assert check_rebinding(BUMP, program, sites)


def test_computed_argument_duplicated_is_caught() -> None:
    result = inline_program(COMPUTED)
    main = result.program.functions["main"]
    extra = ir.EvalStmt(main.body.stmts[0].value)  # type: ignore[attr-defined]
    broken_body = ir.SeqStmts((*main.body.stmts, extra))  # type: ignore[attr-defined]
    broken = ir.Program("P", (ir.Function("main", main.param_list, main.return_types, broken_body),))
    problems = check_rebinding(COMPUTED, broken, result.sites)
    assert problems and "evaluated 2 time(s)" in problems[0].message
