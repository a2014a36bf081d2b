"""`nanopto check`: the pipeline run before and after on drawn inputs in the reference interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.tools.check import check_equivalence
from nanopto.verify.inputs import UnsupportedParameter, arguments_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "nanopto" / "examples"

SQUARES = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def square(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        b = self.square(a)
        c = pl.mul(b, 1)
        return c
"""

WRONG_RULE = """\
from nanopto import passes
from nanopto.rules import Ruleset, call, rewrite_rule, var

x = var("x")
WRONG = Ruleset("square-is-x", "A wrong rule: x * x is x.", (rewrite_rule("mul-x-x", call("mul", x, x), x),))
PASSES = [passes.rewrite(WRONG, name="square-is-x")]
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nanopto", *args], capture_output=True, text=True, timeout=300)


def test_the_shipped_rule_and_the_default_pipeline_are_equivalent(tmp_path: Path) -> None:
    program = tmp_path / "squares.py"
    program.write_text(SQUARES)
    proc = run("check", str(program), "--rules", str(EXAMPLES / "rules" / "fold_mul_one.py"), "--examples", "30")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "main: equivalent on 30 inputs before and after inline-functions,fold-mul-one\n"


def test_a_wrong_rule_is_caught_with_its_counterexample(tmp_path: Path) -> None:
    program, rules = tmp_path / "squares.py", tmp_path / "wrong.py"
    program.write_text(SQUARES)
    rules.write_text(WRONG_RULE)
    proc = run("check", str(program), "--rules", str(rules))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "main: NOT equivalent after inline-functions,square-is-x"
    assert lines[1] == "  inputs:" and lines[2].startswith("    a = [")
    assert lines[3].startswith("  before: [") and lines[4].startswith("  after:  [")


def test_the_rebinding_traps_are_checked_equivalent() -> None:
    for name in ("twice", "bump", "multi_return", "discard", "computed_args"):
        proc = run("check", str(EXAMPLES / f"{name}.py"), "--examples", "15")
        assert proc.returncode == 0, (name, proc.stdout, proc.stderr)
        assert "equivalent on" in proc.stdout


def test_check_reports_a_planted_miscompile_in_python() -> None:
    before = ir.parse_program(SQUARES, "squares.py")
    after = passes.PassManager.default().run(before)
    assert check_equivalence(before, after, ["main"], 10).equivalent
    wrong = ir.parse_program(SQUARES.replace("y = pl.mul(x, x)", "y = pl.add(x, x)"), "wrong.py")
    report = check_equivalence(before, passes.PassManager.default().run(wrong), ["main"], 50)
    assert report.counterexample is not None and report.counterexample.entry == "main"
    (a,) = report.counterexample.args
    assert not np.array_equal(a * a, a + a)  # the shrunk input really tells the two apart


def test_symbolic_dimensions_are_drawn_once_and_shared() -> None:
    program = ir.parse_program(
        """
import nanopto.language as pl

N = pl.dynamic("N")


@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[N, 2], pl.FP32], b: pl.Tensor[[N, 2], pl.FP32], k: pl.Scalar[pl.INDEX]):
        c = pl.add(a, b)
        return c
""",
        "dyn.py",
    )
    fn = program.functions["main"]

    from hypothesis import given, settings

    @settings(max_examples=20, derandomize=True, database=None)
    @given(arguments_for(fn))
    def shapes_agree(args: tuple[object, ...]) -> None:
        a, b, k = args
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(k, int)
        assert a.shape == b.shape and a.shape[1] == 2 and 1 <= a.shape[0] <= 4 and a.dtype == np.float32

    shapes_agree()


def test_an_unannotated_parameter_is_named() -> None:
    program = ir.parse_program(
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n    def main(self, a):\n        return a\n"
    )
    with pytest.raises(UnsupportedParameter, match="parameter 'a'"):
        arguments_for(program.functions["main"])
