"""The egglog rulesets of nanopto and the schedule that runs them to saturation."""

from nanopto.rules.helpers import HELPER_CONSTRUCTORS, HELPER_FACT_TABLES, helper_declarations
from nanopto.rules.inlining import DISCARD, PROJECT, SPLICE, SPLICE_BY_INSTANCE, WRITEBACK
from nanopto.rules.ruleset import Rule, Ruleset
from nanopto.rules.subst import subst_ruleset
from nanopto.rules.user_rules import Pattern, UserRuleError, call, const, rewrite_rule, var

SUBST = subst_ruleset()

INLINE_RULESETS: tuple[Ruleset, ...] = (SPLICE, SUBST, PROJECT, DISCARD, WRITEBACK)
"""In schedule order: each round splices, then saturates the others. This is the reference form,
in which the subst rules copy every body; InlineFunctions runs it with SPLICE replaced by
SPLICE_BY_INSTANCE unless asked not to (`body_copies="rules"`) or given extra rulesets."""

__all__ = [
    "DISCARD",
    "HELPER_CONSTRUCTORS",
    "HELPER_FACT_TABLES",
    "INLINE_RULESETS",
    "PROJECT",
    "SPLICE",
    "SPLICE_BY_INSTANCE",
    "SUBST",
    "WRITEBACK",
    "Pattern",
    "Rule",
    "Ruleset",
    "UserRuleError",
    "call",
    "const",
    "helper_declarations",
    "rewrite_rule",
    "var",
]

# The engine (`nanopto.rules.engine`) runs stages the passes prepare, and the passes import the
# engine. Importing the passes package last, here, makes any first import (`nanopto.rules.engine`,
# `nanopto.passes`, ...) load the two in the one order that works.
import nanopto.passes  # noqa: E402, F401
