"""`assert_equivalent` reports like `nanopto check`, and Program, Function and PipelineRun have
short reprs that read as `pl` and `_repr_html_` defined on their classes."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto import ir, passes
from nanopto.ir_terms import nodes
from nanopto.ir_terms.nodes import Function, Program
from nanopto.tools import repr_hooks
from nanopto.tools.examples import example_source
from nanopto.tools.pipeline_run import PipelineRun, run_pipeline
from nanopto.verify import NotEquivalentError, assert_equivalent

BUMP = ir.parse_program(example_source("bump"))
TWICE = ir.parse_program(example_source("twice"))

WRONG_BUMP = ir.parse_program(
    """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = k + 1
        m: pl.Scalar[pl.INDEX] = k
        return k + m
"""
)

SCALE_OUT = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        out = pl.assemble(out, pl.add(a, a), [0])
        return out
"""


def test_equivalent_programs_pass() -> None:
    assert_equivalent(BUMP, passes.inline_functions()(BUMP), [5])
    a = np.arange(4, dtype=np.float32)
    assert_equivalent(TWICE, passes.inline_functions()(TWICE), [a])


def test_a_different_result_is_reported_like_check() -> None:
    """The substitution trap of docs/specification.md#rebinding-a-parameter: 2k + 2, not 2k + 1."""
    with pytest.raises(NotEquivalentError) as caught:
        assert_equivalent(BUMP, WRONG_BUMP, [5])
    assert str(caught.value) == (
        "main: NOT equivalent\n  inputs:\n    k = 5\n  before: 11\n  after:  12\n"
        "  the result differs: before 11, after 12"
    )


def test_a_different_buffer_is_named() -> None:
    before = ir.parse_program(SCALE_OUT)
    after = ir.parse_program(SCALE_OUT.replace("pl.add(a, a)", "pl.mul(a, a)"))
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    with pytest.raises(NotEquivalentError) as caught:
        assert_equivalent(before, after, [a, np.zeros(4, dtype=np.float32)])
    message = str(caught.value)
    assert "argument out afterwards differs: before [2., 4., 6., 8.], after [ 1.,  4.,  9., 16.]" in message
    assert "    a = [1., 2., 3., 4.]" in message and "argument a afterwards" not in message


def test_program_and_function_reprs_read_as_pl() -> None:
    shown = repr(BUMP)
    assert shown.startswith("<Program P:\n    @pl.program\n") and "def bump(self, n: pl.Scalar[pl.INDEX])" in shown
    assert "function_list=" not in shown and len(shown) < 1000
    main = BUMP.functions["main"]
    assert repr(main).startswith("<Function main:\n") and "m: pl.Scalar[pl.INDEX] = self.bump(k)" in repr(main)
    big = ir.parse_program(example_source("twice").replace("return w", "return w\n" + "\n".join(f"    # {i}" for i in range(100))))
    assert repr(big).count("\n") < 70  # long programs are cut, saying how much is left


def test_pipeline_run_repr_is_short_and_shows_the_program_after() -> None:
    run = run_pipeline(TWICE)
    shown = repr(run)
    assert shown.startswith(f"<PipelineRun {' -> '.join(run.pipeline)} on P (inline-functions changed it")
    assert "t_inline0 = pl.add(t_inline0, t_inline0)" in shown and len(shown) < 2000


def test_repr_html_is_defined_on_the_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    for cls in (Program, Function, PipelineRun):
        assert "_repr_html_" in cls.__dict__, cls
    repr_hooks.install()  # what importing the tools' views does
    assert '<span class="tok-def">main</span>' in BUMP._repr_html_()  # the tools' highlighted view
    assert '<span class="tok-def">bump</span>' in BUMP.functions["bump"]._repr_html_()
    assert "inline-functions" in run_pipeline(TWICE)._repr_html_()
    monkeypatch.setattr(nodes, "HTML_VIEWS", {})  # a front end that never loaded the tools
    shown = BUMP._repr_html_()
    assert shown.startswith('<pre class="nanopto-code">') and "def main(self, k: pl.Scalar[pl.INDEX])" in shown
