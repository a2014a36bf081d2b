"""What a subscript is: `a[i, j]`, `a[0:16, :]` and `a[i] = v` lowered to ops while parsing.

A subscript on a tensor or tile is sugar for an op call, built as PyPTO's parser builts it
(docs/coming-from-pypto.md#subscripts): an all-scalar, full-rank index is `tensor.read` /
`tile.read`; anything else is a `tensor.slice` / `tile.slice` view with full-rank `shape` and
`offset` lists, a scalar-indexed axis kept in them with extent 1 and listed in `drop_dims`, and
missing trailing indices an implicit `:`. A write `dst[...] = src` is
`dst = pl.tensor.assemble(dst, src, offset)` (`tile.assemble` on a tile), the source reshaped to
the window's full rank when the window drops axes. A tuple index stays a projection and an array
index an `array.get_element`; a value whose type the parser cannot tell keeps a plain subscript.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import BinaryExpr, BinOp, Call, ConstInt, Expr, MakeTuple, SliceExpr, Span, Var
from nanopto.ir_terms.parse_error import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)
from nanopto.ir_terms.types import ArrayType, TensorType, TileType, Type, UnknownType

if TYPE_CHECKING:
    from nanopto.ir_terms.parse_exprs import ExprParser

_STEP_HINT = "write a[start:stop], without a step"


def index_nodes(node: ast.Subscript) -> list[ast.expr]:
    """`a[x]` -> [x], `a[x, y]` -> [x, y]."""
    return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]


def _const(expr: Expr) -> int | None:
    return expr.value if isinstance(expr, ConstInt) else None


def _index(value: int, span: Span | None) -> ConstInt:
    return ConstInt(value, DataType.INDEX, span)


def _list(elements: Sequence[Expr], span: Span | None) -> MakeTuple:
    return MakeTuple(tuple(elements), is_list=True, span=span)


def extent(upper: Expr, lower: Expr, span: Span | None) -> Expr:
    """`upper - lower`, folded where it is plain: two constants, a zero lower bound, and
    `i + 16 - i` (so `a[i:i + 16]` has extent 16, the form a shape check can compare)."""
    hi, lo = _const(upper), _const(lower)
    if hi is not None and lo is not None:
        return _index(hi - lo, span)
    if lo == 0:
        return upper
    if upper == lower:
        return _index(0, span)
    if isinstance(upper, BinaryExpr) and upper.op is BinOp.Add:
        if upper.lhs == lower:
            return upper.rhs
        if upper.rhs == lower:
            return upper.lhs
    return BinaryExpr(BinOp.Sub, upper, lower, span=span)


def _kind(ty: TensorType | TileType) -> str:
    return "tile" if isinstance(ty, TileType) else "tensor"


def _check_rank(
    p: ExprParser, node: ast.AST, indices: list[ast.expr], ty: TensorType | TileType, what: str
) -> None:
    kind, rank = _kind(ty), len(ty.shape)
    if len(indices) > rank:
        raise p.error(
            node,
            f"this {kind} {what} has {len(indices)} indices but the {kind} is {rank}D",
            hint=f"give at most {rank} indices for a {rank}D {kind}; a missing trailing index is a whole axis",
            kind=ParserTypeError,
        )


def _no_step(p: ExprParser, node: ast.AST, index: ast.Slice, what: str) -> None:
    if index.step is not None:
        raise p.error(
            node, f"a slice step is not supported in a {what}", hint=_STEP_HINT, kind=UnsupportedFeatureError
        )


def _window(
    p: ExprParser, node: ast.AST, indices: list[ast.expr], shape: Sequence[Expr], what: str
) -> tuple[list[Expr], list[Expr], list[int]]:
    """Full-rank `(extents, offsets, dropped axes)` of a tensor subscript window."""
    span = p.span(node)
    extents: list[Expr] = []
    offsets: list[Expr] = []
    dropped: list[int] = []
    for axis, index in enumerate(indices):
        if not isinstance(index, ast.Slice):
            offsets.append(p.expr(index))
            extents.append(_index(1, span))
            dropped.append(axis)
            continue
        _no_step(p, node, index, what)
        lower = p.expr(index.lower) if index.lower is not None else None
        upper = p.expr(index.upper) if index.upper is not None else shape[axis]
        offsets.append(lower if lower is not None else _index(0, span))
        extents.append(upper if lower is None else extent(upper, lower, span))
    for axis in range(len(indices), len(shape)):
        offsets.append(_index(0, span))
        extents.append(shape[axis])
    return extents, offsets, dropped


def _tile_window(
    p: ExprParser, node: ast.AST, indices: list[ast.expr], ty: TileType
) -> tuple[list[Expr], list[Expr], list[Expr] | None, list[int]]:
    """A tile window: static extents (a tile's allocation is static), offsets, the valid shape
    where it is narrower than the extents (a dynamic upper bound, or a narrower source), and the
    dropped axes. A slice's lower bound must be static."""
    span = p.span(node)
    static = list(ty.shape)
    view = ty.tile_view
    logical = list(view.valid_shape) if view is not None and len(view.valid_shape) == len(static) else static
    extents: list[Expr] = []
    offsets: list[Expr] = []
    valid: list[Expr] = []
    dropped: list[int] = []
    narrower = False
    for axis, index in enumerate(indices):
        if not isinstance(index, ast.Slice):
            offsets.append(p.expr(index))
            extents.append(_index(1, span))
            valid.append(_index(1, span))
            dropped.append(axis)
            continue
        _no_step(p, node, index, "tile subscript")
        lower = p.expr(index.lower) if index.lower is not None else _index(0, span)
        if _const(lower) is None:
            raise p.error(
                node,
                "Dynamic lower bounds are not supported in a tile subscript: a tile window starts at a static offset",
                hint="write a constant lower bound, or move the data with explicit tile ops (pl.tile.slice)",
                kind=UnsupportedFeatureError,
            )
        upper = p.expr(index.upper) if index.upper is not None else None
        valid_upper = logical[axis] if upper is None else _smaller(upper, logical[axis], span)
        valid_extent = (
            valid_upper if index.lower is None else _at_least_zero(extent(valid_upper, lower, span), span)
        )
        alloc = _allocation(p, node, static[axis], lower, upper)
        extents.append(alloc)
        offsets.append(lower)
        valid.append(valid_extent)
        narrower = narrower or not _same_extent(alloc, valid_extent)
    for axis in range(len(indices), len(static)):
        offsets.append(_index(0, span))
        extents.append(static[axis])
        valid.append(logical[axis])
        narrower = narrower or not _same_extent(static[axis], logical[axis])
    return extents, offsets, valid if narrower else None, dropped


def _smaller(a: Expr, b: Expr, span: Span | None) -> Expr:
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return _index(min(ca, cb), span)
    return BinaryExpr(BinOp.Min, a, b, span=span)


def _at_least_zero(value: Expr, span: Span | None) -> Expr:
    c = _const(value)
    if c is not None:
        return _index(max(c, 0), span)
    return BinaryExpr(BinOp.Max, value, _index(0, span), span=span)


def _same_extent(a: Expr, b: Expr) -> bool:
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return ca == cb
    return a is b or (isinstance(a, Var) and a == b)


def _allocation(p: ExprParser, node: ast.AST, static: Expr, lower: Expr, upper: Expr | None) -> Expr:
    """The static extent of a tile window: its bounds cut to the source's static extent."""
    lo, whole = _const(lower), _const(static)
    room = max(whole - lo, 0) if lo is not None and whole is not None else None
    hi = _const(upper) if upper is not None else None
    if hi is not None:
        size = max(hi - lo, 0) if lo is not None else hi
        size = min(size, room) if room is not None else size
    elif room is not None:
        size = room
    else:
        return static
    if size <= 0:
        raise p.error(
            node,
            "a tile subscript must select a positive static extent on each axis",
            hint="keep the slice bounds inside the tile's static shape, with upper > lower",
            kind=UnsupportedFeatureError,
        )
    return _index(size, p.span(node))


def _describe(ty: Type) -> str:
    return type(ty).__name__.removesuffix("Type").lower()


def read(p: ExprParser, node: ast.Subscript, base: Expr, ty: TensorType | TileType) -> Expr:
    """`a[i, j]` (all scalar, full rank) is a read; any other index of a tensor or tile a slice."""
    indices = index_nodes(node)
    kind, span = _kind(ty), p.span(node)
    _check_rank(p, node, indices, ty, "subscript")
    if len(indices) == len(ty.shape) and not any(isinstance(i, ast.Slice) for i in indices):
        return Call(f"{kind}.read", (base, _list([p.expr(i) for i in indices], span)), span=span)
    if isinstance(ty, TileType):
        extents, offsets, valid, dropped = _tile_window(p, node, indices, ty)
        kept = [e for axis, e in enumerate(extents) if axis not in dropped]
        if dropped and len(kept) < 2:
            shown = ", ".join(
                str(_const(e)) if _const(e) is not None else "?"
                for e in [_index(1, span)] * (2 - len(kept)) + kept
            )
            warnings.warn(
                f"{p.file}:{getattr(node, 'lineno', 0) + p.line_offset}: this tile subscript has rank {len(kept)}; "
                f"a tile is physically 2D, so nanopto is auto-promoting to 2D shape [{shown}] "
                "(pl.tile.reshape gives another layout)",
                UserWarning,
                stacklevel=2,
            )
    else:
        extents, offsets, dropped = _window(p, node, indices, ty.shape, "tensor subscript")
        valid = None
    args: list[Expr] = [base, _list(extents, span), _list(offsets, span)]
    if dropped or valid is not None:
        args.append(_list(valid or [], span))
    if dropped:
        args.append(_list([_index(d, span) for d in dropped], span))
    return Call(f"{kind}.slice", tuple(args), span=span)


def plain(p: ExprParser, node: ast.Subscript, base: Expr) -> Expr:
    """`a[i]` on a value whose type the parser cannot tell (a helper's result without a return
    annotation): kept as a subscript, since which op it is depends on the type."""
    indices: list[Expr] = []
    for index in index_nodes(node):
        if isinstance(index, ast.Slice):
            _no_step(p, node, index, "subscript")
            start = p.expr(index.lower) if index.lower is not None else None
            stop = p.expr(index.upper) if index.upper is not None else None
            indices.append(SliceExpr(start, stop, span=p.span(index)))
        else:
            indices.append(p.expr(index))
    return Call("subscript", (base, *indices), span=p.span(node))


def not_subscriptable(p: ExprParser, node: ast.Subscript, ty: Type) -> ParserError:
    return p.error(
        node,
        f"a subscript reads a tuple, tensor, tile or array, not a {_describe(ty)}",
        hint="index a tensor (a[i, 0:4]), a tile, an array (arr[i]) or a tuple (t[0])",
        kind=ParserTypeError,
    )


def tuple_index_error(p: ExprParser, node: ast.Subscript) -> ParserError:
    if isinstance(node.slice, ast.Constant):
        return p.error(node, "a tuple index is an integer", hint="write t[0]", kind=ParserSyntaxError)
    return p.error(
        node,
        "a tuple item is read with a constant integer index",
        hint="write t[0]; a computed index selects nothing the parser can type",
        kind=UnsupportedFeatureError,
    )


def write(p: ExprParser, target: ast.Subscript, var: Var, value_node: ast.expr, span: Span | None) -> Expr:
    """The call `dst[...] = src` stores into `dst` (the caller rebinds `dst` to it)."""
    ty = var.type
    value = p.expr(value_node)
    indices = index_nodes(target)
    if isinstance(ty, UnknownType):
        starts = []
        for index in indices:
            if isinstance(index, ast.Slice):
                _no_step(p, target, index, "subscript write")
                starts.append(p.expr(index.lower) if index.lower is not None else _index(0, p.span(index)))
            else:
                starts.append(p.expr(index))
        return Call("tensor.assemble", (var, value, _list(starts, p.span(target))), span=span)
    if not isinstance(ty, (TensorType, TileType)):
        raise p.error(
            target,
            f"a subscript write stores into a tensor, tile or array, not a {_describe(ty)}",
            hint="dst[...] = src writes a window of a tensor or tile, arr[i] = v an array element",
            kind=ParserTypeError,
        )
    kind = _kind(ty)
    _check_rank(p, target, indices, ty, "subscript write")
    if len(indices) == len(ty.shape) and not any(isinstance(i, ast.Slice) for i in indices):
        raise p.error(
            target,
            f"Element-write `dst[i, j] = v` is not supported on a {kind}: a subscript write stores a window",
            hint=f"store one element with pl.{kind}.write(dst, [i, j], v), or write a window: dst[i:i+1, j:j+1] = t",
            kind=UnsupportedFeatureError,
        )
    extents, offsets, dropped = _window(p, target, indices, ty.shape, f"{kind} subscript write")
    kept = [axis for axis in range(len(extents)) if axis not in dropped]
    natural = len(kept)
    floored = max(2, natural) if kind == "tile" else natural
    source_type = p.type_of(value)
    if not isinstance(source_type, UnknownType):
        if not isinstance(source_type, TileType if kind == "tile" else TensorType):
            raise p.error(
                value_node,
                f"the source of a {kind} subscript write is a {kind} too, not a {_describe(source_type)}",
                hint=f"write a {kind} whose shape is the window's: dst[...] = src",
                kind=ParserTypeError,
            )
        assert isinstance(source_type, (TensorType, TileType))
        rank = len(source_type.shape)
        if rank not in (natural, floored):
            expected = f"{natural}D" if natural == floored else f"{natural}D or {floored}D"
            raise p.error(
                value_node,
                f"the source must be {expected} to match the {kind} window, whose scalar-indexed axes "
                f"are dropped; it is {rank}D",
                hint="a scalar index removes its axis from the window (a tile may keep leading unit axes to stay 2D)",
                kind=ParserTypeError,
            )
        lead = rank - natural
        valid = _valid_shape(source_type)
        for axis, want in enumerate([_index(1, span)] * lead + [extents[d] for d in kept]):
            wanted, has = _const(want), _const(source_type.shape[axis])
            if wanted is None or has is None or wanted == has:
                continue
            if valid is not None and (_const(valid[axis]) is None or _const(valid[axis]) == wanted):
                continue
            raise p.error(
                value_node,
                f"subscript write shape mismatch on source axis {axis}: the window takes {wanted} elements, "
                f"the source has {has}",
                hint="make the source's shape (or valid shape) the window's, or change the slice bounds",
                kind=ParserTypeError,
            )
        if rank != len(extents):

            def lifted(dims: Sequence[Expr]) -> MakeTuple:
                rest = iter(list(dims)[lead:])
                return _list(
                    [_index(1, span) if axis in dropped else next(rest) for axis in range(len(extents))], span
                )

            reshape_args: list[Expr] = [value, lifted(source_type.shape)]
            if kind == "tensor" and valid is not None:  # the narrowed region, restated at the new rank
                reshape_args.append(lifted(valid))
            value = Call(f"{kind}.reshape", tuple(reshape_args), span=span)
    return Call(f"{kind}.assemble", (var, value, _list(offsets, p.span(target))), span=span)


def _valid_shape(ty: TensorType | TileType) -> tuple[Expr, ...] | None:
    """The source's valid region where an op narrowed it (a tile's view, a tensor's `valid_shape`)."""
    view = ty.tile_view if isinstance(ty, TileType) else None
    valid = view.valid_shape if view is not None else ty.valid_shape if isinstance(ty, TensorType) else ()
    if len(valid) == len(ty.shape) and not all(
        _same_extent(a, b) for a, b in zip(valid, ty.shape, strict=True)
    ):
        return valid
    return None


def array_index(p: ExprParser, node: ast.Subscript, base: Expr, ty: ArrayType) -> Expr:
    indices = index_nodes(node)
    if len(indices) != 1 or isinstance(indices[0], ast.Slice):
        raise p.error(
            node, "an array element read takes one index: arr[i]", hint="write arr[i]", kind=ParserTypeError
        )
    return Call("array.get_element", (base, p.expr(indices[0])), span=p.span(node))
