"""Writing your own rewrite rules over nanopto's term language, and checking them before they run.

A user rule is declared like a stock one, in egglog-python's own language over the classes of
`nanopto.terms.language`, and named with `declare` (`nanopto.rules.ruleset`):

    x = var("x")
    m = call("mul", x, 1)
    declare("mul-x-one", rewrite(m).to(x, Fresh(m), Unwritten(x)))

`rewrite_rule(name, lhs, rhs, when=...)` is the same for the commonest shape. A rule may require
facts (`Fresh`, `Unwritten`, `IsScalar`: docs/your-own-rules.md#side-conditions), compute on
constants (`ConstInt(a, d) + ...` with egglog's `i64` arithmetic), be a `birewrite`, or be a
general `rule(...).then(...)`. A `Rule(name, before, after, text)` of raw egglog text is still
accepted.

`check_ruleset` runs before any e-graph is built, so a mistake is reported against the rule that
has it ("rule 'mul-x-one' of ruleset 'fold-mul-one': ...") rather than as an egglog error about
line 1 of a generated program.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Iterator

from nanopto.egglog_bindings import bindings as eb
from nanopto.ir_terms.schema import fields_of
from nanopto.rules.ruleset import Rule, RuleDeclarationError, Ruleset, UserRuleError
from nanopto.terms.encoding import (
    CLASS_BY_NAME,
    Constructor,
    carries_span,
    cost_table_declarations,
    ir_constructors,
    ir_declarations,
)
from nanopto.terms.term_rows import CLEANUP_RULESET, INSERTS_RULESET, LOAD_RULESET, SPAN, run_text

RESERVED_RULESETS = frozenset({LOAD_RULESET, CLEANUP_RULESET, "splice-instance"})
"""Ruleset names the engine uses itself (`term_rows.load_rows` rebuilds terms with `load` and
`load-cleanup`, and inserts rows with `load-rows-<n>`; InlineFunctions swaps in `splice-instance`)."""

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


# ---------------------------------------------------------------------------------------------
# Checking a ruleset before it runs
# ---------------------------------------------------------------------------------------------

def signature(ctor: Constructor) -> str:
    """`(Call op:String args:ExL kwargs:ExL function:String dumps:ExL attr_items:ExL span:String)`: the fields a user writes."""
    cls = CLASS_BY_NAME.get(ctor.name)
    if cls is None:
        names = [""] * len(ctor.args)
    else:
        names = [f.name for f in fields_of(cls)] + (["span"] if carries_span(cls) else [])
    fields = " ".join(f"{n}:{s}" if n else s for n, s in zip(names, ctor.args, strict=True))
    return f"({ctor.name}{' ' + fields if fields else ''})"


def _check_terms(expr: eb._Expr, constructors: dict[str, Constructor]) -> None:
    """Every capitalised head must be a constructor of the IR sorts, applied to its arity.

    egglog's own primitives and keywords (`rule`, `=`, `union`, `+`, ...) are lowercase or
    symbols, and every nanopto constructor is capitalised, so a capitalised unknown is a typo.
    """
    if not isinstance(expr, eb.Call):
        return
    head = expr.name
    if head[:1].isupper():
        ctor = constructors.get(head)
        if ctor is None:
            close = difflib.get_close_matches(head, constructors, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"{expr}: no constructor named {head}{hint}")
        given = len(expr.args)
        if given != len(ctor.args):
            raise ValueError(
                f"{expr} has {given} argument{'s' if given != 1 else ''}, but {head} takes "
                f"{len(ctor.args)}: {signature(ctor)}"
            )
    for arg in expr.args:
        _check_terms(arg, constructors)


def _terms_of(command: object) -> Iterator[eb._Expr]:
    """The expressions a parsed rule command mentions."""
    match command:
        case eb.RewriteCommand(rewrite=rw) | eb.BiRewriteCommand(rewrite=rw):
            yield rw.lhs
            yield rw.rhs
            facts: list[eb._Fact] = list(rw.conditions)
        case eb.RuleCommand(rule=rl):
            facts = list(rl.body)
            for action in rl.head:
                match action:
                    case eb.Union(lhs=a, rhs=b) | eb.Set(args=[a, *_], rhs=b):
                        yield a
                        yield b
                    case eb.Expr_(expr=e) | eb.Let(rhs=e):
                        yield e
                    case eb.Change(sym=name, args=args):
                        yield eb.Call(SPAN, name, args)
        case _:
            raise ValueError("the text must be exactly one (rule ...), (rewrite ...) or (birewrite ...) command")
    for fact in facts:
        if isinstance(fact, eb.Eq):
            yield fact.left
            yield fact.right
        else:
            yield fact.expr


def check_ruleset(ruleset: Ruleset) -> None:
    """Raise UserRuleError naming the rule if any rule of `ruleset` cannot run.

    Checks the names, then each rule's constructors and arities against the IR sorts, then asks
    egglog to accept the rule (sorts of arguments, unbound variables) in a scratch e-graph.
    """
    where = f"ruleset {ruleset.name!r}"
    if not _IDENT.match(ruleset.name):
        raise UserRuleError(f"{where}: a ruleset name is letters, digits, '-' and '_', starting with a letter")
    if ruleset.name in RESERVED_RULESETS or ruleset.name.startswith(INSERTS_RULESET):
        raise UserRuleError(f"{where}: the name is reserved by nanopto's engine; pick another")
    if not ruleset.rules:
        raise UserRuleError(f"{where} has no rules")
    seen: set[str] = set()
    for rule in ruleset.rules:
        if rule.name in seen:
            raise UserRuleError(f"{where}: two rules are named {rule.name!r}")
        seen.add(rule.name)
    constructors = {c.name: c for c in ir_constructors()}
    for rule in ruleset.rules:
        _check_rule(rule, ruleset, constructors)


def _check_rule(rule: Rule, ruleset: Ruleset, constructors: dict[str, Constructor]) -> None:
    where = f"rule {rule.name!r} of ruleset {ruleset.name!r}"
    if '"' in rule.name or "\\" in rule.name:
        raise UserRuleError(f"{where}: a rule name cannot contain quotes or backslashes")
    if rule.rendered is None:
        try:
            commands = _PARSER.parse_program(rule.text)
        except eb.EggSmolError as exc:
            raise UserRuleError(f"{where}: egglog cannot read it: {' '.join(str(exc).split())}") from None
        try:
            if len(commands) != 1:
                raise ValueError("the text must be exactly one (rule ...), (rewrite ...) or (birewrite ...) command")
            for expr in _terms_of(commands[0]):
                _check_terms(expr, constructors)
        except ValueError as exc:
            raise UserRuleError(f"{where}: {exc}") from None
    try:
        command = rule.command(ruleset.name)
    except RuleDeclarationError as exc:
        raise UserRuleError(f"{where}: {exc}") from None
    try:
        costs = cost_table_declarations(rule.cost_tables)
    except KeyError as exc:
        raise UserRuleError(f"{where}: {exc.args[0]}") from None
    egraph = eb.EGraph()
    run_text(egraph, _declarations() + "\n" + costs)
    try:
        run_text(egraph, f"{eb.AddRuleset(SPAN, ruleset.name)}\n{command}")
    except eb.EggSmolError as exc:
        message = " ".join(str(exc).split())
        raise UserRuleError(f"{where}: egglog rejects it: {message}") from None


@functools.lru_cache(maxsize=1)
def _declarations() -> str:
    """What a user's rule may mention: the IR's constructors and the analysis facts."""
    return ir_declarations()


_PARSER = eb.EGraph()
"""Only parses (a raw rule's text); it never runs anything."""


def check_rulesets(rulesets: Iterable[Ruleset]) -> tuple[Ruleset, ...]:
    """Check every ruleset and that their names are distinct; return them as a tuple."""
    checked = tuple(rulesets)
    if not checked:
        raise UserRuleError("no rulesets given")
    names = [r.name for r in checked]
    for name in names:
        if names.count(name) > 1:
            raise UserRuleError(f"two rulesets are named {name!r}; egglog needs distinct names")
    for ruleset in checked:
        check_ruleset(ruleset)
    owner: dict[str, str] = {}
    for ruleset in checked:
        for rule in ruleset.rules:
            if rule.name in owner:
                raise UserRuleError(
                    f"rule {rule.name!r} is in both ruleset {owner[rule.name]!r} and {ruleset.name!r}; "
                    "rule names must be distinct, since match counts are reported per rule name"
                )
            owner[rule.name] = ruleset.name
    return checked


__all__ = [
    "UserRuleError",
    "check_ruleset",
    "check_rulesets",
    "signature",
]
