"""`assert_equivalent`: one input, both programs, in the reference interpreter, and an assertion
that says what differs as `nanopto check` does (docs/checking-a-pipeline.md): the inputs, both
results, which output differs, and each argument buffer (`Out`/`InOut`) the runs left different."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from nanopto.ir_terms.nodes import FunctionType, Program
from nanopto.verify.interpreter import interpret, values_equal


class NotEquivalentError(AssertionError):
    """Two programs computed differently on one input; the message says where."""


def show(value: Any) -> str:
    """A value as a user reads it: arrays as one-line lists, large ones summarized."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=", ", threshold=24, edgeitems=3, max_line_width=10**6).replace("\n", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return str(value)


def _entry(before: Program, after: Program) -> str:
    """The one function, not Inline, that both programs have (the last one, as `check` lists them)."""
    names = [fn.name for fn in after.function_list if fn.func_type is not FunctionType.Inline and fn.name in before.functions]
    if not names:
        raise ValueError("assert_equivalent: no function (other than Inline helpers) is in both programs; pass entry=")
    return names[-1]


def _run(program: Program, entry: str, args: Sequence[Any]) -> tuple[Any, tuple[Any, ...]]:
    """The result (an exception is a result too) and the arguments as the run left them."""
    fresh = tuple(copy.deepcopy(list(args)))
    try:
        result: Any = interpret(program, entry, *fresh)
    except Exception as exc:  # a program that fails must fail the same way after the pass
        result = exc
    return result, fresh


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b)
    return values_equal(a, b)


def _outputs(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, tuple):
        return [(f"output {i}", v) for i, v in enumerate(value)]
    return [("the result", value)]


def assert_equivalent(before: Program, after: Program, args: Sequence[Any], entry: str | None = None) -> None:
    """Run `entry` (default: the function both programs have that is not Inline) of `before` and
    of `after`, each on its own copy of `args`; raise NotEquivalentError naming every output and
    argument buffer that differs, with the inputs and both results."""
    entry = entry or _entry(before, after)
    result_before, buffers_before = _run(before, entry, args)
    result_after, buffers_after = _run(after, entry, args)
    params = [p.var.name for p in before.functions[entry].param_list]
    differs: list[str] = []
    if not _same(result_before, result_after):
        pairs = list(zip(_outputs(result_before), _outputs(result_after), strict=False))
        if isinstance(result_before, tuple) and isinstance(result_after, tuple) and len(result_before) == len(result_after):
            differs += [f"{name} differs: before {show(was)}, after {show(now)}" for (name, was), (_, now) in pairs if not _same(was, now)]
        else:
            differs.append(f"the result differs: before {show(result_before)}, after {show(result_after)}")
    for name, was, now in zip(params, buffers_before, buffers_after, strict=False):
        if not values_equal(was, now):
            differs.append(f"argument {name} afterwards differs: before {show(was)}, after {show(now)}")
    if not differs:
        return
    lines = [f"{entry}: NOT equivalent", "  inputs:"]
    lines += [f"    {name} = {show(value)}" for name, value in zip(params, args, strict=False)]
    lines.append(f"  before: {show(result_before)}\n  after:  {show(result_after)}")
    lines += [f"  {line}" for line in differs]
    raise NotEquivalentError("\n".join(lines))
