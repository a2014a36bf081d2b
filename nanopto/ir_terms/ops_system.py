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

from typing import Any

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.ops import OPS, OpContext, OpDef, OpError
from nanopto.ir_terms.ops_distributed import _const
from nanopto.ir_terms.system_ops import normalize_cacheinvalid, normalize_cross_core_sync, normalize_syncall
from nanopto.ir_terms.types import ScalarType, UnknownType

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


DECLARATIONS: tuple[OpDef, ...] = (
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
