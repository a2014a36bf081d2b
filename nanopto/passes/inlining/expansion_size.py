"""How many statements InlineFunctions would produce, estimated before anything is spliced.

Inlining copies a helper's whole expanded body into every call site, so nesting multiplies: if
`f_k` calls `f_{k-1}` twice, `main` calling `f_30` receives about 2^30 statements. Nothing in the
e-graph run is slow per step, but it would grow until a saturation limit stops it (or memory runs
out) after minutes. Counting first is linear in the call graph and answers in milliseconds:

    expanded(h) = own statements of h + sum over its call sites of expanded(callee)

(a site statement becomes the statement wiring the result, the callee's `return` becomes nothing,
and argument bindings add a few: the estimate is within a small factor, which is all a cap on
exponential growth needs). Helpers are counted once each, callee first, so the
estimate itself never blows up. When the statements inlining *adds* (the callers' own statements
are not counted) exceed `max_output_statements`, the pass refuses with `ExpansionTooLargeError`,
showing the estimate, the helpers whose nesting multiplies it, and how to raise the cap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nanopto.ir_terms.nodes import Call, Function, FunctionType, Program, SeqStmts, Stmt
from nanopto.ir_terms.schema import nodes_of
from nanopto.passes.inlining.call_graph import depth_of

DEFAULT_MAX_OUTPUT_STATEMENTS = 200_000
"""Far above any hand-written program (the benchmarks splice 1,000 sites into ~5,000 statements)
and far below what would exhaust memory in the e-graph."""


class ExpansionTooLargeError(ValueError):
    """Inlining would add more statements than the configured cap."""

    def __init__(self, estimate: int, cap: int, largest: str, largest_size: int, largest_own: int = 0, multipliers: str = "") -> None:
        self.estimate = estimate
        self.cap = cap
        grows = f"'{largest}' grows from {largest_own:,} to about {largest_size:,} statements"
        why = (
            f"The helpers that multiply (each copy copies their callees again): {multipliers}."
            if multipliers
            else "No helper multiplies: the statements come from many call sites of large helpers."
        )
        super().__init__(
            f"inlining would add about {estimate:,} statements, above the cap of {cap:,} ({grows}). {why} "
            f"If the output is intended, raise the cap: InlineFunctions(max_output_statements={_suggest(estimate)}) or "
            f"--pipeline 'inline-functions{{max-output-statements={_suggest(estimate)}}}'."
        )


def _suggest(estimate: int) -> int:
    return estimate + estimate // 10 + 1


@dataclass(frozen=True)
class ExpansionSizes:
    """Per function: statements of its own, after full expansion, and Inline call sites in it."""

    own: dict[str, int]
    expanded: dict[str, int]
    sites: dict[str, dict[str, int]]


def expansion_sizes(program: Program, inline: Mapping[str, Function]) -> ExpansionSizes:
    """The estimated statement count of every function after full expansion, with its own count
    and its Inline call sites (callee -> how many).

    Every call of an Inline helper counts as a site, including calls nested in expressions (the
    pass hoists those to their own statement first). `inline` must be acyclic.
    """
    result = ExpansionSizes({}, {}, {})
    depth = depth_of(dict(inline))
    order = sorted(inline, key=lambda name: depth[name])
    others = [f.name for f in program.function_list if f.func_type is not FunctionType.Inline]
    functions = {f.name: f for f in program.function_list}
    for name in [*order, *others]:
        own = added = 0
        sites: dict[str, int] = {}
        for node in nodes_of(functions[name].body):  # one walk: this runs on every program the pass sees
            if isinstance(node, Stmt) and not isinstance(node, SeqStmts):
                own += 1
            elif isinstance(node, Call) and node.function and node.op in inline:
                added += result.expanded[node.op]
                sites[node.op] = sites.get(node.op, 0) + 1
        result.own[name] = own
        result.expanded[name] = own + added
        result.sites[name] = sites
    return result


def expanded_sizes(program: Program, inline: Mapping[str, Function]) -> dict[str, int]:
    """The estimated statement count of every function after full expansion."""
    return expansion_sizes(program, inline).expanded


def check_expansion_size(program: Program, inline: Mapping[str, Function], cap: int) -> int:
    """The estimated number of statements inlining adds to the program; raises above `cap`.

    What the callers already hold is not counted: a 210,000-statement function that calls no
    helper adds nothing, however large it is."""
    sizes = expansion_sizes(program, inline)
    callers = [f.name for f in program.function_list if f.func_type is not FunctionType.Inline]
    added = {name: sizes.expanded[name] - sizes.own[name] for name in callers}
    estimate = sum(added.values())
    if estimate > cap:
        largest = max(callers, key=lambda name: added[name])
        raise ExpansionTooLargeError(
            estimate, cap, largest, sizes.expanded[largest], sizes.own[largest], _multipliers(sizes, inline)
        )
    return estimate


def _multipliers(sizes: ExpansionSizes, inline: Mapping[str, Function], shown: int = 3) -> str:
    """The helpers whose own call sites copy a helper that itself calls helpers, more than once:
    nesting that multiplies the output, largest first."""
    found = []
    for name in inline:
        nested = {callee: n for callee, n in sizes.sites[name].items() if sizes.sites[callee]}
        copies = sum(nested.values())
        if copies >= 2:
            calls = ", ".join(f"'{callee}' {n} time{'s' * (n != 1)}" for callee, n in sorted(nested.items()))
            found.append((sizes.expanded[name], f"'{name}' calls {calls}"))
    found.sort(key=lambda item: -item[0])
    more = f", and {len(found) - shown} more" if len(found) > shown else ""
    return "; ".join(text for _, text in found[:shown]) + more
