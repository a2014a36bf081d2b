"""Statement forms whose validity depends on where they stand, checked where a splice puts them.

A few `pl` forms are valid in one place and not in another: inside a `pl.cluster()` a
`pl.spmd` cannot capture `as tid` or ask `allow_early_resolve=`, and a launch cannot carry
per-task keywords (`deps=`, `core_num=`, ...); inside a MANUAL scope an AUTO `pl.scope()` is
forbidden; a hand-placed `pl.scope()` needs a function declared `auto_scope=False`. A helper
parsed on its own passes these checks, and the same statements spliced into a caller's
`pl.cluster()` would not: the result would print as text the parser rejects. The pass refuses
such a site, located, before anything is rewritten (docs/10-the-rest-of-the-specification.md,
"Where a spliced scope may stand").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from nanopto.ir_terms.nodes import (
    Function,
    FunctionType,
    Node,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Submit,
    places_auto_scopes,
)
from nanopto.ir_terms.parse_exprs import PER_TASK_KEYWORDS
from nanopto.ir_terms.schema import iter_children
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate, InlineError

MANUAL = "manual_scope"
"""How a MANUAL scope is named in a context, whichever way it was written."""


def scope_name(scope: ScopeStmt) -> str:
    """The context a scope opens: its constructor, or `MANUAL` for `pl.scope(mode=MANUAL)`."""
    if scope.constructor == "scope" and any("MANUAL" in str(k.value) for k in scope.kwargs):
        return MANUAL
    return scope.constructor


def violation(node: Node, context: Sequence[str], in_auto_scope_function: bool | None) -> str | None:
    """Why `node` may not stand inside the scopes `context` (outermost first), or None.

    `in_auto_scope_function` is whether the function that will hold it places AUTO scopes itself;
    None when that function is not known yet (an Inline helper, spliced again later)."""
    if "cluster" in context:
        if isinstance(node, ScopeStmt) and node.constructor == "spmd":
            if node.var is not None and not node.for_form:
                return "`with pl.spmd(...) as tid:` cannot capture a TaskId inside pl.cluster()"
            if node.allow_early_resolve:
                return "pl.spmd(allow_early_resolve=...) cannot be nested inside pl.cluster()"
        if isinstance(node, Submit):
            carried = [k.name for k in node.kwargs if k.name in PER_TASK_KEYWORDS]
            if carried:
                form = "pl.spmd_submit" if node.spmd else "pl.submit"
                return f"{form}(..., {carried[0]}=...) cannot carry per-task dispatch metadata inside pl.cluster()"
    if isinstance(node, ScopeStmt) and node.constructor == "scope" and scope_name(node) != MANUAL:
        if MANUAL in context:
            return "an AUTO pl.scope() cannot be nested inside a MANUAL scope"
        if in_auto_scope_function:
            return "a hand-placed pl.scope() needs a function declared @pl.function(auto_scope=False)"
    return None


def placed(body: Stmt, context: tuple[str, ...] = ()) -> Iterator[tuple[Node, tuple[str, ...]]]:
    """Every node of `body` with the scopes around it inside `body`, after `context`."""
    stack: list[tuple[Node, tuple[str, ...]]] = [(body, context)]
    while stack:
        node, around = stack.pop()
        yield node, around
        inner = (*around, scope_name(node)) if isinstance(node, ScopeStmt) else around
        stack.extend((child, inner) for child in reversed(tuple(iter_children(node))))


def has_restricted_forms(nodes: Iterable[Node]) -> bool:
    """Whether a helper body's `nodes` hold a form some place forbids (a scope of a restricted kind
    or a launch with keywords): only a site of such a helper needs its context worked out."""
    return any(
        (isinstance(node, ScopeStmt) and node.constructor in ("spmd", "scope"))
        or (isinstance(node, Submit) and bool(node.kwargs))
        for node in nodes  # the nodes `placed` gives, without the scopes around them
    )


def splice_violation(
    caller: Function, helper_body: Stmt, site_context: tuple[str, ...]
) -> tuple[Node, str] | None:
    """The first form of `helper_body` that may not stand where a call in `caller`, inside the
    scopes `site_context`, would splice it; with the reason."""
    final = None if caller.func_type is FunctionType.Inline else places_auto_scopes(caller.attr_items)
    for node, around in placed(helper_body, site_context):
        reason = violation(node, around, final)
        if reason is not None:
            return node, reason
    return None


def check_sites(caller: Function, sites: Sequence[CallSite], templates: Mapping[str, HelperTemplate]) -> None:
    """Refuse, located at the call, the first of `sites` whose helper has a form that may not
    stand where the call would splice it."""
    restricts: dict[str, bool] = {}
    """Helper -> whether it holds a restricted form: each helper's body is walked once, not once per site."""
    restricted = []
    for site in sites:
        if site.helper not in restricts:
            restricts[site.helper] = has_restricted_forms(templates[site.helper].body_nodes)
        if restricts[site.helper]:
            restricted.append(site)
    if not restricted:
        return
    contexts = {id(node): around for node, around in placed(caller.body)}
    for site in restricted:
        around = contexts.get(id(site.call), ())
        found = splice_violation(caller, SeqStmts(templates[site.helper].body), around)
        if found is None:
            continue
        node, reason = found
        span = site.span or caller.span
        where = f"{span}" if span is not None else f"function '{caller.name}'"
        inner = f" (the helper's statement at {node.span})" if getattr(node, "span", None) is not None else ""
        if MANUAL in around or "cluster" in around:
            stands, fix = " > ".join(f"pl.{name}()" for name in around), "move the call out of that scope"
        else:
            stands = f"'{caller.name}', which places AUTO scopes itself"
            fix = f"declare '{caller.name}' @pl.function(..., auto_scope=False)"
        raise InlineError(
            f"{where}: cannot inline '{site.helper}' into '{caller.name}' here: {reason}{inner}, and this call "
            f"stands inside {stands}, so the spliced program would not be valid pl; {fix}, or change the helper"
        )
