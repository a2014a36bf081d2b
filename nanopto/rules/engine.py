"""Load IR and facts into an e-graph, run the inlining rulesets to saturation, extract, decode.

The schedule (egglog `run-schedule`) is

    (saturate (seq (run splice) (saturate (run subst)) (saturate (run project))
                   (saturate (run discard)) (saturate (run writeback))))

Each round unfolds the sites present, substitutes through every spliced copy, projects tuple
components, expands discarded results and wires receivers; the outer `saturate` repeats until no
rule matches. Extraction is a deliberate decision: a spliced site is *subsumed* (so the unexpanded
call can never win on size), projected `tmp[i]` terms are subsumed, and every helper term is
`:unextractable`, so a rule that forgot a case makes extraction fail instead of returning a
half-rewritten program.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import egglog.bindings as eb

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.encoding import (
    Decoder,
    Encoder,
    decode_functions,
    extract_roots,
    ir_declarations,
    ir_load_declarations,
    span_value,
)
from nanopto.ir_terms.schema import iter_children, nodes_of, stmt_children, type_exprs, walk, walk_stmts
from nanopto.ir_terms.term_rows import SPAN, load_rows, run_text
from nanopto.ir_terms.types import UnknownType
from nanopto.passes.call_sites import CallSite, HelperTemplate, SiteForm, binding_type
from nanopto.passes.dynamic_dims import dimension_bindings
from nanopto.rules import (
    HELPER_CONSTRUCTORS,
    HELPER_FACT_TABLES,
    INLINE_RULESETS,
    SPLICE,
    SPLICE_BY_INSTANCE,
    Ruleset,
    helper_declarations,
)
from nanopto.rules.instantiate import Instantiator, formal_ids


class SaturationError(RuntimeError):
    """egglog rejected the program or extraction failed: a bug in a rule, not in the user's input."""


@dataclass(frozen=True)
class SaturationLimits:
    """Bounds on one saturation run, so a pathological program or a looping rule cannot hang.

    `max_iterations` counts ruleset iterations (one `run` of one ruleset); `max_rows` is the total
    number of e-graph rows; `timeout` is wall-clock seconds. The defaults are far above what the
    inlining rules need (about 10 iterations per nesting level) and low enough to stop quickly.
    """

    max_iterations: int = 10_000
    max_rows: int = 20_000_000
    timeout: float = 300.0


class SaturationLimitError(RuntimeError):
    """A saturation run hit one of its limits before reaching a fixpoint."""

    def __init__(self, limit: str, value: float, still_matching: Sequence[str], option: str) -> None:
        self.limit = limit
        self.still_matching = tuple(still_matching)
        matching = ", ".join(still_matching) or "none"
        super().__init__(
            f"saturation stopped at the {limit} limit ({value:g}) before reaching a fixpoint; "
            f"rulesets still matching: {matching}. If the rules are meant to terminate, raise the "
            f"limit ({option}); a ruleset that rewrites forever (e.g. commutativity with a growing "
            "term) never will."
        )


@dataclass
class StageReport:
    """What one saturation run did: rule matches, iterations, sizes and phase times (seconds)."""

    matches: dict[str, int] = field(default_factory=dict)
    iterations: int = 0
    sites: int = 0
    egraph_rows: int = 0
    times: dict[str, float] = field(default_factory=dict)

    def add(self, other: StageReport) -> None:
        for rule, count in other.matches.items():
            self.matches[rule] = self.matches.get(rule, 0) + count
        self.iterations += other.iterations
        self.sites += other.sites
        self.egraph_rows += other.egraph_rows
        for phase, seconds in other.times.items():
            self.times[phase] = self.times.get(phase, 0.0) + seconds


def schedule(rulesets: Sequence[Ruleset]) -> str:
    """The schedule `saturate` below runs, written as the egglog command it is equivalent to."""
    first, *rest = rulesets
    inner = " ".join(f"(saturate (run {r.name}))" for r in rest)
    return f"(run-schedule (saturate (seq (run {first.name}) {inner})))"


def egraph_rows(egraph: eb.EGraph) -> int:
    sizes = egraph.run_program(eb.PrintSize(SPAN, None))[0]
    assert isinstance(sizes, eb.PrintAllFunctionsSize)
    return sum(size for _, size in sizes.sizes)


def saturate(egraph: eb.EGraph, rulesets: Sequence[Ruleset], limits: SaturationLimits, report: StageReport) -> None:
    """Run `schedule(rulesets)` one ruleset iteration at a time, checking the limits in between.

    Each round runs the first ruleset (splice) once and every other ruleset until it stops
    changing the e-graph; rounds repeat until a whole round changes nothing.
    """
    started = time.perf_counter()
    first = rulesets[0]
    still_matching: dict[str, bool] = {}
    """Whether each ruleset's latest iteration changed the e-graph: what a limit error names."""
    while True:
        changed = False
        for ruleset in rulesets:
            while True:
                out = egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(ruleset.name))))[0]
                assert isinstance(out, eb.RunScheduleOutput)
                run = out.report
                report.iterations += 1
                for rule, count in run.num_matches_per_rule.items():
                    if count:
                        report.matches[rule] = report.matches.get(rule, 0) + count
                changed = changed or run.updated
                still_matching[ruleset.name] = run.updated
                # The ruleset that keeps changing the e-graph is the one to name; a ruleset that
                # only ran earlier in the round has already had its say.
                culprits = [ruleset.name] if run.updated else [k for k, on in still_matching.items() if on]
                _check(egraph, limits, report, started, culprits)
                if not run.updated or ruleset is first:
                    break
        if not changed:
            return


def _check(egraph: eb.EGraph, limits: SaturationLimits, report: StageReport, started: float, matching: list[str]) -> None:
    if report.iterations >= limits.max_iterations:
        raise SaturationLimitError("iteration", limits.max_iterations, matching, "max_iterations=")
    elapsed = time.perf_counter() - started
    if elapsed > limits.timeout:
        raise SaturationLimitError("time", limits.timeout, matching, "timeout= (seconds)")
    if report.iterations % 8 == 0:
        rows = egraph_rows(egraph)
        if rows > limits.max_rows:
            raise SaturationLimitError("e-graph size", limits.max_rows, matching, "max_rows=")


def _free_var(template: HelperTemplate, var_id: int) -> n.Var:
    roots = [*template.body, *template.returns, *(p.var for p in template.function.params)]
    for root in roots:
        for node in walk(root):
            if isinstance(node, n.Var) and node.id == var_id:
                return node
    raise KeyError(var_id)


def _substituted_vars(template: HelperTemplate) -> frozenset[int]:
    """The variables the subst rules meet when the decoder copies the body: those in the returned
    values (their types included) and in the parameters' types (a bound local's type is
    substituted). Only their `Arg` facts are needed."""
    roots = [*template.returns, *(e for p in template.function.params for e in type_exprs(p.var.type))]
    return frozenset(v.id for root in roots for v in walk(root) if isinstance(v, n.Var))


_PREPARED: dict[str, eb.EGraph] = {}
_PREPARED_MAX = 8


def prepared_egraph(rules: str) -> eb.EGraph:
    """An e-graph with the sorts and rules declared, reused by every stage that uses the same rules.

    Compiling the ~70 rules costs about 0.2 s; a stage runs between `push` and `pop`, so the next
    stage (and the next pass run in the same process, e.g. inside a hypothesis loop) starts from
    the declared rules with an empty e-graph.
    """
    egraph = _PREPARED.get(rules)
    if egraph is None:
        egraph = eb.EGraph()
        try:
            run_text(egraph, rules)
        except eb.EggSmolError as exc:
            raise SaturationError(f"egglog rejected the rules: {exc}") from None
        if len(_PREPARED) >= _PREPARED_MAX:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[rules] = egraph
    return egraph


BodyCopies = Literal["instance", "rules"]

StageObserver = Callable[["Stage", eb.EGraph, StageReport], None]
"""Sees one stage's e-graph at saturation; it must only read the e-graph (extraction follows)."""


@dataclass
class Stage:
    """One saturation run: the functions whose sites are spliced, and the helpers they call."""

    functions: list[n.Function]
    templates: dict[str, HelperTemplate]
    sites: list[CallSite]
    rulesets: Sequence[Ruleset] = INLINE_RULESETS
    limits: SaturationLimits = field(default_factory=SaturationLimits)
    site_template: dict[int, str] = field(default_factory=dict)
    """Site number -> the key in `templates` to splice there (default: the helper's own name)."""
    observer: StageObserver | None = None
    """Called with the saturated e-graph before extraction (`--egraph`, `--html` draw it)."""

    origins: dict[int, str] = field(default_factory=dict)
    """Shared by the stages of one pass run: see `Decoder.origins`."""
    body_copies: BodyCopies = "instance"
    """"instance": the decoder copies bodies (`SPLICE_BY_INSTANCE`) where that provably agrees
    with the rules; "rules": the subst rules copy every body inside the e-graph (the reference,
    and what the stepper and e-graph pictures show)."""

    def opaque_statements(self) -> set[int]:
        """Caller statements the rules never need to see: no site inside, no tuple receiver used.

        Coarse terms keep the e-graph proportional to the call sites, not to the caller's size.
        """
        site_stmts = {id(site.stmt) for site in self.sites}
        receivers = {
            site.stmt.var.id
            for site in self.sites
            if site.form in (SiteForm.TUPLE_PROJECT, SiteForm.TUPLE_BIND) and isinstance(site.stmt, n.AssignStmt)
        }
        opaque: set[int] = set()

        def visit(stmt: n.Stmt) -> bool:
            """True when `stmt` must stay visible to the rules."""
            visible = id(stmt) in site_stmts
            for child in stmt_children(stmt):
                visible = visit(child) or visible
            if not visible and receivers:
                # Child statements answered for themselves above; scan only this one's expressions.
                own_exprs = [c for c in iter_children(stmt) if not isinstance(c, n.Stmt)]
                visible = any(isinstance(v, n.Var) and v.id in receivers for e in own_exprs for v in walk(e))
            if not visible and not isinstance(stmt, n.SeqStmts):
                opaque.add(id(stmt))
            return visible

        for fn in self.functions:
            visit(fn.body)
        return opaque

    def template_of(self, site: CallSite) -> str:
        return self.site_template.get(site.number, site.helper)

    def site_marks(self) -> dict[int, tuple[int, str]]:
        """The encoder's `site_of`: each site's call (by identity) -> its number and template."""
        return {id(site.call): (site.number, self.template_of(site)) for site in self.sites}

    def copies_by_instance(self) -> bool:
        """Whether bodies are copied by the decoder (`SPLICE_BY_INSTANCE`) rather than by the subst
        rules: only with the stock rulesets (extra rules must see the copied bodies) and when no
        actual is a tuple literal (the project rule would rewrite `p[i]` inside the copy)."""
        if self.body_copies != "instance" or tuple(self.rulesets) != INLINE_RULESETS:
            return False
        return not any(
            isinstance(node, n.MakeTuple) for site in self.sites for b in site.bindings for node in walk(b.actual)
        )

    def active_rulesets(self, by_instance: bool | None = None) -> tuple[Ruleset, ...]:
        """The rulesets this stage runs (`by_instance`: `copies_by_instance()`, if already known)."""
        if not (self.copies_by_instance() if by_instance is None else by_instance):
            return tuple(self.rulesets)
        return tuple(SPLICE_BY_INSTANCE if r is SPLICE else r for r in self.rulesets)

    def rules_text(self, rulesets: Sequence[Ruleset]) -> str:
        """Declarations, load tables and rules: compiled once per distinct text (`prepared_egraph`)."""
        return "\n".join(
            [
                ir_declarations(),
                helper_declarations(),
                ir_load_declarations(HELPER_CONSTRUCTORS, HELPER_FACT_TABLES),
                *(r.commands() for r in rulesets),
            ]
        )

    def encode(self, encoder: Encoder, by_instance: bool) -> None:
        """The functions' bodies as `(Root i)`, plus the facts the rules need: each used template's
        body (only when the subst rules copy it) and returns, its locals, and each site's facts."""
        rows = encoder.rows
        used = {self.template_of(site) for site in self.sites}
        substituted: dict[str, frozenset[int] | None] = {}
        for key in sorted(used):
            template = self.templates[key]
            if not by_instance:
                rows.union("SL", rows.term("Body", key), encoder.stmts(template.body))
            rows.union("ExL", rows.term("Ret", key), encoder.exprs(template.returns))
            for var_id in sorted(template.local_ids):
                rows.fact("Local", var_id)
            for param in template.function.params:
                encoder.expr(param.var)
            substituted[key] = _substituted_vars(template) if by_instance else None
        for site in self.sites:
            key = self.template_of(site)
            self._site_facts(encoder, site, self.templates[key], by_instance, substituted[key])
        encoder.roots(self.functions)
        for stmt in self.projected_reads():
            rows.fact("ProjectedRead", rows.term("SOne", encoder.expr(stmt)))

    def projected_reads(self) -> list[n.AssignStmt]:
        """The callers' statements `q = tmp[i]` whose `tmp` receives a projected multi-value site:
        the only ones `writeback-tuple-identity` may drop (a helper's own `t = t` stays)."""
        receivers = {
            site.stmt.var.id
            for site in self.sites
            if site.form is SiteForm.TUPLE_PROJECT and isinstance(site.stmt, n.AssignStmt)
        }
        if not receivers:
            return []
        return [
            stmt
            for fn in self.functions
            for stmt in walk_stmts(fn.body)
            if isinstance(stmt, n.AssignStmt)
            and isinstance(stmt.value, n.TupleGetItemExpr)
            and isinstance(stmt.value.tuple, n.Var)
            and stmt.value.tuple.id in receivers
        ]

    @staticmethod
    def _site_facts(
        encoder: Encoder, site: CallSite, template: HelperTemplate, by_instance: bool, substituted: frozenset[int] | None
    ) -> None:
        """The site's `Arg` facts (for the formals in `substituted`, or all of them when None),
        `TupleForm`, and the parts of its `At` term: the argument bindings and the actuals."""
        s = site.number
        rows = encoder.rows
        values: dict[int, int] = {}
        """Formal id -> the handle of what it stands for at this site."""
        # Module-level symbols the body mentions: the caller's extent where the arguments agree
        # on one (seed: "Bind dynamic symbols ..."), else the symbol itself.
        dims = dimension_bindings(template, site)
        for var_id in sorted(template.free_ids):
            symbol = dims.get(var_id) or encoder.vars.get(var_id) or _free_var(template, var_id)
            values[var_id] = encoder.expr(symbol)
        pre: list[int] = []
        for b in site.bindings:
            actual = encoder.expr(b.actual)
            if b.bind_local:
                ty = binding_type(b)
                ty_handle = encoder.type(ty)
                if ty is b.param.type:
                    ty_handle = rows.term("SubTy", ty_handle, s)
                local = values[b.param.id] = rows.term("RVar", b.param.name, ty_handle, b.param.id, s)
                annotated = str(not isinstance(ty, UnknownType))
                pre.append(rows.term("SOne", rows.term("AssignStmt", local, actual, annotated, span_value(site.span))))
            else:
                values[b.param.id] = actual
        for var_id, value in values.items():
            if substituted is None or var_id in substituted:
                rows.union("Ex", rows.term("Arg", s, var_id), value)
        if site.form in (SiteForm.TUPLE_PROJECT, SiteForm.TUPLE_BIND):
            rows.fact("TupleForm", s, "project" if site.form is SiteForm.TUPLE_PROJECT else "bind")
        actuals = rows.term("ExNil")
        if by_instance:  # only `Inst` reads the list
            for var_id in reversed(formal_ids(template)):
                if var_id not in values:
                    raise SaturationError(f"site {s}: formal {var_id} of '{template.name}' has no actual")
                actuals = rows.term("ExCons", values[var_id], actuals)
        encoder.site_parts[s] = (encoder.stmt_tree(pre) if pre else rows.term("Skip"), actuals)

    def run(self, counter: int) -> tuple[list[n.Function], Decoder, StageReport]:
        """Saturate and return the rewritten functions, the decoder (counter, provenance), a report."""
        report = StageReport(sites=len(self.sites))
        started = time.perf_counter()
        by_instance = self.copies_by_instance()
        rulesets = self.active_rulesets(by_instance)
        encoder = Encoder(
            site_of=self.site_marks(),
            opaque=self.opaque_statements(),
        )
        self.encode(encoder, by_instance)
        report.times["encode"] = time.perf_counter() - started

        started = time.perf_counter()
        egraph = prepared_egraph(self.rules_text(rulesets))
        egraph.run_program(eb.Push(1))
        try:
            load_rows(egraph, encoder.rows)
            report.times["load"] = time.perf_counter() - started
            started = time.perf_counter()
            saturate(egraph, rulesets, self.limits, report)
            report.times["saturate"] = time.perf_counter() - started
            report.egraph_rows = egraph_rows(egraph)
            if self.observer is not None:
                self.observer(self, egraph, report)
            started = time.perf_counter()
            extracted = extract_roots(egraph, len(self.functions))
            report.times["extract"] = time.perf_counter() - started
        except eb.EggSmolError as exc:
            raise SaturationError(f"egglog failed while inlining: {exc}") from None
        finally:
            egraph.run_program(eb.Pop(SPAN, 1))

        started = time.perf_counter()
        taken = {
            v.name
            for fn in self.functions
            for v in (*(p.var for p in fn.params), *nodes_of(fn.body))
            if isinstance(v, n.Var)
        }
        decoder = Decoder(
            vars=dict(encoder.vars),
            counter=counter,
            opaque=encoder.opaque,
            site_calls=encoder.site_calls,
            origins=self.origins,
            taken=taken,
            instantiate=Instantiator(self.templates),
        )
        functions = decode_functions(decoder, self.functions, extracted)
        report.times["decode"] = time.perf_counter() - started
        return functions, decoder, report
