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
back to the program the pass produced. `IsScalar` is the analysis they consult, built upward from
the types and literals the terms carry. It holds for the scalars in the e-graph, which only the
sites' statements and their copies put there; asking about each candidate's operands instead
(a demand relation the analysis followed down) cost more than it saved: 60,000 rows of questions
at bench/inline_bench.py's flat-10000, where nothing is a scalar (saturate 0.53 -> 0.36 s).
"""

from __future__ import annotations

from typing import Any

from egglog import String, eq, i64, rewrite, rule, subsume, union, var

from nanopto.rules.patterns import sort_class
from nanopto.rules.ruleset import Rule, Ruleset, declare
from nanopto.terms import language as T
from nanopto.terms.encoding import (
    FUSED_ASSIGN_CALL,
    Constructor,
    args_constructor,
    assign_op_constructor,
    ir_constructors,
)
from nanopto.terms.inlining import SUBST

_SPECIAL = {"Var", "IterArg", "Root"}

site = var("s", i64)
e, a, b, init = var("e", T.Ex), var("a", T.Ex), var("b", T.Ex), var("init", T.Ex)
name, dtype, binop = var("nm", String), var("d", String), var("binop", String)
ty, var_id = var("ty", T.Ty), var("id", i64)


def _sub(sort: str, value: object) -> Any:
    return getattr(T, SUBST[sort])(value, site)


def _structural_rule(c: Constructor) -> Rule:
    """`Sub(C(a0, a1, ...), site) -> C(Sub(a0, site), a1, ...)`: the substitution pushed through one
    constructor, generated from the table as nanopass derives its identity traversal."""
    fields: list[Any] = [var(f"a{i}", sort_class(sort)) for i, sort in enumerate(c.args)]
    pushed = [_sub(sort, x) if sort in SUBST else x for x, sort in zip(fields, c.args, strict=True)]
    ctor = getattr(T, c.name)
    matched: Any = _sub(c.sort, ctor(*fields))
    return declare(f"subst-{c.name}", rewrite(matched).to(ctor(*pushed)))


_VARIABLE_RULES = (
    declare(
        "subst-formal",
        rule(eq(e).to(T.SubEx(T.Var(name, ty, var_id), site)), eq(a).to(T.Arg(site, var_id))).then(union(e).with_(a)),
        "a formal becomes the actual bound to it at the site",
    ),
    declare(
        "rename-local",
        rule(eq(e).to(T.SubEx(T.Var(name, ty, var_id), site)), T.Local(var_id)).then(
            union(e).with_(T.RVar(name, T.SubTy(ty, site), var_id, site))
        ),
        "a variable the callee binds becomes its copy for the site (printed y_inline<k>)",
    ),
    declare(
        "rename-iter-arg",
        rewrite(T.SubEx(T.IterArg(name, ty, var_id, init), site)).to(
            T.RIterArg(name, T.SubTy(ty, site), var_id, site, T.SubEx(init, site))
        ),
        "a loop-carried variable of the callee becomes its copy for the site",
    ),
)


def _leaf(rule_name: str, pattern: T.Ex) -> Rule:
    """An `IsScalar` rule for a term whose type or literal says it is a scalar."""
    return declare(rule_name, rule(eq(e).to(pattern)).then(T.IsScalar(e)))


_y, _v, _st = var("y", T.Ex), var("v", T.Ex), var("st", T.St)
_op, _ann, _sp = var("op", String), var("ann", String), var("sp", String)

_SCALAR_ANALYSIS = (
    _leaf("scalar-var", T.Var(name, T.TScalar(dtype), var_id)),
    _leaf("scalar-iter-arg", T.IterArg(name, T.TScalar(dtype), var_id, init)),
    _leaf("scalar-renamed", T.RVar(name, T.TScalar(dtype), var_id, site)),
    _leaf("scalar-renamed-iter-arg", T.RIterArg(name, T.TScalar(dtype), var_id, site, init)),
    _leaf("scalar-const-int", T.ConstInt(var("c", i64), dtype)),
    _leaf("scalar-const-float", T.ConstFloat(var("f", sort_class("f64")), dtype)),
    _leaf("scalar-const-bool", T.ConstBool(var("t", sort_class("bool")))),
    declare(
        "scalar-binary",
        rule(eq(e).to(T.BinaryExpr(_op, a, b)), T.IsScalar(a), T.IsScalar(b)).then(T.IsScalar(e)),
    ),
    declare("scalar-unary", rule(eq(e).to(T.UnaryExpr(_op, a)), T.IsScalar(a)).then(T.IsScalar(e))),
    declare(
        "scalar-assigned",
        rule(eq(_st).to(T.AssignStmt(_y, _v, _ann, _sp)), T.IsScalar(_v)).then(T.IsScalar(_y)),
        "a spliced local's type is derived only after extraction: its value's",
    ),
)


def _scalar_operator_rules(fused: bool, grouped: bool) -> tuple[Rule]:
    """`pl.<op>(a, b)` as an expression or fused with its assignment, its two arguments grouped
    (how the stock encoder writes them: `ExL2` in a call, `AssignOp2`'s own two arguments fused) or
    a cons list (`FUSED_ASSIGN_CALL` fused): the rule that reads the copied call as the operator
    when `IsScalar` holds of both copied operands."""
    args, nil, csp = var("args", T.ExL), T.ExNil(), var("csp", String)
    lhs = var("lhs", T.Ex)
    scalar = T.BinaryExpr(binop, T.SubEx(a, site), T.SubEx(b, site))
    copied = (_op, T.SubExL(args, site), T.SubExL(nil, site), String("False"), T.SubExL(nil, site), T.SubExL(nil, site), csp)
    listed = getattr(T, args_constructor(2))(a, b) if grouped else T.ExCons(a, T.ExCons(b, T.ExNil()))
    shape: tuple[object, ...] = (eq(args).to(listed),)  # type: ignore[arg-type]
    if fused and grouped:
        assign_op = getattr(T, assign_op_constructor(2))
        term: object = T.SubSt(assign_op(lhs, _op, a, b, csp, _ann, _sp), site)
        result: object = T.AssignStmt(T.SubEx(lhs, site), scalar, _ann, _sp)
        old: object = assign_op(T.SubEx(lhs, site), _op, T.SubEx(a, site), T.SubEx(b, site), csp, _ann, _sp)
        shape = ()
    elif fused:
        fused_call = getattr(T, FUSED_ASSIGN_CALL)
        term = T.SubSt(fused_call(lhs, _op, args, nil, "False", nil, nil, csp, _ann, _sp), site)
        result = T.AssignStmt(T.SubEx(lhs, site), scalar, _ann, _sp)
        old = fused_call(T.SubEx(lhs, site), *copied, _ann, _sp)
    else:
        term = T.SubEx(T.Call(_op, args, nil, "False", nil, nil, csp), site)
        result, old = scalar, T.Call(*copied)
    matched = var("m", T.St if fused else T.Ex)
    candidate = (eq(matched).to(term), T.ScalarOperator(_op, binop), *shape)  # type: ignore[arg-type]
    suffix = f"{'-assign' if fused else ''}{'' if grouped else '-list'}"
    return (
        declare(
            f"subst-scalar-operator{suffix}",
            rule(*candidate, T.IsScalar(T.SubEx(a, site)), T.IsScalar(T.SubEx(b, site))).then(
                union(matched).with_(result), subsume(old)  # type: ignore[arg-type]
            ),
            "a copied pl.<op> of two scalars reads as the scalar operator, as the parser reads it",
        ),
    )


_SCALAR_OPERATOR_RULES = tuple(
    rule_ for fused in (False, True) for grouped in (True, False) for rule_ in _scalar_operator_rules(fused, grouped)
)


def subst_ruleset() -> Ruleset:
    generated = tuple(_structural_rule(c) for c in ir_constructors() if c.name not in _SPECIAL)
    return Ruleset(
        "subst",
        "Push the substitution of formals by actuals, and the renaming of callee locals, through every constructor.",
        _VARIABLE_RULES + _SCALAR_OPERATOR_RULES + _SCALAR_ANALYSIS + generated,
    )
