"""The distributed ops of `pld` (`import nanopto.language.distributed as pld`), in the op registry.

Each is one `OpDef`, as every builtin is: its spellings (the canonical `pld.<category>.<op>` and
the short `pld.<op>` where PyPTO has one), its result type, the arguments it writes and its
reference semantics. The semantics are those of a one-device run (world size 1, this device rank
0), the only run the reference interpreter makes: a window is memory of this device, a remote
load or store whose peer is this rank is a local one, and a wait is met or would wait forever.
An op naming another rank is a located error, not a guess (docs/coming-from-pypto.md,
"Distributed programs").

Registered into `OPS` when `nanopto.ir_terms` is imported (its `__init__` imports this module).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.nodes import Expr, MakeTuple, Symbol
from nanopto.ir_terms.ops import OPS, OpContext, OpDef, OpError, TypeRule
from nanopto.ir_terms.types import (
    CommCtxType,
    DistributedTensorType,
    PtrType,
    ScalarType,
    TensorType,
    TileType,
    TileView,
    Type,
    UnknownType,
)

WORLD_SIZE = 1
"""The ranks of the reference interpreter's run: one device."""

THIS_RANK = 0


def _const(ty: Type) -> TypeRule:
    def rule(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
        return ty

    return rule


def _elements(expr: Expr | None) -> tuple[Expr, ...] | None:
    return expr.elements if isinstance(expr, MakeTuple) else None


def _dtype_of_symbol(expr: Expr | None) -> DataType | None:
    if isinstance(expr, Symbol):
        name = expr.path.rsplit(".", 1)[-1]
        return DataType.__members__.get(name)
    return None


def _window_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    shape = _elements(args[1] if len(args) > 1 else None)
    dtype = _dtype_of_symbol(kw.get("dtype"))
    if shape is None or dtype is None:
        return UnknownType()
    return DistributedTensorType(shape, dtype)


def _remote_load_type(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
    target = types[0] if types else UnknownType()
    shape = _elements(args[3] if len(args) > 3 else None)
    if shape is None or not isinstance(target, TensorType):
        return UnknownType()
    valid = _elements(args[4] if len(args) > 4 else None)
    view = TileView(valid_shape=valid) if valid is not None else None
    return TileType(shape, target.dtype, None, view, MemorySpace.Vec)


# ---------------------------------------------------------------------------------------------
# Semantics of a one-device run
# ---------------------------------------------------------------------------------------------


class WindowBuffer:
    """What `pld.alloc_window_buffer(size)` gives in the interpreter: `size` bytes of this device's
    window, which every `pld.window(buf, shape, dtype=...)` views (two windows of one buffer share it)."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise OpError(f"a window buffer of {size} bytes")
        self.data = np.zeros(size, dtype=np.uint8)


class CommContext:
    """What `pld.get_comm_ctx(t)` gives in the interpreter: this rank of a one-device world."""

    rank = THIS_RANK
    nranks = WORLD_SIZE


def _check_peer(peer: Any) -> None:
    if int(peer) != THIS_RANK:
        raise OpError(
            f"peer rank {int(peer)} does not exist in a one-device run (world size {WORLD_SIZE}, this rank "
            f"{THIS_RANK}): the reference interpreter cannot run another device's side of the exchange"
        )


def _window(target: np.ndarray[Any, Any], offsets: Sequence[Any], extents: Sequence[int]) -> tuple[slice, ...]:
    starts = [int(o) for o in offsets]
    if len(starts) != target.ndim:
        raise OpError(f"{len(starts)} offsets for a rank-{target.ndim} tensor")
    out: list[slice] = []
    for dim, (start, extent) in enumerate(zip(starts, extents, strict=True)):
        if start < 0 or start + extent > target.shape[dim]:
            raise OpError(f"window [{start}, {start + extent}) is out of bounds for dimension {dim} of extent {target.shape[dim]}")
        out.append(slice(start, start + extent))
    return tuple(out)


def _alloc(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return WindowBuffer(int(args[0]))


def _view(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    buffer, shape, dtype = args[0], [int(s) for s in args[1]], kw["dtype"]
    if not isinstance(buffer, WindowBuffer):
        raise OpError("pld.window takes the handle of a pld.alloc_window_buffer")
    numpy_dtype = np.dtype(dtype.numpy())
    size = int(np.prod(shape, dtype=np.int64)) * numpy_dtype.itemsize
    if size > buffer.data.size:
        raise OpError(f"a window of {size} bytes over a buffer of {buffer.data.size}")
    return buffer.data[:size].view(numpy_dtype).reshape(shape)


def _world_size(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return WORLD_SIZE


def _comm_ctx(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return CommContext()


def _rank(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return THIS_RANK


def _nranks(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return WORLD_SIZE


def _remote_load(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    target, peer, offsets, shape = args[0], args[1], args[2], [int(s) for s in args[3]]
    _check_peer(peer)
    return np.array(target[_window(target, offsets, shape)], copy=True)


def _store_into(target: np.ndarray[Any, Any], source: Any, offsets: Sequence[Any], atomic: Any) -> None:
    value = np.asarray(source)
    extents = list(value.shape) + [1] * (target.ndim - value.ndim)
    window = _window(target, offsets, extents)
    if atomic == "AtomicType.Add":
        target[window] += value.reshape(target[window].shape)
    else:
        target[window] = value.reshape(target[window].shape)


def _remote_store(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    source, target, peer, offsets = args
    _check_peer(peer)
    _store_into(target, source, offsets, kw.get("atomic"))
    return None


def _get(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    dst, peer, src = args[0], args[1], args[2]
    _check_peer(peer)
    if len(args) > 3:
        dst_offsets, src_offsets, shape = args[3], args[4], [int(s) for s in args[5]]
        dst[_window(dst, dst_offsets, shape)] = src[_window(src, src_offsets, shape)]
    else:
        dst[...] = np.reshape(src, dst.shape)
    return None


def _put(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    dst, peer, src = args
    _check_peer(peer)
    _store_into(dst, src, [0] * dst.ndim, kw.get("atomic"))
    return None


_COMPARE = {"WaitCmp.Eq": operator.eq, "WaitCmp.Ge": operator.ge}


def _wait(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    signal, offsets, expected = args
    index = tuple(int(o) for o in offsets)
    if len(index) != signal.ndim:
        raise OpError(f"{len(index)} offsets for a rank-{signal.ndim} signal")
    slot = signal[index].item()
    cmp = kw.get("cmp", "WaitCmp.Eq")
    if not _COMPARE[cmp](slot, int(expected)):
        # One device runs every statement in order: no other rank can change the slot later.
        raise OpError(f"the signal slot {list(index)} holds {slot}, so {cmp} {int(expected)} would wait forever")
    return None


def _notify(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    target, peer, offsets, value = args
    _check_peer(peer)
    index = tuple(int(o) for o in offsets)
    if kw.get("op") == "NotifyOp.Set":
        target[index] = int(value)
    else:
        target[index] += int(value)
    return None


_SIDE_EFFECT = _const(UnknownType())

DECLARATIONS: tuple[OpDef, ...] = (
    OpDef(
        "pld.tensor.alloc_window_buffer",
        ("pld.tensor.alloc_window_buffer", "pld.alloc_window_buffer"),
        _const(PtrType()),
        _alloc,
        doc="`buf = pld.alloc_window_buffer(size)`: `size` bytes of window memory every rank can reach; a pl.Ptr",
        signature="(size, *, dtype=None, name=None)",
    ),
    OpDef(
        "pld.tensor.window",
        ("pld.tensor.window", "pld.window"),
        _window_type,
        _view,
        doc="`pld.window(buf, shape, dtype=...)`: a distributed tensor viewing a window buffer",
        signature="(buffer, shape, *, dtype)",
    ),
    OpDef(
        "pld.system.world_size",
        ("pld.system.world_size", "pld.world_size"),
        _const(ScalarType(DataType.INT64)),
        _world_size,
        doc="`pld.world_size()`: the number of ranks (1 in the reference interpreter)",
        signature="()",
    ),
    OpDef(
        "pld.system.get_comm_ctx",
        ("pld.system.get_comm_ctx", "pld.get_comm_ctx"),
        _const(CommCtxType()),
        _comm_ctx,
        doc="`pld.get_comm_ctx(t)`: the communication context of a distributed tensor",
        signature="(tensor)",
    ),
    OpDef(
        "pld.system.rank",
        ("pld.system.rank", "pld.rank"),
        _const(ScalarType(DataType.INT32)),
        _rank,
        doc="`pld.rank(ctx)`: this device's rank (0 in the reference interpreter)",
        signature="(ctx)",
    ),
    OpDef(
        "pld.system.nranks",
        ("pld.system.nranks", "pld.nranks"),
        _const(ScalarType(DataType.INT32)),
        _nranks,
        doc="`pld.nranks(ctx)`: the number of ranks in the context (1 in the reference interpreter)",
        signature="(ctx)",
    ),
    OpDef(
        "pld.system.wait",
        ("pld.system.wait",),
        _SIDE_EFFECT,
        _wait,
        doc="`pld.system.wait(signal, offsets, expected, cmp=...)`: block until the slot compares true",
        signature="(signal, offsets, expected, *, cmp)",
    ),
    OpDef(
        "pld.system.defer_wait",
        ("pld.system.defer_wait",),
        _SIDE_EFFECT,
        _wait,
        doc="`pld.system.defer_wait(signal, offsets, expected, cmp=pld.WaitCmp.Ge)`: the task completes "
        "once the slot reaches `expected`",
        signature="(signal, offsets, expected, *, cmp)",
    ),
    OpDef(
        "pld.system.notify",
        ("pld.system.notify",),
        _SIDE_EFFECT,
        _notify,
        writes=(0,),
        doc="`pld.system.notify(target, peer, offsets, value, op=...)`: deposit `value` in the peer's slot",
        signature="(target, peer, offsets, value, *, op)",
    ),
    OpDef(
        "pld.tile.remote_load",
        ("pld.tile.remote_load", "pld.remote_load"),
        _remote_load_type,
        _remote_load,
        doc="`pld.remote_load(t, peer=, offsets=, shape=)`: a tile read from a peer's distributed tensor",
        signature="(target, peer, offsets, shape, valid_shape=None)",
    ),
    OpDef(
        "pld.tile.remote_store",
        ("pld.tile.remote_store",),
        _SIDE_EFFECT,
        _remote_store,
        writes=(1,),
        doc="`pld.tile.remote_store(tile, target=, peer=, offsets=)`: write a tile into a peer's distributed tensor",
        signature="(src, target, peer, offsets, *, atomic=None)",
    ),
    OpDef(
        "pld.tensor.remote_store",
        ("pld.tensor.remote_store",),
        _SIDE_EFFECT,
        _remote_store,
        writes=(1,),
        doc="`pld.tensor.remote_store(t, target, peer, offsets)`: write a tensor into a peer's distributed tensor",
        signature="(src, target, peer, offsets, *, atomic=None)",
    ),
    OpDef(
        "pld.tensor.get",
        ("pld.tensor.get",),
        _SIDE_EFFECT,
        _get,
        writes=(0,),
        doc="`pld.tensor.get(dst, peer=, src=)`: copy a peer's distributed tensor (or a region of it) into dst",
        signature="(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None)",
    ),
    OpDef(
        "pld.tensor.put",
        ("pld.tensor.put",),
        _SIDE_EFFECT,
        _put,
        writes=(0,),
        doc="`pld.tensor.put(dst, peer=, src=, atomic=)`: write src into a peer's distributed tensor",
        signature="(dst, peer, src, *, atomic=None)",
    ),
)

for _op in DECLARATIONS:
    OPS.register(_op)
