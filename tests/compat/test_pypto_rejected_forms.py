"""Forms PyPTO's parser rejects: each is a ParserError at the offending line, with a hint."""

from __future__ import annotations

import pytest

from nanopto import ir

KERNEL_AND_MAIN = """import nanopto.language as pl

@pl.program
class Launch:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
{body}        return v
"""
FIRST_LINE = 11  # the line of the first body statement


def launch(*lines: str) -> str:
    return KERNEL_AND_MAIN.format(body="".join(f"        {line}\n" for line in lines))


W = "    w = pl.add(v, v)"
K = "    w = self.kern(v)"

REJECTED = {
    "scope without auto_scope=False": (["with pl.scope():", W], 0, "auto_scope=False"),
    "spmd body without index or dispatch": (["with pl.spmd(4):", W], 0, "get_block_idx"),
    "two kernels in one dispatch": (["with pl.spmd(4):", K, "    u = self.kern(w)"], 2, "its own pl.spmd"),
    "allow_early_resolve=1": (["with pl.spmd(4, allow_early_resolve=1):", K], 0, "=True"),
    "allow_early_resolve under cluster": (
        ["with pl.cluster():", "    with pl.spmd(4, allow_early_resolve=True):", "    " + K],
        1,
        "drop allow_early_resolve",
    ),
    "optimizations beside a carrier": (
        [
            "with pl.spmd(4, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):",
            "    with pl.at(level=pl.Level.CORE_GROUP):",
            "    " + W,
        ],
        0,
        "inner pl.at",
    ),
    "graph without a name": (["with pl.graph():", W], 0, 'pl.graph("name")'),
    "spmd()": (["with pl.spmd():", K], 0, "N > 0"),
    "spmd(0)": (["with pl.spmd(0):", K], 0, "N > 0"),
    "spmd(1.5)": (["with pl.spmd(1.5):", K], 0, "pl.spmd(N)"),
    "spmd(4, 2)": (["with pl.spmd(4, 2):", K], 0, "by keyword"),
    "at without level": (["with pl.at():", W], 0, "level=pl.Level"),
    "at with an unknown keyword": (["with pl.at(level=pl.Level.CORE_GROUP, colour=1):", W], 0, "pl.at takes"),
    "at name_hint not an identifier": (
        ['with pl.at(level=pl.Level.CORE_GROUP, name_hint="two words"):', W],
        0,
        "like a variable",
    ),
    "bare yield with init_values": (
        ["s: pl.Scalar[pl.INDEX] = 0", "for i, (t,) in pl.range(4, init_values=(s,)):", "    pl.yield_(t + i)"],
        2,
        "pl.yield_",
    ),
    "a tensor in deps=": (["with pl.manual_scope():", "    w, t = pl.submit(self.kern, v, deps=[v])"], 1, "deps=[tid]"),
    "an INDEX scalar in deps=": (
        ["n: pl.Scalar[pl.INDEX] = 1", "with pl.manual_scope():", "    w, t = pl.submit(self.kern, v, deps=[n])"],
        2,
        "deps=[tid]",
    ),
    "a tensor in task_dummy deps=": (["with pl.manual_scope():", "    t = pl.system.task_dummy(deps=[v])"], 1, "deps=[tid]"),
    "a computed deps= list": (["with pl.manual_scope():", "    w, t = pl.submit(self.kern, v, deps=[] + [])"], 1, "deps=[t1, t2]"),
    "a computed deps= on pl.at": (
        ["with pl.at(level=pl.Level.CORE_GROUP) as t:", W, "with pl.at(level=pl.Level.CORE_GROUP, deps=[t] + []):", W],
        2,
        "deps=[t1, t2]",
    ),
    "duplicate no_dep_args": (["with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[v, v]):", W], 0, "once"),
    "no_dep_args not a list": (["with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=v):", W], 0, None),
}


@pytest.mark.parametrize("name", list(REJECTED))
def test_rejected_form(name: str) -> None:
    lines, offending, hint = REJECTED[name]
    with pytest.raises(ir.ParserError) as info:
        ir.parse_program(launch(*lines))
    assert info.value.line == FIRST_LINE + offending, str(info.value)
    if hint is not None:
        assert info.value.hint is not None and hint in info.value.hint, str(info.value)


def test_the_accepted_neighbours_parse() -> None:
    ir.parse_program(launch("with pl.spmd(4, allow_early_resolve=True):", K))
    ir.parse_program(launch("with pl.spmd(4):", "    i = pl.tile.get_block_idx()"))
    ir.parse_program(
        launch(
            "with pl.spmd(4):",
            "    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):",
            "    " + W,
        )
    )
    auto_off = launch("with pl.scope():", W).replace(
        "FunctionType.Orchestration)", "FunctionType.Orchestration, auto_scope=False)"
    )
    ir.parse_program(auto_off)


def test_none_for_a_task_id_is_the_task_id_of_no_task() -> None:
    program = ir.parse_program(
        launch("with pl.manual_scope():", "    prev = None", "    w, t = pl.submit(self.kern, v, deps=[prev])")
    )
    text = program.as_python()
    assert "prev = pl.system.task_invalid()" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
