"""InlineFunctions: eliminate `FunctionType.Inline` functions by splicing at every call site.

`docs/specification.md` states the pass. Python classifies (call graph, cycles, sites, the
rebinding table) and egglog rewrites: each stage loads the functions being expanded plus the
already-expanded helpers they call into one e-graph, runs the `splice`/`subst`/`project`/
`discard`/`writeback` rulesets to saturation and extracts the spliced bodies. Stages go
callee-first (helpers of depth 1, then 2, ..., then the remaining functions), so every helper a
stage splices is itself fully expanded (docs/specification.md, "Callee-first order").
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from nanopto.egraph import Iteration, SaturationLimits, StageReport
from nanopto.gc_pause import gc_paused
from nanopto.ir_terms.nodes import AssignStmt, Function, FunctionType, Program, Var
from nanopto.ir_terms.schema import remembered_walks
from nanopto.passes.context import PassContext
from nanopto.passes.hoist_nested_calls import HoistNestedCalls, is_hoisted
from nanopto.passes.inlining.call_graph import (
    check_acyclic,
    depth_of,
    inline_callees,
    inline_functions_of,
)
from nanopto.passes.inlining.call_sites import (
    BindingPolicy,
    CallSite,
    HelperTemplate,
    bind_argument,
    find_sites,
    make_template,
    write_back_templates,
)
from nanopto.passes.inlining.dump_tags import site_templates
from nanopto.passes.inlining.expansion_size import DEFAULT_MAX_OUTPUT_STATEMENTS, check_expansion_size
from nanopto.passes.inlining.splice_context import check_sites
from nanopto.passes.inlining.spliced_types import derive_types, renamed_copies
from nanopto.passes.inlining.stage import Snapshot, Stage, StageObserver
from nanopto.passes.inlining.tuple_results import decide_tuple_results, result_templates
from nanopto.passes.pass_base import Pass, check_limit_options
from nanopto.passes.pass_manager import PropertyRequirementError
from nanopto.passes.registry import register_pass
from nanopto.rules import INLINE_RULESETS, Ruleset
from nanopto.verify.check_rebinding import RebindingCheckError, check_rebinding
from nanopto.verify.properties import IRProperty, verify_properties


@dataclass
class InlineResult:
    """Everything one run of the pass learned: the program, its sites and the rule report."""

    program: Program
    sites: list[CallSite] = field(default_factory=list)
    report: StageReport = field(default_factory=StageReport)
    provenance: dict[int, int] = field(default_factory=dict)
    """Var id of each fresh local -> the site number it was created for."""
    copies: dict[tuple[int, int], str] = field(default_factory=dict)
    """(callee Var id, site number) -> the name of the fresh local made for it."""
    before: Program | None = None
    """The input program, for before/after views."""
    rulesets: tuple[str, ...] = ()
    """The names of the rulesets that ran, in schedule order."""


Work = tuple[list[Function], dict[str, HelperTemplate]]


def callee_first_stages(program: Program, inline: dict[str, Function]) -> Generator[Work, list[Function], list[Function]]:
    """The callee-first order (docs/specification.md, "Callee-first order"), shared by the pass and
    the stepper.

    Yields (functions, templates) to expand — the Inline helpers of depth 1, 2, ... (each batch's
    callees already expanded), then every other function — and is sent back the expanded functions.
    Templates are made from expanded helpers. Returns the expanded non-Inline functions.
    """
    depth = depth_of(inline)
    expanded: dict[str, Function] = {}
    templates: dict[str, HelperTemplate] = {}

    def prepare(functions: list[Function]) -> list[Function]:
        for fn in functions:
            for name in inline_callees(fn, inline):
                if name not in templates:
                    templates[name] = make_template(expanded[name])
        return functions

    for level in range(max(depth.values()) + 1):
        batch = prepare([inline[name] for name in inline if depth[name] == level])
        for fn in (yield batch, templates):
            expanded[fn.name] = fn
    callers = prepare([f for f in program.function_list if f.func_type is not FunctionType.Inline])
    result: list[Function] = yield callers, templates
    return result


@dataclass
class StageRun:
    """One saturation run of the staging driver: its sites and what it made of them."""

    sites: list[CallSite]
    functions: list[Function]
    """The stage's functions after splicing, in the order given."""
    report: StageReport
    iterations: list[tuple[Iteration, list[Function] | None]] = field(default_factory=list)
    """With `record_iterations`: each ruleset iteration and the functions as extraction saw them
    then (None while only helper terms existed)."""


@dataclass
class Staging:
    """What the driver carries from stage to stage: numbering, fresh names, the sites so far."""

    sites: list[CallSite] = field(default_factory=list)
    counter: int = 0
    origins: dict[int, str] = field(default_factory=dict)
    fresh: dict[tuple[int, int], Var] = field(default_factory=dict)
    spliced: dict[int, HelperTemplate] = field(default_factory=dict)
    """Site number -> the template the stock rules spliced there (`spliced_types.renamed_copies`)."""
    times: dict[str, float] = field(default_factory=dict)

    def clock(self, phase: str, since: float) -> float:
        """Add the time since `since` to `phase`; return now."""
        now = time.perf_counter()
        self.times[phase] = self.times.get(phase, 0.0) + now - since
        return now


def run_stages(
    program: Program,
    inline: dict[str, Function],
    state: Staging,
    *,
    rulesets: Sequence[Ruleset] = INLINE_RULESETS,
    limits: SaturationLimits | None = None,
    binding_policy: BindingPolicy = bind_argument,
    one_site_at_a_time: bool = False,
    record_iterations: bool = False,
    observer: StageObserver | None = None,
    transcript: list[str] | None = None,
) -> Generator[StageRun, None, list[Function]]:
    """The one staging driver of InlineFunctions: the pass, the stepper and the planting hook run it.

    Callee-first (`callee_first_stages`), it finds each batch's sites with `binding_policy`
    deciding which arguments are bound to fresh locals, chooses their templates and saturates a
    `Stage`, yielding each run. The pass splices a whole batch in one stage; the stepper
    (`one_site_at_a_time`) one site per stage, re-scanning the function after each so the next
    site is classified against the program as it now is. Returns the expanded non-Inline functions;
    `finish` types them and checks the result.
    """
    limits = limits or SaturationLimits()

    def stage(functions: list[Function], templates: dict[str, HelperTemplate], sites: list[CallSite]) -> StageRun:
        started = time.perf_counter()
        chosen = site_templates(sites, templates)
        result_templates(sites, templates, chosen)
        write_back_templates(sites, templates, chosen)
        state.clock("classify", started)
        run = StageRun(sites, functions, StageReport())

        def record(iteration: Iteration, snapshot: Snapshot) -> None:
            run.iterations.append((iteration, snapshot() if iteration.updated else None))

        rewritten, decoder, report = Stage(
            functions,
            templates,
            sites,
            rulesets,
            limits,
            site_template=chosen,
            origins=state.origins,
            observer=observer,
            each_iteration=record if record_iterations else None,
            transcript=transcript,
        ).run(state.counter)
        state.counter = decoder.counter
        state.sites += sites
        if tuple(rulesets) == INLINE_RULESETS:  # other rules may rewrite a copy beyond renaming it
            state.spliced.update((site.number, templates[chosen.get(site.number, site.helper)]) for site in sites)
        state.fresh.update(decoder.renamed)
        run.functions, run.report = rewritten, report
        return run

    def sites_of(fn: Function, templates: dict[str, HelperTemplate], first: int) -> list[CallSite]:
        sites = find_sites(fn, templates, first, binding_policy)
        check_sites(fn, sites, templates)
        return decide_tuple_results(fn, sites, templates)

    stages = callee_first_stages(program, inline)
    started = time.perf_counter()
    functions, templates = next(stages)
    while True:
        state.clock("templates", started)  # the driver's own work: making templates
        expanded: list[Function] = []
        if one_site_at_a_time:
            for fn in functions:
                while True:
                    started = time.perf_counter()
                    sites = sites_of(fn, templates, len(state.sites))
                    state.clock("classify", started)
                    if not sites:
                        break
                    run = stage([fn], templates, sites[:1])
                    fn = run.functions[0]
                    yield run
                expanded.append(fn)
        else:
            started = time.perf_counter()
            sites = []
            for fn in functions:
                sites += sites_of(fn, templates, len(state.sites) + len(sites))
            state.clock("classify", started)
            if sites:
                run = stage(functions, templates, sites)
                expanded = run.functions
                yield run
            else:
                expanded = functions
        started = time.perf_counter()
        try:
            functions, templates = stages.send(expanded)
        except StopIteration as done:
            state.clock("templates", started)
            callers: list[Function] = done.value
            return callers


def finish(
    program: Program, expanded_callers: list[Function], state: Staging, *, check: bool = True
) -> tuple[Program, dict[tuple[int, int], str]]:
    """The spliced program: the receivers and fresh locals typed, and (with `check`) the rebinding
    table checked (docs/specification.md, "Argument binding"). Returns it and the copies' names."""
    started = time.perf_counter()
    copies = {key: var.name for key, var in state.fresh.items()}
    # The Vars whose types are derived, by caller: its sites' receivers and the fresh locals.
    caller_of = {site.number: site.caller for site in state.sites}
    target_vars: dict[str, list[Var]] = {}
    for site in state.sites:
        if isinstance(site.stmt, AssignStmt):
            target_vars.setdefault(site.caller, []).append(site.stmt.var)
    for (_, site_number), var in state.fresh.items():
        target_vars.setdefault(caller_of[site_number], []).append(var)
    targets = {var.id for held in target_vars.values() for var in held}
    callers = {fn.name for fn in expanded_callers}
    renamed = renamed_copies([site for site in state.sites if site.caller in callers], state.spliced, state.fresh)
    rewritten = tuple(derive_types(fn, targets, target_vars.get(fn.name, []), renamed) for fn in expanded_callers)
    result = Program(program.name, rewritten, span=program.span)
    started = state.clock("types", started)
    if check:
        problems = check_rebinding(program, result, state.sites, copies)
        state.clock("rebinding-check", started)
        if problems:
            raise RebindingCheckError(problems)
    return result, copies


def check_step(before: Program, after: Program, sites: list[CallSite], state: Staging) -> None:
    """The rebinding table checked for `sites`, spliced into `before` to give `after` (one step of
    the stepper: `finish` checks the pass's whole run the same way)."""
    started = time.perf_counter()
    copies = {key: var.name for key, var in state.fresh.items()}
    problems = check_rebinding(before, after, sites, copies)
    state.clock("rebinding-check", started)
    if problems:
        raise RebindingCheckError(problems)


def inline_helpers(program: Program, max_output_statements: int = DEFAULT_MAX_OUTPUT_STATEMENTS) -> dict[str, Function]:
    """The Inline functions `run_stages` expands, checked before any splicing as the pass and the
    stepper both check them: no cycle among them (docs/specification.md, "Call graph and cycles"), and an
    expansion under `max_output_statements`. Empty when there is nothing to inline."""
    inline = inline_functions_of(program)
    if inline:
        check_acyclic(inline)
        check_expansion_size(program, inline, max_output_statements)
    return inline


def inline_program(
    program: Program,
    rulesets: Sequence[Ruleset] = INLINE_RULESETS,
    limits: SaturationLimits | None = None,
    observer: StageObserver | None = None,
    max_output_statements: int = DEFAULT_MAX_OUTPUT_STATEMENTS,
    transcript: list[str] | None = None,
    binding_policy: BindingPolicy = bind_argument,
    check: bool = True,
) -> InlineResult:
    """Run InlineFunctions' splicing and keep the details (`--trace`, the views, the checker and the
    tests read them). The program must have its nested Inline calls hoisted: the pass
    (`InlineFunctions`) runs `hoist-nested-calls` first when they are not; this function is the
    splicing step alone.

    `observer` sees each stage's e-graph at saturation (`--egraph` and `--html` draw it).
    `binding_policy` decides which arguments are bound to fresh locals (the specification's,
    `call_sites.bind_argument`, unless a teaching hook plants another: `nanopto.tools.planting`);
    `check=False` skips the rebinding checker, to see what a wrong policy would emit.
    """
    with gc_paused(), remembered_walks():  # the requirement's walk of each body serves the pass too
        unhoisted = [d for d in verify_properties(program, [IRProperty.NestedCallsHoisted]) if d.is_error]
        if unhoisted:
            raise PropertyRequirementError(
                "inline-functions",
                IRProperty.NestedCallsHoisted,
                "the program has nested Inline calls; call the pass (passes.inline_functions()), which hoists "
                "them first, or run hoist-nested-calls before this function:",
                unhoisted,
            )
        started = time.perf_counter()
        inline = inline_helpers(program, max_output_statements)
        if not inline:
            return InlineResult(program, before=program)
        result = InlineResult(program, before=program, rulesets=tuple(r.name for r in rulesets))
        state = Staging(times=result.report.times)
        state.clock("classify", started)
        stages = run_stages(
            program,
            inline,
            state,
            rulesets=rulesets,
            limits=limits,
            binding_policy=binding_policy,
            observer=observer,
            transcript=transcript,
        )
        while True:
            try:
                run = next(stages)
            except StopIteration as done:
                expanded_callers: list[Function] = done.value
                break
            result.report.add(run.report)
        result.sites = state.sites
        result.program, result.copies = finish(program, expanded_callers, state, check=check)
        result.provenance = {var.id: site_number for (_, site_number), var in state.fresh.items()}
        return result


@dataclass(frozen=True)
class InlineFunctions(Pass):
    """Splice every Inline function at its call sites and drop the Inline functions.

    It requires nothing and runs on a freshly parsed program (docs/specification.md, "Purpose"):
    a pass composed of passes, it first runs `hoist-nested-calls` as a pass of its own (so every
    instrument, trace and view sees that step) when the program has a nested Inline call, then
    splices."""

    name: ClassVar[str] = "inline-functions"
    produced: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.InlineFunctionsEliminated})

    trace: bool = False
    """Record the InlineResult (sites, rows, rule matches) in the current PassContext's `traces`
    (`PassContext.root()` outside any `with`), and show each stage's e-graph to the context's
    `egraph_observer`."""
    max_iterations: int = SaturationLimits.max_iterations
    max_rows: int = SaturationLimits.max_rows
    timeout: float = SaturationLimits.timeout
    max_output_statements: int = DEFAULT_MAX_OUTPUT_STATEMENTS
    """Refuse (ExpansionTooLargeError) when inlining would add more statements (`expansion_size`)."""

    def __post_init__(self) -> None:
        check_limit_options(self)

    def run(self, program: Program) -> Program:
        if not is_hoisted(program):
            program = HoistNestedCalls(trace=self.trace)(program)
        limits = SaturationLimits(self.max_iterations, self.max_rows, self.timeout)
        context = PassContext.current()
        observer = context.egraph_observer if self.trace else None
        result = inline_program(
            program,
            limits=limits,
            observer=observer,
            max_output_statements=self.max_output_statements,
            transcript=context.transcript,
        )
        if self.trace:
            PassContext.current().traces.append((self.name, result))
        return result.program


def inline_functions(**options: Any) -> InlineFunctions:
    """`passes.inline_functions()`: the pass object; call it on a Program."""
    return InlineFunctions(**options)


register_pass("inline-functions", InlineFunctions)
