"""The results of projected multi-value sites: which caller reads each site reaches, and which
returned components are bound at the call.

The specification wires `a, b = f(x)` without a tuple binding: each caller read `tmp[i]` becomes
the i-th returned value. Taken literally that evaluates a returned expression at each read instead
of once at the call: never, for a component the caller ignores (its write is lost), twice for one
read twice, and after whatever the caller did in between (`k, j = self.swap(k, j)` would print
`k = j; j = k`). nanopto keeps the call's meaning with the specification's own means
(docs/specification.md, "Meaning under aliasing"):

* a returned component that is not a Var or a constant is bound to a fresh local at the end of the
  spliced body, once, in return order (a per-site variant of the template, `f@bind_returns(0)`);
* a Var component is substituted at the reads unless the caller may rebind what it stands for
  between the call and a read; then it is bound too;
* a receiver assigned by more than one site is told apart per site (`CallSite.receiver`): each read
  belongs to the site whose assignment reaches it.

Python decides these per site; the rules still splice the body, the bindings and the projection.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import AssignStmt, Function, SeqStmts, TupleGetItemExpr, Var, WhileStmt
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk, walk_stmts
from nanopto.passes.evaluation_order import (
    Point,
    Timeline,
    is_atom,
    is_constant,
    may_happen_between,
    reads_contents,
    vars_read,
)
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate, InlineError, SiteForm


@dataclasses.dataclass(frozen=True)
class SiteReads:
    """The caller reads `tmp[i]` a projected site's assignment reaches, and, when the receiver is
    assigned more than once, the Var standing for it at this site only."""

    reads: tuple[TupleGetItemExpr, ...]
    stand_in: Var | None = None


def receiver_reads(fn: Function, sites: Sequence[CallSite]) -> dict[int, SiteReads]:
    """Site number -> the reads its receiver reaches, for the projected sites of `fn`."""
    project = SiteForm.TUPLE_PROJECT  # read once: a member read off its Enum class is slow (call_sites)
    projected = [s for s in sites if s.form is project and isinstance(s.stmt, AssignStmt)]
    if not projected:
        return {}
    by_receiver: dict[int, list[CallSite]] = {}
    for site in projected:
        assert isinstance(site.stmt, AssignStmt)
        by_receiver.setdefault(site.stmt.var.id, []).append(site)
    reads: dict[int, list[TupleGetItemExpr]] = {rid: [] for rid in by_receiver}
    for node in walk(fn.body):
        if isinstance(node, TupleGetItemExpr) and isinstance(node.tuple, Var) and node.tuple.id in reads:
            reads[node.tuple.id].append(node)
    result: dict[int, SiteReads] = {}
    for rid, own in by_receiver.items():
        defs = [s for s in walk_stmts(fn.body) if isinstance(s, AssignStmt) and s.var.id == rid]
        if len(defs) == 1:
            result[own[0].number] = SiteReads(tuple(reads[rid]))
            continue
        result.update(_reaching(fn, own, defs, reads[rid]))
    return result


def _reaching(
    fn: Function, own: list[CallSite], defs: list[AssignStmt], reads: list[TupleGetItemExpr]
) -> dict[int, SiteReads]:
    """A receiver assigned more than once: each read belongs to the last assignment before it in
    the one statement list that holds them all."""
    receiver = own[0].stmt
    assert isinstance(receiver, AssignStmt)
    seq = _common_list(fn, defs)
    if seq is None:
        raise InlineError(
            f"{own[0].span or fn.span}: the tuple receiver '{receiver.var.name}' in '{fn.name}' is assigned in "
            "more than one block; its reads cannot be told apart without a tuple binding. Give each "
            "assignment a name of its own."
        )
    index_of = {id(s): i for i, s in enumerate(seq.stmts)}
    def_index = {id(d): index_of[id(d)] for d in defs}
    holder: dict[int, int] = {}
    for i, stmt in enumerate(seq.stmts):
        for node in walk(stmt):
            holder[id(node)] = i
    by_stmt = {id(s.stmt): s for s in own}
    chosen: dict[int, list[TupleGetItemExpr]] = {s.number: [] for s in own}
    for read in reads:
        at = holder.get(id(read))
        earlier = [d for d in defs if at is not None and def_index[id(d)] < at]
        if not earlier:
            raise InlineError(
                f"{read.span or own[0].span or fn.span}: `{python_print(read)}` in '{fn.name}' reads the tuple "
                f"receiver '{receiver.var.name}' before any assignment in its block reaches it. "
                "Give each assignment a name of its own."
            )
        last = max(earlier, key=lambda d: def_index[id(d)])
        site = by_stmt.get(id(last))
        if site is not None:
            chosen[site.number].append(read)
    return {
        s.number: SiteReads(tuple(chosen[s.number]), Var(receiver.var.name, receiver.var.type)) for s in own
    }


def _common_list(fn: Function, defs: list[AssignStmt]) -> SeqStmts | None:
    wanted = {id(d) for d in defs}
    for stmt in walk_stmts(fn.body):
        if isinstance(stmt, SeqStmts) and wanted <= {id(s) for s in stmt.stmts}:
            return stmt
    return None


def bound_returns(
    fn: Function, site: CallSite, template: HelperTemplate, reads: SiteReads, caller: Timeline
) -> tuple[tuple[int, str], ...]:
    """The returned components `site` binds at the call, each with the reason."""
    at = caller.points[id(site.stmt)]
    read_points = _read_points(fn, reads.reads, caller)
    actual_of = {b.param.id: b for b in site.bindings}
    bound: list[tuple[int, str]] = []
    for i, value in enumerate(template.returns):
        if not is_atom(value):
            bound.append((i, "bound: a returned expression is evaluated once, at the call"))
            continue
        if is_constant(value):
            continue
        assert isinstance(value, Var)
        b = actual_of.get(value.id)
        if b is None or b.bind_local or is_constant(b.actual):
            continue  # a callee local or a bound parameter: a fresh Var only this site defines
        if not any(r for r in reads.reads if r.index == i):
            continue
        points = [p for p, r in zip(read_points, reads.reads, strict=True) if r.index == i]
        for var in vars_read(b.actual):
            write = _rebound_between(caller, var.id, at, points)
            if write is not None:
                bound.append((i, f"bound: the caller rebinds `{var.name}` before it reads this value"))
                break
        else:
            if reads_contents(b.actual) and any(may_happen_between(at, w, points) for w in caller.stores):
                bound.append((i, "bound: the caller writes storage this value reads before it reads it"))
    return tuple(bound)


def _read_points(fn: Function, reads: Sequence[TupleGetItemExpr], caller: Timeline) -> list[Point]:
    """Where each read is evaluated: at the innermost statement holding it, or, for a read in a
    `while` condition, inside that loop (the condition is evaluated before every iteration)."""
    wanted = {id(r) for r in reads}
    holder: dict[int, Point] = {}
    for stmt in walk_stmts(fn.body):
        if isinstance(stmt, SeqStmts):
            continue
        in_condition = {id(n) for n in walk(stmt.cond)} if isinstance(stmt, WhileStmt) else set()
        for node in walk(stmt):
            if id(node) in wanted:  # inner statements come later in the walk and win
                holder[id(node)] = caller.conditions[id(stmt)] if id(node) in in_condition else caller.points[id(stmt)]
    return [holder[id(r)] for r in reads]


def _rebound_between(caller: Timeline, var_id: int, site: Point, reads: Sequence[Point]) -> Point | None:
    for write in caller.defs.get(var_id, ()):
        if may_happen_between(site, write, reads):
            return write
    return None


def decide_tuple_results(fn: Function, sites: list[CallSite], templates: dict[str, HelperTemplate]) -> list[CallSite]:
    """`sites` (all in `fn`) with their projected results decided: the reads each reaches, its
    receiver's stand-in, and the returned components it binds at the call."""
    own = receiver_reads(fn, sites)
    if not own:
        return sites
    caller = Timeline.of(fn.body.stmts if isinstance(fn.body, SeqStmts) else (fn.body,))
    decided: list[CallSite] = []
    for site in sites:
        reads = own.get(site.number)
        if reads is not None:
            bound = bound_returns(fn, site, templates[site.helper], reads, caller)
            site = dataclasses.replace(site, reads=reads.reads, stand_in=reads.stand_in, bound_returns=bound)
        decided.append(site)
    return decided


def result_templates(sites: Sequence[CallSite], templates: dict[str, HelperTemplate], chosen: dict[int, str]) -> None:
    """Give each site that binds returned components the variant of its template that does."""
    for site in sites:
        if not site.bound_returns:
            continue
        base = chosen.get(site.number, site.helper)
        indices = [i for i, _ in site.bound_returns]
        key = f"{base}@bind_returns({', '.join(map(str, indices))})"
        if key not in templates:
            templates[key] = with_bound_returns(templates[base], indices)
        chosen[site.number] = key


def with_bound_returns(template: HelperTemplate, indices: Sequence[int]) -> HelperTemplate:
    """`template` whose returned components `indices` are bound to fresh locals at its end."""
    returns = list(template.returns)
    body = list(template.body)
    locals_ = set(template.local_ids)
    for i in indices:
        value = template.returns[i]
        local = Var(f"ret{i}", type_of(value), span=value.span)
        body.append(AssignStmt(local, value, annotated=False, span=value.span))
        returns[i] = local
        locals_.add(local.id)
    return dataclasses.replace(template, body=tuple(body), returns=tuple(returns), local_ids=frozenset(locals_))

