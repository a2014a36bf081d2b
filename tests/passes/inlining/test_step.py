"""`nanopto step`: one call site per step, through `cli.main` (tests/conftest.py `run_cli`), plus the step library."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from nanopto import ir
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.steps import inline_steps

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "nanopto" / "examples"
FOLD_RULES = EXAMPLES / "rules" / "fold_mul_one.py"

SCALE = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def scale(self, x, k):
        y = pl.mul(x, k)
        return y

    @pl.function
    def main(self, a):
        b = self.scale(a, 1)
        c = self.scale(b, a)
        return c
"""


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=ROOT, stdin=stdin)


def steps_of(stdout: str) -> list[str]:
    """The output split at each `=== step N` header (header included)."""
    return re.split(r"(?m)^(?==== step )", stdout)[1:]


def program_after(step_text: str) -> ir.Program:
    start = step_text.index("import nanopto.language as pl")
    end = step_text.find("\n# ", start)
    return ir.parse_program(step_text[start : end if end >= 0 else None])


def test_step_one_site_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    done = run("step", str(path))
    assert done.returncode == 0, done.stderr
    steps = steps_of(done.stdout)
    assert len(steps) == 3
    first, second, last = steps
    assert first.startswith("=== step 1: splice 'scale' into 'main' at line 13: `b = self.scale(a, 1)`")
    assert re.search(r"splice\s+splice-assign\s+x1", first)
    assert re.search(r"writeback\s+wire-result\s+x1", first)
    # After step 1 only the first site is spliced; the second call is still there.
    after_first = ir.python_print(program_after(first))
    assert "pl.mul(a, 1)" in after_first and "self.scale(b, a)" in after_first
    assert second.startswith("=== step 2: splice 'scale' into 'main' at line 14: `c = self.scale(b, a)`")
    assert "self.scale(" not in ir.python_print(program_after(second)).split("def main")[1]
    assert last.startswith("=== step 3: drop the Inline helpers")
    # Printed text, not re-parsed IR: the parser would infer types the pass leaves unknown.
    assert ir.python_print(inline_program(ir.parse_program(SCALE)).program).strip() in last
    assert "stepping gave the same program (up to local names) as inline-functions" in done.stdout
    assert done.stdout.rstrip().endswith("# done: 3 steps")


def test_step_nested_goes_callee_first() -> None:
    done = run("step", str(EXAMPLES / "nested.py"))
    assert done.returncode == 0, done.stderr
    headers = re.findall(r"(?m)^=== step \d+: splice '(\w+)' into '(\w+)'", done.stdout)
    source = (EXAMPLES / "nested.py").read_text()
    program = ir.parse_program(source)
    helpers = {f.name for f in program.function_list if f.func_type is ir.FunctionType.Inline}
    # Every splice into a helper comes before any splice of that helper elsewhere.
    for i, (helper, _caller) in enumerate(headers):
        assert all(caller != helper for _, caller in headers[i + 1 :]), headers
    assert {caller for _, caller in headers} - helpers  # something lands in a non-Inline function
    assert "the same program (up to local names)" in done.stdout


@pytest.mark.parametrize("name", ["single_site", "multiple_sites", "twice", "bump", "multi_return", "discard", "scope", "nested", "computed_args"])
def test_steps_reach_the_pass_result(name: str) -> None:
    """The last step is InlineFunctions' own result (up to fresh names), example by example."""
    program = ir.parse_program((EXAMPLES / f"{name}.py").read_text(), f"{name}.py")
    steps = list(inline_steps(program))
    assert steps[-1].site is None
    assert [s.number for s in steps] == list(range(1, len(steps) + 1))
    ir.assert_structural_equal(steps[-1].program, inline_program(program).program)
    assert sum(s.report.matches.get("splice-assign", 0) for s in steps) == inline_program(program).report.matches.get(
        "splice-assign", 0
    )


def test_rule_by_rule_lists_iterations() -> None:
    done = run("step", str(EXAMPLES / "single_site.py"), "--rule-by-rule")
    assert done.returncode == 0, done.stderr
    assert "iteration 1 [splice]: splice-assign x1" in done.stdout
    assert "(no program to show yet: the spliced part is still helper terms)" in done.stdout
    assert re.search(r"iteration \d+ \[writeback\]: wire-result x1\n\s+@pl.function\n\s+def main", done.stdout)
    assert done.stderr == ""  # failed mid-splice extractions are expected, not logged


def test_step_runs_user_passes_after_inlining(tmp_path: Path) -> None:
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    done = run("step", str(path), "--rules", str(FOLD_RULES))
    assert done.returncode == 0, done.stderr
    last = steps_of(done.stdout)[-1]
    assert last.startswith("=== step 4: pass fold-mul-one")
    assert re.search(r"fold-mul-one\s+mul-x-one\s+x[1-9]", last)
    # Every rule of the user's pass is listed, the one that never matched too, and warned about.
    assert re.search(r"fold-mul-one\s+mul-one-x\s+x0   \(never matched\)", last)
    assert "warning: rule 'mul-one-x' of pass 'fold-mul-one' never matched" in last
    assert done.stderr == "nanopto: warning: rule 'mul-one-x' of pass 'fold-mul-one' never matched\n"
    text = ir.python_print(program_after(last))
    assert "pl.mul(a, 1)" not in text and "pl.mul(b, a)" in text


def test_pause_waits_and_q_stops(tmp_path: Path) -> None:
    path = tmp_path / "scale.py"
    path.write_text(SCALE)
    done = run("step", str(path), "--pause", stdin="\nq\n")
    assert done.returncode == 0, done.stderr
    assert len(steps_of(done.stdout)) == 2
    assert done.stdout.count("-- Enter: next step, q: stop --") == 2


def test_step_without_inline_functions(tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text(
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n"
        "    def main(self, a):\n        b = pl.mul(a, 1)\n        return b\n"
    )
    done = run("step", str(path))
    assert done.returncode == 0, done.stderr
    assert "no Inline call sites: inline-functions has nothing to step through" in done.stdout
    assert done.stdout.rstrip().endswith("# done: 0 steps")


def test_step_bad_input_is_one_error(tmp_path: Path) -> None:
    missing = run("step", str(tmp_path / "nope.py"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("nanopto: error:") and "no such file" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("import nanopto.language as pl\n\n@pl.program\nclass P:\n    def main(self, a:\n")
    parsed = run("step", str(broken))
    assert parsed.returncode == 2
    assert "broken.py" in parsed.stderr and "Traceback" not in parsed.stderr


def test_step_with_a_nested_call_compares_against_the_hoisted_run(tmp_path: Path) -> None:
    """The closing comparison runs the whole pass on the hoisted program, as the pipeline does."""
    path = tmp_path / "nested.py"
    path.write_text(SCALE.replace("b = self.scale(a, 1)", "b = pl.add(self.scale(a, 1), a)"))
    done = run("step", str(path))
    assert done.returncode == 0, done.stderr
    assert "=== step 1: hoist nested Inline calls" in done.stdout
    assert "stepping gave the same program (up to local names) as inline-functions" in done.stdout
