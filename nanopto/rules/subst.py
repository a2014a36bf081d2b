"""Substitution and renaming, pushed through every constructor.

The per-constructor rules are generated from the IR constructor table, exactly as nanopass derives
the identity traversal: `(SubX (C a b) s) -> (C (SubY a s) (SubZ b s))`. Only variables get rules of
their own — a formal becomes its actual, a callee local becomes a fresh copy for the site — which is
egglog's explicit-substitution beta reduction (cf. egglog-python's `lambda_` example), with the
capture problem solved by making every variable a globally unique id.
"""

from __future__ import annotations

from nanopto.ir_terms.encoding import Constructor, ir_constructors
from nanopto.rules.helpers import SUBST
from nanopto.rules.ruleset import Rule, Ruleset

_SPECIAL = {"Var", "IterArg", "Root"}


def _structural_rule(c: Constructor) -> Rule:
    names = [f"a{i}" for i in range(len(c.args))]
    pattern = f"({c.name}{''.join(' ' + x for x in names)})"
    pushed = [f"({SUBST[sort]} {x} s)" if sort in SUBST else x for x, sort in zip(names, c.args, strict=True)]
    result = f"({c.name}{''.join(' ' + x for x in pushed)})"
    before = f"Sub({c.name}(...), site)"
    after = f"{c.name}(Sub(...), site)" if any(sort in SUBST for sort in c.args) else f"{c.name}(...)"
    return Rule(
        name=f"subst-{c.name}",
        before=before,
        after=after,
        text=f"(rewrite ({SUBST[c.sort]} {pattern} s) {result})",
    )


_VARIABLE_RULES = (
    Rule(
        "subst-formal",
        "Sub(Var p, site)",
        "the actual bound to formal p at site",
        "(rule ((= e (SubEx (Var nm ty id) s)) (= a (Arg s id))) ((union e a)))",
    ),
    Rule(
        "rename-local",
        "Sub(Var y, site)  where y is bound in the callee",
        "RVar(y, Sub(type(y)), site)   -- printed y_inline<k>",
        "(rule ((= e (SubEx (Var nm ty id) s)) (Local id)) ((union e (RVar nm (SubTy ty s) id s))))",
    ),
    Rule(
        "rename-iter-arg",
        "Sub(IterArg acc = init, site)",
        "RIterArg(acc, site) = Sub(init, site)",
        "(rewrite (SubEx (IterArg nm ty id init) s) (RIterArg nm (SubTy ty s) id s (SubEx init s)))",
    ),
)


def subst_ruleset() -> Ruleset:
    generated = tuple(_structural_rule(c) for c in ir_constructors() if c.name not in _SPECIAL)
    return Ruleset(
        "subst",
        "Push the substitution of formals by actuals, and the renaming of callee locals, through every constructor.",
        _VARIABLE_RULES + generated,
    )
