"""InlineFunctions through every statement form (docs/specification.md, "Statement forms"): a
helper holding each scope form, with the scopes and statements the parser adds for them (the
InCore scope of a `pl.spmd` body, the definition of an `as tid`), spliced into each form, its
locals renamed and its parameter substituted; the result prints as `pl` that reads back as itself
and computes what the program computed before."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.verify.interpreter import interpret, values_equal

KERNEL = """
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
        y = pl.add(x, x)
        return y
"""

FORMS = """
    @pl.function(type=pl.FunctionType.Inline)
    def forms(self, x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP) as t:
            y = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[t], optimizations=[pl.cross_core_slot(slot_num=4)]):
            y = pl.mul(y, x)
        with pl.at(level=pl.Level.HOST):
            y = pl.add(y, x)
        with pl.cluster():
            y = pl.add(y, x)
        with pl.graph("g"):
            y = pl.sub(y, x)
        with pl.spmd(2):
            y = self.kernel(y)
        with pl.spmd(2, name_hint="blk") as s:
            b = pl.tile.get_block_idx()
            y = pl.add(y, x)
        for i in pl.spmd(2, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            y = pl.add(y, x)
        with pl.manual_scope():
            y, u = pl.submit(self.kernel, y, deps=[s])
        return y
"""

SPLICED = """
with pl.at(level=pl.Level.CORE_GROUP) as t_inline0:
    y_inline1 = pl.add(a, a)
with pl.at(level=pl.Level.CORE_GROUP, deps=[t_inline0], optimizations=[pl.cross_core_slot(slot_num=4)]):
    y_inline1 = pl.mul(y_inline1, a)
with pl.at(level=pl.Level.HOST):
    y_inline1 = pl.add(y_inline1, a)
with pl.cluster():
    y_inline1 = pl.add(y_inline1, a)
with pl.graph("g"):
    y_inline1 = pl.sub(y_inline1, a)
with pl.spmd(2):
    y_inline1 = self.kernel(y_inline1)
with pl.spmd(2, name_hint="blk_spmd") as s_inline2:
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="blk"):
        b_inline3 = pl.tile.get_block_idx()
        y_inline1 = pl.add(y_inline1, a)
for i_inline4 in pl.spmd(2, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
    y_inline1 = pl.add(y_inline1, a)
with pl.manual_scope():
    y_inline1, u_inline6 = pl.submit(self.kernel, y_inline1, deps=[s_inline2])
r = y_inline1
"""
"""The helper spliced where `a` is passed: `x` is `a`, every local and every capture renamed.
The InCore scope the parser added inside `with pl.spmd(...) as s` and the definition of each
`as` capture are spliced and renamed with the scope that holds them."""

CALLERS = {
    "at": ("with pl.at(level=pl.Level.CORE_GROUP):", ""),
    "graph": ('with pl.graph("outer"):', ""),
    "manual_scope": ("with pl.manual_scope():", ""),
    "spmd_for": ("for j in pl.spmd(2):", ""),
    "spmd_capture": ("with pl.spmd(2) as q:", "k = pl.tile.get_block_idx()"),
}
"""Each form the helper is called from: its header and a first statement of its own."""


def _program(header: str, first: str, body: str) -> str:
    lines = [first, *textwrap.dedent(body).strip().splitlines()] if first else textwrap.dedent(body).strip().splitlines()
    inner = textwrap.indent("\n".join(lines), " " * 12)
    return (
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n"
        + textwrap.indent(textwrap.dedent(KERNEL), "    ")
        + "{forms}"
        + "\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
        + "    def main(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:\n"
        + f"        {header}\n{inner}\n"
        + "        return r\n"
    )


def _before(header: str, first: str) -> ir.Program:
    src = _program(header, first, "r = self.forms(a)")
    return parse_program(src.replace("{forms}", textwrap.indent(textwrap.dedent(FORMS), "    ")))


def _expected(header: str, first: str) -> ir.Program:
    return parse_program(_program(header, first, SPLICED).replace("{forms}", ""))


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_a_helper_with_every_form_splices_into_each_form(caller: str) -> None:
    header, first = CALLERS[caller]
    before = _before(header, first)
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, _expected(header, first))
    ir.assert_structural_equal(parse_program(str(after)), after)
    a = np.arange(8, dtype=np.float32)
    assert values_equal(interpret(after, "main", a), interpret(before, "main", a))


def test_the_spliced_captures_print_as_as_clauses() -> None:
    """The definitions the parser writes for `as t` and `as s` are spliced with their scopes and
    print as the `as` clauses they came from, never as `pl.system.task_invalid()`."""
    after = passes.inline_functions()(_before(*CALLERS["at"]))
    text = str(after)
    assert "task_invalid" not in text
    assert "as t_inline0:" in text and "as s_inline2:" in text


def test_inside_a_cluster_a_helper_without_a_capturing_spmd_splices() -> None:
    """`pl.cluster()` refuses a `pl.spmd ... as tid` and a launch's `deps=` inside it (one Group
    dispatch has no place for them), so the helper called from a cluster holds every other form."""
    forms = FORMS.replace(
        """        with pl.spmd(2, name_hint="blk") as s:
            b = pl.tile.get_block_idx()
            y = pl.add(y, x)
""",
        "",
    ).replace(", deps=[s]", "")
    spliced = SPLICED.replace(
        """with pl.spmd(2, name_hint="blk_spmd") as s_inline2:
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="blk"):
        b_inline3 = pl.tile.get_block_idx()
        y_inline1 = pl.add(y_inline1, a)
""",
        "",
    ).replace(", deps=[s_inline2]", "")
    src = _program("with pl.cluster():", "", "r = self.forms(a)")
    before = parse_program(src.replace("{forms}", textwrap.indent(textwrap.dedent(forms), "    ")))
    after = passes.inline_functions()(before)
    expected = parse_program(_program("with pl.cluster():", "", spliced).replace("{forms}", ""))
    ir.assert_structural_equal(after, expected)
    a = np.arange(8, dtype=np.float32)
    assert values_equal(interpret(after, "main", a), interpret(before, "main", a))
