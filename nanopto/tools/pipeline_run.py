"""One run of a pass pipeline, recorded once, read by every view.

`record_run` runs a pipeline once, each pass with `trace=True` where it has that option, and keeps
what each pass did: the program after it, whether it changed anything, its recorded trace (an
`InlineResult` or a `RewriteResult`), every rule of its rulesets with its match count (zero
included) and, when asked, the e-graph of each saturation. `nanopto inline` (`--trace`, `--json`,
`--html`, `--egraph`), the playground and the notebook all read the same `PipelineRun`; none of
them runs a pass again. A rule of the user's that never matched is a warning every view shows:
it is usually a pattern that does not say what was meant.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nanopto.ir_terms.nodes import HTML_VIEWS, Program, Var, pl_repr
from nanopto.ir_terms.schema import nodes_of
from nanopto.ir_terms.structural import structural_equal
from nanopto.passes import CallbackInstrument, PassContext, PassManager
from nanopto.passes.hoist_nested_calls import Hoisted, HoistResult
from nanopto.passes.inlining import InlineResult
from nanopto.passes.pass_base import Pass
from nanopto.passes.rewrite import RewriteResult, RewriteRules
from nanopto.rules import INLINE_RULESETS, Ruleset
from nanopto.tools.egraph_dot import EGraphCollector, EGraphSnapshot
from nanopto.tools.inline_report import pass_rule_counts


@dataclass(frozen=True)
class PassRun:
    """What one pass of the pipeline did."""

    name: str
    user: bool
    """A pass of the user's own rules (made by `passes.rewrite`, e.g. from a `--rules` file)."""
    before: Program
    """The program the pass was given."""
    program: Program
    """The program after the pass."""
    trace: object | None
    """What the pass recorded (`InlineResult`, `RewriteResult`, `HoistResult`), or None."""
    rules: dict[str, int] | None
    """Every rule of the pass's rulesets with its matches (zero included), in ruleset order; None
    for a pass that runs no rules."""
    rulesets: tuple[Ruleset, ...] = ()
    iterations: int = 0
    part_of: str | None = None
    """The pass that ran this one as a step of its own (`inline-functions` runs
    `hoist-nested-calls` first); None for a pass of the pipeline itself."""

    @functools.cached_property
    def changed(self) -> bool:
        """Whether the pass changed the program; compared when first asked (only the views that
        show each pass do): on a 5 MB program the comparison took longer than the pass."""
        if self.program is self.before:
            return False
        if isinstance(self.trace, InlineResult) and self.trace.sites:
            return True  # a spliced call site is gone: no need to compare two large programs
        return not structural_equal(self.before, self.program, enable_auto_mapping=True)

    @property
    def matches(self) -> int:
        return sum((self.rules or {}).values())

    @property
    def never_fired(self) -> list[str]:
        """The rules that matched nothing in this run."""
        return [rule for rule, count in (self.rules or {}).items() if count == 0]


def unfired_warning(pass_name: str, rule: str) -> str:
    """How every view words a user rule that never matched."""
    return f"rule '{rule}' of pass '{pass_name}' never matched"


@dataclass
class PipelineRun:
    """One run of a pipeline on one program: what every view shows."""

    before: Program
    after: Program
    passes: list[PassRun]
    snapshots: list[EGraphSnapshot] = field(default_factory=list)
    """Each saturation's e-graph, in pipeline order (collected only when asked for)."""
    transcript: list[str] | None = None
    """Each e-graph run as a replayable egglog program (collected only when asked for)."""
    seconds: float = 0.0
    source: str | None = None
    """The input as the user wrote it (line numbers in every view are its lines)."""
    file: str = "<program>"

    def __repr__(self) -> str:
        """Short: the pipeline, what changed, and the program after it as `pl` (not the 70 KB
        dump of every pass's record)."""
        changed = [p.name for p in self.passes if p.changed]
        shown = pl_repr(self.after)
        after = shown.split("\n", 1)[1] if "\n" in shown else shown
        return (
            f"<PipelineRun {' -> '.join(self.pipeline) or '(no passes)'} on {self.before.name} "
            f"({', '.join(changed) or 'nothing'} changed it, {self.seconds * 1000:.0f} ms); after:\n{after}"
        )

    def _repr_html_(self) -> str:
        view = HTML_VIEWS.get(PipelineRun)  # `nanopto.tools.repr_hooks` registers the page's view
        if view is not None:
            return view(self)
        from html import escape

        return f"<pre>{escape(repr(self))}</pre>"

    @property
    def pipeline(self) -> list[str]:
        """The pipeline's own passes, as the user named them."""
        return [p.name for p in self.passes if p.part_of is None]

    @property
    def steps(self) -> list[str]:
        """Every pass that ran, in order, the steps a pass ran itself included."""
        return [p.name for p in self.passes]

    @property
    def inline_results(self) -> list[InlineResult]:
        return [p.trace for p in self.passes if isinstance(p.trace, InlineResult)]

    @property
    def hoisted(self) -> list[Hoisted]:
        """Every binding `hoist-nested-calls` added, with its reason, in pipeline order."""
        return [h for p in self.passes if isinstance(p.trace, HoistResult) for h in p.trace.hoisted]

    @property
    def traced(self) -> list[PassRun]:
        """The passes that ran rules (every rule with its count), in pipeline order."""
        return [p for p in self.passes if p.rules is not None]

    def shown_inline(self, *, line_origins: bool = True) -> InlineResult | None:
        """The InlineFunctions run the before/after views explain: the first that spliced anything
        (a later run finds no Inline functions left), its provenance keyed to the final program.
        `line_origins=False`: for a view that shows no line origins (the playground's plain panes),
        the run as recorded, its provenance not re-keyed (a walk of the whole final program)."""
        results = self.inline_results
        spliced = [r for r in results if r.sites]
        result = spliced[0] if spliced else (results[0] if results else None)
        if result is None or not line_origins:
            return result
        return replace(result, provenance=provenance_in(self.after, result))

    def warnings(self) -> list[str]:
        """One line per user rule that never matched."""
        return [unfired_warning(p.name, rule) for p in self.passes if p.user for rule in p.never_fired]


def provenance_in(program: Program, result: InlineResult) -> dict[int, int]:
    """`result.provenance` re-keyed to the Vars of `program`, matched by name.

    Later passes may rebuild the program (new Var ids), but a fresh local's name (`t_inline0`)
    stays: the counter is deterministic.
    """
    own_vars = [node for node in nodes_of(result.program) if isinstance(node, Var)]
    # When no pass ran after the splicing, `program` is that very program: one walk serves both.
    program_vars = own_vars if program is result.program else [node for node in nodes_of(program) if isinstance(node, Var)]
    site_of_name = {var.name: result.provenance[var.id] for var in own_vars if var.id in result.provenance}
    return {var.id: site_of_name[var.name] for var in program_vars if var.name in site_of_name}


def traced(manager: PassManager, **options: Any) -> PassManager:
    """Every pass that has a `trace` option with `trace=True` (and any of `options` it has)."""
    configured = []
    for pass_ in manager.passes:
        names = {f.name for f in dataclasses.fields(pass_)} if dataclasses.is_dataclass(pass_) else set()
        given = {k: v for k, v in {"trace": True, **options}.items() if k in names}
        configured.append(replace(pass_, **given) if given else pass_)  # type: ignore[type-var]
    return PassManager(configured)


def _rulesets_of(pass_: Pass, trace: object | None) -> tuple[Ruleset, ...]:
    if isinstance(trace, InlineResult):
        return tuple(INLINE_RULESETS)
    if isinstance(pass_, RewriteRules):
        return tuple(pass_.rulesets)
    return ()


EGRAPH_MAX_ROWS = 20_000
"""E-graph rows up to which a run keeps each e-graph whole: a larger one would take longer to
serialize than the run took, for a picture that shows a few hundred e-nodes of it."""


def record_run(
    manager: PassManager,
    before: Program,
    *,
    egraphs: bool = False,
    egraph_max_rows: int | None = EGRAPH_MAX_ROWS,
    transcript: bool = False,
    source: str | None = None,
    file: str = "<program>",
) -> PipelineRun:
    """Run `manager` once on `before` and record every pass (the passes record their own traces:
    configure them with `trace=True`, e.g. by `traced`). `egraphs` keeps each saturation's
    e-graph (one of more than `egraph_max_rows` rows only in part, `EGraphCollector.max_rows`),
    `transcript` each e-graph run as an egglog program."""
    runs: list[PassRun] = []
    collector = EGraphCollector(max_rows=egraph_max_rows) if egraphs else None
    # A pass may run passes of its own (inline-functions runs hoist-nested-calls), so the passes
    # under way are a stack: each entry is a pass, the program it was given and where its traces start.
    running: list[tuple[Pass, Program, int]] = []

    def before_pass(pass_: Pass, program: Program) -> None:
        running.append((pass_, program, len(context.traces)))

    def after_pass(pass_: Pass, program: Program) -> None:
        _, given, first_trace = running.pop()
        recorded = [t for name, t in context.traces[first_trace:] if name == pass_.name]
        trace = recorded[-1] if recorded else None
        rules = pass_rule_counts(pass_, trace)
        if isinstance(pass_, RewriteRules) and trace is None:
            rules = None  # not traced: its counts are unknown, not zero
        report = trace.report if isinstance(trace, InlineResult | RewriteResult) else None
        # After a step of its own, the pass worked on that step's output (the hoisted program).
        step_before = runs[-1].program if runs and runs[-1].part_of == pass_.name else given
        runs.append(
            PassRun(
                name=pass_.name,
                user=isinstance(pass_, RewriteRules),
                before=step_before,
                program=program,
                trace=trace,
                rules=rules,
                rulesets=_rulesets_of(pass_, trace),
                iterations=report.iterations if report is not None else 0,
                part_of=running[-1][0].name if running else None,
            )
        )

    started = time.perf_counter()
    with PassContext(
        instruments=[CallbackInstrument(before=before_pass, after=after_pass)],
        egraph_observer=collector,
        transcript=[] if transcript else None,
    ) as context:
        after = manager.run(before)
    return PipelineRun(
        before=before,
        after=after,
        passes=runs,
        snapshots=collector.snapshots if collector is not None else [],
        transcript=context.transcript,
        seconds=time.perf_counter() - started,
        source=source,
        file=file,
    )


def run_pipeline(
    program: Program,
    pipeline: str | None = None,
    *,
    rules: Sequence[str | Pass] = (),
    egraphs: bool = True,
    source: str | None = None,
) -> PipelineRun:
    """A pipeline run for a notebook or a script: `pipeline` is a spec (default: hoisting and
    inlining, then the passes of `rules`, each a rules file's path or a pass object), every
    pass traced, every saturation's e-graph kept. A notebook displays the result (before/after,
    the sites, every pass's rules; `nanopto.tools.repr_hooks`); `nanopto.tools.notebook.egraph_widget`
    shows its e-graphs."""
    from nanopto.tools.rules_file import load_rules_file  # imports (runs) the user's files

    user: list[Pass] = []
    for item in rules:
        user.extend(load_rules_file(item) if isinstance(item, str) else (item,))
    if pipeline is None:
        manager = PassManager([*PassManager.default().passes, *user])
    else:
        manager = PassManager.from_pipeline(pipeline)
    return record_run(traced(manager), program, egraphs=egraphs, source=source)


__all__ = ["PassRun", "PipelineRun", "provenance_in", "record_run", "run_pipeline", "traced", "unfired_warning"]
