"""The hardware system ops of `pl.system` and the cross-core pipe ops, in the op registry.

PyPTO's synchronisation and set-up ops (`pl.system.sync_set`, `fence`, `cacheinvalid`,
`syncall`, the cross-core pipe's `aic_initialize_pipe` / `tpush_to_aiv` / `tpop_from_aic`, ...)
order the hardware pipes and cores of one kernel. The reference interpreter runs one statement at
a time on one core, so an op that only orders work has no effect there; an op whose result
needs a second core (a pop from the other core's pipe) or an on-chip address is refused with a
located error rather than given a made-up value. Short spellings (`pl.tpush_to_aic`) print as
the canonical one (`pl.tile.tpush_to_aic`), as PyPTO prints them.

Registered into `OPS` when `nanopto.ir_terms` is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import ConstInt, Expr
from nanopto.ir_terms.ops import OPS, OpContext, OpDef, OpError, TypeRule
from nanopto.ir_terms.ops_distributed import _const
from nanopto.ir_terms.system_ops import normalize_cacheinvalid, normalize_cross_core_sync, normalize_syncall
from nanopto.ir_terms.types import ScalarType, TensorType, TileType, Type, UnknownType

REFERENCE_CORES = 1
"""The clusters (and AIV cores) of the reference interpreter's run: it runs one at a time."""


def _nothing(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return None


def _cores(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return REFERENCE_CORES


def _needs_hardware(what: str) -> Any:
    def run(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
        raise OpError(f"{what}: the reference interpreter runs one core and has no such value to give")

    return run


_ORDERING = "orders the hardware; the reference interpreter runs one statement at a time, so it has no effect"


def _op(
    name: str,
    signature: str,
    doc: str,
    *,
    short: bool = False,
    result: Any = None,
    semantics: Any = _nothing,
    normalize: Any = None,
) -> OpDef:
    bare = name.partition(".")[2]
    extra: dict[str, Any] = {"canonical": True}
    if normalize is not None:
        extra["normalize"] = normalize
    return OpDef(
        name,
        (name, bare) if short else (name,),
        _const(UnknownType() if result is None else result),
        semantics,
        doc=doc,
        signature=signature,
        extra=extra,
    )


def _split_axis(kw: dict[str, Any]) -> int | None:
    """The axis a `split=` cuts (UP_DOWN 1: rows, LEFT_RIGHT 2: columns), None for NONE (0)."""
    split = kw.get("split")
    value = split.value if isinstance(split, ConstInt) else split
    return {1: 0, 2: 1}.get(value) if isinstance(value, int) else None


def _resized(factor: Fraction) -> TypeRule:
    """A lane crossing's type: the operand's with the split axis scaled by `factor`."""

    def rule(types: Sequence[Type], args: Sequence[Expr], kw: dict[str, Expr]) -> Type:
        source = types[0] if types else UnknownType()
        axis = _split_axis(kw)
        if not isinstance(source, (TensorType, TileType)):
            return UnknownType()
        if axis is None or axis >= len(source.shape):
            return source
        extent = source.shape[axis]
        if not isinstance(extent, ConstInt):
            return UnknownType()
        shape = list(source.shape)
        shape[axis] = ConstInt(int(extent.value * factor), extent.dtype)
        if isinstance(source, TileType):
            return TileType(shape, source.dtype, source.memory_space)
        return replace(source, shape=tuple(shape))

    return rule


def _shard(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    value, axis = args[0], _split_axis(kw)
    if axis is None:
        return np.array(value, copy=True)
    half = value.shape[axis] // 2
    lane = [slice(None)] * value.ndim
    lane[axis] = slice(ctx.subblock_idx * half, (ctx.subblock_idx + 1) * half)
    return np.array(value[tuple(lane)], copy=True)


def _gather(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    if _split_axis(kw) is None:
        return np.array(args[0], copy=True)
    raise OpError("pl.aic_gather rejoins the two lanes' halves: the reference interpreter runs one lane and has only its own")


def _lane(ctx: OpContext, args: list[Any], kw: dict[str, Any]) -> Any:
    return ctx.subblock_idx


DECLARATIONS: tuple[OpDef, ...] = (
    OpDef(
        "tile.get_subblock_idx",
        ("tile.get_subblock_idx", "get_subblock_idx"),
        _const(ScalarType(DataType.INDEX)),
        _lane,
        doc="the AIV lane of a pl.split_aiv region (0 in the reference interpreter, which runs lane 0)",
        signature="()",
    ),
    *(
        OpDef(
            f"{level}.{name}",
            (f"{level}.{name}",),
            _resized(factor),
            semantics,
            doc=f"`pl.{name}(x)` in a pl.split_aiv region: {what}",
            signature="(input, *, split=None)",
        )
        for level in ("tile", "tensor")
        for name, factor, semantics, what in (
            ("aiv_shard", Fraction(1, 2), _shard, "this lane's half of a cube-produced value"),
            ("aic_gather", Fraction(2), _gather, "the two lanes' halves rejoined for the cube"),
        )
    ),
    _op(
        "system.sync_set",
        "(event_id=None, *, pipe, ffts_mode=None, core_type=None)",
        f"`pl.system.sync_set(event_id, pipe=...)`: set a cross-core event; {_ORDERING}",
        normalize=normalize_cross_core_sync,
    ),
    _op(
        "system.sync_wait",
        "(event_id=None, *, pipe, core_type=None)",
        f"`pl.system.sync_wait(event_id, pipe=...)`: wait for a cross-core event; {_ORDERING}",
        normalize=normalize_cross_core_sync,
    ),
    _op("system.fence", "()", f"`pl.system.fence()`: a GM fence; {_ORDERING}"),
    _op(
        "system.cacheinvalid",
        "(tensor=None, shapes=None, offsets=None)",
        f"`pl.system.cacheinvalid(t, shapes, offsets)`: invalidate a cache line (all of GM without arguments); {_ORDERING}",
        normalize=normalize_cacheinvalid,
    ),
    _op(
        "system.syncall",
        "(*, mode=None, core_type=None, gm_workspace=None, used_cores=None)",
        f"`pl.system.syncall(core_type=...)`: a barrier of every participating core; {_ORDERING}",
        normalize=normalize_syncall,
    ),
    *(
        _op(
            f"system.{side}_initialize_pipe",
            "(c2v_consumer_buf=None, v2c_consumer_buf=None, *, dir_mask, slot_size, slot_num=None, local_slot_num=None, id=None)",
            f"`pl.system.{side}_initialize_pipe(dir_mask=, slot_size=)`: set up the cross-core pipe; {_ORDERING}",
            short=True,
        )
        for side in ("aic", "aiv")
    ),
    _op(
        "system.reserve_buffer",
        "(*, name, size, base=None)",
        "`pl.system.reserve_buffer(name=, size=)`: reserve on-chip memory; its base address",
        short=True,
        result=ScalarType(DataType.INT32),
        semantics=_needs_hardware("pl.system.reserve_buffer gives an on-chip address"),
    ),
    _op(
        "system.import_peer_buffer",
        "(*, name, peer_func)",
        "`pl.system.import_peer_buffer(name=, peer_func=)`: the address of a buffer the peer core reserved",
        short=True,
        result=ScalarType(DataType.INT32),
        semantics=_needs_hardware("pl.system.import_peer_buffer gives an on-chip address of another core"),
    ),
    *(
        _op(
            f"tile.tpush_to_{peer}",
            "(tile, *, split)",
            f"`pl.tile.tpush_to_{peer}(t, split=)`: push a tile into the pipe to the {peer.upper()} core",
            short=True,
            semantics=_needs_hardware(f"pl.tile.tpush_to_{peer} sends to another core"),
        )
        for peer in ("aiv", "aic")
    ),
    *(
        _op(
            f"tile.tpop_from_{peer}",
            "(*, split=None)",
            f"`pl.tile.tpop_from_{peer}()`: the next tile the {peer.upper()} core pushed",
            short=True,
            semantics=_needs_hardware(f"pl.tile.tpop_from_{peer} receives from another core"),
        )
        for peer in ("aic", "aiv")
    ),
    *(
        _op(
            f"system.available_{what}_count",
            "()",
            f"`pl.system.available_{what}_count()`: the device's {what} count (1 in the reference interpreter)",
            result=ScalarType(DataType.INT32),
            semantics=_cores,
        )
        for what in ("cluster", "aiv")
    ),
)

for _op_def in DECLARATIONS:
    OPS.register(_op_def)
