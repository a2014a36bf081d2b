"""One analysis decides every binding: what may change between the call and each use, on every
control path (docs/specification.md, "Meaning under aliasing").

Each program below is one that the per-shape checks got wrong: a loop-carried value given to a
`pl.Out` scalar (in every loop kind, with `continue` and `break`), two `pl.Out` parameters given one
variable through a nested helper, a `pl.spmd` body (which runs once per block), a tuple component
read in a `while` condition, a control-flow result landing on a loop-scoped name, an in-place write
taken for a rebinding by the checker, a call left in `init_values=`, and an Array rebinding that a
fresh local keeps. Every one is run by the reference interpreter before and after the pass, and its
printed result is parsed again and run too.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

from nanopto import ir
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.call_sites import Hazard, InlineError
from nanopto.passes.pass_base import VerificationError
from nanopto.passes.pass_manager import PassManager
from nanopto.verify.interpreter import interpret, values_equal

S = "pl.Scalar[pl.INDEX]"
T = "pl.Tensor[[4], pl.FP32]"
AR = "pl.Array[4, pl.INT64]"

INC = f"""
    @pl.function(type=pl.FunctionType.Inline)
    def inc(self, m: pl.Out[{S}]) -> {S}:
        m = m + 1
        return m
"""


def pl(src: str, file: str = "<string>") -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src), file)


def run(program: ir.Program, args: tuple[Any, ...]) -> Any:
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return interpret(program, "main", *inputs, max_steps=20_000), inputs


def check(src: str, *args: Any, expected: str | None = None) -> ir.Program:
    """Inline `src`: the result, and its printed text parsed again, compute what `src` does."""
    before = pl(src)
    after = inline_program(hoist_program(before)).program
    want = run(before, args)
    assert values_equal(run(after, args), want)
    assert values_equal(run(parse_program(python_print(after)), args), want)
    if expected is not None:
        assert python_print(after) == python_print(pl(expected))
    return after


def zeros() -> Any:
    return np.zeros(4, dtype=np.int64)


# -- 1. An IterArg given to a pl.Out scalar: the write-back lands on it, in every loop kind ------

CARRIED_PRE_SSA = f"""
@pl.program
class P:
{INC}
    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        for i, (acc,) in pl.range(3, init_values=(k,)):
            arr[i] = acc
            self.inc(acc)
        return k
"""


def test_an_iter_arg_given_to_an_out_scalar_carries_its_write_back_to_the_next_iteration() -> None:
    after = check(
        CARRIED_PRE_SSA,
        1,
        zeros(),
        expected=f"""
        @pl.program
        class P:
            @pl.function
            def main(self, k: {S}, arr: {AR}) -> {S}:
                for i, (acc,) in pl.range(3, init_values=(k,)):
                    arr[i] = acc
                    acc = acc + 1
                return k
        """,
    )
    assert list(run(after, (1, zeros()))[1][1]) == [1, 2, 3, 0]


@pytest.mark.parametrize(
    "loop",
    [
        "for i, (acc,) in pl.range(3, init_values=(k,)):",
        "for i, (acc,) in pl.parallel(3, init_values=(k,)):",
        "for i, (acc,) in pl.unroll(3, init_values=(k,)):",
    ],
)
def test_every_counted_loop_kind_carries_the_write_back(loop: str) -> None:
    check(CARRIED_PRE_SSA.replace("for i, (acc,) in pl.range(3, init_values=(k,)):", loop), 1, zeros())


CARRIED_WHILE = f"""
@pl.program
class P:
{INC}
    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        for (acc,) in pl.while_(init_values=(k,)):
            pl.cond(acc < 4)
            arr[acc] = acc
            self.inc(acc)
        return k
"""


def test_a_while_loop_whose_condition_reads_the_written_iter_arg_still_ends() -> None:
    after = check(CARRIED_WHILE, 1, zeros())
    assert list(run(after, (1, zeros()))[1][1]) == [0, 1, 2, 3]


CARRIED_EXIT = f"""
@pl.program
class P:
{INC}
    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        for i, (acc,) in pl.range(3, init_values=(k,)):
            arr[i] = acc
            self.inc(acc)
            if i > 0:
                EXIT
            acc2 = pl.yield_(acc)
        return k
"""


@pytest.mark.parametrize("exit_", ["continue", "break"])
def test_the_write_back_survives_continue_and_break(exit_: str) -> None:
    check(CARRIED_EXIT.replace("EXIT", exit_), 1, zeros())


# -- 2. Two pl.Out parameters given one variable are one variable, at every level -------------------

TWO_OUTS_ONE_ITER_ARG = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h(self, p: pl.Out[{S}], q: pl.Out[{S}]) -> {S}:
        p = p + 1
        q = q * 2
        return q

    @pl.function
    def main(self, k: {S}) -> {S}:
        for i, (acc,) in pl.range(1, init_values=(k,)):
            m = self.h(acc, acc)
            acc2 = pl.yield_(m + acc)
        return acc2
"""


def test_two_out_scalars_given_one_iter_arg_are_one_variable() -> None:
    after = check(TWO_OUTS_ONE_ITER_ARG, 1)
    assert run(after, (1,))[0] == 8


NESTED_OPERAND = f"""
@pl.program
class P:
{INC}
    @pl.function(type=pl.FunctionType.Inline)
    def f(self, p: pl.Out[{S}], q: pl.Out[{S}]) -> {S}:
        r = q * 10 + self.inc(p)
        return r

    @pl.function
    def main(self, k: {S}) -> {S}:
        m = self.f(k, k)
        return m
"""


def test_an_operand_reading_one_out_scalar_is_hoisted_ahead_of_a_call_writing_the_other() -> None:
    after = check(NESTED_OPERAND, 1)
    assert run(after, (1,))[0] == 12


NESTED_ARGUMENTS = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def g(self, a: {S}, b: pl.Out[{S}]) -> {S}:
        b = b + 10
        r = a + b
        return r

    @pl.function(type=pl.FunctionType.Inline)
    def f(self, p: pl.Out[{S}], q: pl.Out[{S}]) -> {S}:
        r = self.g(q, p)
        return r

    @pl.function
    def main(self, k: {S}) -> {S}:
        m = self.f(k, k)
        return m
"""


def test_a_nested_call_given_two_out_scalars_of_one_variable_binds_the_one_it_reads() -> None:
    after = check(NESTED_ARGUMENTS, 1)
    assert run(after, (1,))[0] == 12


# -- 3. A pl.spmd body runs once per block ------------------------------------------------------------

SPMD_IN_HELPER = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def g(self, a: {S}, b: pl.Out[{S}], xs: {AR}) -> {S}:
        for blk in pl.spmd(2):
            xs[blk] = a
            b = b + 100
        return b

    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        m = self.g(k + 2, k, arr)
        return m
"""


def test_an_argument_read_in_a_spmd_body_after_a_write_back_is_bound() -> None:
    after = check(SPMD_IN_HELPER, 1, zeros())
    assert list(run(after, (1, zeros()))[1][1]) == [3, 3, 0, 0]


SPMD_TUPLE = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h(self, n: {S}) -> tuple[{S}, {S}]:
        return n, n

    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        tp = self.h(k)
        for b in pl.spmd(2):
            arr[b] = tp[0]
            k = k + 1
        return k
"""


def test_a_tuple_component_read_in_a_spmd_body_that_rebinds_its_argument_is_bound() -> None:
    after = check(SPMD_TUPLE, 1, zeros())
    assert list(run(after, (1, zeros()))[1][1]) == [1, 1, 0, 0]


# -- 4. A while condition is read inside its loop ------------------------------------------------------

WHILE_CONDITION_TUPLE = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def pair(self, n: {S}) -> tuple[{S}, {S}]:
        return n, n

    @pl.function
    def main(self, k: {S}) -> {S}:
        tp = self.pair(k)
        w = 0
        while w < tp[0]:
            k = k + 1
            w = w + 1
        return w
"""


def test_a_tuple_component_read_in_a_while_condition_and_rebound_in_the_body_is_bound() -> None:
    after = check(WHILE_CONDITION_TUPLE, 3)
    assert run(after, (3,))[0] == 3


# -- 5. The printed result parses back to the same program ---------------------------------------------

IF_RESULT_ON_AN_ITER_ARG = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def setm(self, m: pl.Out[{S}], c: {S}) -> {S}:
        if c > 1:
            m = pl.yield_(m + 1)
        else:
            m = pl.yield_(m + 2)
        return m

    @pl.function
    def main(self, k: {S}, arr: {AR}) -> {S}:
        for i, (acc,) in pl.range(3, init_values=(k,)):
            arr[i] = acc
            r = self.setm(acc, k)
            arr[3] = arr[3] + acc + r
        return k
"""


def test_an_if_result_for_an_iter_arg_is_copied_back_so_the_text_says_the_same() -> None:
    check(
        IF_RESULT_ON_AN_ITER_ARG,
        1,
        zeros(),
        expected=f"""
        @pl.program
        class P:
            @pl.function
            def main(self, k: {S}, arr: {AR}) -> {S}:
                for i, (acc,) in pl.range(3, init_values=(k,)):
                    arr[i] = acc
                    m_inline0 = acc
                    if k > 1:
                        m_inline0 = pl.yield_(m_inline0 + 1)
                    else:
                        m_inline0 = pl.yield_(m_inline0 + 2)
                    acc = m_inline0
                    r = m_inline0
                    arr[3] = arr[3] + acc + r
                return k
        """,
    )


# -- 6. The checker takes an in-place write for what it is ----------------------------------------------

IN_PLACE_AFTER_A_TUPLE = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h1(self, t0: pl.InOut[{T}], t2: {T}) -> tuple[{T}, pl.Scalar[pl.FP32]]:
        tmp = (t2, t2[2])
        t0 = pl.tensor.assemble(t0, t2[0:2], [1])
        return tmp

    @pl.function
    def main(self, x: {T}) -> pl.Scalar[pl.FP32]:
        y, m = self.h1(x, x)
        return m
"""


def test_an_in_place_write_after_a_tuple_is_made_is_not_a_rebinding_of_its_handle() -> None:
    check(IN_PLACE_AFTER_A_TUPLE, np.arange(4, dtype=np.float32))


# -- 7. A call left in init_values= is the user's to move ------------------------------------------------

INIT_VALUE_CALL = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def g(self, a: {S}) -> {S}:
        return a + 1

    @pl.function(type=pl.FunctionType.Inline)
    def h(self, k: {S}) -> {S}:
        for i, (acc,) in pl.range(3, init_values=(self.g(k),)):
            r = self.g(acc)
            acc2 = pl.yield_(r)
        return acc2

    @pl.function
    def main(self, k: {S}) -> {S}:
        u = self.g(k)
        for i, (acc,) in pl.range(3, init_values=(self.g(k),)):
            r = self.g(acc)
            acc2 = pl.yield_(r)
        v = self.h(u)
        return acc2 + v
"""


def test_a_call_in_init_values_next_to_calls_of_the_same_helper_is_reported_as_the_users() -> None:
    with pytest.raises(VerificationError) as refused:
        PassManager.default().run(pl(INIT_VALUE_CALL, "init.py"))
    assert refused.value.in_the_input, str(refused.value)
    assert "cannot process this program as written" in str(refused.value)
    assert "Dangling" not in str(refused.value)
    assert {d.span.line for d in refused.value.diagnostics if d.span is not None} == {11, 19}


# -- 8. Refused only where no splice keeps the meaning --------------------------------------------------

ARRAY_REBOUND_THEN_USED = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def g(self, xs: {AR}, k: {S}) -> {S}:
        xs[1] = k
        xs = pl.array.create(4, pl.INT64)
        xs[0] = k + 5
        m = xs[0] + xs[1]
        return m

    @pl.function
    def main(self, arr: {AR}, k: {S}) -> {S}:
        m = self.g(arr, k)
        return m
"""


def test_an_array_rebound_in_straight_line_code_gets_a_fresh_local() -> None:
    check(
        ARRAY_REBOUND_THEN_USED,
        zeros(),
        2,
        expected=f"""
        @pl.program
        class P:
            @pl.function
            def main(self, arr: {AR}, k: {S}) -> {S}:
                arr[1] = k
                xs_inline0 = pl.array.create(4, pl.INT64)
                xs_inline0[0] = k + 5
                m_inline1 = xs_inline0[0] + xs_inline0[1]
                m: {S} = m_inline1
                return m
        """,
    )


def test_an_array_rebound_and_used_only_inside_its_block_gets_a_fresh_local() -> None:
    check(
        f"""
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def g(self, xs: {AR}, k: {S}) -> {S}:
                xs[1] = k
                if k > 1:
                    xs = pl.array.create(4, pl.INT64)
                    xs[0] = k
                    k = xs[0] + 1
                return k

            @pl.function
            def main(self, arr: {AR}, k: {S}) -> {S}:
                m = self.g(arr, k)
                return m
        """,
        zeros(),
        2,
    )


def test_a_refusal_quotes_the_users_line_not_a_hoisted_temporary(tmp_path: Any) -> None:
    source = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def mk(self) -> {AR}:
        ys = pl.array.create(4, pl.INT64)
        return ys

    @pl.function(type=pl.FunctionType.Inline)
    def g(self, xs: {AR}, c: {S}) -> {S}:
        for i in pl.range(2):
            xs[0] = i
            xs = self.mk()
        return xs[0]

    @pl.function
    def main(self, arr: {AR}, k: {S}) -> {S}:
        m = self.g(arr, k)
        return m
"""
    path = tmp_path / "quoted.py"
    path.write_text("import nanopto.language as pl\n" + source)
    program = parse_program(path.read_text(), str(path))
    with pytest.raises(InlineError) as refused:
        inline_program(hoist_program(program))
    assert refused.value.hazard is Hazard.ARRAY_REBOUND
    assert f"{path}:14:13:" in str(refused.value)
    assert "`xs = self.mk()`" in str(refused.value)
    assert "_inline" not in str(refused.value)
