"""The shipped rules files (`nanopto/examples/rules/`): typed rules that keep what a program computes.

Each is checked the way docs/checking-a-pipeline.md teaches: run before and after in the reference
interpreter. Aliasing is the trap (docs/your-own-rules.md#side-conditions): `pl.mul(a, 1) -> a`
without its side conditions makes `v` share the caller's `a`, and a later in-place write to `v`
then changes `a`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli
from egglog import rewrite
from hypothesis import HealthCheck, Phase, given, settings

from nanopto import ir, passes
from nanopto.passes import PassManager
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.passes.registry import PassRegistry
from nanopto.rules import Ruleset, call, declare, var
from nanopto.tools.check import check_equivalence, default_entries
from nanopto.tools.rules_file import load_rules_file
from nanopto.verify.strategies import programs

ROOT = Path(__file__).resolve().parents[2]
RULES = sorted((ROOT / "nanopto" / "examples" / "rules").glob("*.py"))

ALIASING = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[1], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        v = pl.mul(a, 1)
        v = pl.tensor.assemble(v, b, [0])
        return a
"""

UNALIASED = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        t = pl.add(a, b)
        v = pl.mul(t, 1)
        w = pl.add(v, a)
        return w
"""

CONSTANTS = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m = n + 1 + 2
        k = 2 * 3 - 1
        return m + k
"""

x = var("x")
UNGUARDED = Ruleset("fold-mul-one", "The old fold: no side condition.", (declare("mul-x-one", rewrite(call("mul", x, 1)).to(x)),))
"""`fold-mul-one` as it shipped before its side conditions: wrong under aliasing."""


def user_passes(path: Path) -> list[passes.Pass]:
    return list(load_rules_file(str(path), registry=PassRegistry()))


def after(program: ir.Program, extra: list[passes.Pass]) -> ir.Program:
    return PassManager([*PassManager.default().passes, *extra]).run(program)


def equivalent(before: ir.Program, rewritten: ir.Program, examples: int = 30) -> bool:
    return check_equivalence(before, rewritten, default_entries(before, rewritten), examples).equivalent


def test_every_shipped_rules_file_keeps_the_aliasing_program() -> None:
    before = ir.parse_program(ALIASING)
    for path in RULES:
        rewritten = after(before, user_passes(path))
        assert equivalent(before, rewritten), path.name
        assert "v = pl.mul(a, 1)" in ir.python_print(rewritten), path.name


def test_the_old_fold_mul_one_planted_back_is_caught() -> None:
    before = ir.parse_program(ALIASING)
    rewritten = after(before, [passes.rewrite(UNGUARDED)])
    assert "v = a" in ir.python_print(rewritten)
    report = check_equivalence(before, rewritten, ["main"], 30)
    assert report.counterexample is not None


def test_fold_mul_one_still_folds_where_nothing_writes_in_place() -> None:
    before = ir.parse_program(UNALIASED)
    rewritten = after(before, user_passes(ROOT / "nanopto" / "examples" / "rules" / "fold_mul_one.py"))
    assert "v = t" in ir.python_print(rewritten)
    assert equivalent(before, rewritten)


def test_constant_folding_computes_on_the_constants_and_associates() -> None:
    before = ir.parse_program(CONSTANTS)
    rewritten = after(before, user_passes(ROOT / "nanopto" / "examples" / "rules" / "fold_constants.py"))
    expected = CONSTANTS.replace("m = n + 1 + 2", "m = n + 3").replace("k = 2 * 3 - 1", "k = 5")
    ir.assert_structural_equal(rewritten, ir.parse_program(expected))
    assert equivalent(before, rewritten)


def test_the_typed_rules_file_runs_from_the_command_line_and_shows_in_the_trace(tmp_path: Path) -> None:
    program = tmp_path / "consts.py"
    program.write_text(CONSTANTS)
    rules = str(ROOT / "nanopto" / "examples" / "rules" / "fold_constants.py")
    done = run_cli("inline", str(program), "--rules", rules, "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    fold = next(p for p in payload["passes"] if p["pass"] == "fold-constants")
    assert "add-associates" in json.dumps(fold) and "fold-add" in json.dumps(fold)
    checked = run_cli("check", str(program), "--rules", rules, "--examples", "20", cwd=ROOT)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_shipped_rules_keep_drawn_aliasing_programs() -> None:
    """Programs steered toward `pl.mul(x, 1)` next to in-place writes (`programs(aliasing=True)`)."""
    extra = [p for path in RULES for p in user_passes(path)]

    @settings(
        max_examples=8, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(ops=["mul"], constants=[1], aliasing=True))
    def keeps(program: ir.Program) -> None:
        try:
            inlined = PassManager.default().run(program)
        except InlineError:
            return  # a refused program (a documented hazard) has nothing to fold
        rewritten = PassManager(extra).run(inlined)
        assert equivalent(inlined, rewritten, examples=5)

    keeps()
