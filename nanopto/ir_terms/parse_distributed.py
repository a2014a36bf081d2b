"""The `pld` surface of a `pl` source: distributed annotations, symbols and op calls.

`import nanopto.language.distributed as pld` (PyPTO's `pypto.language.distributed`) names the
distributed tensor type (`pld.DistributedTensor[[64], pl.FP32]`), the communication context
(`pld.CommCtx`), the enums of the distributed ops (`pld.AtomicType`, `pld.WaitCmp`, ...) and the
ops themselves, written `pld.<category>.<op>(...)` or by the short form `pld.<op>(...)`. The ops
are the registry's (`nanopto.ir_terms.ops_distributed`); this module reads a call as PyPTO's
parser does: every argument the op takes positionally becomes a positional argument of the IR
call whatever the source wrote (`peer=peer` included), its keyword-only options stay keywords,
and the checks PyPTO makes while parsing are made here, at the call
(docs/coming-from-pypto.md, "Distributed programs").
"""

from __future__ import annotations

import ast
import inspect
import math
from typing import TYPE_CHECKING

from nanopto.ir_terms.dtypes import DataType, TensorLayout
from nanopto.ir_terms.nodes import (
    BinaryExpr,
    BinOp,
    Call,
    ConstFloat,
    ConstInt,
    ConstStr,
    Expr,
    Keyword,
    MakeTuple,
    Symbol,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.parse_error import InvalidOperationError, ParserTypeError
from nanopto.ir_terms.types import (
    CommCtxType,
    DistributedTensorType,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    Type,
    UnknownType,
)

if TYPE_CHECKING:
    from nanopto.ir_terms.parse_exprs import ExprParser

PREFIX = "pld."
CATEGORIES = ("tensor", "tile", "system")
ALLOC = "pld.tensor.alloc_window_buffer"
HOST_ONLY = frozenset({ALLOC, "pld.system.world_size"})
"""Ops that exist only in a HOST orchestrator's own body, outside any device scope."""

_SHORT_REMOTE_STORE = "pld.remote_store"


def is_distributed(path: str) -> bool:
    return path.startswith(PREFIX)


def symbol(path: str) -> Symbol | None:
    """`pld.AtomicType.Add` is the constant `pl.AtomicType.Add` (the enums are the IR's own); None
    for anything else under `pld`."""
    rest = path[len(PREFIX) :]
    head = rest.partition(".")[0]
    if head in ("AtomicType", "WaitCmp", "NotifyOp") and "." in rest:
        return Symbol(rest)
    return None


# ---------------------------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------------------------


def annotation(parser: ExprParser, node: ast.expr) -> Type | None:
    """The type a `pld` annotation (or `pl.Ptr`) names; None when `node` is none of them."""
    head = parser_dotted(node.value if isinstance(node, ast.Subscript) else node)
    if head in ("pld.CommCtx", "pld.CommCtxType") and not isinstance(node, ast.Subscript):
        return CommCtxType()
    if head == "pl.Ptr" and not isinstance(node, ast.Subscript):
        return PtrType()
    if head != "pld.DistributedTensor":
        return None
    if not isinstance(node, ast.Subscript):
        raise parser.error(node, "pld.DistributedTensor takes a shape and a dtype: pld.DistributedTensor[[64], pl.FP32]", kind=ParserTypeError)
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    # A trailing "window_buffer=<name>" string is a debugging marker of PyPTO's pass dumps, not
    # part of the type: it is read past, so such a dump parses.
    items = [i for i in items if not (isinstance(i, ast.Constant) and isinstance(i.value, str) and i.value.startswith("window_buffer="))]
    if len(items) not in (2, 3):
        raise parser.error(
            node,
            "pld.DistributedTensor takes a shape, a dtype and optionally a layout: pld.DistributedTensor[[64], pl.FP32]",
            kind=ParserTypeError,
        )
    shape = parser.shape(items[0])
    dtype = parser.dtype(items[1])
    layout = _layout(parser, items[2]) if len(items) == 3 else None
    return DistributedTensorType(shape, dtype, layout=layout)


def _layout(parser: ExprParser, node: ast.expr) -> TensorLayout:
    path = parser_dotted(node) or ""
    member = path.rpartition(".")[2]
    if path in (f"pl.{member}", f"pl.TensorLayout.{member}") and member in TensorLayout.__members__:
        return TensorLayout[member]
    raise parser.error(node, "a tensor layout is a pl.TensorLayout member, e.g. pl.NZ", kind=ParserTypeError)


def parser_dotted(node: ast.expr) -> str | None:
    """`pld.tensor.window` for that attribute chain; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


# ---------------------------------------------------------------------------------------------
# Calls
# ---------------------------------------------------------------------------------------------


def call(parser: ExprParser, node: ast.Call, path: str) -> Expr:
    """The IR call of `pld.<...>(...)`, checked as PyPTO checks it while parsing."""
    spelling = _resolve(parser, node, path)
    op = OPS.lookup(spelling)
    assert op is not None and op.parameters is not None
    name = op.name
    if name in HOST_ONLY:
        _check_host(parser, node, name)
    if name == ALLOC:
        return _alloc(parser, node)
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise parser.error(node, f"{name}: *args and **kwargs are not supported", kind=InvalidOperationError)
    signature = op.parameters
    given = {k.arg: k.value for k in node.keywords if k.arg is not None}
    try:
        bound = signature.bind(*node.args, **given)
    except TypeError:
        raise parser.error(node, _call_error(name, op.signature, len(node.args), given), kind=InvalidOperationError) from None
    args: list[Expr] = []
    kwargs: list[Keyword] = []
    missing: str | None = None
    for param in signature.parameters.values():
        value = bound.arguments.get(param.name)
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            if value is not None:
                kwargs.append(Keyword(param.name, parser.expr(value), span=parser.span(value)))
        elif value is None:
            missing = missing or param.name
        elif missing is not None:
            raise parser.error(value, f"{name}: {param.name}= needs {missing}= too (they are positional)", kind=InvalidOperationError)
        else:
            args.append(parser.expr(value))
    result = Call(name, tuple(args), tuple(kwargs), span=parser.span(node))
    _check(parser, node, result)
    return result


def _call_error(name: str, signature: str, positional: int, keywords: dict[str, ast.expr]) -> str:
    """What Python says of a call of `name{signature}` with these arguments (`... missing 1
    required positional argument: 'peer'`), the words PyPTO's parser reports too."""
    short = name.rpartition(".")[2]
    namespace: dict[str, object] = {}
    exec(compile(f"def {short}{signature.replace('=None', '=0')}: pass", "<signature>", "exec"), namespace)
    try:
        namespace[short](*range(positional), **dict.fromkeys(keywords, 0))  # type: ignore[operator]
    except TypeError as exc:
        return f"pld.{name.partition('.')[2]}{signature}: {exc}"
    return f"{name}{signature}: the arguments do not match"


def _resolve(parser: ExprParser, node: ast.Call, path: str) -> str:
    """The registry spelling `path` calls; `pld.remote_store` picks the tile or tensor op by the
    kind of its source."""
    if path == _SHORT_REMOTE_STORE:
        source = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "src"), None)
        kind = parser.type_of(parser.expr(source)) if source is not None else UnknownType()
        return "pld.tile.remote_store" if isinstance(kind, TileType) else "pld.tensor.remote_store"
    if path in OPS and OPS.lookup(path) is not None:
        return path
    category = path[len(PREFIX) :].partition(".")[0]
    where = f"pld.{category}" if category in CATEGORIES else "pld"
    known = sorted(s for op in OPS for s in op.spellings if s.startswith(where + ".") and s.count(".") == where.count(".") + 1)
    raise parser.error(
        node.func,
        f"Unknown operation '{path}': {where} has no such op",
        hint="the ops here: " + ", ".join(known) if known else None,
        kind=InvalidOperationError,
    )


def _check_host(parser: ExprParser, node: ast.Call, name: str) -> None:
    level = parser.function_attr("level")
    if not (isinstance(level, Symbol) and level.path == "Level.HOST"):
        raise parser.error(
            node,
            f"{name}() can only be called in a HOST orchestration function",
            hint="call it in a function declared @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)",
        )
    if parser.enclosing_scopes():
        raise parser.error(
            node,
            f"{name}() cannot be called inside a device scope (InCore / SPMD): it runs on the host",
            hint="call it in the HOST orchestrator's own body, outside any with pl.at(...) or pl.spmd(...)",
        )


def _alloc(parser: ExprParser, node: ast.Call) -> Expr:
    """`buf = pld.alloc_window_buffer(size)`, or `(shape, dtype=...)` whose byte size the parser
    computes: the call carries the buffer's name, the assigned variable's, unique in the program."""
    target = parser.assigned_name(node)
    if target is None:
        raise parser.error(
            node,
            f"{ALLOC} must appear as the RHS of a simple assignment: the buffer is named by its variable",
            hint="write buf = pld.alloc_window_buffer(...) (no tuple unpacking, no subscripts)",
        )
    keywords = {k.arg: k for k in node.keywords}
    if "name" in keywords:
        raise parser.error(
            keywords["name"].value,
            f"{ALLOC} 'name' kwarg cannot be passed explicitly: it is the assigned variable's name",
            hint=f"drop name=; the buffer is named '{target}'",
        )
    unknown = [k for k in keywords if k != "dtype"]
    if unknown or len(node.args) != 1:
        raise parser.error(node, f"{ALLOC} takes a byte size, or a shape and dtype=: alloc_window_buffer([64, 128], dtype=pl.FP32)", kind=InvalidOperationError)
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)):
        if "dtype" not in keywords:
            raise parser.error(first, f"{ALLOC} with a shape requires dtype=", hint="write alloc_window_buffer([...], dtype=pl.FP32)")
        size = _byte_size(parser, first, parser.dtype(keywords["dtype"].value))
    else:
        if "dtype" in keywords:
            raise parser.error(
                keywords["dtype"].value,
                f"{ALLOC}: dtype= is only valid when the first argument is a shape",
                hint="give a byte count alone, or a shape list with dtype=",
            )
        size = parser.expr(first)
    if target in parser.window_buffers:
        raise parser.error(
            node,
            f"{ALLOC} name '{target}' is already declared in this program",
            hint="a window buffer's name is unique across the program: pick another variable name",
        )
    parser.window_buffers.add(target)
    return Call(ALLOC, (size,), (Keyword("name", ConstStr(target)),), span=parser.span(node))


def _byte_size(parser: ExprParser, shape: ast.List | ast.Tuple, dtype: DataType) -> Expr:
    if not shape.elts:
        raise parser.error(shape, f"{ALLOC}: shape must be non-empty")
    dims = [parser.expr(e) for e in shape.elts]
    for elt, dim in zip(shape.elts, dims, strict=True):
        if isinstance(dim, ConstInt) and dim.value <= 0:
            raise parser.error(elt, f"{ALLOC}: all dimensions must be positive, got {dim.value}")
    item = dtype.numpy().itemsize
    if all(isinstance(d, ConstInt) for d in dims):
        return ConstInt(math.prod(d.value for d in dims if isinstance(d, ConstInt)) * item, DataType.INT64)
    total: Expr = ConstInt(item, DataType.INT64)
    for dim in dims:
        factor = ConstInt(dim.value, DataType.INT64) if isinstance(dim, ConstInt) else dim
        total = BinaryExpr(BinOp.Mul, total, factor)
    return total


def _check(parser: ExprParser, node: ast.Call, result: Call) -> None:
    """The checks PyPTO's parser makes on the operands of a distributed op."""
    name, args = result.op, result.args
    types = [parser.type_of(a) for a in args]
    at = node.args[0] if node.args else node
    if name == "pld.tensor.window" and not isinstance(types[0], (PtrType, UnknownType)):
        raise parser.error(at, "pld.tensor.window takes the Ptr handle of a pld.alloc_window_buffer", kind=InvalidOperationError)
    if name == "pld.system.get_comm_ctx" and not isinstance(types[0], (DistributedTensorType, UnknownType)):
        raise parser.error(at, "pld.system.get_comm_ctx takes a pld.DistributedTensor", kind=InvalidOperationError)
    if name in ("pld.system.rank", "pld.system.nranks") and not isinstance(types[0], (CommCtxType, UnknownType)):
        raise parser.error(at, f"{name} takes a pld.CommCtx (from pld.get_comm_ctx(t))", kind=InvalidOperationError)
    if name == "pld.tile.remote_load":
        _want_distributed(parser, node, name, types[0])
        if not isinstance(args[2], MakeTuple):
            raise parser.error(node, f"{name}: offsets must be a list, e.g. offsets=[0, 0]", kind=InvalidOperationError)
    if name in ("pld.tile.remote_store", "pld.tensor.remote_store"):
        _want_distributed(parser, node, name, types[1])
        if name == "pld.tensor.remote_store" and isinstance(types[0], TileType):
            raise parser.error(at, "pld.tensor.remote_store takes a tensor: a tile is stored with pld.tile.remote_store", kind=InvalidOperationError)
        _check_push_bounds(parser, node, types[0], types[1], args[3])
    if name in ("pld.tensor.get", "pld.tensor.put"):
        _want_distributed(parser, node, name, types[0])
        _want_distributed(parser, node, name, types[2])
    if name in ("pld.system.wait", "pld.system.defer_wait"):
        _check_wait(parser, node, result, types)


def _want_distributed(parser: ExprParser, node: ast.Call, name: str, ty: Type) -> None:
    if not isinstance(ty, (DistributedTensorType, UnknownType)):
        raise parser.error(
            node,
            f"{name}: the target must be a pld.DistributedTensor (a window-bound tensor), not a plain tensor",
            hint="annotate it pld.DistributedTensor[[...], dtype], or take it from pld.window(buf, ...)",
            kind=InvalidOperationError,
        )


def _check_push_bounds(parser: ExprParser, node: ast.Call, source: Type, target: Type, offsets: Expr) -> None:
    if not (isinstance(source, (TensorType, TileType)) and isinstance(target, TensorType) and isinstance(offsets, MakeTuple)):
        return
    for dim, (extent, whole, offset) in enumerate(zip(source.shape, target.shape, offsets.elements, strict=False)):
        known = isinstance(extent, ConstInt) and isinstance(whole, ConstInt) and isinstance(offset, ConstInt)
        if known and offset.value + extent.value > whole.value:  # type: ignore[attr-defined]
            raise parser.error(
                node,
                f"the push exceeds the peer's target region in dimension {dim}: offset {offset.value} + extent "  # type: ignore[attr-defined]
                f"{extent.value} > {whole.value}",  # type: ignore[attr-defined]
                kind=InvalidOperationError,
            )


def _integral(ty: Type) -> bool:
    return isinstance(ty, UnknownType) or (isinstance(ty, ScalarType) and (ty.dtype.is_int or ty.dtype is DataType.INDEX))


def _check_wait(parser: ExprParser, node: ast.Call, result: Call, types: list[Type]) -> None:
    name, args = result.op, result.args
    offsets = args[1]
    if isinstance(offsets, MakeTuple):
        for index, offset in enumerate(offsets.elements):
            if isinstance(offset, ConstFloat) or not _integral(parser.type_of(offset)):
                raise parser.error(node, f"{name}: offset {index} must be an integer or index scalar", kind=InvalidOperationError)
    if isinstance(args[2], ConstFloat) or not _integral(types[2]):
        raise parser.error(node, f"{name}: expected must be an integer or index scalar", kind=InvalidOperationError)
    cmp = next((k.value for k in result.kwargs if k.name == "cmp"), None)
    if name == "pld.system.defer_wait" and isinstance(cmp, Symbol) and cmp.path != "WaitCmp.Ge":
        raise parser.error(
            node,
            f"{name} only supports WaitCmp.Ge: a deferred completion needs a condition that stays true",
            hint="write cmp=pld.WaitCmp.Ge, or block with pld.system.wait",
            kind=InvalidOperationError,
        )


def check_device_keyword(parser: ExprParser, callee: str, node: ast.Call) -> None:
    """`self.f(..., device=r)` chooses the device of a dispatch: only an orchestrator's."""
    for kw in node.keywords:
        if kw.arg == "device" and not parser.callee_is_orchestrator(callee):
            raise parser.error(
                kw.value,
                f"'device' is accepted only on a call of an orchestrator: 'self.{callee}' is not one",
                hint=f"declare {callee} @pl.function(type=pl.FunctionType.Orchestration), or drop device=",
                kind=ParserTypeError,
            )
