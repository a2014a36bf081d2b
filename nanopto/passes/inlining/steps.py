"""InlineFunctions one call site at a time, for `nanopto step` (egglog's slide mode, xdsl-gui's
single rewrite): watch each splice happen, with the rules it fired.

The staging is InlineFunctions' own (`inline_program`): helpers callee-first by call depth, each
helper fully expanded before anything that calls it, nested calls hoisted first, then the
non-Inline functions. The difference is granularity: where `inline_program` saturates all sites of
a batch in one e-graph, a step is one `Stage` with one site. After each step the function is
re-scanned (`find_sites`), so the next site is classified against the program as it now is, which
is the program a reader sees printed. The fresh names can therefore be numbered differently from
`inline_program`'s, but the final program is the same up to alpha-renaming (`nanopto step` checks).

`rule_by_rule=True` goes finer: each step runs its rulesets one egglog iteration at a time and
records the matches of every iteration, and the function as extraction sees it then. Mid-way
through a splice the e-graph holds only helper terms (`SubSL`, `WireAssign`, ...), which are
`:unextractable`, so there is no program to show: `program` is None for such iterations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from nanopto import egraph
from nanopto.egraph import SaturationLimits, StageReport
from nanopto.ir_terms import nodes as n
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining.call_graph import check_acyclic, inline_functions_of
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate, find_sites
from nanopto.passes.inlining.driver import callee_first_stages
from nanopto.passes.inlining.dump_tags import site_templates
from nanopto.passes.inlining.spliced_types import derive_types
from nanopto.passes.inlining.stage import Snapshot, Stage
from nanopto.passes.inlining.tuple_results import decide_tuple_results, result_templates
from nanopto.rules import INLINE_RULESETS, Ruleset

HOIST_STEP = "hoist nested Inline calls onto their own bindings (hoist-nested-calls)"


@dataclass
class Iteration:
    """One egglog iteration of one ruleset inside a step (`rule_by_rule` mode)."""

    ruleset: str
    matches: dict[str, int]
    updated: bool
    function: n.Function | None
    """The function being rewritten as extraction sees it now; None while only helper terms remain."""

    @classmethod
    def seen(cls, iteration: egraph.Iteration, snapshot: Snapshot) -> Iteration:
        functions = snapshot() if iteration.updated else None
        return cls(iteration.ruleset, iteration.matches, iteration.updated, functions[0] if functions else None)


@dataclass
class Step:
    """One splice (`site` set) or the final clean-up (`site` None): what fired and the program after."""

    number: int
    site: CallSite | None
    report: StageReport
    program: n.Program
    iterations: list[Iteration] = field(default_factory=list)
    title: str | None = None
    """Overrides the description of a step that is not a splice (the hoisting step)."""

    @property
    def description(self) -> str:
        if self.title is not None:
            return self.title
        if self.site is None:
            return "drop the Inline helpers (every call site is spliced) and type the receivers"
        span = self.site.span
        line = f"line {span.line}" if span is not None else "line ?"
        return f"splice '{self.site.helper}' into '{self.site.caller}' at {line}"


def inline_steps(
    program: n.Program,
    rulesets: Sequence[Ruleset] = INLINE_RULESETS,
    limits: SaturationLimits | None = None,
    *,
    rule_by_rule: bool = False,
) -> Iterator[Step]:
    """Yield one Step per call site in callee-first order, then the final Step (site None).

    The last Step's program is InlineFunctions' result up to the names of fresh locals. A program
    without Inline functions yields nothing.
    """
    inline = inline_functions_of(program)
    if not inline:
        return
    check_acyclic(inline)
    limits = limits or SaturationLimits()
    state = _State()
    hoisted = hoist_program(program)
    if hoisted is not program:
        state.steps += 1
        yield Step(state.steps, None, StageReport(), hoisted, title=HOIST_STEP)
        program = hoisted
    current: dict[str, n.Function] = {f.name: f for f in program.function_list}

    def snapshot() -> n.Program:
        return n.Program(program.name, tuple(current[f.name] for f in program.function_list), span=program.span)

    def expand(fn: n.Function, templates: dict[str, HelperTemplate]) -> Iterator[Step]:
        current[fn.name] = fn
        while True:
            sites = decide_tuple_results(fn, find_sites(fn, templates, state.sites), templates)
            if not sites:
                return
            site = sites[0]
            state.sites += 1
            state.all_sites.append(site)
            chosen = site_templates([site], templates)
            result_templates([site], templates, chosen)
            iterations: list[Iteration] = []

            def record(iteration: egraph.Iteration, snapshot: Snapshot, seen: list[Iteration] = iterations) -> None:
                seen.append(Iteration.seen(iteration, snapshot))

            stage = Stage(
                [fn],
                templates,
                [site],
                rulesets,
                limits,
                site_template=chosen,
                origins=state.origins,
                each_iteration=record if rule_by_rule else None,
            )
            rewritten, decoder, report = stage.run(state.counter)
            state.counter = decoder.counter
            state.fresh.update(var.id for var in decoder.renamed.values())
            fn = rewritten[0]
            current[fn.name] = fn
            state.steps += 1
            yield Step(state.steps, site, report, snapshot(), iterations)

    # The pass's own callee-first driver, one site at a time instead of one batch at a time.
    stages = callee_first_stages(program, inline)
    functions, templates = next(stages)
    while True:
        for fn in functions:
            yield from expand(fn, templates)
        try:
            functions, templates = stages.send([current[fn.name] for fn in functions])
        except StopIteration:
            break
    callers = [f for f in program.function_list if f.func_type is not n.FunctionType.Inline]
    spliced = [_receivers(s) for s in state.all_sites]
    targets = {var_id for ids in spliced for var_id in ids} | state.fresh
    final = n.Program(
        program.name, tuple(derive_types(current[f.name], targets) for f in callers), span=program.span
    )
    state.steps += 1
    yield Step(state.steps, None, StageReport(), final)


@dataclass
class _State:
    sites: int = 0
    counter: int = 0
    steps: int = 0
    all_sites: list[CallSite] = field(default_factory=list)
    fresh: set[int] = field(default_factory=set)
    origins: dict[int, str] = field(default_factory=dict)
    """Ids of the locals the steps created (typed from their definitions at the end, as the pass does)."""


def _receivers(site: CallSite) -> set[int]:
    return {site.stmt.var.id} if isinstance(site.stmt, n.AssignStmt) else set()


__all__ = ["HOIST_STEP", "Iteration", "Step", "inline_steps"]
