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


# PyPTO's builder functions (`ir.add(lhs, rhs, span)`): each builds the node its view class does.
def _builder2(view: type, name: str) -> Any:
    def build(lhs: Expr, rhs: Expr, span: Span | None = None) -> BinaryExpr:
        return BinaryExpr(view.op, lhs, rhs, span=span)  # type: ignore[attr-defined]

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"`{name}(lhs, rhs, span)`: the `{view.__name__}` expression."
    return build


def _builder1(view: type, name: str) -> Any:
    def build(operand: Expr, span: Span | None = None) -> UnaryExpr:
        return UnaryExpr(view.op, operand, span=span)  # type: ignore[attr-defined]

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"`{name}(operand, span)`: the `{view.__name__}` expression."
    return build


add = _builder2(Add, "add")
sub = _builder2(Sub, "sub")
mul = _builder2(Mul, "mul")
truediv = _builder2(FloatDiv, "truediv")
floordiv = _builder2(FloorDiv, "floordiv")
mod = _builder2(FloorMod, "mod")
pow = _builder2(Pow, "pow")
eq = _builder2(Eq, "eq")
ne = _builder2(Ne, "ne")
lt = _builder2(Lt, "lt")
le = _builder2(Le, "le")
gt = _builder2(Gt, "gt")
ge = _builder2(Ge, "ge")
bit_and = _builder2(BitAnd, "bit_and")
bit_or = _builder2(BitOr, "bit_or")
bit_xor = _builder2(BitXor, "bit_xor")
bit_shift_left = _builder2(BitShiftLeft, "bit_shift_left")
bit_shift_right = _builder2(BitShiftRight, "bit_shift_right")
and_ = _builder2(And, "and_")
or_ = _builder2(Or, "or_")
min_ = _builder2(Min, "min_")
max_ = _builder2(Max, "max_")
neg = _builder1(Neg, "neg")
not_ = _builder1(Not, "not_")
bit_not = _builder1(BitNot, "bit_not")

EXPR_BUILDERS = (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "eq", "ne", "lt", "le", "gt", "ge", "bit_and", "bit_or",
    "bit_xor", "bit_shift_left", "bit_shift_right", "and_", "or_", "min_", "max_", "neg", "not_", "bit_not",
)  # fmt: skip
"""The names of PyPTO's expression builder functions, exported by `nanopto.ir`."""
