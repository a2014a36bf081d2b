"""Substitution and renaming, pushed through every constructor.

The per-constructor rules are generated from the IR constructor table, exactly as nanopass derives
the identity traversal: `(SubX (C a b) s) -> (C (SubY a s) (SubZ b s))`. Only variables get rules of
their own — a formal becomes its actual, a callee local becomes a fresh copy for the site — which is
egglog's explicit-substitution beta reduction (cf. egglog-python's `lambda_` example), with the
capture problem solved by making every variable a globally unique id.

Substitution is also the one place where an operand's type can become known: a helper's
unannotated formal `x` in `pl.mul(x, x)` kept the call an op call, and the actual may be a scalar.
The parser reads `pl.mul` of two scalars as the scalar operator `a * b`
(`nanopto.ir_terms.ops.SCALAR_OPERATORS`, loaded as the `ScalarOperator` table), so the
`subst-scalar-operator` rules read the spliced copy the same way, and the printed result parses
back to the program the pass produced. `IsScalar` is the analysis they consult, built from the
types the terms carry, and only for what a candidate asks about (`WantScalar`), so its cost
follows the candidates, not the program.
"""

from __future__ import annotations

from nanopto.rules.ruleset import Rule, Ruleset
from nanopto.terms.encoding import FUSED_ASSIGN_CALL, Constructor, args_constructor, ir_constructors
from nanopto.terms.inlining import SUBST

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


def _gated(name: str, before: str, pattern: str) -> Rule:
    """An `IsScalar` rule, run only on an expression a scalar-operator candidate asked about."""
    return Rule(name, before, "IsScalar(it)", f"(rule ((WantScalar e) (= e {pattern})) ((IsScalar e)))")


_SCALAR_ANALYSIS = (
    Rule(
        "want-scalar-binary",
        "WantScalar(a op b)",
        "WantScalar(a), WantScalar(b)",
        "(rule ((WantScalar e) (= e (BinaryExpr op a b))) ((WantScalar a) (WantScalar b)))",
    ),
    Rule(
        "want-scalar-unary",
        "WantScalar(op a)",
        "WantScalar(a)",
        "(rule ((WantScalar e) (= e (UnaryExpr op a))) ((WantScalar a)))",
    ),
    Rule(
        "want-scalar-assigned",
        "WantScalar(y)   where y = v",
        "WantScalar(v)   -- a spliced local's type is derived only after extraction",
        "(rule ((WantScalar y) (= st (AssignStmt y v ann sp))) ((WantScalar v)))",
    ),
    _gated("scalar-var", "Var x: Scalar", "(Var nm (TScalar d) id)"),
    _gated("scalar-iter-arg", "IterArg x: Scalar", "(IterArg nm (TScalar d) id init)"),
    _gated("scalar-renamed", "RVar(y, Scalar, site)", "(RVar nm (TScalar d) id s)"),
    _gated("scalar-renamed-iter-arg", "RIterArg(acc, Scalar, site)", "(RIterArg nm (TScalar d) id s init)"),
    _gated("scalar-const-int", "ConstInt(v, dtype)", "(ConstInt v d)"),
    _gated("scalar-const-float", "ConstFloat(v, dtype)", "(ConstFloat v d)"),
    _gated("scalar-const-bool", "ConstBool(v)", "(ConstBool v)"),
    Rule(
        "scalar-binary",
        "a op b      where a, b are scalars",
        "IsScalar(it)",
        "(rule ((= e (BinaryExpr op a b)) (IsScalar a) (IsScalar b)) ((IsScalar e)))",
    ),
    Rule("scalar-unary", "op a      where a is a scalar", "IsScalar(it)", "(rule ((= e (UnaryExpr op a)) (IsScalar a)) ((IsScalar e)))"),
    Rule(
        "scalar-assigned",
        "y = v      where v is a scalar",
        "IsScalar(y)",
        "(rule ((WantScalar y) (= st (AssignStmt y v ann sp)) (IsScalar v)) ((IsScalar y)))",
    ),
)


def _scalar_operator_rules(fused: bool, args: str) -> tuple[Rule, Rule]:
    """`pl.<op>(a, b)` as an expression or fused with its assignment (`FUSED_ASSIGN_CALL`), its two
    arguments grouped (`ExL2`, how the stock encoder writes them) or a cons list: one rule asks
    whether the copied operands are scalars, the other reads the call as the operator if so."""
    fields = "op args (ExNil) \"False\" (ExNil) (ExNil) csp"
    copied = "op (SubExL args s) (SubExL (ExNil) s) \"False\" (SubExL (ExNil) s) (SubExL (ExNil) s) csp"
    scalar = "(BinaryExpr binop (SubEx a s) (SubEx b s))"
    if fused:
        site, sort = f"({FUSED_ASSIGN_CALL} lhs {fields} ann sp)", "SubSt"
        result, old = f"(AssignStmt (SubEx lhs s) {scalar} ann sp)", f"({FUSED_ASSIGN_CALL} (SubEx lhs s) {copied} ann sp)"
    else:
        site, sort, result, old = f"(Call {fields})", "SubEx", scalar, f"(Call {copied})"
    name = f"{'-assign' if fused else ''}{'-list' if args.startswith('(ExCons') else ''}"
    candidate = f"(= e ({sort} {site} s)) (ScalarOperator op binop) (= args {args})"
    written = f"{'lhs = ' if fused else ''}pl.<op>(a, b)"
    return (
        Rule(
            f"want-scalar-operands{name}",
            f"Sub({written}, site)   where <op> is add, sub, mul or div",
            "WantScalar(Sub(a)), WantScalar(Sub(b))",
            f"(rule ({candidate}) ((WantScalar (SubEx a s)) (WantScalar (SubEx b s))))",
        ),
        Rule(
            f"subst-scalar-operator{name}",
            f"Sub({written}, site)   where Sub(a), Sub(b) are scalars",
            f"{'Sub(lhs) = ' if fused else ''}Sub(a) <op> Sub(b)   -- as the parser reads it",
            f"(rule ({candidate} (IsScalar (SubEx a s)) (IsScalar (SubEx b s)))"
            f" ((union e {result}) (subsume {old})))",
        ),
    )


_SCALAR_OPERATOR_RULES = tuple(
    rule
    for fused in (False, True)
    for args in (f"({args_constructor(2)} a b)", "(ExCons a (ExCons b (ExNil)))")
    for rule in _scalar_operator_rules(fused, args)
)


def subst_ruleset() -> Ruleset:
    generated = tuple(_structural_rule(c) for c in ir_constructors() if c.name not in _SPECIAL)
    return Ruleset(
        "subst",
        "Push the substitution of formals by actuals, and the renaming of callee locals, through every constructor.",
        _VARIABLE_RULES + _SCALAR_OPERATOR_RULES + _SCALAR_ANALYSIS + generated,
    )
