"""Soak inlining under aliasing: many drawn aliasing-heavy programs through the default pipeline,
each run before and after by the reference interpreter.

    python bench/aliasing_soak.py                       20,000 programs, seed 0
    python bench/aliasing_soak.py --programs 300 --seed 5

Programs come from `verify.strategies.programs(aliasing=True)` (the shapes of
docs/08-aliasing-traps.md: one variable passed to several parameters, pl.Out scalars, in-place
writes, nested calls after an operand, tuple results read late, never or twice, tuple temporaries,
loop-carried values), with inputs from `inputs_for`, drawn by hypothesis from `--seed` without
shrinking. Each program is run through `PassManager.default()` (hoist-nested-calls, then
inline-functions, with its rebinding checker), and the interpreter compares the result and every
argument buffer. Prints the counts: programs, equal, refused by hazard (`InlineError.hazard`),
refused for another reason, mismatches, checker failures (`RebindingCheckError`), other errors,
seconds; the first few findings with their program. Exits 1 on any finding (anything but equal or
a hazard refusal).
"""

from __future__ import annotations

import argparse
import copy
import os
import signal
import sys
import time
from collections import Counter
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.printer import python_print
from nanopto.passes import PassManager
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.verify import RebindingCheckError
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal
from nanopto.verify.strategies import ENTRY, inputs_for, programs

SHOWN = 5
"""Findings printed in full (all are counted)."""


def outcome(program: Program, args: tuple[Any, ...]) -> tuple[str, str]:
    """(what happened, detail): `equal`, `refused: <hazard>`, `refused, not a hazard`, `mismatch`
    (the inlined program computes something else, or no longer runs), `checker failure`,
    `input does not run` or `error: <type>`."""
    try:
        inlined = PassManager.default().run(program)
    except InlineError as err:
        if err.hazard is not None:
            return f"refused: {err.hazard.value}", ""
        return "refused, not a hazard", str(err)
    except RebindingCheckError as err:
        return "checker failure", str(err)
    except Exception as err:  # a bug: counted and shown, the soak goes on
        return f"error: {type(err).__name__}", str(err)[:500]
    before, after = copy.deepcopy(args), copy.deepcopy(args)
    try:
        expected = interpret(program, ENTRY, *before)
    except InterpreterError as err:  # the generator's fault, not the pass's: counted, shown
        return "input does not run", str(err)
    try:
        actual: Any = interpret(inlined, ENTRY, *after)
    except InterpreterError as err:
        actual = f"<{err}>"
    if values_equal((expected, before), (actual, after)):
        return "equal", ""
    return "mismatch", f"expected {expected!r} {before!r}\n  got {actual!r} {after!r}\ninlined:\n{python_print(inlined)}"


def soak(count: int, seed_value: int) -> tuple[Counter[str], list[tuple[str, str, str]], float]:
    tally: Counter[str] = Counter()
    findings: list[tuple[str, str, str]] = []
    cases = programs(aliasing=True).flatmap(lambda p: st.tuples(st.just(p), inputs_for(p)))
    started = time.perf_counter()

    def stop(signum: int, frame: FrameType | None) -> None:
        """SIGINT / SIGTERM: the figures so far, then exit (hypothesis would go on drawing)."""
        print(f"interrupted after {sum(tally.values()):,} programs", flush=True)
        code = report(tally, findings, time.perf_counter() - started, seed_value)
        sys.stdout.flush()
        os._exit(code)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    @seed(seed_value)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases)
    def run(case: tuple[Program, tuple[Any, ...]]) -> None:
        program, args = case
        kind, detail = outcome(program, args)
        tally[kind] += 1
        if not (kind == "equal" or kind.startswith("refused: ")):
            findings.append((kind, detail, f"{python_print(program)}\ninputs: {args!r}"))
        total = sum(tally.values())
        if total % 1000 == 0:
            seconds = time.perf_counter() - started
            counts = ", ".join(f"{kind} {n:,}" for kind, n in sorted(tally.items()))
            print(f"  ... {total:,} programs, {seconds:.0f} s: {counts}", file=sys.stderr, flush=True)

    run()
    return tally, findings, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--programs", type=int, default=20_000, help="programs to draw (default 20,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    tally, findings, seconds = soak(args.programs, args.seed)
    return report(tally, findings, seconds, args.seed)


def report(tally: Counter[str], findings: list[tuple[str, str, str]], seconds: float, seed_value: int) -> int:
    """Print the figures; 1 when there is any finding."""
    total = sum(tally.values())
    refused = sum(n for kind, n in tally.items() if kind.startswith("refused: "))
    print(f"aliasing soak: {total:,} programs in {seconds:.0f} s ({total / max(seconds, 1e-9):.1f} per s), seed {seed_value}")
    print(f"  {'equal':<56} {tally['equal']:>7,}")
    print(f"  {'refused by a hazard':<56} {refused:>7,}  ({100 * refused / max(total, 1):.1f} %)")
    for kind, n in sorted(tally.items()):
        if kind.startswith("refused: "):
            print(f"    {kind[len('refused: '):]:<54} {n:>7,}")
    for kind in ("refused, not a hazard", "mismatch", "checker failure", "input does not run"):
        print(f"  {kind:<56} {tally[kind]:>7,}")
    for kind, n in sorted(tally.items()):
        if kind.startswith("error: "):
            print(f"  {kind:<56} {n:>7,}")
    for kind, detail, source in findings[:SHOWN]:
        print(f"\nFINDING ({kind}): {detail}\n{source}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
