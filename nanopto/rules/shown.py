"""A rule's before/after line, printed from the rule itself.

The terms read as the `pl` they stand for where there is one: `Call("mul", [x, 1], ...)` is
`pl.mul(x, 1)`, `BinaryExpr("Mul", a, b)` is `(a * b)`, a constant is its value, an expression list
is `[a, b]`, a statement list `{s1; s2}`; any other term is `Name(args)`. Pattern variables are
printed without egglog-python's `_` prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from nanopto.egglog_bindings import bindings as eb
from nanopto.ir_terms.nodes import BinOp, UnOp
from nanopto.terms.term_rows import SPAN

_BINARY = {op.name: op.value for op in BinOp}
_UNARY = {op.name: op.value for op in UnOp}
_INFIX = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "!=", "=", "&", "|", "^", "<<", ">>", "and", "or"}
_EX_LISTS = {"ExNil", "ExCons"} | {f"ExL{k}" for k in range(2, 9)}
_ST_LISTS = {"SNil", "SOne", "SCat", "SCat3", "Skip"} | {f"SL{k}" for k in range(2, 9)}


def _lit(lit: object) -> str:
    if isinstance(lit, eb.Bool):
        return str(lit.value)
    if isinstance(lit, eb.String):
        return repr(lit.value)
    if isinstance(lit, eb.Int | eb.Float):
        return repr(lit.value)
    return "()"


def _name(var: str) -> str:
    return var[1:] if var.startswith("_") and len(var) > 1 else var


def _text(expr: eb._Expr) -> str | None:
    """A String literal's text, or None."""
    if isinstance(expr, eb.Lit) and isinstance(expr.value, eb.String):
        return str(expr.value.value)
    return None


def _items(expr: eb._Expr) -> list[str] | None:
    """The elements of a literal expression list, or None when it is not one to the end."""
    if isinstance(expr, eb.Call):
        if expr.name == "ExNil":
            return []
        if expr.name == "ExCons":
            rest = _items(expr.args[1])
            return None if rest is None else [show_expr(expr.args[0]), *rest]
        if expr.name in _EX_LISTS:
            return [show_expr(a) for a in expr.args]
    return None


def show_expr(expr: eb._Expr) -> str:
    """One term as `pl`-like text."""
    if isinstance(expr, eb.Var):
        return _name(expr.name)
    if isinstance(expr, eb.Lit):
        return _lit(expr.value)
    assert isinstance(expr, eb.Call)
    name, args = expr.name, expr.args
    if name == "Call" and len(args) == 7 and _text(args[0]) is not None:
        items = _items(args[1])
        inner = ", ".join(items) if items is not None else f"*{show_expr(args[1])}"
        return f"pl.{_text(args[0])}({inner})"
    if name in ("ConstInt", "ConstFloat", "ConstBool"):
        value = show_expr(args[0])
        return value if isinstance(args[0], eb.Lit) else f"{name}({value})"
    if name == "BinaryExpr" and _text(args[0]) in _BINARY:
        return f"({show_expr(args[1])} {_BINARY[str(_text(args[0]))]} {show_expr(args[2])})"
    if name == "UnaryExpr" and _text(args[0]) in _UNARY:
        return f"{_UNARY[str(_text(args[0]))]}{show_expr(args[1])}"
    if name in _EX_LISTS:
        items = _items(expr)
        if items is not None:
            return f"[{', '.join(items)}]"
        return f"[{show_expr(args[0])}, *{show_expr(args[1])}]"
    if name in _ST_LISTS:
        if not args:
            return "{}"
        return "{" + "; ".join(show_expr(a) for a in args) + "}"
    if name in _INFIX and len(args) == 2:
        return f"({show_expr(args[0])} {name} {show_expr(args[1])})"
    return f"{name}({', '.join(show_expr(a) for a in args)})"


def show_fact(fact: eb._Fact) -> str:
    if isinstance(fact, eb.Eq):
        return f"{show_expr(fact.left)} == {show_expr(fact.right)}"
    assert isinstance(fact, eb.Fact)
    return show_expr(fact.expr)


def show_facts(facts: Sequence[eb._Fact]) -> str:
    return ", ".join(show_fact(f) for f in facts)


def show_action(action: eb._Action) -> str:
    match action:
        case eb.Union(lhs=lhs, rhs=rhs):
            return f"{show_expr(lhs)} := {show_expr(rhs)}"
        case eb.Change(change=change, sym=name, args=args):
            verb = "retire" if isinstance(change, eb.Subsume) else "delete"
            return f"{verb} {show_expr(eb.Call(SPAN, name, args))}"
        case eb.Expr_(expr=expr):
            return show_expr(expr)
        case eb.Set(lhs=name, args=args, rhs=rhs) if name.startswith("cost_table_"):  # set_cost(term, n)
            return f"cost of {show_expr(eb.Call(SPAN, name.removeprefix('cost_table_'), list(args)))} = {show_expr(rhs)}"
        case eb.Set(lhs=name, args=args, rhs=rhs):
            return f"{name}({', '.join(show_expr(a) for a in args)}) = {show_expr(rhs)}"
        case eb.Let(lhs=name, rhs=rhs):
            return f"{_name(name)} = {show_expr(rhs)}"
        case _:
            return str(action)


def show_actions(actions: Sequence[eb._Action]) -> str:
    return "; ".join(show_action(a) for a in actions)
