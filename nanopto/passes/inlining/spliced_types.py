"""Types for the Vars inlining creates, derived from what defines them.

docs/specification.md, "Dynamic dimensions and types": "Derive locals from their first assignment ...; derive For/While tensor carries from
their actual initializer, and merge results from the corresponding values. Propagate returned types
to receivers and downstream uses." A helper written without annotations is spliced with fresh
locals whose formal type is unknown; once the actuals are in place, the caller's types tell what
they are. Only the given target Vars (fresh locals and receivers) are retyped, and a Var keeps its
id, so every use sees the refined type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from nanopto.ir_terms.infer import type_reader
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    SeqStmts,
    Stmt,
    Submit,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.schema import Mutator, type_exprs, walk, walk_stmts
from nanopto.ir_terms.types import ArrayType, TensorType, TileType, TupleType, Type, UnknownType
from nanopto.passes.inlining.call_sites import InlineError


class _Typer:
    def __init__(self, targets: set[int], unresolved: set[int]) -> None:
        self.targets = targets
        self.unresolved = unresolved
        self.known: dict[int, Type] = {}
        self.of = type_reader(self.of_var)

    def of_var(self, var: Var) -> Type:
        known = self.known.get(var.id)
        if known is not None:
            return known
        if self.unresolved and var.id in self.targets and mentions(var.type, self.unresolved):
            return UnknownType()  # an ambiguous symbolic extent: derive it from the operands instead
        return var.type

    def learn(self, var: Var, source: Expr) -> bool:
        """Give a target Var whose type is still unknown the type of `source`, its definition; True
        when something was learnt. Only such a Var has its source typed: that is the costly part."""
        if var.id not in self.targets or var.id in self.known:
            return False  # (a type learnt is never unknown)
        declared = var.type  # `of_var`, written out: this runs once per spliced statement
        if not isinstance(declared, UnknownType) and not (self.unresolved and mentions(declared, self.unresolved)):
            return False
        ty = self.of(source)
        if isinstance(ty, UnknownType) or mentions(ty, self.unresolved):
            return False
        self.known[var.id] = ty
        return True

    def visit(self, stmt: Any) -> bool:
        if type(stmt) is AssignStmt:  # the commonest statement, before the patterns below
            return isinstance(stmt.var, Var) and self.learn(stmt.var, stmt.value)
        learnt = False
        match stmt:
            case AssignStmt(var=Var() as var, value=value):
                learnt = self.learn(var, value)
            case AssignStmt():
                pass  # a target that is no variable: only a planted binding policy makes one, and the checker names it
            case ForStmt(iter_args=iter_args, return_vars=results) | WhileStmt(iter_args=iter_args, return_vars=results):
                for carry in iter_args:
                    learnt = self.learn(carry, carry.init_value) or learnt
                for carry, result in zip(iter_args, results, strict=False):
                    learnt = self.learn(result, carry) or learnt
            case IfStmt(then_body=body, return_vars=results) if results:
                values = _yielded(body)
                for result, value in zip(results, values, strict=False):
                    learnt = self.learn(result, value) or learnt
        return learnt


def _yielded(body: Stmt) -> tuple[Expr, ...]:
    last = body.stmts[-1] if isinstance(body, SeqStmts) and body.stmts else body
    return last.values if isinstance(last, YieldStmt) else ()


class _Retype(Mutator):
    def __init__(self, types: dict[int, Type], annotate: set[int]) -> None:
        self.types = types
        self.annotate = annotate
        """The target Vars whose assignment prints its annotation (`_declared_otherwise`)."""

    def leave(self, node: Any) -> Any:
        if self.annotate and isinstance(node, AssignStmt) and node.var.id in self.annotate:
            return dataclasses.replace(node, annotated=True)
        return node

    def visit_Var(self, var: Var) -> Var:
        return self._retyped(var)

    def visit_IterArg(self, var: Var) -> Var:
        return self._retyped(var)

    def _retyped(self, var: Var) -> Var:
        rebuilt: Var = self.generic_visit(var)
        ty = self.types.get(var.id)
        return rebuilt if ty is None else dataclasses.replace(rebuilt, type=ty, id=var.id)


def mentions(ty: Type, symbols: set[int]) -> bool:
    return any(isinstance(v, Var) and v.id in symbols for e in type_exprs(ty) for v in walk(e))


_WITH_EXPRESSIONS = (TensorType, TileType, ArrayType, TupleType)
"""The types `type_exprs` finds expressions in."""


def callee_only_symbols(fn: Function, targets: set[int], target_vars: Iterable[Var] | None = None) -> set[int]:
    """Symbols in the types of spliced Vars that the caller itself never mentions: dimensions the
    per-site binding could not resolve (the arguments disagreed on them).

    `target_vars` are the target Vars occurring in `fn` when the caller knows them (the inliner
    does); otherwise `fn` is walked to find them.
    """
    if target_vars is None:
        target_vars = [node for node in walk(fn.body) if isinstance(node, Var) and node.id in targets]
    symbols = {
        v.id
        for var in target_vars
        if isinstance(var.type, _WITH_EXPRESSIONS)  # the others hold no expression (most are unknown)
        for e in type_exprs(var.type)
        for v in walk(e)
        if isinstance(v, Var)
    }
    if not symbols:  # the common case: spliced types name no symbol at all
        return symbols
    other_vars = [node for node in walk(fn.body) if isinstance(node, Var) and node.id not in targets]
    visible: set[int] = set()
    for param in fn.param_list:
        visible.add(param.var.id)
        visible.update(v.id for e in type_exprs(param.var.type) for v in walk(e) if isinstance(v, Var))
    for var in other_vars:
        visible.update(v.id for e in type_exprs(var.type) for v in walk(e) if isinstance(v, Var))
    defined = {stmt.var.id for stmt in walk_stmts(fn.body) if isinstance(stmt, AssignStmt)}
    return symbols - visible - defined


def derive_types(fn: Function, targets: set[int], target_vars: Iterable[Var] | None = None) -> Function:
    """`fn` with each target Var of unknown type typed from its definition (to a fixpoint).

    A spliced local whose type names a callee-only symbol (`[N, 4]` where the arguments gave `N`
    different extents) is re-derived from its operands; if that cannot resolve it, the program is
    rejected naming the dimension (docs/specification.md, "Dynamic dimensions and types").
    """
    if not targets:
        return fn
    unresolved = callee_only_symbols(fn, targets, target_vars)
    typer = _Typer(targets, unresolved)
    statements = list(walk_stmts(fn.body))
    while any([typer.visit(stmt) for stmt in statements]):
        pass
    if unresolved:
        _reject_unresolved(fn, typer, unresolved)
    declared = {
        stmt.var.id
        for stmt in statements
        if isinstance(stmt, AssignStmt)
        and isinstance(stmt.var, Var)  # a planted binding policy may assign to another expression
        and not stmt.annotated
        and stmt.var.id in targets
        and (stmt.var.id in typer.known or not isinstance(stmt.var.type, UnknownType))  # else unknown: not declared
        and _declared_otherwise(typer, stmt)
    }
    if not typer.known and not declared:
        return fn
    retyped: Function = _Retype(typer.known, declared).visit(fn)
    return retyped


def _declared_otherwise(typer: _Typer, stmt: AssignStmt) -> bool:
    """Whether a target keeps a type its value does not have: a receiver typed by the helper's
    declared return type, a fresh local by the formal's, where the value's own type differs. Such
    an assignment prints its annotation, or the text would read back with the value's type."""
    declared = typer.of_var(stmt.var)
    if isinstance(declared, UnknownType) or _launch(stmt.value):
        return False
    own = typer.of(stmt.value)
    return not isinstance(own, UnknownType) and own != declared


def _launch(value: Expr) -> bool:
    """A submit or a call of a program function: its type is the callee's results, which
    `type_of` does not see outside the program, so the Var's own type is the one to keep."""
    return isinstance(value, Submit) or (isinstance(value, Call) and value.function)


def _reject_unresolved(fn: Function, typer: _Typer, unresolved: set[int]) -> None:
    for node in walk(fn.body):
        if isinstance(node, AssignStmt) and node.var.id in typer.targets and node.var.id not in typer.known:
            names = sorted({v.name for e in type_exprs(node.var.type) for v in walk(e) if isinstance(v, Var) and v.id in unresolved})
            if names:
                where = f"{node.span}: " if node.span is not None else ""
                raise InlineError(
                    f"{where}the local '{node.var.name}' spliced into '{fn.name}' has dimension "
                    f"{', '.join(repr(n) for n in names)}, which the call's arguments bind to different "
                    "extents and its operands do not determine; give the helper's parameters distinct "
                    "symbols for the extents that differ"
                )
