"""The alias/rebinding table: where a parameter's rebinding lands (docs/specification.md, "Rebinding a parameter").

A definition/use walk over the (expanded) helper body records every definition of each parameter;
the table then says whether the formal may be replaced by the caller's Var at its def-sites, or
needs a fresh `<param>_inline<k>` local initialised once before the spliced body:

| parameter / its definitions                              | rebinding lands on      |
|----------------------------------------------------------|-------------------------|
| never defined in the body                                | (substituted directly)  |
| Tensor/Tile with only proven self-updates                | the caller's Var        |
| Tensor/Tile with any other definition                    | a fresh local           |
| Array                                                    | the caller's Var        |
| explicit `pl.Out` / `pl.InOut` scalar                    | the caller's Var        |
| plain scalar that is rebound                             | a fresh local           |

A self-update is `t = op(..., t, ...)` where the op registry says the result *is* that argument
(`aliases_arg`) and the op writes it in place (`writes`): the parameter still names the storage
it named. An op merely able to reuse its input buffer does not count, nor does a view of the
argument (`t = t[0:2]`): a slice shares its source's storage but is another value. Control-flow
results (`t = pl.yield_(...)` naming t) are conservatively "any other definition".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ForStmt,
    Function,
    IfStmt,
    ParamDirection,
    ScopeStmt,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import walk_stmts
from nanopto.ir_terms.types import ArrayType, ScalarType, Type


class RebindingRow(enum.Enum):
    """A row of the table; the value is how `--trace` and the checker name it."""

    READ_ONLY = "read-only: substituted directly"
    SELF_UPDATED_SHAPED = "Tensor/Tile with only proven self-updates: the caller's Var"
    REBOUND_SHAPED = "Tensor/Tile with another definition: a fresh local"
    ARRAY = "Array: the caller's Var"
    OUT_SCALAR = "explicit pl.Out/pl.InOut scalar: the caller's Var"
    REBOUND_SCALAR = "plain scalar that is rebound: a fresh local"

    @property
    def binds_local(self) -> bool:
        return self in _BINDS_LOCAL

    @property
    def rebinds_caller_var(self) -> bool:
        return self in _REBINDS_CALLER_VAR


# Module-level tuples: reading an enum member off its class is slow, and these are asked per site.
_BINDS_LOCAL = (RebindingRow.REBOUND_SHAPED, RebindingRow.REBOUND_SCALAR)
_REBINDS_CALLER_VAR = (RebindingRow.SELF_UPDATED_SHAPED, RebindingRow.ARRAY, RebindingRow.OUT_SCALAR)


@dataclass(frozen=True)
class Definitions:
    """What the body does to one parameter."""

    self_updates: int = 0
    other: int = 0

    @property
    def rebound(self) -> bool:
        return self.self_updates + self.other > 0


def is_self_update(stmt: AssignStmt) -> bool:
    """`t = op(..., t, ...)` with the op's result being that very argument, written in place (or
    `t = t`). A view (`t = t[0:2]`) aliases its source but is a different value."""
    value = stmt.value
    if value == stmt.var:
        return True
    if not isinstance(value, Call) or value.function:
        return False
    op = OPS.lookup(value.op)
    if op is None or op.aliases_arg is None or op.aliases_arg >= len(value.args) or op.aliases_arg not in op.writes:
        return False
    return value.args[op.aliases_arg] == stmt.var


def definitions_of(fn: Function) -> dict[int, Definitions]:
    """Per parameter Var id, how the body defines it."""
    params = {p.var.id for p in fn.param_list}
    counts: dict[int, list[int]] = {pid: [0, 0] for pid in params}
    for node in walk_stmts(fn.body):  # definitions are statements: expressions need no visit
        if isinstance(node, AssignStmt) and node.var.id in params:
            counts[node.var.id][0 if is_self_update(node) else 1] += 1
        elif isinstance(node, IfStmt | ForStmt | WhileStmt):
            for var in node.return_vars:
                if var.id in params:
                    counts[var.id][1] += 1
            if isinstance(node, ForStmt) and node.loop_var.id in params:
                counts[node.loop_var.id][1] += 1
        elif isinstance(node, ScopeStmt) and node.var is not None and node.var.id in params:
            counts[node.var.id][1] += 1
    return {pid: Definitions(c[0], c[1]) for pid, c in counts.items()}


def classify_param(var: Var, direction: ParamDirection, defs: Definitions) -> RebindingRow:
    """The table row of one parameter. An unannotated parameter is treated like a Tensor."""
    ty: Type = var.type
    if isinstance(ty, ArrayType):
        return RebindingRow.ARRAY
    if not defs.rebound:
        return RebindingRow.READ_ONLY
    if isinstance(ty, ScalarType):
        if direction is not ParamDirection.In:
            return RebindingRow.OUT_SCALAR
        return RebindingRow.REBOUND_SCALAR
    if defs.other == 0:
        return RebindingRow.SELF_UPDATED_SHAPED
    return RebindingRow.REBOUND_SHAPED


def classify_params(fn: Function) -> tuple[RebindingRow, ...]:
    """The table row of every parameter of an Inline helper, in parameter order."""
    defs = definitions_of(fn)
    return tuple(classify_param(p.var, p.direction, defs[p.var.id]) for p in fn.param_list)
