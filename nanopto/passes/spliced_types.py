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

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    MakeTuple,
    SeqStmts,
    Stmt,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.ir_terms.types import ScalarType, TupleType, Type, UnknownType

_BOOLEAN = {BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Le, BinOp.Gt, BinOp.Ge, BinOp.And, BinOp.Or}


class _Typer:
    def __init__(self, targets: set[int]) -> None:
        self.targets = targets
        self.known: dict[int, Type] = {}

    def of_var(self, var: Var) -> Type:
        return self.known.get(var.id, var.type)

    def of(self, expr: Expr) -> Type:
        """The type of an expression, as far as Var types and the op registry tell."""
        match expr:
            case Var():
                return self.of_var(expr)
            case ConstInt(_, dtype) | ConstFloat(_, dtype):
                return ScalarType(dtype)
            case ConstBool():
                return ScalarType(DataType.BOOL)
            case BinaryExpr(op=op, lhs=lhs, rhs=rhs):
                if op in _BOOLEAN:
                    return ScalarType(DataType.BOOL)
                left = self.of(lhs)
                return left if not isinstance(left, UnknownType) else self.of(rhs)
            case UnaryExpr(op=op, operand=operand):
                return ScalarType(DataType.BOOL) if op is UnOp.Not else self.of(operand)
            case Call(op=op, args=args, kwargs=kwargs, function=False):
                opdef = OPS.lookup(op)
                if opdef is None:
                    return UnknownType()
                try:
                    return opdef.infer([self.of(a) for a in args], args, {k.name: k.value for k in kwargs})
                except Exception:  # a type rule that cannot handle these operands means "unknown"
                    return UnknownType()
            case MakeTuple(elements=elements):
                return TupleType(tuple(self.of(e) for e in elements))
            case TupleGetItemExpr(tuple=base, index=index):
                base_type = self.of(base)
                if isinstance(base_type, TupleType) and 0 <= index < len(base_type.types):
                    return base_type.types[index]
                return UnknownType()
            case _:
                return UnknownType()

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
