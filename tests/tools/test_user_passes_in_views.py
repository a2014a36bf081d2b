"""A user's own passes in every view: the `--html` rule trace and e-graph, `--egraph FILE.html`,
the notebook views and widget, and the playground, all read the one recorded run.

The program inlines a helper and multiplies by 1 (a fresh product it does not return, so the rule's
side conditions hold), so the user pass `fold-mul-one` (the shipped rules example) has one rule
that matches (`mul-x-one`) and one that never does (`mul-one-x`).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_egraph_viewer import _wait_drawn

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.cli import main
from nanopto.ir_terms.parser import parse_program
from nanopto.passes import PassContext
from nanopto.passes.rewrite import RewriteRules
from nanopto.tools import repr_hooks
from nanopto.tools.examples import rules_example_source
from nanopto.tools.notebook import egraph_widget, inline_egraphs, pipeline_egraphs
from nanopto.tools.pipeline_run import run_pipeline
from nanopto.tools.rules_file import load_rules_file
from nanopto.tools.serve import run_request

ROOT = Path(__file__).resolve().parents[2]
FOLD_RULES = ROOT / "nanopto" / "examples" / "rules" / "fold_mul_one.py"
UNFIRED = "rule 'mul-one-x' of pass 'fold-mul-one' never matched"

PROGRAM = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x):
        y = pl.add(x, x)
        return y

    @pl.function
    def main(self, a):
        z = self.helper(a)
        w = pl.mul(z, 1)
        r = pl.add(w, w)
        return r
"""


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One `nanopto inline --html --egraph` run with the user's rules, and what it printed."""
    folder = tmp_path_factory.mktemp("views")
    program = folder / "prog.py"
    program.write_text(PROGRAM)
    capsys_out = folder / "stdout.txt"
    with capsys_out.open("w") as out:
        code = main(
            ["inline", str(program), "--rules", str(FOLD_RULES), "--html", str(folder / "page.html"),
             "--egraph", str(folder / "egraph.html")],
            out=out,
        )
    assert code == 0
    return {
        "page": folder / "page.html",
        "egraph": folder / "egraph.html",
        "stdout": capsys_out.read_text(),
    }


def _stages(text: str) -> list[dict[str, Any]]:
    found = re.search(r'<script type="application/json" id="np-egraph-data">(.*?)</script>', text, re.S)
    assert found is not None
    stages: list[dict[str, Any]] = json.loads(found.group(1))
    return stages


def test_the_html_rule_trace_has_every_pass_and_warns_about_an_unmatched_user_rule(outputs: dict[str, Any]) -> None:
    text = html.unescape(outputs["page"].read_text())
    rules = text.split('id="rules"', 1)[1].split('id="egraph"', 1)[0]
    assert "pass inline-functions" in re.sub(r"<[^>]+>", "", rules)
    fold = rules.split('id="rules-fold-mul-one"', 1)[1]
    assert "your rules" in fold
    assert re.search(r"<code>mul-x-one</code></td><td class=\"num\">[1-9]", fold)
    assert re.search(r'<tr class="unfired"[^>]*>.*?<code>mul-one-x</code></td><td class="num">0</td><td>never matched', fold)
    assert UNFIRED in fold and UNFIRED in text.split('id="before"', 1)[0]  # said at the top too
    assert "pl.mul(" not in outputs["stdout"]  # the fold ran: stdout is the final program, still `pl`
    parse_program(outputs["stdout"], "<stdout>")


def test_both_egraph_pictures_hold_the_user_pass_grouped_by_pass(outputs: dict[str, Any]) -> None:
    for path in (outputs["page"], outputs["egraph"]):
        text = path.read_text()
        stages = _stages(text)
        assert [s["pass"] for s in stages] == ["inline-functions", "fold-mul-one"]
        assert stages[-1]["title"].startswith("pass fold-mul-one: every function (")
        assert '<optgroup label="inline-functions">' in text and '<optgroup label="fold-mul-one">' in text
        ops = set(stages[-1]["ops"])
        assert "Call" in ops or "AssignCall" in ops


def test_the_browser_draws_the_user_pass_egraph(page: Any, outputs: dict[str, Any]) -> None:
    page.goto(outputs["egraph"].as_uri())
    assert _wait_drawn(page) >= 3
    assert page.locator("#np-egraph optgroup[label='fold-mul-one'] option").count() == 1
    assert page.locator("#np-egraph select").input_value() == "1"  # the last saturation: the user's pass
    assert not page.errors


def test_a_rewrite_pass_shows_its_egraph_to_the_observer() -> None:
    [fold] = load_rules_file(str(FOLD_RULES))
    assert isinstance(fold, RewriteRules)
    seen: list[object] = []
    with PassContext(egraph_observer=lambda source, egraph, report: seen.append(source)):
        type(fold)(trace=True)(parse_program(PROGRAM.replace("self.helper(a)", "pl.add(a, a)")))
    assert seen and seen[0].name == "fold-mul-one"  # type: ignore[attr-defined]
    seen.clear()
    with PassContext(egraph_observer=lambda source, egraph, report: seen.append(source)):
        fold(parse_program(PROGRAM.replace("self.helper(a)", "pl.add(a, a)")))  # not traced: not shown
    assert not seen


def test_the_notebook_run_shows_every_pass_and_the_warning() -> None:
    repr_hooks.install()
    run = run_pipeline(parse_program(PROGRAM), rules=[str(FOLD_RULES)])
    assert run.pipeline == ["inline-functions", "fold-mul-one"]
    assert run.warnings() == [UNFIRED]
    fold = run.passes[-1]
    assert fold.user and fold.changed and fold.rules is not None and fold.rules["mul-x-one"] >= 1
    shown = html.unescape(run._repr_html_())  # type: ignore[attr-defined]
    assert "pass fold-mul-one" in re.sub(r"<[^>]+>", "", shown) and UNFIRED in shown
    assert "splice-assign" in shown  # inline-functions' own trace is still there
    assert "<script" not in shown  # notebook views run in untrusted notebooks too


def test_the_notebook_egraphs_cover_the_user_pass() -> None:
    program = parse_program(PROGRAM)
    raw = inline_egraphs(program, rules=[str(FOLD_RULES)])
    assert len(raw) == 2 and len(inline_egraphs(program)) == 1
    run = run_pipeline(program, rules=[str(FOLD_RULES)])
    assert len(pipeline_egraphs(run, folded=True)) == 2
    pytest.importorskip("anywidget")
    assert len(egraph_widget(run).egraphs) == 2
    assert len(egraph_widget(program, rules=[str(FOLD_RULES)]).egraphs) == 2


def test_the_playground_draws_and_warns_about_the_user_pass() -> None:
    got = run_request({"program": PROGRAM, "rules": rules_example_source("fold_mul_one")})
    assert [s["pass"] for s in got["egraphs"]] == ["inline-functions", "fold-mul-one"]
    assert got["warnings"] == [UNFIRED]
    assert got["passes"][-1]["never_fired"] == ["mul-one-x"]
