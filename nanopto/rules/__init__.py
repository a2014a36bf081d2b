"""The egglog rulesets of nanopto, declared in egglog-python over the term language.

A rule is `declare(name, rewrite(...).to(...))` (or `birewrite`, or `rule(...).then(...)`) over the
classes of `nanopto.terms.language`; `nanopto.rules.patterns` has shorthands for the common terms.
The stock rulesets are declared in `nanopto.rules.inlining` and `nanopto.rules.subst` and read here
as egglog rendered them (`nanopto.rules.rendered`), so running them never imports egglog-python's
front end; the shorthands import it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nanopto.rules.rendered import RULESETS
from nanopto.rules.ruleset import Declaration, Rule, RuleDeclarationError, Ruleset, declare
from nanopto.rules.user_rules import UserRuleError

if TYPE_CHECKING:
    from nanopto.rules.patterns import binary, call, const, exprs, rewrite_rule, term, var


_RENDERED = "nanopto/rules/rendered.py"
"""Where every stock rule is found as egglog text (declared in `nanopto.rules.inlining`/`subst`)."""


def _stock(name: str) -> Ruleset:
    for ruleset, doc, rules, commands in RULESETS:
        if ruleset == name:
            stock = tuple(Rule(n, before, after, text, doc=why, where=_RENDERED) for n, before, after, why, text in rules)
            return Ruleset(ruleset, doc, stock, rendered=commands)
    return Ruleset(name, "not rendered yet: run `python3 -m nanopto.rules.generate`", ())


SPLICE = _stock("splice")
SUBST = _stock("subst")
PROJECT = _stock("project")
DISCARD = _stock("discard")
WRITEBACK = _stock("writeback")
RETIRE = _stock("retire")
"""Not in the schedule: run once after saturation, before extraction (`nanopto.rules.inlining`)."""

INLINE_RULESETS: tuple[Ruleset, ...] = (SPLICE, SUBST, PROJECT, DISCARD, WRITEBACK)
"""In schedule order: each round splices, then saturates the others; the subst rules copy every
helper body inside the e-graph."""

_PATTERNS = {"binary", "call", "const", "exprs", "rewrite_rule", "term", "var"}


def __getattr__(name: str) -> Any:
    """The pattern shorthands, imported with egglog-python's front end on first use."""
    if name in _PATTERNS:
        from nanopto.rules import patterns

        return getattr(patterns, name)
    raise AttributeError(f"module 'nanopto.rules' has no attribute {name!r}")


__all__ = [
    "DISCARD",
    "INLINE_RULESETS",
    "PROJECT",
    "RETIRE",
    "SPLICE",
    "SUBST",
    "WRITEBACK",
    "Declaration",
    "Rule",
    "RuleDeclarationError",
    "Ruleset",
    "UserRuleError",
    "binary",
    "call",
    "const",
    "declare",
    "exprs",
    "rewrite_rule",
    "term",
    "var",
]
