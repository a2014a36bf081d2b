"""Type inference for expressions: one place the parser and the passes ask "what type is this?".

The answer comes from Var types, constants and the op registry's type rules; anything they do not
determine is `UnknownType`. Callers supply how to read a Var's type (a pass may know better than
the Var's own annotation) and a program function's return types.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any, TypeVar, cast

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    IterArg,
    MakeTuple,
    Submit,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    register_type_of,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import map_children, map_type
from nanopto.ir_terms.types import ScalarType, TensorType, TileType, TupleType, Type, UnknownType

BOOLEAN_OPS = frozenset({BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Le, BinOp.Gt, BinOp.Ge, BinOp.And, BinOp.Or})

VarTypes = Callable[[Var], Type]
FunctionReturns = Callable[[str], "tuple[Type, ...] | None"]


def _own_type(var: Var) -> Type:
    return var.type


def _no_functions(name: str) -> tuple[Type, ...] | None:
    return None


def type_of(expr: Expr, var_type: VarTypes = _own_type, returns: FunctionReturns = _no_functions) -> Type:
    """The type of `expr`, as far as Var types, signatures and the op registry tell."""
    return _Inference(var_type, returns).of(expr)


_A = TypeVar("_A")
_R = TypeVar("_R")


def weakly_bound(method: Callable[[_A], _R]) -> Callable[[_A], _R]:
    """A bound `method` that does not keep its object alive: for an object that keeps a type
    reader of its own, which a bound method would make a reference cycle holding all it reaches,
    freed only by a full collection (nanopto/gc_pause.py). Called only while the object lives."""
    weak = weakref.WeakMethod(method)

    def call(arg: _A) -> _R:
        bound = weak()
        if bound is None:
            raise ReferenceError("a type reader outlived the object it reads for")
        return bound(arg)

    return call


def type_reader(var_type: VarTypes = _own_type, returns: FunctionReturns = _no_functions) -> Callable[[Expr], Type]:
    """`lambda expr: type_of(expr, var_type, returns)`, for a caller that asks once per statement."""
    return _Inference(var_type, returns).of


def dimension_extents(
    pairs: Iterable[tuple[Type, Type]], symbols: Container[int] | None = None
) -> dict[int, list[Expr]]:
    """Symbol id -> the extents, in argument order, that each (formal, actual) pair of tensor or
    tile types of one rank gives a dynamic dimension of the formal (only `symbols`, when given).
    A call's type (`call_result_type`) and InlineFunctions' splice
    (`passes/inlining/dynamic_dims.py`) both bind from these, each by its own rule."""
    extents: dict[int, list[Expr]] = {}
    for formal, actual in pairs:
        if not isinstance(formal, TensorType | TileType) or not isinstance(actual, TensorType | TileType):
            continue
        if len(formal.shape) != len(actual.shape):
            continue
        for dim, extent in zip(formal.shape, actual.shape, strict=True):
            if isinstance(dim, Var) and (symbols is None or dim.id in symbols):
                extents.setdefault(dim.id, []).append(extent)
    return extents


def call_result_type(params: Sequence[Type], returns: Sequence[Type], args: Sequence[Type]) -> Type:
    """The type of a call of a program function: its declared return type, with each dynamic
    dimension of its parameters (`pl.dynamic("M")`) bound to the extent this call's arguments
    have in its place (docs/coming-from-pypto.md, "Calls of program functions").

    A dimension whose arguments give one constant takes it, even where another argument passes a
    symbol (the caller's own `M` beside a concrete 8 is 8); one given two constants, or two
    different symbols, stays the callee's symbol. `UnknownType` when the callee declares no
    return type; a tuple type when it declares several."""
    if not returns:
        return UnknownType()
    bound: dict[int, Expr] = {}
    for symbol, found in dimension_extents(zip(params, args, strict=False)).items():
        constants = {e.value for e in found if isinstance(e, ConstInt)}
        if len(constants) == 1:
            bound[symbol] = next(e for e in found if isinstance(e, ConstInt))
        elif not constants and all(_same_extent(found[0], e) for e in found[1:]):
            bound[symbol] = found[0]

    def substitute(expr: Expr) -> Expr:
        if isinstance(expr, Var):
            return bound.get(expr.id, expr)
        return map_children(expr, substitute)

    resolved = tuple(map_type(ty, substitute) for ty in returns) if bound else tuple(returns)
    return resolved[0] if len(resolved) == 1 else TupleType(resolved)


def _same_extent(a: Expr, b: Expr) -> bool:
    return a is b or (isinstance(a, Var) and isinstance(b, Var) and a.id == b.id)


class _Inference:
    """One `type_of` question; `of` dispatches on the node class (it runs once per spliced
    statement, so a table lookup instead of a chain of class patterns matters)."""

    def __init__(self, var_type: VarTypes, returns: FunctionReturns) -> None:
        self.var_type = var_type
        self.returns = returns

    def of(self, e: Expr) -> Type:
        cls = type(e)
        if cls is Var:  # the commonest operand, without the table's indirection
            return self.var_type(cast(Var, e))
        rule = _RULES.get(cls)
        return UnknownType() if rule is None else rule(self, e)

    def _var(self, e: Var) -> Type:
        return self.var_type(e)

    def _const(self, e: ConstInt | ConstFloat) -> Type:
        return ScalarType(e.dtype)

    def _bool(self, e: ConstBool) -> Type:
        return ScalarType(DataType.BOOL)

    def _submit(self, e: Submit) -> Type:
        # the kernel's results, then the launch's task id; the task id alone for a kernel that
        # returns nothing (as PyPTO types a launch). The parser stores it on the launch.
        if not isinstance(e.type, UnknownType):
            return e.type
        task_id = ScalarType(DataType.TASK_ID)
        results = self.returns(e.callee) or ()
        if e.spmd or results:
            return TupleType((*results, task_id))
        return task_id

    def _call(self, e: Call) -> Type:
        if e.function:
            if e.result_type is not None:
                return e.result_type
            types = self.returns(e.op)
            if not types:
                return UnknownType()
            return types[0] if len(types) == 1 else TupleType(types)
        opdef = OPS.lookup(e.op)
        if opdef is None:
            return UnknownType()
        try:
            return opdef.infer([self.of(a) for a in e.args], e.args, {k.name: k.value for k in e.kwargs} if e.kwargs else {})
        except Exception:  # a type rule that cannot handle these operands means "unknown"
            return UnknownType()

    def _binary(self, e: BinaryExpr) -> Type:
        if e.op in BOOLEAN_OPS:
            return ScalarType(DataType.BOOL)
        left = self.of(e.lhs)
        return left if not isinstance(left, UnknownType) else self.of(e.rhs)

    def _unary(self, e: UnaryExpr) -> Type:
        return ScalarType(DataType.BOOL) if e.op is UnOp.Not else self.of(e.operand)

    def _tuple(self, e: MakeTuple) -> Type:
        return TupleType(tuple(self.of(x) for x in e.elements))

    def _item(self, e: TupleGetItemExpr) -> Type:
        base_type = self.of(e.tuple)
        if isinstance(base_type, TupleType) and 0 <= e.index < len(base_type.types):
            return base_type.types[e.index]
        return UnknownType()


_RULES: dict[type, Callable[[_Inference, Any], Type]] = {
    Var: _Inference._var,
    IterArg: _Inference._var,
    ConstInt: _Inference._const,
    ConstFloat: _Inference._const,
    ConstBool: _Inference._bool,
    Submit: _Inference._submit,
    Call: _Inference._call,
    BinaryExpr: _Inference._binary,
    UnaryExpr: _Inference._unary,
    MakeTuple: _Inference._tuple,
    TupleGetItemExpr: _Inference._item,
}


register_type_of(type_of)
