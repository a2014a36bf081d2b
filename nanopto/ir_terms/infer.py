"""Type inference for expressions: one place the parser and the passes ask "what type is this?".

The answer comes from Var types, constants and the op registry's type rules; anything they do not
determine is `UnknownType`. Callers supply how to read a Var's type (a pass may know better than
the Var's own annotation) and a program function's return types.
"""

from __future__ import annotations

from collections.abc import Callable

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    MakeTuple,
    Submit,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.types import ScalarType, TupleType, Type, UnknownType

BOOLEAN_OPS = frozenset({BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Le, BinOp.Gt, BinOp.Ge, BinOp.And, BinOp.Or})

VarTypes = Callable[[Var], Type]
FunctionReturns = Callable[[str], "tuple[Type, ...] | None"]


def _own_type(var: Var) -> Type:
    return var.type


def _no_functions(name: str) -> tuple[Type, ...] | None:
    return None


def type_of(expr: Expr, var_type: VarTypes = _own_type, returns: FunctionReturns = _no_functions) -> Type:
    """The type of `expr`, as far as Var types, signatures and the op registry tell."""

    def of(e: Expr) -> Type:
        match e:
            case Var():
                return var_type(e)
            case ConstInt(_, dtype) | ConstFloat(_, dtype):
                return ScalarType(dtype)
            case ConstBool():
                return ScalarType(DataType.BOOL)
            case Submit():
                return ScalarType(DataType.TASK_ID)
            case Call(op=op, function=True):
                types = returns(op)
                if not types:
                    return UnknownType()
                return types[0] if len(types) == 1 else TupleType(types)
            case Call(op=op, args=args, kwargs=kwargs):
                opdef = OPS.lookup(op)
                if opdef is None:
                    return UnknownType()
                try:
                    return opdef.infer([of(a) for a in args], args, {k.name: k.value for k in kwargs})
                except Exception:  # a type rule that cannot handle these operands means "unknown"
                    return UnknownType()
            case BinaryExpr(op=op, lhs=lhs, rhs=rhs):
                if op in BOOLEAN_OPS:
                    return ScalarType(DataType.BOOL)
                left = of(lhs)
                return left if not isinstance(left, UnknownType) else of(rhs)
            case UnaryExpr(op=op, operand=operand):
                return ScalarType(DataType.BOOL) if op is UnOp.Not else of(operand)
            case MakeTuple(elements=elements):
                return TupleType(tuple(of(x) for x in elements))
            case TupleGetItemExpr(tuple=base, index=index):
                base_type = of(base)
                if isinstance(base_type, TupleType) and 0 <= index < len(base_type.types):
                    return base_type.types[index]
                return UnknownType()
            case _:
                return UnknownType()

    return of(expr)
