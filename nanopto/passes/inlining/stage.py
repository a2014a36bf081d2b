"""One saturation run of InlineFunctions: the sites' facts in, the spliced functions out.

A `Stage` holds the functions whose call sites are spliced together and the helpers they call.
It encodes the bodies with the sites marked (`terms.InlineEncoder`), states what Python decided as
facts (what each formal stands for at each site, which arguments are bound to fresh locals first,
the tuple form of a multi-value site), hands the e-graph engine the inlining rulesets, and decodes
the extraction with fresh names for the renamed copies (`terms.InlineDecoder`). The subst rules
copy every helper body inside the e-graph; Python copies nothing.

Extraction is a deliberate decision: a spliced site is *subsumed* (so the unexpanded call can
never win on size), projected `tmp[i]` terms are subsumed, and every helper term is
`:unextractable`, so a rule that forgot a case makes extraction fail instead of returning a
half-rewritten program. After saturation (and after an observer has drawn the e-graph), the
`retire` ruleset deletes the spliced sites' `At` terms, which extraction would cost for nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph import EGraphRun, Iteration, SaturationLimits, StageReport, decode_roots, extract_roots
from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.schema import iter_children, nodes_of, stmt_children, walk, walk_stmts
from nanopto.ir_terms.types import UnknownType
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate, SiteForm, binding_type
from nanopto.passes.inlining.dynamic_dims import dimension_bindings
from nanopto.rules import INLINE_RULESETS, RETIRE, SPLICE, Ruleset
from nanopto.terms.encoding import (
    MAX_GROUP,
    DecodeError,
    group_constructor,
    ir_declarations,
    ir_load_declarations,
    span_value,
)
from nanopto.terms.inlining import (
    HELPER_CONSTRUCTORS,
    HELPER_FACT_TABLES,
    INLINE_TERMS,
    InlineDecoder,
    InlineEncoder,
    helper_declarations,
)

StageObserver = Callable[["Stage", eb.EGraph, StageReport], None]
"""Sees one stage's e-graph at saturation; it must only read the e-graph (extraction follows)."""

Snapshot = Callable[[], "list[n.Function] | None"]
"""The stage's functions as extraction sees them now; None while only helper terms remain."""
StepObserver = Callable[[Iteration, Snapshot], None]
"""Sees every ruleset iteration of a stage, with a way to extract the functions at that point."""


@functools.cache
def inline_declarations() -> str:
    """Sorts, IR and inlining constructors, fact relations and their load tables, as egglog text
    (made once: every stage of every run declares the same)."""
    return "\n".join(
        [
            ir_declarations(),
            helper_declarations(),
            ir_load_declarations((*INLINE_TERMS, *HELPER_CONSTRUCTORS), HELPER_FACT_TABLES),
        ]
    )


STATEMENT_GROUPS = frozenset(group_constructor(k) for k in range(2, MAX_GROUP + 1))
"""The group terms a later stage's rows may hold though this stage's do not: a body spliced here
is a caller's statements there, grouped by more (`EGraphRun.may_load`)."""
SITE_TERMS = frozenset({"At", "AssignStmt", "SOne"})
"""The terms a stage whose sites are all `lhs = f(args)` loads only through `SiteAssign` rows,
which a later stage's other sites (`return f(args)`, `f(args)`) load as themselves."""

# A member read off its Enum class goes through the class's attribute hook (about a microsecond
# on Python 3.11), and a stage asks each site's form: the members it compares with, read once.
_TUPLE_PROJECT = SiteForm.TUPLE_PROJECT
_TUPLE_FORMS = (SiteForm.TUPLE_PROJECT, SiteForm.TUPLE_BIND)


def _free_var(template: HelperTemplate, var_id: int) -> n.Var:
    roots = [*template.body, *template.returns, *(p.var for p in template.function.param_list)]
    for root in roots:
        for node in walk(root):
            if isinstance(node, n.Var) and node.id == var_id:
                return node
    raise KeyError(var_id)


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
    each_iteration: StepObserver | None = None
    """Called after every ruleset iteration (the stepper's rule-by-rule mode)."""
    origins: dict[int, str] = field(default_factory=dict)
    """Shared by the stages of one pass run: see `InlineDecoder.origins`."""
    transcript: list[str] | None = None
    """When a list, the run appends the egglog program that replays it."""

    def opaque_statements(self) -> set[int]:
        """Caller statements the rules never need to see: no site inside, no tuple receiver used.

        Coarse terms keep the e-graph proportional to the call sites, not to the caller's size.
        """
        site_stmts = {id(site.stmt) for site in self.sites}
        receivers = {
            site.stmt.var.id
            for site in self.sites
            if site.form in _TUPLE_FORMS and isinstance(site.stmt, n.AssignStmt)
        }
        opaque: set[int] = set()
        for fn in self.functions:
            _mark_opaque(fn.body, site_stmts, receivers, opaque)
        return opaque

    def single_statements(self, projected: list[n.AssignStmt]) -> set[int] | None:
        """The statements the stock rules match one by one (`Encoder.singles`): the sites' and the
        `projected` reads'. None with other rulesets, whose rules may match any `(SOne st)`."""
        if tuple(self.rulesets) != INLINE_RULESETS:
            return None
        return {id(site.stmt) for site in self.sites} | {id(stmt) for stmt in projected}

    def template_of(self, site: CallSite) -> str:
        return self.site_template.get(site.number, site.helper)

    def site_marks(self) -> dict[int, tuple[int, str]]:
        """The encoder's `site_of`: each site's call (by identity) -> its number and template."""
        return {id(site.call): (site.number, self.template_of(site)) for site in self.sites}

    def encoder(self, opaque: bool = True) -> InlineEncoder:
        """The functions' bodies as `(Root i)`, plus the facts the rules need: each used template's
        body and returns, its locals, and each site's facts. `opaque=False` keeps every caller
        statement visible (the stepper shows them)."""
        projected = self.projected_reads()
        encoder = InlineEncoder(
            self.site_marks(), self.opaque_statements() if opaque else None, singles=self.single_statements(projected)
        )
        rows = encoder.rows
        for key in sorted({self.template_of(site) for site in self.sites}):
            template = self.templates[key]
            rows.union("SL", rows.term("Body", key), encoder.stmts(template.body))
            rows.union("ExL", rows.term("Ret", key), encoder.exprs(template.returns))
            for var_id in sorted(template.local_ids):
                rows.fact("Local", var_id)
            for param in template.function.param_list:
                encoder.expr(param.var)
        for site in self.sites:
            self._site_facts(encoder, site, self.templates[self.template_of(site)])
            if site.stand_in is not None and isinstance(site.stmt, n.AssignStmt):
                stand_in = site.stand_in
                encoder.stand_ins[id(site.stmt)] = dataclasses.replace(site.stmt, var=stand_in)
                encoder.stand_ins.update((id(r), dataclasses.replace(r, tuple=stand_in)) for r in site.reads)
        encoder.roots(self.functions)
        for stmt in projected:
            rows.fact("ProjectedRead", rows.term("SOne", encoder.expr(stmt)))
        return encoder

    def projected_reads(self) -> list[n.AssignStmt]:
        """The callers' statements `q = tmp[i]` whose `tmp` receives a projected multi-value site:
        the only ones `writeback-tuple-identity` may drop (a helper's own `t = t` stays)."""
        receivers = {
            site.stmt.var.id
            for site in self.sites
            if site.form is _TUPLE_PROJECT and isinstance(site.stmt, n.AssignStmt)
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
    def _site_facts(encoder: InlineEncoder, site: CallSite, template: HelperTemplate) -> None:
        """The site's `Arg` facts (what each formal stands for), `TupleForm`, and the argument
        bindings its `At` term places before the body."""
        s = site.number
        rows = encoder.rows
        values: dict[int, int] = {}
        """Formal id -> the handle of what it stands for at this site."""
        if template.free_ids:  # most helpers mention no module-level symbol
            # Module-level symbols the body mentions: the caller's extent where the arguments agree
            # on one (docs/specification.md, "Dynamic dimensions"), else the symbol itself.
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
            rows.fact("ArgIs", s, var_id, value)
        if site.form in _TUPLE_FORMS:
            rows.fact("TupleForm", s, "project" if site.form is _TUPLE_PROJECT else "bind")
        encoder.site_bindings[s] = encoder.stmt_tree(pre) if pre else rows.term("Skip")

    def run(self, counter: int) -> tuple[list[n.Function], InlineDecoder, StageReport]:
        """Saturate and return the rewritten functions, the decoder (counter, fresh copies), a report."""
        report = StageReport(sites=len(self.sites))
        started = time.perf_counter()
        encoder = self.encoder()
        report.times["encode"] = time.perf_counter() - started
        taken = {
            v.name
            for fn in self.functions
            for v in (*(p.var for p in fn.param_list), *nodes_of(fn.body))
            if isinstance(v, n.Var)
        }
        decoder = InlineDecoder(
            vars=dict(encoder.vars),
            opaque=encoder.opaque,
            spans=encoder.spans,
            counter=counter,
            site_calls=encoder.site_calls,
            origins=self.origins,
            taken=taken,
        )

        def observe(egraph: eb.EGraph, report: StageReport) -> None:
            if self.observer is not None:
                self.observer(self, egraph, report)

        def each_iteration(egraph: eb.EGraph, iteration: Iteration) -> None:
            if self.each_iteration is not None:
                self.each_iteration(iteration, lambda: self._snapshot(egraph, encoder, counter))

        run = EGraphRun(
            inline_declarations(),
            self.rulesets,
            self.limits,
            label="inlining",
            at_saturation=observe if self.observer is not None else None,
            each_iteration=each_iteration if self.each_iteration is not None else None,
            transcript=self.transcript,
            # `retire` deletes only call sites the stock splice rules spliced, and so retired.
            before_extraction=(RETIRE,) if SPLICE in self.rulesets else (),
            may_load=STATEMENT_GROUPS | SITE_TERMS,
        )
        functions = run.rewrite(self.functions, encoder.rows, decoder, report)
        return functions, decoder, report

    def _snapshot(self, egraph: eb.EGraph, encoder: InlineEncoder, counter: int) -> list[n.Function] | None:
        """The functions as extraction sees them mid-saturation, or None while a body holds only
        helper terms (they are `:unextractable`). A failed extraction is the expected answer then,
        so egglog's error log about the unextractable root (logger `egglog.extract`) is silenced."""
        logger = logging.getLogger("egglog.extract")
        disabled = logger.disabled
        logger.disabled = True
        try:
            extracted = extract_roots(egraph, len(self.functions))
            decoder = InlineDecoder(
                vars=dict(encoder.vars), opaque=encoder.opaque, counter=counter, site_calls=encoder.site_calls
            )
            return decode_roots(self.functions, extracted, decoder)
        except (eb.EggSmolError, DecodeError, ValueError):
            return None
        finally:
            logger.disabled = disabled


def _mark_opaque(stmt: n.Stmt, site_stmts: set[int], receivers: set[int], opaque: set[int]) -> bool:
    """Add to `opaque` the statements under `stmt` the rules never need to see; True when `stmt`
    itself must stay visible (`Stage.opaque_statements`). A module-level function: a nested one
    that calls itself is a reference cycle (nanopto/gc_pause.py)."""
    if id(stmt) in site_stmts:  # `lhs = f(args)`, `return f(args)`, `f(args)`: no statement inside
        return True
    visible = False
    for child in stmt_children(stmt):
        visible = _mark_opaque(child, site_stmts, receivers, opaque) or visible
    if not visible and receivers:
        # Child statements answered for themselves above; scan only this one's expressions.
        own_exprs = [c for c in iter_children(stmt) if not isinstance(c, n.Stmt)]
        visible = any(isinstance(v, n.Var) and v.id in receivers for e in own_exprs for v in walk(e))
    if not visible and not isinstance(stmt, n.SeqStmts):
        opaque.add(id(stmt))
    return visible
