"""`passes.rewrite(ruleset, name=...)`: a user's egglog rules run as a pass.

Every function body of the program goes into one e-graph (the same encoding InlineFunctions
uses), the user's rulesets run to saturation under `SaturationLimits`, and each body is extracted
and decoded. Extraction picks the smallest term of each e-class, so a rule that adds a smaller
equal term (`pl.mul(x, 1)` = `x`) simplifies the program; a rule with `:subsume` replaces even
when the result is larger. Variables keep their identity: a rule can only move the program's own
Vars around, never invent or capture one.

Each call of `rewrite` makes a Pass subclass whose class-level `name` is the kebab-case name, so
the pass can be registered (`register_pass(p.name, type(p))`) and named in a pipeline spec with
its options (`fold-mul-one{max_iterations=50}`), like a built-in pass.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, cast

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph import (
    EGraphRun,
    SaturationError,
    SaturationLimitError,
    SaturationLimits,
    SaturationObserver,
    StageReport,
    UnextractableError,
)
from nanopto.ir_terms import nodes as n
from nanopto.passes.context import PassContext
from nanopto.passes.pass_base import PASS_NAME, Pass, check_limit_options
from nanopto.passes.rule_facts import function_facts
from nanopto.rules.ruleset import Ruleset
from nanopto.rules.user_rules import UserRuleError, check_rulesets
from nanopto.terms.encoding import (
    ANALYSIS_FACT_TABLES,
    Decoder,
    Encoder,
    ir_declarations,
    ir_load_declarations,
)


@dataclass
class RewriteResult:
    """The rewritten program and what saturation did (matches per rule, iterations, times)."""

    program: n.Program
    report: StageReport = field(default_factory=StageReport)


def add_rule_facts(encoder: Encoder, program: n.Program) -> None:
    """The analysis facts of every function (`rule_facts`), as rows on the encoded terms."""
    rows = encoder.rows
    for fn in program.function_list:
        facts = function_facts(fn)
        for name, nodes in (("Fresh", facts.fresh), ("Unwritten", facts.unwritten), ("IsScalar", facts.scalars)):
            for node in nodes:
                rows.fact(name, encoder.expr(node))


def rewrite_program(
    program: n.Program,
    rulesets: Sequence[Ruleset],
    limits: SaturationLimits | None = None,
    transcript: list[str] | None = None,
    at_saturation: SaturationObserver | None = None,
) -> RewriteResult:
    """Run `rulesets` to saturation over every function body of `program` and extract the result.

    `at_saturation` is shown the e-graph at saturation (the views draw it).

    The rulesets are checked first (`check_rulesets`), so a malformed rule fails naming itself.
    Raises SaturationLimitError when a limit stops a ruleset that keeps matching.
    """
    rulesets = check_rulesets(rulesets)
    report = StageReport()
    started = time.perf_counter()
    encoder = Encoder()
    encoder.roots(program.function_list)
    add_rule_facts(encoder, program)
    report.times["encode"] = time.perf_counter() - started
    names = ", ".join(r.name for r in rulesets)
    run = EGraphRun(
        ir_declarations() + "\n" + ir_load_declarations(facts=ANALYSIS_FACT_TABLES),
        rulesets,
        limits or SaturationLimits(),
        label=f"running ruleset(s) {names}",
        transcript=transcript,
        at_saturation=at_saturation,
    )
    try:
        functions = run.rewrite(program.function_list, encoder.rows, Decoder(vars=dict(encoder.vars)), report)
    except UnextractableError:
        retiring = [r for rs in rulesets for r in rs.rules if r.subsumes]
        fired = [r for r in retiring if report.matches.get(r.name)] or retiring
        several = len(fired) > 1
        blamed = ", ".join(f"{r.name!r} ({r.where})" if several and r.where else repr(r.name) for r in fired) or "a rule"
        located = f"{fired[0].where}: " if fired and fired[0].where else ""
        raise UserRuleError(
            f"{located}ruleset(s) {names}: after the rules ran, a function body had no term left to extract; "
            f"every form of it was retired by {blamed} "
            "(subsume=True or delete). A subsuming rule must leave a form it does not retire: "
            "drop subsume=True, or make sure the right side is never matched by the same rule."
        ) from None
    except SaturationLimitError as exc:  # a rule that never stops: located at the first rule still firing
        owners = {egglog: rule for rs in rulesets for rule in rs.rules for egglog in rule.egglog_names}
        firing = [owners[name] for name in exc.rules if name in owners and owners[name].where]
        if firing:
            exc.args = (f"{firing[0].where}: {exc.args[0]}",)
        raise
    except SaturationError as exc:
        failed = _PRIMITIVE_FAILED.search(str(exc))
        if failed is None:
            raise
        raise UserRuleError(_primitive_failure(failed.group(1), failed.group(2), rulesets, names)) from None
    return RewriteResult(n.Program(program.name, tuple(functions), span=program.span), report)


_PRIMITIVE_FAILED = re.compile(r"In [0-9:-]+: (\(.*?\)): call of primitive (\S+) failed")
"""egglog's words when a rule's computation on constants fails (an i64 overflow, a division by 0)."""


def _primitive_failure(call: str, primitive: str, rulesets: Sequence[Ruleset], names: str) -> str:
    """A user rule's computation failed while it ran: the user's error, blamed on the rule that computes it."""
    culprits = [r for rs in rulesets for r in rs.rules if call in r.text] or [r for rs in rulesets for r in rs.rules]
    first = culprits[0] if len(culprits) == 1 else None
    located = f"{first.where}: " if first is not None and first.where else ""
    blamed = f"rule {first.name!r}" if first is not None else f"one of the rules {', '.join(repr(r.name) for r in culprits)}"
    return (
        f"{located}ruleset(s) {names}: {blamed} computes {call}, and egglog's {primitive} failed on the constants "
        "it matched (an overflow or a division by zero). Give the rule conditions that keep its operands "
        "where the computation is defined (docs/your-own-rules.md#computing-on-constants)."
    )


@dataclass(frozen=True)
class RewriteRules(Pass):
    """Base of the passes `rewrite` makes; a subclass fixes `name` and `rulesets`.

    The fields are the options a pipeline spec can set, the same limits InlineFunctions takes.
    """

    rulesets: ClassVar[tuple[Ruleset, ...]] = ()

    trace: bool = False
    """Record the RewriteResult in the active PassContext's `traces` (as `(name, result)`), and
    show the e-graph at saturation to the context's `egraph_observer` as `(pass, egraph, report)`."""
    max_iterations: int = SaturationLimits.max_iterations
    max_rows: int = SaturationLimits.max_rows
    timeout: float = SaturationLimits.timeout

    def __post_init__(self) -> None:
        check_limit_options(self)

    def run(self, program: n.Program) -> n.Program:
        limits = SaturationLimits(self.max_iterations, self.max_rows, self.timeout)
        context = PassContext.current()
        observer = context.egraph_observer if self.trace else None

        def observe(egraph: eb.EGraph, report: StageReport) -> None:
            assert observer is not None
            observer(self, egraph, report)

        result = rewrite_program(
            program, self.rulesets, limits, context.transcript, observe if observer is not None else None
        )
        if self.trace:
            context.traces.append((self.name, result))
        return result.program


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_]", name)) or "Rewrite"


def rewrite(
    ruleset: Ruleset | Sequence[Ruleset],
    name: str | None = None,
    *,
    trace: bool = False,
    max_iterations: int = SaturationLimits.max_iterations,
    max_rows: int = SaturationLimits.max_rows,
    timeout: float = SaturationLimits.timeout,
) -> RewriteRules:
    """A pass that runs `ruleset` (or several, in schedule order) to saturation.

    `name` is the pass's kebab-case name (default: the ruleset's name). The rulesets are checked
    here, so a broken rule fails when the pass is made, not in the middle of a pipeline.
    """
    rulesets = (ruleset,) if isinstance(ruleset, Ruleset) else tuple(ruleset)
    check_rulesets(rulesets)
    if name is None:
        if len(rulesets) != 1:
            raise UserRuleError("rewrite(): give a name= for a pass made of several rulesets")
        name = rulesets[0].name
    if not PASS_NAME.match(name):
        raise UserRuleError(f"pass name {name!r} is not kebab-case (e.g. 'fold-mul-one')")
    cls = cast(
        type[RewriteRules],
        type(_class_name(name), (RewriteRules,), {"name": name, "rulesets": rulesets, "__module__": __name__}),
    )
    cls = dataclass(frozen=True)(cls)
    return cls(trace=trace, max_iterations=max_iterations, max_rows=max_rows, timeout=timeout)


def is_rewrite_pass(factory: object) -> bool:
    """Whether a registered factory is a pass made by `rewrite` (user passes may be re-registered)."""
    return isinstance(factory, type) and issubclass(factory, RewriteRules)


__all__ = ["RewriteResult", "RewriteRules", "is_rewrite_pass", "rewrite", "rewrite_program"]
