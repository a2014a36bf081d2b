"""`nanopto check`: the pipeline run before and after on drawn inputs in the reference interpreter."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from nanopto import ir, passes
from nanopto.tools.check import check_equivalence, default_entries
from nanopto.verify.inputs import arguments_for

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
    return run_cli(*args)


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


def _main(params: str, body: str = "return k", inline_only: bool = False) -> str:
    decorator = "@pl.function(type=pl.FunctionType.Inline)" if inline_only else "@pl.function"
    return (
        "import nanopto.language as pl\n\n\n@pl.program\nclass P:\n"
        f"    {decorator}\n    def main(self, {params}):\n"
        + "".join(f"        {line}\n" for line in body.splitlines())
    )


def test_an_unannotated_parameter_is_drawn_as_a_small_fp32_tensor() -> None:
    fn = ir.parse_program(_main("a", "return a")).functions["main"]
    from hypothesis import given, settings

    @settings(max_examples=5, derandomize=True, database=None)
    @given(arguments_for(fn))
    def drawn(args: tuple[object, ...]) -> None:
        (a,) = args
        assert isinstance(a, np.ndarray) and a.shape == (4,) and a.dtype == np.float32

    drawn()


def test_every_shipped_example_is_checkable_and_an_unannotated_parameter_is_said() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        before = ir.parse_program(path.read_text(), str(path))
        after = passes.PassManager.default().run(before)
        report = check_equivalence(before, after, default_entries(before, after), 3)
        assert report.equivalent and report.runs, path.name
    proc = run("check", str(EXAMPLES / "nested.py"), "--examples", "3")
    assert proc.returncode == 0, proc.stderr
    assert "nested.py:" in proc.stderr and "parameter 'a' of 'main' has no annotated type: drawn as pl.Tensor[[4], pl.FP32]" in proc.stderr


def test_fewer_inputs_than_asked_for_are_explained() -> None:
    proc = run("check", str(EXAMPLES / "bump.py"))
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"main: equivalent on (\d+) inputs \(every distinct input there is to draw: .*\) before and after .*\n", proc.stdout)
    assert int(proc.stdout.split()[3]) < 100


def test_an_unsigned_scalar_is_drawn_non_negative() -> None:
    fn = ir.parse_program(_main("k: pl.Scalar[pl.UINT64]")).functions["main"]
    from hypothesis import given, settings

    seen: list[int] = []

    @settings(max_examples=40, derandomize=True, database=None)
    @given(arguments_for(fn))
    def drawn(args: tuple[object, ...]) -> None:
        seen.append(args[0])  # type: ignore[arg-type]

    drawn()
    assert min(seen) == 0


@pytest.mark.parametrize(
    "annotation", ["pl.Tensor[[100000, 100000], pl.FP32]", "pl.Array[1000000000, pl.INT64]"]
)
def test_a_parameter_too_large_to_draw_is_a_located_user_error(tmp_path: Path, annotation: str) -> None:
    program = tmp_path / "big.py"
    program.write_text(_main(f"k: {annotation}"))
    proc = run("check", str(program))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"nanopto: error: {program}:7:") and "cannot draw inputs for 'main'" in proc.stderr
    assert "parameter 'k'" in proc.stderr and "elements, more than the 1,048,576 nanopto check draws" in proc.stderr


def test_a_runaway_loop_stops_the_check_at_once_located(tmp_path: Path) -> None:
    program = tmp_path / "loop.py"
    program.write_text(_main("k: pl.Scalar[pl.INDEX]", "m = k\nwhile m < 10000000000:\n    m = m + 1\nreturn m"))
    started = time.monotonic()
    proc = run("check", str(program), "--max-steps", "20000")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"nanopto: error: {program}:") and "ran past 20,000 interpreter steps" in proc.stderr
    assert "--max-steps" in proc.stderr
    assert time.monotonic() - started < 120  # one input's budget, not 100 of them


def test_the_step_budget_defaults_to_the_one_help_names() -> None:
    from nanopto.tools.check import MAX_STEPS

    assert f"(default: {MAX_STEPS:,}," in " ".join(run("check", "--help").stdout.split())
    assert run("check", "x.py", "--max-steps", "0").returncode == 2


def test_a_program_of_only_inline_functions_says_there_is_nothing_to_check(tmp_path: Path) -> None:
    program = tmp_path / "inline_only.py"
    program.write_text(_main("k: pl.Scalar[pl.INDEX]", inline_only=True))
    proc = run("check", str(program))
    assert proc.returncode == 2 and "nothing to check: every function is Inline" in proc.stderr, proc.stderr
