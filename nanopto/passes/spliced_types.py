"""Types for the Vars inlining creates, derived from what defines them.

Seed 000: "Derive locals from their first assignment ...; derive For/While tensor carries from
their actual initializer, and merge results from the corresponding values. Propagate returned types
to receivers and downstream uses." A helper written without annotations is spliced with fresh
locals whose formal type is unknown; once the actuals are in place, the caller's types tell what
they are. Only the given target Vars (fresh locals and receivers) are retyped, and a Var keeps its
id, so every use sees the refined type.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    SeqStmts,
    Stmt,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.ir_terms.types import Type, UnknownType


class _Typer:
    def __init__(self, targets: set[int]) -> None:
        self.targets = targets
        self.known: dict[int, Type] = {}

    def of_var(self, var: Var) -> Type:
        return self.known.get(var.id, var.type)

    def of(self, expr: Expr) -> Type:
        return type_of(expr, self.of_var)

    def learn(self, var: Var, ty: Type) -> bool:
        """Record `ty` for a target Var whose type is still unknown; True when something was learnt."""
        if var.id not in self.targets or isinstance(ty, UnknownType):
            return False
        if not isinstance(self.of_var(var), UnknownType):
            return False
        self.known[var.id] = ty
        return True

    def visit(self, stmt: Any) -> bool:
        learnt = False
        match stmt:
            case AssignStmt(var=var, value=value):
                learnt = self.learn(var, self.of(value))
            case ForStmt(iter_args=iter_args, return_vars=results) | WhileStmt(iter_args=iter_args, return_vars=results):
                for carry in iter_args:
                    learnt = self.learn(carry, self.of(carry.init_value)) or learnt
                for carry, result in zip(iter_args, results, strict=False):
                    learnt = self.learn(result, self.of_var(carry)) or learnt
            case IfStmt(then_body=body, return_vars=results) if results:
                values = _yielded(body)
                for result, value in zip(results, values, strict=False):
                    learnt = self.learn(result, self.of(value)) or learnt
        return learnt


def _yielded(body: Stmt) -> tuple[Expr, ...]:
    last = body.stmts[-1] if isinstance(body, SeqStmts) and body.stmts else body
    return last.values if isinstance(last, YieldStmt) else ()


class _Retype(Mutator):
    def __init__(self, types: dict[int, Type]) -> None:
        self.types = types

    def visit_Var(self, var: Var) -> Var:
        return self._retyped(var)

    def visit_IterArg(self, var: Var) -> Var:
        return self._retyped(var)

    def _retyped(self, var: Var) -> Var:
        rebuilt: Var = self.generic_visit(var)
        ty = self.types.get(var.id)
        return rebuilt if ty is None else dataclasses.replace(rebuilt, type=ty, id=var.id)


def derive_types(fn: Function, targets: set[int]) -> Function:
    """`fn` with each target Var of unknown type typed from its definition (to a fixpoint)."""
    if not targets:
        return fn
    typer = _Typer(targets)
    while any([typer.visit(node) for node in walk(fn.body)]):
        pass
    if not typer.known:
        return fn
    retyped: Function = _Retype(typer.known).visit(fn)
    return retyped
