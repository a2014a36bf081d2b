"""The analysis facts a user's rule may require (docs/your-own-rules.md#side-conditions).

A rewrite that replaces one expression by another is sound only under conditions the terms alone
do not show. `pl.mul(x, 1) -> x` makes the receiver of the call share `x`'s buffer: harmless if
nothing writes either of them in place, wrong if something does
(`v = pl.mul(a, 1); v = pl.tensor.assemble(v, b, [0])` would write the caller's `a`). So Python
answers, per function, and the rules read the answers as relations:

- `Fresh(e)`: `e` is a call of an op that returns new storage, assigned to a variable whose buffer
  no statement writes in place, returns, passes to a function or carries through a loop or a
  branch; or such a variable itself. Another name may share that buffer without anyone noticing.
- `Unwritten(x)`: no statement writes variable `x`'s buffer in place (through `x` or through any
  name sharing its storage), passes it to a function, or carries it through a loop or a branch.
- `IsScalar(e)`: `e` is a scalar, by the types its variables and constants carry.

The analysis is deliberately coarse (a whole function, not program points): a fact is given only
where it holds on every path, so a rule that requires it never changes what a program computes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import walk
from nanopto.ir_terms.types import ScalarType


@dataclass
class _Storage:
    """Union-find over Var ids: the variables that may share one buffer."""

    parent: dict[int, int] = field(default_factory=dict)
    exposed: set[int] = field(default_factory=set)
    """Roots of the classes written in place, passed to a function, or carried by a loop/branch."""
    escaping: set[int] = field(default_factory=set)
    """Roots of the classes a function returns."""

    def find(self, var_id: int) -> int:
        parent = self.parent.setdefault(var_id, var_id)
        while parent != var_id:
            grand = self.parent.setdefault(parent, parent)
            self.parent[var_id] = grand
            var_id, parent = parent, grand
        return var_id

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb
            if ra in self.exposed:
                self.exposed.add(rb)
            if ra in self.escaping:
                self.escaping.add(rb)


@dataclass(frozen=True)
class RuleFacts:
    """The nodes (by identity) each fact holds for."""

    fresh: tuple[n.Expr, ...]
    unwritten: tuple[n.Var, ...]
    scalars: tuple[n.Expr, ...]


def _vars(exprs: tuple[n.Expr, ...] | list[n.Expr]) -> Iterator[n.Var]:
    for expr in exprs:
        if isinstance(expr, n.Var):
            yield expr


def _stmts(fn: n.Function) -> list[n.Stmt]:
    return [node for node in walk(fn.body) if isinstance(node, n.Stmt)]


def function_facts(fn: n.Function) -> RuleFacts:
    storage = _Storage()
    assigned: dict[int, list[n.Expr]] = {}
    calls: list[n.Call] = []
    params = {p.var.id for p in fn.param_list}
    for node in walk(fn.body):
        if isinstance(node, n.Call):
            calls.append(node)
        elif isinstance(node, n.AssignStmt):
            assigned.setdefault(node.var.id, []).append(node.value)
            value = node.value
            if isinstance(value, n.Var):
                storage.join(node.var.id, value.id)
            elif isinstance(value, n.Call) and not value.function:
                op = OPS.lookup(str(value.op))
                if op is None or op.aliases_arg is None:
                    continue
                aliased = value.args[op.aliases_arg] if op.aliases_arg < len(value.args) else None
                if isinstance(aliased, n.Var):
                    storage.join(node.var.id, aliased.id)
            else:
                # A tuple, a projection, a subscript: it may share storage with any variable in it.
                for var in (v for v in walk(value) if isinstance(v, n.Var)):
                    storage.join(node.var.id, var.id)
    exposed: list[int] = []
    for call in calls:
        if call.function:
            exposed += [v.id for v in walk(call) if isinstance(v, n.Var)]
            continue
        op = OPS.lookup(str(call.op))
        if op is None:
            exposed += [v.id for v in walk(call) if isinstance(v, n.Var)]
            continue
        written = [call.args[i] for i in op.writes if i < len(call.args)]
        exposed += [arg.id for arg in written if isinstance(arg, n.Var)]
    escaping: list[int] = []
    for stmt in _stmts(fn):
        if isinstance(stmt, n.ReturnStmt):
            escaping += [v.id for value in stmt.values for v in walk(value) if isinstance(v, n.Var)]
        elif isinstance(stmt, n.YieldStmt):
            exposed += [v.id for value in stmt.values for v in walk(value) if isinstance(v, n.Var)]
        elif isinstance(stmt, n.ForStmt | n.WhileStmt | n.IfStmt):
            carried = [*getattr(stmt, "iter_args", ()), *stmt.return_vars]
            exposed += [v.id for v in carried]
            if isinstance(stmt, n.ForStmt):
                exposed.append(stmt.loop_var.id)
            exposed += [v.id for ia in getattr(stmt, "iter_args", ()) for v in walk(ia.init_value) if isinstance(v, n.Var)]
    for var_id in exposed:
        storage.exposed.add(storage.find(var_id))
    for var_id in escaping:
        storage.escaping.add(storage.find(var_id))

    def untouched(var_id: int) -> bool:
        return storage.find(var_id) not in storage.exposed

    def fresh_call(value: n.Expr) -> bool:
        if not isinstance(value, n.Call) or value.function:
            return False
        op = OPS.lookup(str(value.op))
        return op is not None and op.aliases_arg is None and not op.writes

    fresh: list[n.Expr] = []
    fresh_vars: set[int] = set()
    for var_id, values in assigned.items():
        root = storage.find(var_id)
        if var_id in params or root in storage.exposed or root in storage.escaping:
            continue
        good = [v for v in values if fresh_call(v)]
        fresh += good
        if len(good) == len(values):
            fresh_vars.add(var_id)
    seen: set[int] = set()
    unwritten: list[n.Var] = []
    scalars: list[n.Expr] = []
    for node in (*walk(fn.body), *(p.var for p in fn.param_list)):
        if isinstance(node, n.Var) and id(node) not in seen:
            seen.add(id(node))
            if untouched(node.id):
                unwritten.append(node)
            if node.id in fresh_vars:
                fresh.append(node)
        if isinstance(node, n.Expr) and isinstance(_type(node), ScalarType):
            scalars.append(node)
    return RuleFacts(tuple(fresh), tuple(unwritten), tuple(scalars))


def _type(expr: n.Expr) -> object:
    try:
        return type_of(expr)
    except (ValueError, TypeError, KeyError):
        return None


__all__ = ["RuleFacts", "function_facts"]
