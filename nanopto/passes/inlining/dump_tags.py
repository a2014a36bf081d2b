"""`pl.dump_tag` selections through inlining (docs/specification.md, "Dump tags").

Two transfers, both prepared in Python on the helper *template* so that the ordinary `subst` rules
rename the marks exactly like every other use of a variable — a mark therefore always names a Var
the caller binds:

* A tag inside an Inline helper (`pl.dump_tag(x)` in its body) moves onto the `dumps=[...]` of the
  `pl.cluster`, `pl.graph` and `pl.at` carriers that helper splices. With no carrier in the body the
  statement stays a statement.
* A call-site tag (`pl.dump_tag(a)` in the caller before `out = self.helper(a, out)`) follows the
  parameter `a` is bound to — and the local handles bound from it — into the carriers and nested
  dispatches (`pl.submit`) that use it, never onto a `pl.split_aiv` region. The site then splices a
  per-site variant of the template (`helper@dump_tag(x)`), chosen by Python, named in `(At ...)`.
  Submit nodes keep their launch attributes, dependencies and existing dumps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    EvalStmt,
    Function,
    Node,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Submit,
    Var,
)
from nanopto.ir_terms.schema import Mutator, walk, walk_stmts
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate

CARRIERS = frozenset({"cluster", "graph", "at"})
"""Scopes a helper's own tags land on."""


def dump_tag_var(stmt: object) -> Var | None:
    """The variable of a `pl.dump_tag(x)` statement, else None."""
    if (
        isinstance(stmt, EvalStmt)
        and isinstance(stmt.expr, Call)
        and not stmt.expr.function
        and stmt.expr.op == "dump_tag"
        and len(stmt.expr.args) == 1
        and isinstance(stmt.expr.args[0], Var)
    ):
        return stmt.expr.args[0]
    return None


def _add(existing: tuple[Var, ...], new: Iterable[Var]) -> tuple[Var, ...]:
    out = list(existing)
    for var in new:
        if var not in out:
            out.append(var)
    return tuple(out)


class _MarkCarriers(Mutator):
    """Add marks to carrier scopes (and, for call-site tags, Submits) that qualify."""

    def __init__(self, marks: Sequence[Var], *, only_users: bool, submits: bool, drop_tags: bool) -> None:
        self.marks = tuple(marks)
        self.only_users = only_users
        self.submits = submits
        self.drop_tags = drop_tags
        self.placed = 0

    def _marks_for(self, node: Node) -> list[Var]:
        if not self.only_users:
            return list(self.marks)
        used = {v.id for v in walk(node) if isinstance(v, Var)}
        return [m for m in self.marks if m.id in used]

    def visit_ScopeStmt(self, scope: ScopeStmt) -> Any:
        if scope.constructor == "split_aiv":
            return scope  # never a carrier, and nothing inside it is marked from outside
        rebuilt: ScopeStmt = self.generic_visit(scope)
        if scope.constructor in CARRIERS or (self.submits and scope.constructor == "spmd"):
            marks = self._marks_for(scope)
            if marks:
                self.placed += 1
                return dataclasses.replace(rebuilt, dumps=_add(rebuilt.dumps, marks))
        return rebuilt

    def visit_Submit(self, submit: Submit) -> Any:
        rebuilt: Submit = self.generic_visit(submit)
        if self.submits:
            marks = self._marks_for(submit)
            if marks:
                self.placed += 1
                return dataclasses.replace(rebuilt, dumps=_add(rebuilt.dumps, marks))
        return rebuilt

    def visit_SeqStmts(self, seq: SeqStmts) -> Any:
        stmts = [self.visit(s) for s in seq.stmts if not (self.drop_tags and dump_tag_var(s) is not None)]
        return SeqStmts(tuple(stmts), span=seq.span)


def carry_helper_tags(template: HelperTemplate) -> HelperTemplate:
    """Move a helper's own `pl.dump_tag(x)` marks onto the carriers its body splices."""
    tags = [v for s in walk(SeqStmts(template.body)) if (v := dump_tag_var(s)) is not None]
    if not tags:
        return template
    has_carrier = any(isinstance(s, ScopeStmt) and s.constructor in CARRIERS for s in walk(SeqStmts(template.body)))
    if not has_carrier:
        return template
    marker = _MarkCarriers(tags, only_users=False, submits=False, drop_tags=True)
    body: SeqStmts = marker.visit(SeqStmts(template.body))
    return dataclasses.replace(template, body=body.stmts)


def aliases_of(params: Iterable[Var], body: Sequence[Stmt]) -> list[Var]:
    """The parameters plus every local bound (transitively) to one of them: `x_inline0 = a`."""
    found = {p.id: p for p in params}
    for node in walk(SeqStmts(tuple(body))):
        if isinstance(node, AssignStmt) and isinstance(node.value, Var) and node.value.id in found:
            found.setdefault(node.var.id, node.var)
    return list(found.values())


def with_call_site_tags(template: HelperTemplate, tagged: Sequence[Var]) -> HelperTemplate:
    """A variant of the template whose carriers and dispatches using `tagged` params are marked."""
    marks = aliases_of(tagged, template.body)
    marker = _MarkCarriers(marks, only_users=True, submits=True, drop_tags=False)
    body: SeqStmts = marker.visit(SeqStmts(template.body))
    return dataclasses.replace(template, body=body.stmts)


def call_site_tags(fn: Function, sites: Sequence[CallSite]) -> dict[int, list[Var]]:
    """Site number -> the helper's formals whose actuals were tagged earlier in `fn`."""
    by_stmt = {id(site.stmt): site for site in sites}
    tagged: set[int] = set()
    result: dict[int, list[Var]] = {}
    if not sites:
        return result
    for node in walk_stmts(fn.body):  # both the tags and the sites are statements
        var = dump_tag_var(node)
        if var is not None:
            tagged.add(var.id)
            continue
        site = by_stmt.get(id(node))
        if site is not None:
            params = [b.param for b in site.bindings if isinstance(b.actual, Var) and b.actual.id in tagged]
            if params:
                result[site.number] = params
    return result


def site_templates(
    functions: Sequence[Function], sites: Sequence[CallSite], templates: dict[str, HelperTemplate]
) -> dict[int, str]:
    """Choose the template of every tagged site, adding its variant to `templates`."""
    chosen: dict[int, str] = {}
    for fn in functions:
        own = [s for s in sites if s.caller == fn.name]
        for number, params in call_site_tags(fn, own).items():
            site = next(s for s in own if s.number == number)
            key = f"{site.helper}@dump_tag({', '.join(p.name for p in params)})"
            if key not in templates:
                templates[key] = with_call_site_tags(templates[site.helper], params)
            chosen[number] = key
    return chosen
