"""The egglog rulesets of nanopto and the schedule that runs them to saturation."""

from nanopto.rules.inlining import DISCARD, PROJECT, SPLICE, WRITEBACK
from nanopto.rules.ruleset import Rule, Ruleset
from nanopto.rules.subst import subst_ruleset
from nanopto.rules.user_rules import Pattern, UserRuleError, binary, call, const, rewrite_rule, var
from nanopto.terms.inlining import HELPER_CONSTRUCTORS, HELPER_FACT_TABLES, INLINE_TERMS, helper_declarations

SUBST = subst_ruleset()

INLINE_RULESETS: tuple[Ruleset, ...] = (SPLICE, SUBST, PROJECT, DISCARD, WRITEBACK)
"""In schedule order: each round splices, then saturates the others; the subst rules copy every
helper body inside the e-graph."""

__all__ = [
    "DISCARD",
    "HELPER_CONSTRUCTORS",
    "HELPER_FACT_TABLES",
    "INLINE_RULESETS",
    "INLINE_TERMS",
    "PROJECT",
    "SPLICE",
    "SUBST",
    "WRITEBACK",
    "Pattern",
    "Rule",
    "Ruleset",
    "UserRuleError",
    "binary",
    "call",
    "const",
    "helper_declarations",
    "rewrite_rule",
    "var",
]
