"""One drawn program through a pipeline, judged by the reference interpreter: the unit of work of
`nanopto soak` (docs/property-testing.md#soaking-a-pipeline).

The program runs before the pipeline and, after it, as the printed result parsed again (so the
printer and the parser are held to the pass's output too), on fresh copies of the same inputs; the
results and every argument buffer must agree. A verdict that is a finding carries a *signature*:
what went wrong and where, without the program's particulars, so that a campaign of a million
programs lists each distinct problem once.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes import PassManager
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.passes.pass_base import Pass
from nanopto.passes.rewrite import RewriteRules, rewrite_program
from nanopto.verify import RebindingCheckError
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal
from nanopto.verify.strategies import ENTRY

STEPS = 100_000
"""The interpreter's step budget per run: a drawn program takes a few hundred steps, so a run that
spends it is a loop that does not end (a finding when the pipeline made it so), caught in a fraction
of a second rather than at the interpreter's default of ten million steps."""

EQUAL = "equal"
REFUSED = "refused: "
"""The prefix of a refusal for a documented hazard (`InlineError.hazard`): the pass kept the
program's meaning by declining it, which is not a finding."""


@dataclass(frozen=True)
class Verdict:
    """What one program did: `kind` (`equal`, `refused: <hazard>`, `mismatch`, `checker failure`,
    `reparse` (the printed result does not parse), `refused, not a hazard`, `input does not run`, `error: <type>`), the finding's
    `signature` (empty when it is none) and a `detail` a reader needs."""

    kind: str
    signature: str = ""
    detail: str = ""

    @property
    def finding(self) -> bool:
        return not (self.kind == EQUAL or self.kind.startswith(REFUSED))


def message_shape(text: str) -> str:
    """An error message without its particulars (names, numbers, lines), for a signature."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    first = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'_'", first)
    first = re.sub(r"\b\w*\d\w*\b", "N", first)
    return first[:160]


@dataclass(frozen=True)
class PipelineRun:
    """A program through the pipeline: each pass's output, and the result printed and parsed again."""

    history: list[tuple[str, Program]]
    printed: str
    reparsed: Program


def run_pipeline(program: Program, manager: PassManager) -> PipelineRun | Verdict:
    """`program` through `manager`'s passes, or the verdict that ended the run (a refusal, a checker
    failure, an error, a printed result that does not parse). The pipeline is deterministic, so a
    program drawn again is judged on its inputs with the same run (`judge(..., ran=)`)."""
    try:
        history = manager.run_with_history(program)
    except InlineError as err:
        if err.hazard is not None:
            return Verdict(REFUSED + err.hazard.value)
        return Verdict("refused, not a hazard", "refused, not a hazard: " + message_shape(str(err)), str(err))
    except RebindingCheckError as err:
        return Verdict("checker failure", "checker failure: " + message_shape(str(err)), str(err))
    except Exception as err:  # a bug, not the program's fault: a finding, the campaign goes on
        kind = f"error: {type(err).__name__}"
        return Verdict(kind, f"{kind}: {message_shape(str(err))}", str(err)[:2000])
    after = history[-1][1] if history else program
    printed = python_print(after)
    try:
        reparsed = parse_program(printed, "<printed result>")
    except ParserError as err:
        return Verdict("reparse", "reparse: the printed result does not parse", f"{err}\n{printed}")
    return PipelineRun(history, printed, reparsed)


def judge(
    program: Program, args: tuple[Any, ...], manager: PassManager, ran: PipelineRun | Verdict | None = None
) -> Verdict:
    """Run `program` through `manager`'s passes (or take `ran`, that run) and compare it with the
    result in the interpreter."""
    if ran is None:
        ran = run_pipeline(program, manager)
    if isinstance(ran, Verdict):
        return ran
    history, printed, reparsed = ran.history, ran.printed, ran.reparsed
    before_args, after_args = copy.deepcopy(args), copy.deepcopy(args)
    try:
        expected = interpret(program, ENTRY, *before_args, max_steps=STEPS)
    except InterpreterError as err:  # the generator's fault, not the pipeline's
        return Verdict("input does not run", "input does not run: " + message_shape(str(err)), str(err))
    try:
        actual: Any = interpret(reparsed, ENTRY, *after_args, max_steps=STEPS)
    except InterpreterError as err:
        actual = f"<{err}>"
    if values_equal((expected, before_args), (actual, after_args)):
        return Verdict(EQUAL)
    culprit = _first_diverging_pass(program, args, list(zip(manager.passes, history, strict=True)), (expected, before_args))
    detail = f"before: {expected!r} {before_args!r}\nafter:  {actual!r} {after_args!r}\nresult:\n{printed}"
    return Verdict("mismatch", f"mismatch after {culprit}", detail)


def _first_diverging_pass(
    program: Program, args: tuple[Any, ...], history: list[tuple[Pass, tuple[str, Program]]], expected: Any
) -> str:
    """The first pass whose output computes something else, with the rules that matched in it
    when it is a rewrite pass: `fold-square (rules square)`."""
    current = program
    for pass_, (name, output) in history:
        fresh = copy.deepcopy(args)
        try:
            got: Any = interpret(output, ENTRY, *fresh, max_steps=STEPS)
        except InterpreterError as err:
            got = f"<{err}>"
        if not values_equal(expected, (got, fresh)):
            if isinstance(pass_, RewriteRules):
                matches = rewrite_program(current, pass_.rulesets).report.matches
                fired = sorted(rule for rule, count in matches.items() if count)
                return f"{name} (rules {', '.join(fired) or 'none'})"
            return name
        current = output
    return "the printed result"  # every pass agrees: the printer or the parser changed it
