"""`pl.dump_tag` selections through inlining (docs/specification.md, "Dump tags").

The parser has already turned every `pl.dump_tag(x)` into dump selections: a helper's own tags sit
on the dispatches and `pl.at` scopes of its body (variables of the helper, renamed by the ordinary
`subst` rules like every other use), and a call-site tag sits on the call of the helper
(`o = self.helper(a, o, attrs={"dump_vars": [a]})`). That call disappears when it is spliced, so its
selection moves into the helper copy: it follows the parameter `a` is bound to, and the local handles
bound from it, onto the carriers and nested dispatches (`pl.submit`, `self.kernel(...)`) that use
it, never onto a `pl.split_aiv` region. The site then splices a per-site variant of the template
(`helper@dump_tag(x)`), chosen by Python, named in `(At ...)`. Dispatches keep their launch
attributes, dependencies and existing dumps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    Expr,
    Node,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Submit,
    Var,
)
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate

CARRIERS = frozenset({"cluster", "graph", "at", "spmd"})
"""Scopes a call-site selection lands on when their body uses the tagged value."""


def _add(existing: tuple[Var, ...], new: Iterable[Var]) -> tuple[Var, ...]:
    out = list(existing)
    for var in new:
        if var not in out:
            out.append(var)
    return tuple(out)


class _MarkCarriers(Mutator):
    """Add the marks a carrier scope or a nested dispatch uses to its dump selection."""

    def __init__(self, marks: Sequence[Var]) -> None:
        self.marks = tuple(marks)

    def _marks_for(self, node: Node) -> list[Var]:
        used = {v.id for v in walk(node) if isinstance(v, Var)}
        return [m for m in self.marks if m.id in used]

    def visit_ScopeStmt(self, scope: ScopeStmt) -> Any:
        if scope.constructor == "split_aiv":
            return scope  # never a carrier, and nothing inside it is marked from outside
        rebuilt: ScopeStmt = self.generic_visit(scope)
        if scope.constructor in CARRIERS:
            marks = self._marks_for(scope)
            if marks:
                return dataclasses.replace(rebuilt, dumps=_add(rebuilt.dumps, marks))
        return rebuilt

    def _dispatch_dumps(self, args: tuple[Expr, ...], dumps: tuple[Var, ...]) -> tuple[Var, ...]:
        """A dispatch lists only its own arguments, in argument order (as the parser builds it)."""
        chosen = {v.id for v in dumps} | {m.id for m in self.marks}
        out: dict[int, Var] = {}
        for arg in args:
            if isinstance(arg, Var) and arg.id in chosen:
                out.setdefault(arg.id, arg)
        return tuple(out.values())

    def visit_Submit(self, submit: Submit) -> Any:
        rebuilt: Submit = self.generic_visit(submit)
        return dataclasses.replace(rebuilt, dumps=self._dispatch_dumps(rebuilt.args, rebuilt.dumps))

    def visit_Call(self, call: Call) -> Any:
        rebuilt: Call = self.generic_visit(call)
        if not call.function:
            return rebuilt  # a builtin op is no dispatch
        return dataclasses.replace(rebuilt, dumps=self._dispatch_dumps(rebuilt.args, rebuilt.dumps))


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
    body: SeqStmts = _MarkCarriers(marks).visit(SeqStmts(template.body))
    return dataclasses.replace(template, body=body.stmts)


def call_site_tags(sites: Sequence[CallSite]) -> dict[int, list[Var]]:
    """Site number -> the helper's formals whose actuals the site's call lists in its dumps."""
    result: dict[int, list[Var]] = {}
    for site in sites:
        dumped = {v.id for v in site.call.dumps}
        params = [b.param for b in site.bindings if isinstance(b.actual, Var) and b.actual.id in dumped]
        if params:
            result[site.number] = params
    return result


def site_templates(sites: Sequence[CallSite], templates: dict[str, HelperTemplate]) -> dict[int, str]:
    """Choose the template of every tagged site, adding its variant to `templates`."""
    chosen: dict[int, str] = {}
    by_number = {s.number: s for s in sites}
    for number, params in call_site_tags(sites).items():
        site = by_number[number]
        key = f"{site.helper}@dump_tag({', '.join(p.name for p in params)})"
        if key not in templates:
            templates[key] = with_call_site_tags(templates[site.helper], params)
        chosen[number] = key
    return chosen
