"""PyPTO's per-operator expression classes (`Add`, `Eq`, `Neg`, ...) as views of the two nodes.

nanopto has one `BinaryExpr` and one `UnaryExpr` node whose operator is a field, so the egglog
encoding, the traversal and the printer have one case each. PyPTO has one class per operator.
Each class here is a view, as `scope_classes` does for the scope kinds: `isinstance(e, Eq)` is
true for a `BinaryExpr` whose op is `BinOp.Eq`, and `Eq(lhs, rhs, dtype, span)` builds that
`BinaryExpr`. No instance of a view class exists.

PyPTO's constructors take the result's dtype; nanopto infers an expression's type from its
operands (`nanopto.ir_terms.infer.type_of`), so the argument is accepted for the signature's sake
and not stored.
"""

from __future__ import annotations

from typing import Any

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import BinaryExpr, BinOp, Call, Expr, Span, Symbol, UnaryExpr, UnOp
from nanopto.ir_terms.types import ScalarType, UnknownType


class _BinaryView(type):
    op: BinOp

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, BinaryExpr) and obj.op is cls.op

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __call__(cls, lhs: Expr, rhs: Expr, dtype: Any = None, span: Span | None = None) -> BinaryExpr:
        return BinaryExpr(cls.op, lhs, rhs, span=span)


class _UnaryView(type):
    op: UnOp

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, UnaryExpr) and obj.op is cls.op

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __call__(cls, operand: Expr, dtype: Any = None, span: Span | None = None) -> UnaryExpr:
        return UnaryExpr(cls.op, operand, span=span)


def _binary(name: str, op: BinOp) -> type:
    return _BinaryView(name, (), {"op": op, "__doc__": f"`lhs {op.value} rhs`: a `BinaryExpr` with `BinOp.{op.name}`."})


def _unary(name: str, op: UnOp) -> type:
    return _UnaryView(name, (), {"op": op, "__doc__": f"A `UnaryExpr` with `UnOp.{op.name}`."})


Add = _binary("Add", BinOp.Add)
Sub = _binary("Sub", BinOp.Sub)
Mul = _binary("Mul", BinOp.Mul)
FloorDiv = _binary("FloorDiv", BinOp.FloorDiv)
FloorMod = _binary("FloorMod", BinOp.FloorMod)
FloatDiv = _binary("FloatDiv", BinOp.FloatDiv)
Min = _binary("Min", BinOp.Min)
Max = _binary("Max", BinOp.Max)
Pow = _binary("Pow", BinOp.Pow)
Eq = _binary("Eq", BinOp.Eq)
Ne = _binary("Ne", BinOp.Ne)
Lt = _binary("Lt", BinOp.Lt)
Le = _binary("Le", BinOp.Le)
Gt = _binary("Gt", BinOp.Gt)
Ge = _binary("Ge", BinOp.Ge)
And = _binary("And", BinOp.And)
Or = _binary("Or", BinOp.Or)
BitAnd = _binary("BitAnd", BinOp.BitAnd)
BitOr = _binary("BitOr", BinOp.BitOr)
BitXor = _binary("BitXor", BinOp.Xor)
BitShiftLeft = _binary("BitShiftLeft", BinOp.BitShiftLeft)
BitShiftRight = _binary("BitShiftRight", BinOp.BitShiftRight)
Neg = _unary("Neg", UnOp.Neg)
Not = _unary("Not", UnOp.Not)
BitNot = _unary("BitNot", UnOp.BitNot)
Abs = _unary("Abs", UnOp.Abs)


_CAST_SPELLINGS = frozenset({"cast", "tensor.cast", "tile.cast"})


class _CastView(type):
    """PyPTO's scalar `Cast(operand, dtype, span)` node is nanopto's `pl.cast(x, dtype)` call on a
    scalar: `isinstance` reads the call, calling the class builds it."""

    def __instancecheck__(cls, obj: object) -> bool:
        if not (isinstance(obj, Call) and str(obj.op) in _CAST_SPELLINGS and obj.args):
            return False
        return isinstance(obj.args[0].type if hasattr(obj.args[0], "type") else UnknownType(), (ScalarType, UnknownType))

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __call__(cls, operand: Expr, dtype: DataType, span: Span | None = None) -> Call:
        return Call("cast", (operand, Symbol(dtype.name)), span=span)


Cast = _CastView("Cast", (), {"__doc__": "A scalar `pl.cast(x, dtype)`: a `Call` of the `cast` op."})
