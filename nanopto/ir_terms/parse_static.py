"""Compile-time evaluation of the few Python values the parser must know before any IR exists.

Module constants (`OFFSET = [0, 0]`), `pl.static_assert` conditions and closure values are plain
Python data. The parser must never run program code, so instead of `eval` it interprets a tiny,
closed subset of `ast` (literals, containers, arithmetic, comparisons, boolean logic, names of
other constants) and reports anything else as "not a compile-time constant".
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any


class NotStatic(Exception):
    """Raised with the offending node when an expression is not a compile-time constant."""

    def __init__(self, node: ast.AST, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_MAX_DEPTH = 100
_MAX_MAGNITUDE = 1 << 256  # keeps `2 ** 10 ** 10`-style inputs from hanging the parser
_MAX_LENGTH = 1 << 16  # the same for strings and lists, which only ever hold shapes and names


def is_static_value(value: object) -> bool:
    """Whether `value` is plain data the parser may substitute as a constant."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_static_value(v) for v in value)
    return False


def static_eval(node: ast.expr, names: Mapping[str, object], depth: int = 0) -> Any:
    """The value of `node`, computed from literals and the constants in `names` only."""
    if depth > _MAX_DEPTH:
        raise NotStatic(node, "nesting too deep")
    match node:
        case ast.Constant(value=value) if is_static_value(value):
            if isinstance(value, int) and abs(value) > _MAX_MAGNITUDE:  # a 4,301-digit hex literal
                raise NotStatic(node, "integer too large for a compile-time constant")
            return value
        case ast.Name(id=name):
            if name in names and is_static_value(names[name]):
                return names[name]
            raise NotStatic(node, f"'{name}' is not a compile-time constant")
        case ast.List(elts=elts):
            return [static_eval(e, names, depth + 1) for e in elts]
        case ast.Tuple(elts=elts):
            return tuple(static_eval(e, names, depth + 1) for e in elts)
        case ast.UnaryOp(op=op, operand=operand):
            value = static_eval(operand, names, depth + 1)
            return _unary(node, op, value)
        case ast.BinOp(left=left, op=op, right=right):
            lhs = static_eval(left, names, depth + 1)
            rhs = static_eval(right, names, depth + 1)
            return _binary(node, op, lhs, rhs)
        case ast.BoolOp(op=op, values=values):
            results = [static_eval(v, names, depth + 1) for v in values]
            return all(results) if isinstance(op, ast.And) else any(results)
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            lhs = static_eval(left, names, depth + 1)
            for cmp, right in zip(ops, comparators, strict=True):
                rhs = static_eval(right, names, depth + 1)
                fn = _COMPARE.get(type(cmp))
                if fn is None:
                    raise NotStatic(node, "unsupported comparison in a compile-time constant")
                try:
                    if not fn(lhs, rhs):
                        return False
                except TypeError as exc:
                    raise NotStatic(node, str(exc)) from None
                lhs = rhs
            return True
        case _:
            raise NotStatic(node, "not a compile-time constant")


def _unary(node: ast.AST, op: ast.unaryop, value: Any) -> Any:
    try:
        if isinstance(op, ast.USub):
            return -value
        if isinstance(op, ast.UAdd):
            return +value
        if isinstance(op, ast.Not):
            return not value
        return ~value
    except TypeError as exc:
        raise NotStatic(node, str(exc)) from None


def _binary(node: ast.AST, op: ast.operator, lhs: Any, rhs: Any) -> Any:
    if isinstance(op, ast.Pow):
        if isinstance(rhs, int) and abs(rhs) > 256:
            raise NotStatic(node, "exponent too large for a compile-time constant")
        fn: Callable[[Any, Any], Any] = operator.pow
    elif isinstance(op, (ast.LShift,)) and isinstance(rhs, int) and rhs > 256:
        raise NotStatic(node, "shift too large for a compile-time constant")
    else:
        found = _BINARY.get(type(op))
        if found is None:
            raise NotStatic(node, "unsupported operator in a compile-time constant")
        fn = found
    if isinstance(op, ast.Mult) and any(
        isinstance(a, (str, list, tuple)) and isinstance(b, int) and len(a) * b > _MAX_LENGTH
        for a, b in ((lhs, rhs), (rhs, lhs))
    ):  # checked before multiplying: `[0] * 4096 * 4096 * 4096` must not allocate
        raise NotStatic(node, "sequence too long for a compile-time constant")
    try:
        result = fn(lhs, rhs)
    except (TypeError, ZeroDivisionError, ValueError, OverflowError) as exc:
        raise NotStatic(node, str(exc)) from None
    if isinstance(result, int) and not isinstance(result, bool) and abs(result) > _MAX_MAGNITUDE:
        raise NotStatic(node, "integer too large for a compile-time constant")
    if isinstance(result, (str, list, tuple)) and len(result) > _MAX_LENGTH:  # repeated `x + x` doubling
        raise NotStatic(node, "sequence too long for a compile-time constant")
    return result
