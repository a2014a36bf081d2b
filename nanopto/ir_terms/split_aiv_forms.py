"""The shapes `for aiv_id in pl.split_aiv(2, mode=...)` parses to, and how the printer reads them back.

As in PyPTO, the loop form is a `pl.split_aiv` region whose first statement binds the lane index,
`aiv_id = pl.tile.get_subblock_idx()`; a region written where no core context is open (outside
a `pl.at` / `pl.spmd` scope, in a function that is not itself a core function) is wrapped in the
InCore scope `pl.at(level=pl.Level.CORE_GROUP)` the parser adds. `pl.aiv_shard(x)` and
`pl.aic_gather(x)` inside a region carry the region's split as `split=` (UP_DOWN 1,
LEFT_RIGHT 2, NONE 0), which the printer leaves out there since the parser stamps it again.
One definition of each shape for both directions, so what is printed reads back as the same IR
(docs/coming-from-pypto.md, "Statement forms").
"""

from __future__ import annotations

from typing import Any

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ConstInt,
    Keyword,
    ScopeKind,
    ScopeStmt,
    SeqStmts,
    Span,
    SplitMode,
    Stmt,
    Symbol,
    Var,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import Mutator

LANE_INDEX_OP = "tile.get_subblock_idx"
SYNTHESIZED_LANE = "aiv_id"
"""The loop variable the printer writes for a region whose lane binding is gone (dead code)."""
SPLIT_VALUES = {SplitMode.NONE: 0, SplitMode.UP_DOWN: 1, SplitMode.LEFT_RIGHT: 2}
"""The `split=` of a shard or gather: the region mode's int, as PyPTO stores it."""
TRANSFER_OPS = frozenset({"tile.aiv_shard", "tensor.aiv_shard", "tile.aic_gather", "tensor.aic_gather"})


def lane_index(var: Var, span: Span | None) -> AssignStmt:
    """`aiv_id = pl.tile.get_subblock_idx()`: the binding of the loop form's variable."""
    return AssignStmt(var, Call(LANE_INDEX_OP, (), span=span), annotated=False, span=span)


def is_lane_index(stmt: Stmt) -> bool:
    if not isinstance(stmt, AssignStmt) or not isinstance(stmt.value, Call) or stmt.value.function or stmt.value.args:
        return False
    op = OPS.lookup(stmt.value.op)
    return op is not None and op.name == LANE_INDEX_OP


def core_wrapper(region: ScopeStmt, dumps: tuple[Var, ...], span: Span | None) -> ScopeStmt:
    """The InCore scope the parser adds around a region written outside a core context."""
    kwargs = (Keyword("level", Symbol("Level.CORE_GROUP")),)
    return ScopeStmt("at", SeqStmts((region,)), (), kwargs, dumps=dumps, span=span)


def _stmts(body: Stmt) -> tuple[Stmt, ...]:
    return body.stmts if isinstance(body, SeqStmts) else (body,)


def wrapped_region(scope: ScopeStmt) -> ScopeStmt | None:
    """The region `scope` is the parser-added wrapper of (printed bare), or None: an InCore
    `pl.at(level=CORE_GROUP)` with nothing else written, whose whole body is one region."""
    if scope.constructor != "at" or scope.var is not None or scope.dumps or scope.args:
        return None
    if [(k.name, k.value) for k in scope.kwargs] != [("level", Symbol("Level.CORE_GROUP"))]:
        return None
    inner = _stmts(scope.body)
    if len(inner) == 1 and isinstance(inner[0], ScopeStmt) and inner[0].kind is ScopeKind.SplitAiv and not inner[0].for_form:
        return inner[0]
    return None


def loop_form(region: ScopeStmt) -> tuple[str, tuple[Stmt, ...]] | None:
    """The loop variable and the statements after its binding of a region the printer writes
    as `for <var> in pl.split_aiv(...)`; a region without the binding gets `aiv_id`."""
    if region.kind is not ScopeKind.SplitAiv or region.for_form or region.var is not None:
        return None
    stmts = _stmts(region.body)
    if stmts and is_lane_index(stmts[0]):
        first = stmts[0]
        assert isinstance(first, AssignStmt)
        return first.var.name, stmts[1:]
    return SYNTHESIZED_LANE, stmts


class _Unstamped(Mutator):
    """A region body with the `split=` the parser stamps on shards and gathers left out."""

    def leave(self, node: Any) -> Any:
        if isinstance(node, Call) and not node.function and node.op in TRANSFER_OPS:
            return Call(node.op, node.args, tuple(k for k in node.kwargs if k.name != "split"), span=node.span)
        return node


def printed_body(stmts: tuple[Stmt, ...]) -> SeqStmts:
    body = SeqStmts(stmts)
    unstamped = _Unstamped().visit(body)
    assert isinstance(unstamped, SeqStmts)
    return unstamped


def split_value(mode: SplitMode) -> ConstInt:
    return ConstInt(SPLIT_VALUES[mode])
