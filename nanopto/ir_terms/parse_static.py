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
_MAX_ELEMENTS = 1 << 16
"""Elements of one value, every nested list and tuple counted, a shared one as often as it
occurs: `[[0] * 65536] * 65536` is 4.3e9 elements in 0.5 MB of memory, and anything that walks
it (a later `B = A`, a use in an expression) would run for hours."""


class StaticSizes:
    """The element count and nesting depth of each list or tuple made so far, by identity.

    Sizes are known before a value is built (`[x] * n` has `n` times the elements of `x`), so a
    value over the bound is refused before it exists; a value met again (a constant used in
    another) is measured in one lookup. Each measured value is kept here, so no id is reused.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, int, int]] = {}

    def size(self, value: object) -> tuple[int, int]:
        """(elements, depth) of a scalar or of a value made or measured here."""
        if not isinstance(value, (list, tuple)):
            return 1, 0
        known = self._known.get(id(value))
        if known is None or known[0] is not value:
            measured = self.measure(value)
            known = (value, *(measured or (_MAX_ELEMENTS + 1, 0)))
        return known[1], known[2]

    def measure(self, root: list[Any] | tuple[Any, ...]) -> tuple[int, int] | None:
        """(elements, depth) of a value not made here (a closure value); None when it holds
        something other than plain data or is over a bound, found in at most that many steps."""
        known = self._known.get(id(root))
        if known is not None and known[0] is root:
            return known[1], known[2]
        elements, deepest = 0, 0
        stack: list[tuple[object, int]] = [(root, 1)]
        while stack:
            value, depth = stack.pop()
            if isinstance(value, (list, tuple)):
                known = self._known.get(id(value))
                if known is not None and known[0] is value:
                    elements, deepest = elements + known[1], max(deepest, depth - 1 + known[2])
                else:
                    elements, deepest = elements + 1, max(deepest, depth)
                    stack.extend((v, depth + 1) for v in value)
            elif is_static_value(value):
                elements += 1
            else:
                return None
            if elements > _MAX_ELEMENTS or deepest > _MAX_DEPTH:
                return None
        self._known[id(root)] = (root, elements, deepest)
        return elements, deepest

    def check(self, node: ast.AST, elements: int, depth: int) -> None:
        if elements > _MAX_ELEMENTS:
            raise NotStatic(node, f"value too large for a compile-time constant (over {_MAX_ELEMENTS:,} elements)")
        if depth > _MAX_DEPTH:
            raise NotStatic(node, f"value nested too deep for a compile-time constant (over {_MAX_DEPTH} levels)")

    def made(self, node: ast.AST, value: list[Any] | tuple[Any, ...]) -> list[Any] | tuple[Any, ...]:
        """Record a list or tuple built from measured parts (its elements are all known)."""
        sizes = [self.size(v) for v in value]
        elements = 1 + sum(e for e, _ in sizes)
        depth = 1 + max((d for _, d in sizes), default=0)
        self.check(node, elements, depth)
        self._known[id(value)] = (value, elements, depth)
        return value


def is_static_value(value: object, sizes: StaticSizes | None = None) -> bool:
    """Whether `value` is plain data, within the size bounds, that the parser may substitute."""
    if value is None or isinstance(value, (bool, float, str)):
        return True
    if isinstance(value, int):
        return abs(value) <= _MAX_MAGNITUDE
    if isinstance(value, (list, tuple)):
        return (sizes or StaticSizes()).measure(value) is not None
    return False


def static_eval(node: ast.expr, names: Mapping[str, object], depth: int = 0, sizes: StaticSizes | None = None) -> Any:
    """The value of `node`, computed from literals and the constants in `names` only.

    `sizes` carries what is known of the values made so far (one per program being parsed), so
    a constant is bounded before it is computed and a constant used again is not walked again.
    """
    sizes = sizes if sizes is not None else StaticSizes()
    if depth > _MAX_DEPTH:
        raise NotStatic(node, "nesting too deep")
    match node:
        case ast.Constant(value=value) if is_static_value(value):
            return value
        case ast.Constant(value=int()):  # a 4,301-digit hex literal
            raise NotStatic(node, "integer too large for a compile-time constant")
        case ast.Name(id=name):
            if name in names and is_static_value(names[name], sizes):
                return names[name]
            raise NotStatic(node, f"'{name}' is not a compile-time constant")
        case ast.List(elts=elts):
            return sizes.made(node, [static_eval(e, names, depth + 1, sizes) for e in elts])
        case ast.Tuple(elts=elts):
            return sizes.made(node, tuple(static_eval(e, names, depth + 1, sizes) for e in elts))
        case ast.UnaryOp(op=op, operand=operand):
            value = static_eval(operand, names, depth + 1, sizes)
            return _unary(node, op, value)
        case ast.BinOp(left=left, op=op, right=right):
            lhs = static_eval(left, names, depth + 1, sizes)
            rhs = static_eval(right, names, depth + 1, sizes)
            return _binary(node, op, lhs, rhs, sizes)
        case ast.BoolOp(op=op, values=values):
            results = [static_eval(v, names, depth + 1, sizes) for v in values]
            return all(results) if isinstance(op, ast.And) else any(results)
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            lhs = static_eval(left, names, depth + 1, sizes)
            for cmp, right in zip(ops, comparators, strict=True):
                rhs = static_eval(right, names, depth + 1, sizes)
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


def _binary(node: ast.AST, op: ast.operator, lhs: Any, rhs: Any, sizes: StaticSizes) -> Any:
    if isinstance(op, ast.Pow):
        if isinstance(rhs, int) and abs(rhs) > 256:
            raise NotStatic(node, "exponent too large for a compile-time constant")
        fn: Callable[[Any, Any], Any] = operator.pow
    elif isinstance(op, (ast.LShift,)) and isinstance(rhs, int) and rhs > 256:
        raise NotStatic(node, "shift too large for a compile-time constant")
    elif isinstance(op, ast.Mod) and isinstance(lhs, str):
        # `'%*d' % (10**9, 1)` is 100 bytes of source and a gigabyte of string
        raise NotStatic(node, "string formatting is not supported in a compile-time constant")
    else:
        found = _BINARY.get(type(op))
        if found is None:
            raise NotStatic(node, "unsupported operator in a compile-time constant")
        fn = found
    _check_before(node, op, lhs, rhs, sizes)
    try:
        result = fn(lhs, rhs)
    except (TypeError, ZeroDivisionError, ValueError, OverflowError) as exc:
        raise NotStatic(node, str(exc)) from None
    if isinstance(result, int) and not isinstance(result, bool) and abs(result) > _MAX_MAGNITUDE:
        raise NotStatic(node, "integer too large for a compile-time constant")
    if isinstance(result, (str, list, tuple)) and len(result) > _MAX_LENGTH:  # repeated `x + x` doubling
        raise NotStatic(node, "sequence too long for a compile-time constant")
    if isinstance(result, (list, tuple)):
        sizes.made(node, result)
    return result


def _check_before(node: ast.AST, op: ast.operator, lhs: Any, rhs: Any, sizes: StaticSizes) -> None:
    """Refuse a sequence result over the bounds before it is allocated."""
    if isinstance(op, ast.Mult):
        for seq, count in ((lhs, rhs), (rhs, lhs)):
            if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                if len(seq) * count > _MAX_LENGTH:  # `[0] * 4096 * 4096 * 4096` must not allocate
                    raise NotStatic(node, "sequence too long for a compile-time constant")
                elements, depth = sizes.size(seq)
                sizes.check(node, 1 + (elements - 1) * max(count, 0), depth)
    elif isinstance(op, ast.Add) and isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple)):
        (left, left_depth), (right, right_depth) = sizes.size(lhs), sizes.size(rhs)
        sizes.check(node, left + right - 1, max(left_depth, right_depth))
