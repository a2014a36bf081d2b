"""`nanopto check`: does a pipeline keep what a program computes? Run it before and after in the
reference interpreter on drawn inputs, and show the first input on which the two differ.

Each entry function is run on fresh copies of the same arguments before and after the pipeline;
the results *and* the argument buffers (an `Out`/`InOut` tensor is written in place) must agree
(`values_equal`). Inputs come from hypothesis (`verify.inputs.arguments_for`), derandomized, so
the same file gives the same verdict, and a counterexample is shrunk to a small one.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings

from nanopto.ir_terms.nodes import FunctionType, Program
from nanopto.verify.inputs import arguments_for
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal


@dataclass(frozen=True)
class Counterexample:
    """The first input (after shrinking) on which `entry` computes differently."""

    entry: str
    params: tuple[str, ...]
    args: tuple[Any, ...]
    before: Any
    after: Any
    buffers_before: tuple[Any, ...]
    buffers_after: tuple[Any, ...]


@dataclass
class CheckReport:
    """The verdict per entry: how many inputs agreed, or the counterexample."""

    runs: dict[str, int] = field(default_factory=dict)
    counterexample: Counterexample | None = None
    notes: dict[str, str] = field(default_factory=dict)
    """Per entry, why fewer inputs than asked for were compared."""

    @property
    def equivalent(self) -> bool:
        return self.counterexample is None


class _Differs(Exception):
    def __init__(self, found: Counterexample) -> None:
        super().__init__(found.entry)
        self.found = found


MAX_STEPS = 1_000_000
"""The interpreter's default step budget per run (`--max-steps`): about 3 s, where a program's own loops are short. A run
that spends it (a loop that does not terminate on the drawn input) stops the check of its function
(`RunawayInput`), rather than spending the budget again on each of 100 inputs."""

MAX_SECONDS = 120.0
"""Wall-clock seconds per function: once spent, the check stops drawing and says how many inputs it
compared (`CheckReport.notes`)."""


class RunawayInput(Exception):
    """The program before the pipeline ran past `MAX_STEPS` on a drawn input: nothing to compare.
    The command line reports it as the user's program, located at the statement it was running."""

    def __init__(
        self, entry: str, params: tuple[str, ...], args: tuple[Any, ...], error: InterpreterError, max_steps: int = MAX_STEPS
    ) -> None:
        shown = ", ".join(f"{name} = {show(value)}" for name, value in zip(params, args, strict=True))
        where = f"{error.span}: " if error.span is not None and error.span.is_valid() else ""
        super().__init__(
            f"{where}{entry}({shown}) ran past {max_steps:,} interpreter steps (a loop that does not "
            "terminate on this input?); nanopto check cannot compare it: bound the loop, check "
            "another function with --entry, or allow more steps with --max-steps"
        )


def _run(program: Program, entry: str, args: tuple[Any, ...], max_steps: int) -> tuple[Any, tuple[Any, ...]]:
    """The result, and the arguments as the run left them; an error is a result too."""
    fresh = copy.deepcopy(args)
    try:
        result: Any = interpret(program, entry, *fresh, max_steps=max_steps)
    except InterpreterError as exc:  # a program that fails must fail after the pass too
        result = _Failure(type(exc).__name__, str(exc), runaway=exc.reason.startswith("step budget of"), error=exc)
    except Exception as exc:
        result = _Failure(type(exc).__name__, str(exc))
    return result, fresh


@dataclass(frozen=True)
class _Failure:
    """A run that raised. Two failures agree when the error is of the same kind: after inlining
    the message legitimately names other functions (the helper's frame is gone)."""

    kind: str
    message: str
    runaway: bool = False
    error: InterpreterError | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"error: {self.kind}: {self.message.splitlines()[0]}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, _Failure) or isinstance(b, _Failure):
        return isinstance(a, _Failure) and isinstance(b, _Failure) and a.kind == b.kind
    return values_equal(a, b)


def default_entries(before: Program, after: Program) -> list[str]:
    """Every function that is not Inline and exists on both sides."""
    return [
        fn.name
        for fn in after.function_list
        if fn.func_type is not FunctionType.Inline and fn.name in before.functions
    ]


def check_equivalence(
    before: Program, after: Program, entries: Sequence[str], examples: int, max_steps: int = MAX_STEPS
) -> CheckReport:
    """Run each entry on up to `examples` drawn inputs, each run within `max_steps` interpreter
    steps; stop at the first difference."""
    report = CheckReport()
    for entry in entries:
        runs = _check_entry(before, after, entry, examples, max_steps)
        if isinstance(runs, Counterexample):
            report.counterexample = runs
            return report
        report.runs[entry], timed_out = runs
        if timed_out:
            report.notes[entry] = f"stopped after {MAX_SECONDS:g} s of running"
        elif report.runs[entry] < examples:
            report.notes[entry] = (
                "every distinct input there is to draw: its parameters take few values "
                "(scalars from small ranges, extents 1 to 4)"
            )
    return report


class _OutOfTime(BaseException):
    """`MAX_SECONDS` spent on one function: hypothesis is left with the inputs compared so far (a
    BaseException, so that hypothesis stops at once rather than shrink it as a failure)."""


class _Runaway(BaseException):
    """Carries a RunawayInput out of hypothesis without shrinking (each try would run away again)."""

    def __init__(self, error: RunawayInput) -> None:
        super().__init__(str(error))
        self.error = error


def _check_entry(
    before: Program, after: Program, entry: str, examples: int, max_steps: int
) -> tuple[int, bool] | Counterexample:
    """How many inputs agreed (and whether the time ran out first), or the (shrunk) first one that
    did not. Raises RunawayInput when the program runs away on an input before the pipeline."""
    fn = before.functions[entry]
    params = tuple(p.var.name for p in fn.param_list)
    runs = 0
    deadline = time.monotonic() + MAX_SECONDS

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(arguments_for(fn))
    def agree(args: tuple[Any, ...]) -> None:
        nonlocal runs
        if time.monotonic() > deadline:
            raise _OutOfTime
        runs += 1
        result_before, buffers_before = _run(before, entry, args, max_steps)
        if isinstance(result_before, _Failure) and result_before.runaway and result_before.error is not None:
            raise _Runaway(RunawayInput(entry, params, args, result_before.error, max_steps))
        result_after, buffers_after = _run(after, entry, args, max_steps)
        if not (_same(result_before, result_after) and _same(buffers_before, buffers_after)):
            raise _Differs(Counterexample(entry, params, args, result_before, result_after, buffers_before, buffers_after))

    try:
        agree()
    except _Differs as differs:
        return differs.found
    except _OutOfTime:
        return runs, True
    except _Runaway as runaway:
        raise runaway.error from None
    return runs, False


def show(value: Any) -> str:
    """A value as a user reads it: arrays as lists."""
    if isinstance(value, np.ndarray):  # one line, large arrays summarized
        return np.array2string(value, separator=", ", threshold=24, edgeitems=3, max_line_width=10**6).replace("\n", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return str(value)
