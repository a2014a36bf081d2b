"""`nanopto step FILE.py`: InlineFunctions one call site at a time, then each user pass.

Each step prints its number, what it does (the helper, the caller, the line and the statement as
written), the rules that fired with their match counts, and the whole program after it. With
`rule_by_rule` every egglog iteration inside a splice is listed too, with the caller as extraction
sees it at that moment (or a note that only helper terms exist yet). The last line says whether the
stepped result equals what `nanopto inline` produces, so the stepping can never teach a different
answer than the pass computes. A user pass lists every rule of its rulesets with its matches, and
a rule that never matched is a warning, as in every other view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TextIO

from nanopto.egraph import StageReport
from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.structural import structural_equal
from nanopto.passes.context import PassContext
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.steps import Step, inline_steps
from nanopto.passes.pass_base import Pass
from nanopto.passes.rewrite import RewriteResult, RewriteRules
from nanopto.rules import INLINE_RULESETS, Ruleset
from nanopto.tools.pipeline_run import unfired_warning


def _ordered(matches: dict[str, int], rulesets: Sequence[Ruleset]) -> list[tuple[str, str, int]]:
    """(ruleset, rule, count) for the rules that fired, in schedule order."""
    rows = [(rs.name, r.name, matches[r.name]) for rs in rulesets for r in rs.rules if matches.get(r.name)]
    known = {rule for _, rule, _ in rows}
    rows += [("?", rule, count) for rule, count in sorted(matches.items()) if count and rule not in known]
    return rows


def write_rules_fired(report: StageReport, rulesets: Sequence[Ruleset], out: TextIO) -> None:
    rows = _ordered(report.matches, rulesets)
    total = sum(count for _, _, count in rows)
    out.write(f"rules fired: {total} matches in {report.iterations} iterations\n")
    rs_width = max((len(rs) for rs, _, _ in rows), default=0)
    width = max((len(rule) for _, rule, _ in rows), default=0)
    for rs, rule, count in rows:
        out.write(f"    {rs:>{rs_width}}  {rule:<{width}}  x{count}\n")


def write_pass_rules(report: StageReport, pass_: RewriteRules, out: TextIO) -> list[str]:
    """Every rule of a rewrite pass with its matches, zero included; returns the rules that never
    matched (the caller warns about them, as `nanopto inline` does)."""
    rows = [(rs.name, r.name, report.matches.get(r.name, 0)) for rs in pass_.rulesets for r in rs.rules]
    out.write(f"rules: {sum(c for _, _, c in rows)} matches in {report.iterations} iterations\n")
    rs_width = max((len(rs) for rs, _, _ in rows), default=0)
    width = max((len(rule) for _, rule, _ in rows), default=0)
    for rs, rule, count in rows:
        out.write(f"    {rs:>{rs_width}}  {rule:<{width}}  x{count}{'   (never matched)' if not count else ''}\n")
    return [rule for _, rule, count in rows if not count]


def _statement(step: Step, lines: list[str]) -> str:
    assert step.site is not None
    span = step.site.span
    if span is not None and 0 < span.line <= len(lines):
        return lines[span.line - 1].strip()
    return python_print(step.site.stmt).strip()


def _write_iterations(step: Step, out: TextIO) -> None:
    shown = ""
    for i, it in enumerate(step.iterations, 1):
        fired = ", ".join(f"{rule} x{count}" for rule, count in it.matches.items()) or "nothing new"
        out.write(f"  iteration {i} [{it.ruleset}]: {fired}\n")
        if not it.updated:
            continue
        if it.function is None:
            out.write("      (no program to show yet: the spliced part is still helper terms)\n")
            continue
        text = python_print(it.function).rstrip("\n")
        if text != shown:
            out.write("\n".join("      " + line for line in text.splitlines()) + "\n")
            shown = text


def _pause(out: TextIO, stdin: TextIO | None) -> bool:
    """Wait for Enter; False when the user typed q (stop). End of input stops pausing."""
    if stdin is None:
        return True
    out.write("-- Enter: next step, q: stop --\n")
    out.flush()
    answer = stdin.readline()
    return answer.strip().lower() != "q"


def run_steps(
    source: str,
    program: Program,
    user_passes: Sequence[Pass],
    out: TextIO,
    *,
    rule_by_rule: bool = False,
    stdin: TextIO | None = None,
    warn: Callable[[str], None] | None = None,
) -> int:
    """Print every step; return the number of steps taken. `stdin` set means pause between steps;
    `warn` is told each rule of a user pass that never matched (`unfired_warning`)."""
    lines = source.splitlines()
    number = 0
    inlined = program
    for step in inline_steps(program, rule_by_rule=rule_by_rule):
        number = step.number
        inlined = step.program
        if step.site is None:
            out.write(f"=== step {step.number}: {step.description}\n")
        else:
            site = step.site
            out.write(f"=== step {step.number}: {step.description}: `{_statement(step, lines)}`\n")
            out.write(f"site {site.number} in {site.caller}, form [{site.form.value}]\n")
            write_rules_fired(step.report, INLINE_RULESETS, out)
            if rule_by_rule:
                _write_iterations(step, out)
        out.write(python_print(step.program).rstrip("\n") + "\n\n")
        if stdin is not None and not _pause(out, stdin):
            return number
    if number == 0:
        out.write("no Inline call sites: inline-functions has nothing to step through\n\n")
    else:
        same = structural_equal(inlined, inline_program(hoist_program(program)).program, enable_auto_mapping=True)
        verdict = "the same program (up to local names)" if same else "a DIFFERENT program (a bug in nanopto)"
        out.write(f"# stepping gave {verdict} as inline-functions in one run\n\n")
    current = inlined
    for pass_ in user_passes:
        number += 1
        out.write(f"=== step {number}: pass {pass_.name}\n")
        with PassContext() as context:
            if isinstance(pass_, RewriteRules):
                current = dataclasses.replace(pass_, trace=True)(current)
                result = context.traces[-1][1]
                assert isinstance(result, RewriteResult)
                for rule in write_pass_rules(result.report, pass_, out):
                    out.write(f"warning: {unfired_warning(pass_.name, rule)}\n")
                    if warn is not None:
                        warn(unfired_warning(pass_.name, rule))
            else:
                current = pass_(current)
        out.write(python_print(current).rstrip("\n") + "\n\n")
        if stdin is not None and not _pause(out, stdin):
            return number
    out.write(f"# done: {number} step{'s' if number != 1 else ''}\n")
    return number


__all__ = ["run_steps", "write_pass_rules", "write_rules_fired"]
