"""How many statements InlineFunctions would produce, estimated before anything is spliced.

Inlining copies a helper's whole expanded body into every call site, so nesting multiplies: if
`f_k` calls `f_{k-1}` twice, `main` calling `f_30` receives about 2^30 statements. Nothing in the
e-graph run is slow per step, but it would grow until a saturation limit stops it (or memory runs
out) after minutes. Counting first is linear in the call graph and answers in milliseconds:

    expanded(h) = own statements of h + sum over its call sites of expanded(callee)

(a site statement becomes the statement wiring the result, the callee's `return` becomes nothing,
and argument bindings add a few: the estimate is within a small factor, which is all a cap on
exponential growth needs). Helpers are counted once each, callee first, so the
estimate itself never blows up. Above `max_output_statements` the pass refuses with
`ExpansionTooLargeError`, showing the estimate and how to raise the cap.
"""

from __future__ import annotations

from collections.abc import Mapping

from nanopto.ir_terms.nodes import Call, Function, FunctionType, Program, SeqStmts, Stmt
from nanopto.ir_terms.schema import nodes_of
from nanopto.passes.inlining.call_graph import depth_of

DEFAULT_MAX_OUTPUT_STATEMENTS = 200_000
"""Far above any hand-written program (the benchmarks splice 1,000 sites into ~5,000 statements)
and far below what would exhaust memory in the e-graph."""


class ExpansionTooLargeError(ValueError):
    """Inlining would produce more statements than the configured cap."""

    def __init__(self, estimate: int, cap: int, largest: str, largest_size: int) -> None:
        self.estimate = estimate
        self.cap = cap
        super().__init__(
            f"inlining would produce about {estimate:,} statements, above the cap of {cap:,} "
            f"(largest: '{largest}' expands to {largest_size:,}). Nested Inline helpers multiply: a "
            "helper calling another twice per level doubles the output per level. If the output is "
            f"intended, raise the cap: InlineFunctions(max_output_statements={_suggest(estimate)}) or "
            f"--pipeline 'inline-functions{{max-output-statements={_suggest(estimate)}}}'."
        )


def _suggest(estimate: int) -> int:
    return estimate + estimate // 10 + 1


def expanded_sizes(program: Program, inline: Mapping[str, Function]) -> dict[str, int]:
    """The estimated statement count of every function after full expansion.

    Every call of an Inline helper counts as a site, including calls nested in expressions (the
    pass hoists those to their own statement first). `inline` must be acyclic.
    """
    sizes: dict[str, int] = {}
    depth = depth_of(dict(inline))
    order = sorted(inline, key=lambda name: depth[name])
    others = [f.name for f in program.function_list if f.func_type is not FunctionType.Inline]
    functions = {f.name: f for f in program.function_list}
    for name in [*order, *others]:
        size = 0
        for node in nodes_of(functions[name].body):  # one walk: this runs on every program the pass sees
            if isinstance(node, Stmt) and not isinstance(node, SeqStmts):
                size += 1
            elif isinstance(node, Call) and node.function and node.op in inline:
                size += sizes[node.op]
        sizes[name] = size
    return sizes


def check_expansion_size(program: Program, inline: Mapping[str, Function], cap: int) -> int:
    """The estimated size of the program after inlining; raises above `cap`."""
    sizes = expanded_sizes(program, inline)
    callers = {f.name: sizes[f.name] for f in program.function_list if f.func_type is not FunctionType.Inline}
    estimate = sum(callers.values())
    if estimate > cap:
        largest = max(callers, key=lambda name: callers[name])
        raise ExpansionTooLargeError(estimate, cap, largest, callers[largest])
    return estimate
