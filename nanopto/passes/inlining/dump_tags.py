"""`pl.dump_tag` selections through inlining (docs/specification.md, "Dump tags").

The parser has already turned every `pl.dump_tag(x)` into dump selections: a helper's own tags sit
on the dispatches and `pl.at` scopes of its body (variables of the helper, renamed by the ordinary
`subst` rules like every other use), and a call-site tag sits on the call of the helper
(`o = self.helper(a, o, attrs={"dump_vars": [a]})`). That call disappears when it is spliced, so its
selection moves into the helper copy: it follows the parameter `a` is bound to, and the local handles
bound from it, onto the carriers and nested dispatches (`pl.submit`, `self.kernel(...)`) that use
it while they still hold the caller's value (an assignment to the parameter makes a new value),
never onto a `pl.split_aiv` region. The site then splices a per-site variant of the template
(`helper@dump_tag(x)`), chosen by Python, named in `(At ...)`. Dispatches keep their launch
attributes, dependencies and existing dumps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nanopto.ir_terms.dump_selection import DUMP_CARRIERS, seeded
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    Expr,
    ForStmt,
    IfStmt,
    ScopeStmt,
    SeqStmts,
    Submit,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.schema import Mutator
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate


class _MarkCarriers(Mutator):
    """Add the live marks to each carrier scope's selection and to each nested dispatch passed them.

    A mark follows a value, not a name (docs/specification.md, "Dump tags"): it is live from the
    helper's entry, in the order the statements are written, until its variable is assigned again;
    a local bound from a live mark (`x_inline0 = x`) is a mark too. `same_value` maps a formal to
    the formal it becomes after substitution (two formals given one variable at this site), so a
    selection never lists one value twice."""

    def __init__(self, marks: Sequence[Var], same_value: Mapping[int, int]) -> None:
        self.live: dict[int, Var] = {m.id: m for m in marks}
        self.same_value = same_value

    def _value(self, var: Var) -> int:
        return self.same_value.get(var.id, var.id)

    def _once_per_value(self, selection: Iterable[Var]) -> tuple[Var, ...]:
        out: dict[int, Var] = {}
        for var in selection:
            out.setdefault(self._value(var), var)
        return tuple(out.values())

    def _kill(self, var: Var | None) -> None:
        if var is not None:
            self.live.pop(var.id, None)

    def visit_AssignStmt(self, stmt: AssignStmt) -> Any:
        rebuilt: AssignStmt = self.generic_visit(stmt)  # the value reads the marks live before it
        source = stmt.value.id in self.live if isinstance(stmt.value, Var) else False
        self._kill(stmt.var)
        if source:
            self.live[stmt.var.id] = stmt.var
        return rebuilt

    def visit_IfStmt(self, stmt: IfStmt) -> Any:
        cond = self.visit(stmt.cond)
        entry = dict(self.live)
        then_body = self.visit(stmt.then_body)
        after_then, self.live = self.live, dict(entry)
        else_body = self.visit(stmt.else_body) if stmt.else_body is not None else None
        self.live = {i: v for i, v in self.live.items() if i in after_then}
        for var in stmt.return_vars:
            self._kill(var)
        return dataclasses.replace(stmt, cond=cond, then_body=then_body, else_body=else_body)

    def _loop(self, stmt: Any) -> Any:
        rebuilt = self.generic_visit(stmt)
        for var in stmt.return_vars:
            self._kill(var)
        return rebuilt

    def visit_ForStmt(self, stmt: ForStmt) -> Any:
        return self._loop(stmt)

    def visit_WhileStmt(self, stmt: WhileStmt) -> Any:
        return self._loop(stmt)

    def visit_ScopeStmt(self, scope: ScopeStmt) -> Any:
        if scope.constructor == "split_aiv":
            return scope  # never a carrier, and nothing inside it is marked from outside
        at_entry = list(self.live.values())
        rebuilt: ScopeStmt = self.generic_visit(scope)
        self._kill(scope.var)
        dumps = rebuilt.dumps
        if scope.constructor in DUMP_CARRIERS:
            dumps = seeded(dumps, at_entry)
        return dataclasses.replace(rebuilt, dumps=self._once_per_value(dumps))

    def _dispatch_dumps(self, args: tuple[Expr, ...], dumps: tuple[Var, ...]) -> tuple[Var, ...]:
        """A dispatch lists only its own arguments, in argument order (as the parser builds it)."""
        chosen = {v.id for v in dumps} | set(self.live)
        return self._once_per_value(arg for arg in args if isinstance(arg, Var) and arg.id in chosen)

    def visit_Submit(self, submit: Submit) -> Any:
        rebuilt: Submit = self.generic_visit(submit)
        return dataclasses.replace(rebuilt, dumps=self._dispatch_dumps(rebuilt.args, rebuilt.dumps))

    def visit_Call(self, call: Call) -> Any:
        rebuilt: Call = self.generic_visit(call)
        if not call.function:
            return rebuilt  # a builtin op is no dispatch
        return dataclasses.replace(rebuilt, dumps=self._dispatch_dumps(rebuilt.args, rebuilt.dumps))


def with_call_site_tags(
    template: HelperTemplate, tagged: Sequence[Var], same_value: Mapping[int, int] | None = None
) -> HelperTemplate:
    """A variant of the template in which each carrier opened, and each dispatch passed a `tagged`
    formal, while that formal still holds the caller's value, is marked; each selection names a
    value once."""
    body: SeqStmts = _MarkCarriers(tagged, same_value or {}).visit(SeqStmts(template.body))
    return dataclasses.replace(template, body=body.stmts)


def shared_formals(site: CallSite) -> dict[int, int]:
    """Formal id -> the first formal substituted by the same variable at this site (`h(a, a)`):
    after substitution both are one value, which a selection names once."""
    first: dict[int, int] = {}
    same: dict[int, int] = {}
    for binding in site.bindings:
        if binding.bind_local or not isinstance(binding.actual, Var):
            continue
        owner = first.setdefault(binding.actual.id, binding.param.id)
        if owner != binding.param.id:
            same[binding.param.id] = owner
    return same


def _has_selection(template: HelperTemplate) -> bool:
    return any(isinstance(node, ScopeStmt | Submit | Call) and bool(node.dumps) for node in template.body_nodes)


def call_site_tags(sites: Sequence[CallSite]) -> dict[int, list[Var]]:
    """Site number -> the helper's formals whose actuals the site's call lists in its dumps."""
    result: dict[int, list[Var]] = {}
    for site in sites:
        if not site.call.dumps:
            continue  # the common call: it selects nothing
        dumped = {v.id for v in site.call.dumps}
        params = [b.param for b in site.bindings if isinstance(b.actual, Var) and b.actual.id in dumped]
        if params:
            result[site.number] = params
    return result


def site_templates(sites: Sequence[CallSite], templates: dict[str, HelperTemplate]) -> dict[int, str]:
    """Choose the template of every site that needs its own variant, adding it to `templates`: a
    site with call-site tags, or one giving a variable to two formals of a helper that selects."""
    chosen: dict[int, str] = {}
    tags = call_site_tags(sites)
    selects: dict[str, bool] = {}
    """Helper -> whether its template selects: a walk of each helper once, not of each site's."""
    for site in sites:
        params = tags.get(site.number, [])
        if site.helper not in selects:
            selects[site.helper] = _has_selection(templates[site.helper])
        same = shared_formals(site) if selects[site.helper] or params else {}
        if not params and not same:
            continue
        by_id = {b.param.id: b.param.name for b in site.bindings}
        key = site.helper
        if params:
            key += f"@dump_tag({', '.join(p.name for p in params)})"
        if same:
            key += f"@same({', '.join(f'{by_id[i]}={by_id[j]}' for i, j in sorted(same.items()))})"
        if key not in templates:
            templates[key] = with_call_site_tags(templates[site.helper], params, same)
        chosen[site.number] = key
    return chosen
