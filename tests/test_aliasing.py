"""Inlining never changes what a program computes, also under aliasing and evaluation order.

Each program below is a trap for a literal reading of the inlining specification: an argument
that the spliced body changes before it is read, a call hoisted past an operand evaluated before
it, a returned tuple component evaluated at its use instead of at the call, and so on
(docs/08-aliasing-traps.md). Every program is run by the reference interpreter before and after
the pass, with both ways of copying helper bodies, and the output is pinned where it matters.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from nanopto import ir
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.inline_functions import inline_program
from nanopto.verify.interpreter import interpret, values_equal

S = "pl.Scalar[pl.INDEX]"
T = "pl.Tensor[[4], pl.FP32]"
AR = "pl.Array[4, pl.INT64]"
MODES = ("instance", "rules")


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


def fresh(args: tuple[Any, ...]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def same_meaning(before: ir.Program, after: ir.Program, *args: Any) -> bool:
    """The interpreter's result and argument buffers agree before and after."""
    inputs_before, inputs_after = fresh(args), fresh(args)
    result_before = interpret(before, "main", *inputs_before)
    result_after = interpret(after, "main", *inputs_after)
    return values_equal((result_before, inputs_before), (result_after, inputs_after))


def check(src: str, *args: Any, expected: str | None = None) -> ir.Program:
    """Inline `src` both ways; each must compute what `src` does (and print `expected`)."""
    before = pl(src)
    outputs = []
    for mode in MODES:
        after = inline_program(before, body_copies=mode).program  # type: ignore[arg-type]
        assert same_meaning(before, after, *args), mode
        if expected is not None:
            # Printed, so names count too; types derived for the receivers are not printed.
            assert python_print(after) == python_print(pl(expected)), mode
        outputs.append(after)
    return outputs[0]


def arange(count: int, dtype: Any = np.float32) -> Any:
    return np.arange(count, dtype=dtype)


Case = tuple[str, tuple[Any, ...]]


# A slice aliases its source's storage, but it is another value: `t = t[0:2]` is not a self-update
# (docs/03-rebinding-table.md), so the rebinding stays on a local and the caller's `a` is kept.
SLICE_REBINDING = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def f(self, t: {T}) -> pl.Tensor[[2], pl.FP32]:
        t = t[0:2]
        return t

    @pl.function
    def main(self, a: {T}) -> {T}:
        u = self.f(a)
        return a
"""


def test_a_slice_of_a_parameter_is_not_a_self_update() -> None:
    check(
        SLICE_REBINDING,
        arange(4),
        expected=f"""
        @pl.program
        class P:
            @pl.function
            def main(self, a: {T}) -> {T}:
                t_inline0: {T} = a
                t_inline0 = t_inline0[0:2]
                u = t_inline0
                return a
        """,
    )


# A loop-carried value passed to a pl.Out scalar is the variable the write-back must land on: a
# fresh local would take the write and the caller's `acc` would never see it.
ITER_ARG_TO_OUT_SCALAR = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def inc(self, m: pl.Out[{S}]) -> {S}:
        m = m + 1
        return m

    @pl.function
    def main(self, k: {S}) -> {S}:
        for i, (acc,) in pl.range(3, init_values=(k,)):
            r = self.inc(acc)
            s = acc + r
            acc2 = pl.yield_(s)
        return acc2
"""


def test_a_loop_carried_value_passed_to_an_out_scalar_receives_the_write_back() -> None:
    check(
        ITER_ARG_TO_OUT_SCALAR,
        1,
        expected=f"""
        @pl.program
        class P:
            @pl.function
            def main(self, k: {S}) -> {S}:
                for i, (acc,) in pl.range(3, init_values=(k,)):
                    acc = acc + 1
                    r = acc
                    s = acc + r
                    acc2 = pl.yield_(s)
                return acc2
        """,
    )
