"""The system ops' argument rules, and their builders (PyPTO's `ir.op.system_ops`).

The rules are written once and read three ways: by the parser when it reads
`pl.system.syncall(...)` or `pl.system.cacheinvalid(...)` (`normalize_*`, registered on the ops
in `ops_system`), by the builders below, and by `pl.system.<op>(...)` called from Python
(`nanopto.language`), which checks its arguments and builds nothing. A broken rule is a
`ValueError` or `TypeError` saying which.
"""

from __future__ import annotations

from collections.abc import Sequence

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import (
    Call,
    ConstFloat,
    ConstInt,
    ConstStr,
    Expr,
    Keyword,
    MakeTuple,
    Span,
    _literal,
)
from nanopto.ir_terms.types import ScalarType, TensorType

SYNCALL_CORE_TYPES = ("aiv_only", "aic_only", "mix")
SYNCALL_MODES = ("hard", "soft")
INT32_MAX = (1 << 31) - 1


def check_syncall(mode: object, core_type: object, has_workspace: bool, used_cores: object) -> None:
    """`pl.system.syncall(mode=, core_type=, gm_workspace=, used_cores=)`: a known mode and core
    type; the soft mode polls a GM workspace, so it needs one and a participant count (0: the
    launch's), an INT32."""
    if mode is not None and mode not in SYNCALL_MODES:
        raise ValueError(f"syncall mode must be one of {SYNCALL_MODES}, got {mode!r}")
    if core_type is not None and core_type not in SYNCALL_CORE_TYPES:
        raise ValueError(f"syncall core_type must be one of {SYNCALL_CORE_TYPES}, got {core_type!r}")
    if mode != "soft":
        if has_workspace or used_cores is not None:
            raise ValueError("gm_workspace= and used_cores= belong to the soft syncall: add mode=\"soft\"")
        return
    if not has_workspace:
        raise ValueError("the soft syncall needs a shared GM INT32 gm_workspace= tensor")
    if used_cores is None:
        raise ValueError("the soft syncall needs an explicit used_cores= (0 for the launch's participant count)")
    if isinstance(used_cores, int) and not 0 <= used_cores <= INT32_MAX:
        raise ValueError(f"syncall used_cores must be in the INT32 range [0, {INT32_MAX}], got {used_cores}")


def check_cacheinvalid(has_tensor: bool, shapes: object, offsets: object) -> None:
    """The whole-GM form `cacheinvalid()` takes nothing; the region form a tensor, shapes and offsets."""
    if not has_tensor and (shapes is not None or offsets is not None):
        raise ValueError(
            "system.cacheinvalid whole-GM form takes no shapes/offsets; pass (tensor, shapes, offsets) for the region form"
        )
    if has_tensor and (shapes is None or offsets is None):
        raise ValueError("system.cacheinvalid region form requires both shapes and offsets")


def _constant(expr: Expr | None) -> object:
    if isinstance(expr, (ConstInt, ConstStr)):
        return expr.value
    return expr


def normalize_syncall(call: Call) -> Call:
    """A parsed `pl.system.syncall(...)` checked, its keywords in the printed order (mode, core
    type, workspace, count) and the default `core_type="mix"` written out, as PyPTO prints it."""
    given = {k.name: k for k in call.kwargs}
    mode = _constant(given["mode"].value) if "mode" in given else None
    core = _constant(given["core_type"].value) if "core_type" in given else None
    used = given.get("used_cores")
    check_syncall(mode, core, "gm_workspace" in given, None if used is None else _constant(used.value))
    if "core_type" not in given:
        given["core_type"] = Keyword("core_type", ConstStr("mix"))
    order = ("mode", "core_type", "gm_workspace", "used_cores")
    return Call(call.op, call.args, tuple(given[k] for k in order if k in given), span=call.span)


def normalize_cacheinvalid(call: Call) -> Call:
    """`pl.system.cacheinvalid(...)` checked, its arguments positional however they were written."""
    named = {k.name: k.value for k in call.kwargs}
    values = [*call.args, *(named[n] for n in ("tensor", "shapes", "offsets")[len(call.args) :] if n in named)]
    given = dict(zip(("tensor", "shapes", "offsets"), call.args, strict=False)) | named
    check_cacheinvalid("tensor" in given, given.get("shapes"), given.get("offsets"))
    return Call(call.op, tuple(values), span=call.span)


def normalize_cross_core_sync(call: Call) -> Call:
    """`pl.system.sync_set(3, pipe=...)` prints as `sync_set(pipe=..., event_id=3, ...)`: a
    constant event id is an attribute, a computed one the operand."""
    given = {k.name: k for k in call.kwargs}
    event = call.args[0] if call.args else given.get("event_id", Keyword("event_id", ConstInt(0))).value
    args: tuple[Expr, ...] = ()
    ordered = [given["pipe"]] if "pipe" in given else []
    if isinstance(event, ConstInt):
        ordered.append(Keyword("event_id", event))
    else:
        args = (event,)
    ordered += [given[k] for k in ("ffts_mode", "core_type") if k in given]
    return Call(call.op, args, tuple(ordered), span=call.span)


# ---------------------------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------------------------


def cacheinvalid(
    tensor: Expr | None = None,
    shapes: Sequence[int | Expr] | None = None,
    offsets: Sequence[int | Expr] | None = None,
    *,
    span: Span | None = None,
) -> Call:
    """`pl.system.cacheinvalid()` (all of GM) or `(tensor, shapes, offsets)` (the line holding
    that view's base): shapes and offsets integers, one per dimension of the tensor."""
    check_cacheinvalid(tensor is not None, shapes, offsets)
    if tensor is None or shapes is None or offsets is None:
        return Call("system.cacheinvalid", (), span=span)
    ty = type_of(tensor)
    if not isinstance(ty, TensorType):
        raise TypeError(f"system.cacheinvalid takes a tensor, not {ty}")
    rank = len(ty.shape)
    for name, values in (("shapes", shapes), ("offsets", offsets)):
        if len(values) != rank:
            raise ValueError(f"system.cacheinvalid {name} must match tensor rank {rank}, got {len(values)}")
        for value in values:
            if isinstance(value, (float, ConstFloat)):
                raise TypeError(f"system.cacheinvalid {name} must be integers, got {value!r}")
    lists = tuple(MakeTuple(tuple(_literal(v) for v in values), is_list=True) for values in (shapes, offsets))
    return Call("system.cacheinvalid", (tensor, *lists), span=span)


def syncall_soft(core_type: str, gm_workspace: Expr, used_cores: Expr | None = None, *, span: Span | None = None) -> Call:
    """The soft `pl.system.syncall`; a count of 0 is the launch's participant count."""
    count = used_cores.value if isinstance(used_cores, ConstInt) else None
    check_syncall("soft", core_type, True, 0 if used_cores is None else count)
    if used_cores is not None:
        ty = type_of(used_cores)
        if not (isinstance(ty, ScalarType) and ty.dtype is DataType.INT32):
            raise TypeError(f"soft syncall used_cores must be an INT32 scalar, got {ty}")
    keywords = [Keyword("mode", ConstStr("soft")), Keyword("core_type", ConstStr(core_type)), Keyword("gm_workspace", gm_workspace)]
    if used_cores is not None:
        keywords.append(Keyword("used_cores", used_cores))
    return Call("system.syncall", (), tuple(keywords), span=span)


def available_cluster_count(*, span: Span | None = None) -> Call:
    """The device's cluster count, a `pl.Scalar[pl.INT32]` (a `pl.spmd` width)."""
    return Call("system.available_cluster_count", (), span=span)


def available_aiv_count(*, span: Span | None = None) -> Call:
    """The device's AIV core count, a `pl.Scalar[pl.INT32]`."""
    return Call("system.available_aiv_count", (), span=span)
