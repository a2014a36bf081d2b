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

import dataclasses
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import egglog.bindings as eb

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.encoding import DecodeError, Decoder, Encoder, extract_roots
from nanopto.ir_terms.term_rows import SPAN, load_rows, run_text
from nanopto.passes.call_graph import check_acyclic, inline_functions_of
from nanopto.passes.call_sites import CallSite, HelperTemplate, find_sites
from nanopto.passes.dump_tags import site_templates
from nanopto.passes.inline_functions import callee_first_stages
from nanopto.passes.spliced_types import derive_types
from nanopto.rules import INLINE_RULESETS, Ruleset
from nanopto.rules.engine import (
    SaturationError,
    SaturationLimitError,
    SaturationLimits,
    Stage,
    StageReport,
)


@dataclass
class Iteration:
    """One egglog iteration of one ruleset inside a step (`rule_by_rule` mode)."""

    ruleset: str
    matches: dict[str, int]
    updated: bool
    function: n.Function | None
    """The function being rewritten as extraction sees it now; None while only helper terms remain."""


@dataclass
class Step:
    """One splice (`site` set) or the final clean-up (`site` None): what fired and the program after."""

    number: int
    site: CallSite | None
    report: StageReport
    program: n.Program
    iterations: list[Iteration] = field(default_factory=list)

    @property
    def description(self) -> str:
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
    current: dict[str, n.Function] = {f.name: f for f in program.function_list}
    state = _State()

    def snapshot() -> n.Program:
        return n.Program(program.name, tuple(current[f.name] for f in program.function_list), span=program.span)

    def expand(fn: n.Function, templates: dict[str, HelperTemplate]) -> Iterator[Step]:
        current[fn.name] = fn
        while True:
            sites = find_sites(fn, templates, state.sites)
            if not sites:
                return
            site = sites[0]
            state.sites += 1
            state.all_sites.append(site)
            chosen = site_templates([fn], [site], templates)
            stage = Stage(
                [fn], templates, [site], rulesets, limits, site_template=chosen, origins=state.origins, body_copies="rules"
            )
            iterations: list[Iteration] = []
            if rule_by_rule:
                fn, report = _run_iterating(stage, state, iterations)
            else:
                rewritten, decoder, report = stage.run(state.counter)
                state.counter = decoder.counter
                state.fresh.update(decoder.provenance)
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


def _run_iterating(stage: Stage, state: _State, iterations: list[Iteration]) -> tuple[n.Function, StageReport]:
    """`stage.run`, one ruleset iteration at a time, extracting after each iteration that changed
    the e-graph. The schedule is `engine.saturate`'s: each round runs the first ruleset once and
    every other one until it stops changing the e-graph, until a round changes nothing."""
    (_,) = stage.sites  # a step is one site
    report = StageReport(sites=1)
    encoder = Encoder(site_of=stage.site_marks())
    stage.encode(encoder, by_instance=False)
    egraph = eb.EGraph()
    fn = stage.functions[0]
    try:
        run_text(egraph, stage.rules_text(stage.rulesets))
        load_rows(egraph, encoder.rows)
        first = stage.rulesets[0]
        while True:
            changed = False
            for ruleset in stage.rulesets:
                while True:
                    out = egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(ruleset.name))))[0]
                    assert isinstance(out, eb.RunScheduleOutput)
                    run = out.report
                    report.iterations += 1
                    matches = {rule: count for rule, count in run.num_matches_per_rule.items() if count}
                    for rule, count in matches.items():
                        report.matches[rule] = report.matches.get(rule, 0) + count
                    if run.updated or matches:
                        snapshot = _try_extract(egraph, encoder, state.counter, fn) if run.updated else None
                        iterations.append(Iteration(ruleset.name, matches, run.updated, snapshot))
                    changed = changed or run.updated
                    if report.iterations >= stage.limits.max_iterations:
                        raise SaturationLimitError(
                            "iteration", stage.limits.max_iterations, [ruleset.name], "max_iterations="
                        )
                    if not run.updated or ruleset is first:
                        break
            if not changed:
                break
        (best,) = extract_roots(egraph, 1)
    except eb.EggSmolError as exc:
        raise SaturationError(f"egglog failed while inlining: {exc}") from None
    decoder = Decoder(
        vars=dict(encoder.vars), counter=state.counter, site_calls=encoder.site_calls, origins=state.origins
    )
    body = decoder.decode(best.termdag, best.term)
    state.counter = decoder.counter
    state.fresh.update(decoder.provenance)
    return dataclasses.replace(fn, body=body), report


def _try_extract(egraph: eb.EGraph, encoder: Encoder, counter: int, fn: n.Function) -> n.Function | None:
    """The function as extraction sees it now, or None while its body has only helper terms.

    A failed extraction is the expected answer mid-splice, so egglog's error log about the
    unextractable root (logger `egglog.extract`) is silenced for the attempt.
    """
    logger = logging.getLogger("egglog.extract")
    disabled = logger.disabled
    logger.disabled = True
    try:
        (best,) = extract_roots(egraph, 1)
        body = Decoder(
            vars=dict(encoder.vars), counter=counter, site_calls=encoder.site_calls
        ).decode(
            best.termdag, best.term
        )
    except (eb.EggSmolError, DecodeError):
        return None
    finally:
        logger.disabled = disabled
    return dataclasses.replace(fn, body=body)


__all__ = ["Iteration", "Step", "inline_steps"]
