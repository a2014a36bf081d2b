"""The rebinding checker: an independent look at spliced code against the alias/rebinding table.

The pass decides, per call site and parameter, where a rebinding lands (`nanopto.passes.inlining.rebinding`).
This module does not trust those decisions' *effects*: it compares the caller before and after
inlining and checks invariants any correct splice must keep (docs/specification.md, "Rebinding a parameter" and
"Edge cases"):

1. A caller Var gains new definitions only if it was passed, and substituted, for a parameter
   whose row rebinds the caller's Var (proven self-update, Array, Out/InOut scalar). Otherwise a
   spliced body reassigns a pass-by-value scalar or a locally-bound tensor of the caller — the
   `2k + 2` / `4A` bug.
2. A parameter whose row rebinds the caller's Var never gets a bare alias `x = caller_var` (an
   Array must stay the caller's Var; orchestration codegen cannot declare an alias).
3. Every computed argument (a Call such as `a[r]`) is evaluated exactly as often after inlining as
   before: once, at the call site.

A violation is an internal error of the pass, reported with the call site, parameter and row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    Node,
    Program,
    ScopeStmt,
    Span,
    Submit,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import iter_children, nodes_of, walk, walk_stmts
from nanopto.ir_terms.structural import structural_hash
from nanopto.verify.diagnostics import Diagnostic, Severity


class RowLike(Protocol):
    """The rebinding-table row a binding was given (`passes.inlining.rebinding.RebindingRow`)."""

    @property
    def value(self) -> str: ...
    @property
    def rebinds_caller_var(self) -> bool: ...


class BindingLike(Protocol):
    """What the checker reads of one parameter binding: the pass's decision, as data."""

    @property
    def param(self) -> Var: ...
    @property
    def actual(self) -> Node: ...
    @property
    def row(self) -> RowLike: ...
    @property
    def bind_local(self) -> bool: ...


class SiteLike(Protocol):
    """What the checker reads of one call site (`passes.inlining.call_sites.SiteLike`)."""

    @property
    def number(self) -> int: ...
    @property
    def helper(self) -> str: ...
    @property
    def caller(self) -> str: ...
    @property
    def span(self) -> Span | None: ...
    @property
    def bindings(self) -> Sequence[BindingLike]: ...


RULE = "RebindingTable"


class RebindingCheckError(RuntimeError):
    """The pass produced code that breaks the rebinding table: a bug in nanopto, not in the input."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = "\n".join(f"  {d}" for d in self.diagnostics)
        super().__init__(f"internal error: the spliced code breaks the rebinding table:\n{lines}")


def definitions(fn: Function) -> Counter[int]:
    """How many statements define each Var id in `fn` (params count as none)."""
    defs: Counter[int] = Counter()
    for node in walk_stmts(fn.body):
        if isinstance(node, AssignStmt):
            defs[node.var.id] += 1
        elif isinstance(node, IfStmt | ForStmt | WhileStmt):
            defs.update(v.id for v in node.return_vars)
            if isinstance(node, ForStmt):
                defs[node.loop_var.id] += 1
        elif isinstance(node, ScopeStmt) and node.var is not None:
            defs[node.var.id] += 1
    return defs


_Key = tuple[int, tuple[int, ...], object]


def _identity_key(node: Node) -> _Key:
    """The same expression over the same Vars written at the same place (spans survive inlining,
    so a copy of a helper's own `pl.add(t, t)` is not mistaken for the caller's argument).

    Only the Vars the expression reads count, not their types: the pass derives a receiver's type
    afresh (`y: pl.Tensor[[N], ...]` from a helper returning `[N]` becomes `[4]`), and the argument
    `pl.add(a, y)` is the same expression over the same `y` either way."""
    return structural_hash(node, var_types=False), tuple(_operand_ids(node)), node.span


def _operand_ids(root: Node) -> list[int]:
    """Ids of the Vars `root` reads, in pre-order, without descending into a Var's type."""
    ids: list[int] = []
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Var):
            ids.append(node.id)
            continue
        stack.extend(reversed(list(iter_children(node))))
    return ids


def _computed(nodes: Iterable[Node], ops: set[str]) -> Counter[_Key]:
    """Occurrences of the calls to `ops` (only those are printed: printing every call is slow)."""
    return Counter(
        _identity_key(n)
        for n in nodes
        if (isinstance(n, Call) and n.op in ops) or (isinstance(n, Submit) and n.callee in ops)
    )


def _site_label(site: SiteLike) -> str:
    where = f" at {site.span}" if site.span is not None else ""
    return f"call site #{site.number} of '{site.helper}' in '{site.caller}'{where}"


def check_function(
    before: Function, after: Function, sites: Sequence[SiteLike], copies: Mapping[tuple[int, int], str]
) -> list[Diagnostic]:
    """Check one caller against the decisions taken at its own top-level sites.

    `copies` maps (original Var id, site) to the name of the fresh local the decoder made for it.
    """
    problems: list[Diagnostic] = []
    defs_before, defs_after = definitions(before), definitions(after)
    may_rebind: dict[int, list[str]] = {}
    passed_to: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for site in sites:
        for b in site.bindings:
            if not isinstance(b.actual, Var):
                continue
            names[b.actual.id] = b.actual.name
            label = f"{_site_label(site)}: parameter '{b.param.name}' ({b.row.value})"
            passed_to.setdefault(b.actual.id, []).append(label)
            if b.row.rebinds_caller_var and not b.bind_local:
                may_rebind.setdefault(b.actual.id, []).append(label)

    # 1. New definitions of caller Vars (the hoist's own temporaries are not the caller's).
    before_ids = {node.id for node in nodes_of(before.body) if isinstance(node, Var)} | {p.var.id for p in before.params}
    for var_id, labels in passed_to.items():
        if var_id not in before_ids:
            continue
        if defs_after[var_id] > defs_before[var_id] and var_id not in may_rebind:
            problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"the caller's Var '{names[var_id]}' is reassigned by spliced code, but it was passed only to "
                    f"parameters whose rebinding must land on a fresh local: {'; '.join(labels)}",
                    after.span,
                    RULE,
                )
            )

    # 2. A parameter whose row rebinds the caller's Var never gets a local copy of its own.
    for site in sites:
        for b in site.bindings:
            if b.row.rebinds_caller_var and not b.bind_local and (b.param.id, site.number) in copies:
                local = copies[(b.param.id, site.number)]
                problems.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"{_site_label(site)}: parameter '{b.param.name}' ({b.row.value}) was given the local "
                        f"'{local}' instead of rebinding the caller's Var '{python_print(b.actual)}'",
                        site.span,
                        RULE,
                    )
                )

    # 3. Computed arguments: evaluated exactly once, at the call site.
    computed_args = [b.actual for site in sites for b in site.bindings if isinstance(b.actual, Call | Submit)]
    ops = {a.op if isinstance(a, Call) else a.callee for a in computed_args}
    if not ops:
        return problems
    counts_before, counts_after = _computed(nodes_of(before.body), ops), _computed(nodes_of(after.body), ops)
    for site in sites:
        for b in site.bindings:
            if isinstance(b.actual, Call | Submit):
                key = _identity_key(b.actual)
                if counts_after[key] != counts_before[key]:
                    problems.append(
                        Diagnostic(
                            Severity.ERROR,
                            f"{_site_label(site)}: the computed argument `{python_print(b.actual)}` for parameter "
                            f"'{b.param.name}' is evaluated {counts_after[key]} time(s) after inlining, "
                            f"{counts_before[key]} before; it must be bound once at the call site",
                            site.span,
                            RULE,
                        )
                    )
    return problems


def check_rebinding(
    before: Program,
    after: Program,
    sites: Sequence[SiteLike],
    copies: Mapping[tuple[int, int], str] | None = None,
) -> list[Diagnostic]:
    """Diagnostics for every violation of the rebinding table in `after` (empty when it is right).

    `sites` are the pass's per-site decisions, taken as data (the checker never runs the pass),
    and `copies` which (Var, site) pairs got a fresh local; without `copies`, check 2 sees only
    locals named after the parameter.
    """
    if copies is None:
        copies = _copies_by_name(sites, after)
    problems: list[Diagnostic] = []
    for fn in before.function_list:
        if fn.func_type is FunctionType.Inline or fn.name not in after.functions:
            continue
        own = [s for s in sites if s.caller == fn.name]
        if own:
            problems += check_function(fn, after.functions[fn.name], own, copies)
    return problems


def _copies_by_name(sites: Sequence[SiteLike], after: Program) -> dict[tuple[int, int], str]:
    """Without the decoder's record: a local named `<param>_inline<k>` counts as the param's copy."""
    names = {
        node.name
        for fn in after.function_list
        for node in walk(fn.body)
        if isinstance(node, Var)
    }
    found: dict[tuple[int, int], str] = {}
    for site in sites:
        for b in site.bindings:
            prefix = f"{b.param.name.rstrip('_')}_inline"
            for name in names:
                if name.startswith(prefix) and name[len(prefix) :].isdigit():
                    found[(b.param.id, site.number)] = name
    return found
