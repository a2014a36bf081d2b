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
4. An argument substituted directly is not changed by the spliced body before a use: no write-back
   of a `pl.Out`/`pl.InOut` scalar to a Var it reads, no in-place write of storage whose elements
   it reads, may happen before the body reads the parameter (docs/specification.md, "Meaning under
   aliasing").
5. Hoisting a nested call does not move an operand evaluated before the call to after it, when
   the call writes back a Var the operand reads or writes storage in place the operand reads
   (`check_hoisted_operands`, run by `hoist-nested-calls` on its own output).
6. A projected multi-value site evaluates each returned expression once, at the call: one that is
   not a Var or a constant is bound there, and a Var component is bound when the caller rebinds
   what it stands for before reading it; a receiver several sites assign has a stand-in per site.

7. A rebinding that lands on the caller's Var is a self-update of that Var: every assignment
   spliced code makes to a caller's tensor, tile or array passed as an argument is
   `v = op(..., v, ...)` with an op that writes `v` in place and whose result is `v` (the
   checker's own reading of the op registry), whatever row the parameter was given. A view
   (`a = a[0:2]`) or a new array (`arr = pl.array.create(...)`) would replace the caller's value.
   (A `pl.Out` / `pl.InOut` scalar's write-back is what such a parameter means; check 1 covers
   scalars.)
8. No evaluation moves across a write it depends on: a helper that makes its returned tuple
   temporary before other statements (`tmp = (n, n); n = n + 1; return tmp`) evaluates the
   elements where it makes the tuple, so no evaluation of that site's components (a bound
   returned value, the caller's read of the result) reads a Var that a copy of one of those later
   statements wrote before it (`check_tuple_temporaries`).

Checks 4-6 re-derive what the helper and the caller read and write from the input program, by
their own walk (`_Order`), rather than reusing the pass's analysis; checks 7 and 8 read the
spliced program itself (spans survive inlining, so a copy of a helper statement is found by its
position in the source).

A violation is an internal error of the pass, reported with the call site, parameter and row.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ConstStr,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    MakeTuple,
    Node,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Span,
    Stmt,
    Submit,
    TupleGetItemExpr,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import iter_children, nodes_of, stmt_children, walk, walk_stmts
from nanopto.ir_terms.structural import structural_hash
from nanopto.ir_terms.types import ScalarType
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
    @property
    def stmt(self) -> Stmt: ...
    @property
    def form(self) -> enum.Enum: ...
    @property
    def reads(self) -> Sequence[TupleGetItemExpr]: ...
    @property
    def stand_in(self) -> Var | None: ...
    @property
    def bound_returns(self) -> Sequence[tuple[int, str]]: ...


RULE = "RebindingTable"
_OUT_SCALAR_ROW = "explicit pl.Out/pl.InOut scalar: the caller's Var"
"""`RebindingRow.OUT_SCALAR.value` (the checker reads rows as data)."""


class RebindingCheckError(RuntimeError):
    """The pass produced code that breaks the rebinding table: a bug in nanopto, not in the input."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = "\n".join(f"  {d}" for d in self.diagnostics)
        super().__init__(f"internal error: the spliced code breaks the rebinding table:\n{lines}")


def definitions(fn: Function) -> Counter[int]:
    """How many statements define each Var id in `fn` (params count as none)."""
    ids: list[int] = []  # counted at once at the end: `Counter` counts an iterable in C
    for node in walk_stmts(fn.body):
        if isinstance(node, AssignStmt):
            ids.append(node.var.id)
        elif isinstance(node, IfStmt | ForStmt | WhileStmt):
            ids.extend(v.id for v in node.return_vars)
            if isinstance(node, ForStmt):
                ids.append(node.loop_var.id)
        elif isinstance(node, ScopeStmt) and node.var is not None:
            ids.append(node.var.id)
    return Counter(ids)


_Key = tuple[int, tuple[int, ...], object]


def _identity_key(node: Node) -> _Key:
    """The same expression over the same Vars written at the same place (spans survive inlining,
    so a copy of a helper's own `pl.add(t, t)` is not mistaken for the caller's argument).

    Only the Vars the expression reads count, not their types: the pass derives a receiver's type
    afresh (`y: pl.Tensor[[N], ...]` from a helper returning `[N]` becomes `[4]`), and the argument
    `pl.add(a, y)` is the same expression over the same `y` either way."""
    return structural_hash(node, enable_auto_mapping=True, var_types=False), tuple(_operand_ids(node)), node.span


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


def _binding_label(site: SiteLike, b: BindingLike) -> str:
    return f"{_site_label(site)}: parameter '{b.param.name}' ({b.row.value})"


def check_function(
    before: Function,
    after: Function,
    sites: Sequence[SiteLike],
    copies: Mapping[tuple[int, int], str],
    helpers: Mapping[str, Function] | None = None,
) -> list[Diagnostic]:
    """Check one caller against the decisions taken at its own top-level sites.

    `copies` maps (original Var id, site) to the name of the fresh local the decoder made for it;
    `helpers` are the Inline helpers by name, as the input program has them (check 7 reads their
    parameters and statements; without them it is skipped).
    """
    problems: list[Diagnostic] = []
    defs_before, defs_after = definitions(before), definitions(after)
    may_rebind: set[int] = set()
    names: dict[int, str] = {}
    """Caller Var id -> its name, for each Var passed to a parameter, in the order first passed
    (the bindings it is passed to are looked up only for a report: they are many)."""
    for site in sites:
        for b in site.bindings:
            actual = b.actual
            if isinstance(actual, Var):
                names[actual.id] = actual.name
                if b.row.rebinds_caller_var and not b.bind_local:
                    may_rebind.add(actual.id)

    # 1. New definitions of caller Vars (the hoist's own temporaries are not the caller's).
    before_ids: set[int] | None = None  # every Var of the caller: gathered for the first Var reassigned
    reported: set[int] = set()
    for var_id, name in names.items():
        if defs_after[var_id] <= defs_before[var_id] or var_id in may_rebind:
            continue
        if before_ids is None:
            before_ids = {node.id for node in nodes_of(before.body) if isinstance(node, Var)}
            before_ids.update(p.var.id for p in before.param_list)
        if var_id not in before_ids:
            continue
        reported.add(var_id)
        labels = "; ".join(
            _binding_label(site, b) for site in sites for b in site.bindings if isinstance(b.actual, Var) and b.actual.id == var_id
        )
        problems.append(
            Diagnostic(
                Severity.ERROR,
                f"the caller's Var '{name}' is reassigned by spliced code, but it was passed only to "
                f"parameters whose rebinding must land on a fresh local: {labels}",
                after.span,
                RULE,
            )
        )

    # 7. The rebindings that do land on a caller's Var are self-updates of it.
    problems += _check_rebinding_is_self_update(before, after, sites, helpers, reported)

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
            # A loop-carried value given to a pl.Out / pl.InOut scalar and read after the call is
            # the variable its write-back must reach; a local would take the write away from it.
            if (
                b.bind_local
                and isinstance(b.actual, IterArg)
                and b.row.value == _OUT_SCALAR_ROW
                and _read_after(before, site.stmt, b.actual)
            ):
                problems.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"{_site_label(site)}: the loop-carried value '{b.actual.name}' given to pl.Out/pl.InOut "
                        f"scalar parameter '{b.param.name}' was bound to a local: the write-back would not reach it",
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


def is_self_update(stmt: AssignStmt) -> bool:
    """`t = op(..., t, ...)` where the op's result *is* that argument and the op writes it in place
    (or `t = t`): afterwards `t` names the storage it named, holding what the op wrote. A view
    (`t = t[0:2]`) shares storage but is another value; a new value (`t = pl.array.create(...)`)
    is another storage. The checker's own reading of the op registry, not the pass's."""
    value = stmt.value
    if not isinstance(value, Call):
        return value == stmt.var  # `t = t`
    if value.function:
        return False
    op = OPS.lookup(value.op)
    at = op.aliases_arg if op is not None else None
    return op is not None and at is not None and at in op.writes and at < len(value.args) and value.args[at] == stmt.var


def _by_reference(helper: Function, param: Var) -> bool:
    """A `pl.Out` / `pl.InOut` scalar: its write-back to the caller's Var is what it means."""
    return any(
        p.var.id == param.id and p.direction is not ParamDirection.In and isinstance(p.var.type, ScalarType)
        for p in helper.param_list
    )


def _check_rebinding_is_self_update(
    before: Function,
    after: Function,
    sites: Sequence[SiteLike],
    helpers: Mapping[str, Function] | None,
    reported: set[int],
) -> list[Diagnostic]:
    """Check 7: every assignment spliced code makes to a caller's Var passed as an argument is a
    self-update of that Var, unless it is the write-back of a `pl.Out` / `pl.InOut` scalar. Any
    other assignment replaces the value the caller holds by another one (a view of it, a new
    array), whatever row the parameter was given. Vars check 1 `reported` already are left out."""
    if helpers is None:
        return []
    by_reference: dict[str, set[int]] = {}
    """Helper -> its `pl.Out` / `pl.InOut` scalars (`_by_reference`), read once per helper."""

    def passes(site: SiteLike) -> Iterable[int]:
        """The caller's Vars `site` passes where a rebinding would land on them: not scalars (check 1
        covers those), nor to a parameter written back."""
        helper = helpers.get(site.helper)
        if helper is None:
            return
        if site.helper not in by_reference:
            by_reference[site.helper] = {p.var.id for p in helper.param_list if _by_reference(helper, p.var)}
        written_back = by_reference[site.helper]
        for b in site.bindings:
            actual = b.actual
            if isinstance(actual, Var) and not isinstance(actual.type, ScalarType) and b.param.id not in written_back:
                yield actual.id

    passed = {var_id for site in sites for var_id in passes(site)} - reported
    if not passed:
        return []

    def other_assignments(fn: Function) -> list[AssignStmt]:
        return [
            s for s in walk_stmts(fn.body) if isinstance(s, AssignStmt) and s.var.id in passed and not is_self_update(s)
        ]

    own: dict[int, list[Span | None]] = {}
    """Var id -> the places the caller assigns it itself (by Var first: a span hashes slowly)."""
    for s in other_assignments(before):
        own.setdefault(s.var.id, []).append(s.span)
    problems: list[Diagnostic] = []
    for stmt in other_assignments(after):
        kept = own.get(stmt.var.id)
        if kept and stmt.span in kept:
            kept.remove(stmt.span)  # the caller's own assignment, kept
            continue
        candidates = [s for s in sites if stmt.var.id in passes(s)]
        site = next((s for s in candidates if stmt.span is not None and _has_statement_at(helpers, s.helper, stmt.span)), candidates[0])
        where = f" (from {stmt.span})" if stmt.span is not None else ""
        problems.append(
            Diagnostic(
                Severity.ERROR,
                f"{_site_label(site)}: spliced code assigns the caller's Var `{python_print(stmt)}`{where}, which is not "
                f"a self-update of `{stmt.var.name}`: the caller's value would be replaced by another one; the rebinding "
                "must land on a local (or the helper be refused)",
                site.span,
                RULE,
            )
        )
    return problems


def _has_statement_at(helpers: Mapping[str, Function] | None, name: str, span: Span) -> bool:
    helper = (helpers or {}).get(name)
    return helper is not None and any(s.span == span for s in walk_stmts(helper.body))


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
    helpers = {f.name: f for f in before.function_list if f.func_type is FunctionType.Inline}
    for fn in before.function_list:
        if fn.func_type is FunctionType.Inline or fn.name not in after.functions:
            continue
        own = [s for s in sites if s.caller == fn.name]
        if own:
            problems += check_function(fn, after.functions[fn.name], own, copies, helpers)
            problems += check_evaluation_order(before, fn, own)
            problems += check_tuple_temporaries(before, fn, after.functions[fn.name], own, copies)
    return problems


# ---------------------------------------------------------------------------------------------
# Checks 4-6: evaluation order
# ---------------------------------------------------------------------------------------------


class _Order:
    """Statements numbered in evaluation order, with the loops around each, and where each Var
    is read and defined and storage written in place. Only what is certain counts: a definition
    or an op that declares a write, never a call that might write."""

    def __init__(self, stmts: Sequence[Stmt], inline: frozenset[str] = frozenset()) -> None:
        self.inline = inline
        """Inline helpers: what their arguments read depends on their bodies, so it is not counted."""
        self.reads: dict[int, list[tuple[int, frozenset[int]]]] = {}
        self.defs: dict[int, list[tuple[int, frozenset[int]]]] = {}
        self.stores: list[tuple[int, frozenset[int]]] = []
        self.position: dict[int, int] = {}
        self.count = 0
        for stmt in stmts:
            self._visit(stmt, frozenset())

    def _visit(self, stmt: Stmt, loops: frozenset[int]) -> None:
        self.count += 1
        at = (self.count, loops)
        self.position[id(stmt)] = self.count
        # A body that may run more than once: every loop kind, and a `pl.spmd` body (once per block).
        repeats = isinstance(stmt, ForStmt | WhileStmt) or (isinstance(stmt, ScopeStmt) and stmt.constructor == "spmd")
        inner = loops | {id(stmt)} if repeats else loops
        if isinstance(stmt, AssignStmt):
            exprs: list[Node] = [stmt.value]
            self.defs.setdefault(stmt.var.id, []).append(at)
        elif isinstance(stmt, ForStmt):
            exprs = [stmt.start, stmt.stop, stmt.step, *(a.init_value for a in stmt.iter_args)]
        elif isinstance(stmt, WhileStmt):
            exprs = [a.init_value for a in stmt.iter_args]
            self._note(stmt.cond, (self.count, inner))
        elif isinstance(stmt, IfStmt):
            exprs = [stmt.cond]
        elif isinstance(stmt, SeqStmts | ScopeStmt):
            exprs = [c for c in iter_children(stmt) if not isinstance(c, Stmt | Var)]
        else:
            exprs = [c for c in iter_children(stmt) if not isinstance(c, Stmt)]
        for expr in exprs:
            self._note(expr, at)
        for child in stmt_children(stmt):
            self._visit(child, inner)
        for var in getattr(stmt, "return_vars", ()):
            self.count += 1
            self.defs.setdefault(var.id, []).append((self.count, loops))

    def _note(self, expr: Node, at: tuple[int, frozenset[int]]) -> None:
        for node in _shallow(expr, self.inline):
            if isinstance(node, Var):
                self.reads.setdefault(node.id, []).append(at)
            elif isinstance(node, Call) and not node.function:
                op = OPS.lookup(node.op)
                if op is not None and op.writes:
                    self.stores.append(at)

    def first_write_before_read(self, writes: Iterable[tuple[int, frozenset[int]]], var_id: int) -> bool:
        return any(w[0] < r[0] or w[1] & r[1] for w in writes for r in self.reads.get(var_id, ()))


def _shallow(expr: Node, skip_calls: frozenset[str] = frozenset()) -> Iterable[Node]:
    """The nodes of an expression, not descending into a Var (an IterArg's initial value is read
    before its loop) nor into the arguments of a call to one of `skip_calls`."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, Call) and node.function and node.op in skip_calls:
            continue
        if not isinstance(node, Var):
            stack.extend(iter_children(node))


def _constant(expr: Node) -> bool:
    return isinstance(expr, ConstInt | ConstFloat | ConstBool | ConstStr)


def _reads_elements(expr: Node) -> bool:
    return not isinstance(expr, Var) and any(
        isinstance(v, Var) and not isinstance(v.type, ScalarType) for v in _shallow(expr)
    )


def _helper_parts(program: Program, name: str) -> tuple[list[Stmt], tuple[Expr, ...]] | None:
    """A helper's statements before its trailing return, and the values it returns (a returned
    tuple temporary's elements when it returns one)."""
    if name not in program.functions:
        return None
    helper = program.functions[name]
    stmts = list(helper.body.stmts) if isinstance(helper.body, SeqStmts) else [helper.body]
    returns: tuple[Expr, ...] = ()
    last = stmts[-1] if stmts else None
    if isinstance(last, ReturnStmt):
        stmts.pop()
        returns = last.values
    if len(returns) == 1 and isinstance(returns[0], Var):
        made = [s for s in stmts if isinstance(s, AssignStmt) and s.var == returns[0] and isinstance(s.value, MakeTuple)]
        if len(made) == 1:
            assert isinstance(made[0].value, MakeTuple)
            # Elements of a tuple made before the last statement are evaluated where it is made.
            returns = made[0].value.elements if stmts[-1] is made[0] else ()
    inline = {f.name for f in program.function_list if f.func_type is FunctionType.Inline}
    if any(isinstance(node, Call) and node.function and node.op in inline for r in returns for node in walk(r)):
        returns = ()  # what a nested helper returns is that helper's to check, at its own sites
    return stmts, returns


def check_evaluation_order(before: Program, caller: Function, sites: Sequence[SiteLike]) -> list[Diagnostic]:
    """Checks 4 and 6 for the sites of one caller."""
    problems: list[Diagnostic] = []
    caller_order: tuple[_Order, dict[int, Stmt]] | None = None
    inline = frozenset(f.name for f in before.function_list if f.func_type is FunctionType.Inline)
    helpers: dict[str, tuple[tuple[Expr, ...], _Order, set[int]] | None] = {}
    """Helper -> its returned values, its statements in order and its by-reference scalars: what
    a helper is does not depend on the site, so each helper is read once."""
    projected: list[SiteLike] = []
    for site in sites:
        if site.form._name_ == "TUPLE_PROJECT":  # `_name_`: an enum's `name` is a descriptor call, asked per site
            projected.append(site)
        if site.helper not in helpers:
            helpers[site.helper] = _helper_order(before, site.helper, inline)
        known = helpers[site.helper]
        if known is None:
            continue
        returns, order, by_reference = known
        problems += _check_substituted(site, order, by_reference)
        if projected and projected[-1] is site:
            if caller_order is None:
                body = list(caller.body.stmts) if isinstance(caller.body, SeqStmts) else [caller.body]
                caller_order = _Order(body), _holders(caller)
            problems += _check_returned(site, returns, *caller_order)
    receivers: dict[int, list[SiteLike]] = {}
    for site in projected:
        if isinstance(site.stmt, AssignStmt):
            receivers.setdefault(site.stmt.var.id, []).append(site)
    for shared in receivers.values():
        if len(shared) > 1 and any(s.stand_in is None for s in shared):
            problems.append(
                _order_problem(
                    shared[1],
                    f"the tuple receiver '{python_print(shared[0].stmt.var)}' is assigned by {len(shared)} sites "  # type: ignore[attr-defined]
                    "without a stand-in per site: a read would take another site's value",
                )
            )
    return problems


def _helper_order(
    before: Program, name: str, inline: frozenset[str]
) -> tuple[tuple[Expr, ...], _Order, set[int]] | None:
    """What checks 4 and 6 read of helper `name`: the values it returns, its statements (and the
    return) in evaluation order, and its `pl.Out` / `pl.InOut` scalars; None when it is no
    function of `before`."""
    parts = _helper_parts(before, name)
    if parts is None:
        return None
    stmts, returns = parts
    order = _Order([*stmts, ReturnStmt(returns)], inline)
    helper = before.functions[name]
    by_reference = {
        p.var.id for p in helper.param_list if p.direction is not ParamDirection.In and isinstance(p.var.type, ScalarType)
    }
    return returns, order, by_reference


def _check_substituted(site: SiteLike, order: _Order, by_reference: set[int]) -> list[Diagnostic]:
    """Check 4 for one site; `by_reference` are the pl.Out / pl.InOut scalars (one variable with
    every other such parameter given the same Var)."""
    problems: list[Diagnostic] = []
    for b in site.bindings:
        if b.bind_local or b.row.rebinds_caller_var or _constant(b.actual):
            continue
        if b.param.id in by_reference and isinstance(b.actual, Var):
            continue
        read = {v.id for v in _shallow(b.actual) if isinstance(v, Var)} if len(site.bindings) > 1 else set()
        for other in site.bindings:
            if (
                other is not b
                and other.row.rebinds_caller_var
                and not other.bind_local
                and isinstance(other.actual, Var)
                and other.actual.id in read
                and isinstance(other.actual.type, ScalarType)
                and order.first_write_before_read(order.defs.get(other.param.id, ()), b.param.id)
            ):
                problems.append(
                    _order_problem(
                        site,
                        f"the argument `{python_print(b.actual)}` for parameter '{b.param.name}' is substituted, "
                        f"but parameter '{other.param.name}' writes `{other.actual.name}` back before the body reads "
                        f"'{b.param.name}': it must be bound at the call",
                    )
                )
        if _reads_elements(b.actual) and order.first_write_before_read(order.stores, b.param.id):
            problems.append(
                _order_problem(
                    site,
                    f"the argument `{python_print(b.actual)}` for parameter '{b.param.name}' is substituted, but the "
                    f"body writes storage in place before it reads '{b.param.name}': it must be bound at the call",
                )
            )
    return problems


def _check_returned(site: SiteLike, returns: Sequence[Expr], caller: _Order, holder: Mapping[int, Stmt]) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    bound = {i for i, _ in site.bound_returns}
    at = caller.position.get(id(site.stmt))
    actual_of = {b.param.id: b for b in site.bindings}
    for i, value in enumerate(returns):
        if i in bound:
            continue
        if not isinstance(value, Var) and not _constant(value):
            problems.append(
                _order_problem(
                    site,
                    f"the returned value `{python_print(value)}` (component {i}) is not bound at the call: "
                    "it would be evaluated at each read of the receiver instead of once",
                )
            )
            continue
        b = actual_of.get(value.id) if isinstance(value, Var) else None
        if b is None or b.bind_local or at is None:
            continue
        reads = [caller.position[id(holder[id(r)])] for r in site.reads if r.index == i and id(r) in holder]
        for v in _shallow(b.actual):
            if isinstance(v, Var) and any(at < d[0] < r for d in caller.defs.get(v.id, ()) for r in reads):
                problems.append(
                    _order_problem(
                        site,
                        f"the returned value `{python_print(b.actual)}` (component {i}) is read after the caller "
                        f"rebinds `{v.name}`: it must be bound at the call",
                    )
                )
                break
    return problems


def _tuple_made_early(program: Program, name: str) -> tuple[AssignStmt, list[Stmt]] | None:
    """A helper returning a tuple temporary (`tmp = (a, b); ...; return tmp`) made before other
    statements: the statement making it and the statements after it."""
    helper = program.functions.get(name)
    if helper is None or not isinstance(helper.body, SeqStmts):
        return None
    stmts = list(helper.body.stmts)
    if not stmts or not isinstance(stmts[-1], ReturnStmt) or len(stmts[-1].values) != 1:
        return None
    tmp = stmts[-1].values[0]
    if not isinstance(tmp, Var):
        return None
    made = [i for i, s in enumerate(stmts[:-1]) if isinstance(s, AssignStmt) and s.var == tmp]
    if len(made) != 1 or not isinstance(stmts[made[0]], AssignStmt):
        return None
    m = stmts[made[0]]
    assert isinstance(m, AssignStmt)
    later = stmts[made[0] + 1 : -1]
    if not isinstance(m.value, MakeTuple) or not later:
        return None
    return m, later


def _written_ids(stmt: Stmt) -> set[int]:
    """The Vars a statement defines itself, or whose storage its own expressions write in place."""
    return _rebound_ids(stmt) | _stored_ids(stmt)


def _rebound_ids(stmt: Stmt) -> set[int]:
    """The Vars a statement makes name another value. A self-update (`t = pl.tensor.assemble(t,
    ...)`) is not one: `t` still names the storage it named, only the elements change."""
    ids = {v.id for v in getattr(stmt, "return_vars", ())}
    if isinstance(stmt, AssignStmt) and not is_self_update(stmt):
        ids.add(stmt.var.id)
    if isinstance(stmt, ScopeStmt) and stmt.var is not None:
        ids.add(stmt.var.id)
    if isinstance(stmt, ForStmt):
        ids.add(stmt.loop_var.id)
    return ids


def _stored_ids(stmt: Stmt) -> set[int]:
    """The Vars whose storage a statement's own expressions write in place."""
    ids: set[int] = set()
    for expr in (c for c in iter_children(stmt) if not isinstance(c, Stmt)):
        for node in _shallow(expr):
            op = OPS.lookup(node.op) if isinstance(node, Call) and not node.function else None
            if op is not None:
                assert isinstance(node, Call)
                ids.update(a.id for i, a in enumerate(node.args) if i in op.writes and isinstance(a, Var))
    return ids


def _own_reads(stmt: Stmt) -> set[str]:
    """The names of the Vars a statement's own expressions read (not its nested statements')."""
    return {node.name for e in _own_exprs(stmt) for node in _shallow(e) if isinstance(node, Var)}


def _own_element_reads(stmt: Stmt) -> set[str]:
    """The names of the tensors, tiles and arrays whose elements a statement's own expressions
    read: an in-place write changes what those evaluate to, not what a bare handle names."""
    return {
        node.name
        for e in _own_exprs(stmt)
        if _reads_elements(e)
        for node in _shallow(e)
        if isinstance(node, Var) and not isinstance(node.type, ScalarType)
    }


def _own_exprs(stmt: Stmt) -> list[Node]:
    if isinstance(stmt, AssignStmt):
        return [stmt.value]
    return [c for c in iter_children(stmt) if not isinstance(c, Stmt | Var)]


def check_tuple_temporaries(
    before: Program, caller: Function, after: Function, sites: Sequence[SiteLike], copies: Mapping[tuple[int, int], str]
) -> list[Diagnostic]:
    """Check 8: an evaluation is not moved across a write it depends on. A helper that makes its
    returned tuple temporary before other statements (`tmp = (n, n); n = n + 1; return tmp`)
    evaluates the elements where it makes the tuple; after inlining, no evaluation of a component
    of that site (a bound returned value, or the caller's read of the result) may read a Var that a
    copy of one of those later statements wrote before it.

    Which Var of `after` stands for a helper Var at a site is the decoder's record (`copies`) or,
    for a parameter substituted directly, the argument; which statements are copies of a helper
    statement, their position (spans survive inlining). A site's splice is taken to start at its
    first fresh local, so a site with none is not checked here."""
    problems: list[Diagnostic] = []
    order: list[Stmt] | None = None
    """`after`'s statements in order, listed when a helper first needs it (most make no tuple early)."""
    holder: dict[int, Stmt] | None = None
    early: dict[str, tuple[AssignStmt, list[Stmt]] | None] = {}
    by_site: dict[int, dict[int, str]] | None = None
    """Site number -> (helper Var id -> its copy's name): `copies` grouped once, not per site."""
    for site in sites:
        if site.helper not in early:
            early[site.helper] = _tuple_made_early(before, site.helper)
        found = early[site.helper]
        if found is None:
            continue
        made, later = found
        if by_site is None:
            by_site = {}
            for (var_id, number), name in copies.items():
                by_site.setdefault(number, {})[var_id] = name
        names: dict[int, str] = dict(by_site.get(site.number, {}))
        for b in site.bindings:
            if not b.bind_local and isinstance(b.actual, Var):
                names.setdefault(b.param.id, b.actual.name)
        writes: dict[tuple[type, Span], set[str]] = {}
        stored: dict[tuple[type, Span], set[str]] = {}
        for stmt in later:
            for inner in walk_stmts(stmt):
                if inner.span is None or isinstance(inner, SeqStmts):
                    continue
                rebound = {names[i] for i in _rebound_ids(inner) if i in names}
                into = {names[i] for i in _stored_ids(inner) if i in names}
                if rebound or into:
                    writes.setdefault((type(inner), inner.span), set()).update(rebound)
                    stored.setdefault((type(inner), inner.span), set()).update(into)
        if not writes:
            continue
        # Where this site's components are evaluated: a bound returned value (a fresh local of the
        # site assigned at the tuple or one of its elements), and the caller's reads of the result.
        at_tuple = {made.span, *(e.span for e in made.value.elements)} - {None}  # type: ignore[attr-defined]
        own_locals = set(names.values()) - {b.actual.name for b in site.bindings if isinstance(b.actual, Var)}
        if site.form.name == "TUPLE_PROJECT":
            if holder is None:
                holder = _holders(caller)
            receivers = [holder[id(r)] for r in site.reads if id(r) in holder]
        else:
            receivers = [site.stmt]
        landing = {(type(r), r.span, r.var.name if isinstance(r, AssignStmt) else None) for r in receivers}
        # The site's splice starts at its first fresh local: a write before it is another site's
        # (sites of one helper given the same caller Var write the same Var).
        if order is None:
            order = [s for s in walk_stmts(after.body) if not isinstance(s, SeqStmts)]
        start = next((i for i, s in enumerate(order) if isinstance(s, AssignStmt) and s.var.name in own_locals), None)
        if start is None:
            continue
        written_at: list[tuple[Stmt, set[str], set[str]]] = []
        for stmt in order[start:]:
            if stmt.span is None:
                continue
            key = (type(stmt), stmt.span)
            names_here = _written_names(stmt)
            written = writes.get(key, set()) & names_here
            into = stored.get(key, set()) & names_here
            if written or into:
                written_at.append((stmt, written, into))
                continue
            evaluates = (type(stmt), stmt.span, stmt.var.name if isinstance(stmt, AssignStmt) else None) in landing or (
                isinstance(stmt, AssignStmt) and stmt.span in at_tuple and stmt.var.name in own_locals
            )
            if not evaluates:
                continue
            reads, elements = _own_reads(stmt), _own_element_reads(stmt)
            stale = [
                (w, sorted((wrote & reads) | (into & elements)))
                for w, wrote, into in written_at
                if (wrote & reads) | (into & elements)
            ]
            if stale:
                w, vs = stale[-1]
                problems.append(
                    _order_problem(
                        site,
                        f"a component of the tuple `{made.var.name}` that '{site.helper}' makes at {made.span} is "
                        f"evaluated at `{python_print(stmt)}`, after `{python_print(w)}` (from {w.span}) wrote "
                        f"`{vs[0]}`: it must be evaluated where the tuple is made",
                    )
                )
                break
    return problems


def _written_names(stmt: Stmt) -> set[str]:
    """`_written_ids` by name, for a statement of the spliced program."""
    names: dict[int, str] = {}
    for node in walk(stmt):
        if isinstance(node, Var):
            names[node.id] = node.name
    if isinstance(stmt, AssignStmt):
        names[stmt.var.id] = stmt.var.name
    return {names[i] for i in _written_ids(stmt) if i in names}


def _holders(fn: Function) -> dict[int, Stmt]:
    """Each node (by identity) -> the innermost statement holding it."""
    holder: dict[int, Stmt] = {}
    for stmt in walk_stmts(fn.body):
        if not isinstance(stmt, SeqStmts):
            for node in walk(stmt):
                holder[id(node)] = stmt
    return holder


def _order_problem(site: SiteLike, message: str) -> Diagnostic:
    return Diagnostic(Severity.ERROR, f"{_site_label(site)}: {message}", site.span, ORDER_RULE)


ORDER_RULE = "EvaluationOrder"


def check_hoisted_operands(before: Program, caller: Function, after: Function) -> list[Diagnostic]:
    """Check 5: an operand evaluated before a nested Inline call is not evaluated after its body."""
    problems: list[Diagnostic] = []
    after_by_span: dict[object, list[Stmt]] = {}
    for stmt in walk_stmts(after.body):
        if stmt.span is not None and not isinstance(stmt, SeqStmts):
            after_by_span.setdefault((type(stmt), stmt.span), []).append(stmt)
    for stmt in walk_stmts(caller.body):
        if isinstance(stmt, SeqStmts) or stmt.span is None:
            continue
        for call, earlier in _nested_calls(before, stmt):
            parts = _helper_parts(before, call.op)
            if parts is None:
                continue
            helper = before.functions[call.op]
            rebound = {
                a.id
                for p, a in zip(helper.param_list, call.args, strict=False)
                if isinstance(a, Var) and isinstance(p.var.type, ScalarType) and p.direction is not ParamDirection.In
                and any(isinstance(s, AssignStmt) and s.var == p.var for s in walk_stmts(helper.body))
            }
            stores = bool(_Order(parts[0]).stores)
            for operand in earlier:
                if _constant(operand):
                    continue
                moved = any(isinstance(v, Var) and v.id in rebound for v in _shallow(operand)) or (
                    stores and _reads_elements(operand)
                )
                if not moved:
                    continue
                key = _operand_key(operand)
                for spliced in after_by_span.get((type(stmt), stmt.span), ()):
                    if _occurrences(spliced, key) > _occurrences(stmt, key) - 1:
                        problems.append(
                            Diagnostic(
                                Severity.ERROR,
                                f"the operand `{python_print(operand)}` is evaluated before the nested call to "
                                f"'{call.op}' in '{caller.name}', which changes what it reads, but after inlining "
                                "it is evaluated after the call's body: it must be hoisted with the call",
                                stmt.span,
                                ORDER_RULE,
                            )
                        )
    return problems


def _operand_key(node: Node) -> object:
    return ("var", node.id) if isinstance(node, Var) else _identity_key(node)


def _occurrences(stmt: Stmt, key: object) -> int:
    own = [c for c in iter_children(stmt) if not isinstance(c, Stmt)]
    if isinstance(stmt, AssignStmt):
        own = [stmt.value]
    return sum(1 for e in own for node in _shallow(e) if _operand_key(node) == key)


def _nested_calls(program: Program, stmt: Stmt) -> list[tuple[Call, list[Expr]]]:
    """Each nested Inline call in a statement's own expressions, with the operands evaluated
    before it (the siblings to its left, at every level)."""
    inline = {f.name for f in program.function_list if f.func_type is FunctionType.Inline}
    whole = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr if isinstance(stmt, EvalStmt) else None
    if isinstance(stmt, ReturnStmt) and len(stmt.values) == 1:
        whole = stmt.values[0]
    found: list[tuple[Call, list[Expr]]] = []

    def visit(node: Node, left: list[Expr]) -> None:
        if isinstance(node, Var):
            return
        if isinstance(node, Call) and node.function and node.op in inline and node is not whole:
            found.append((node, list(left)))
        children = list(iter_children(node))
        for i, child in enumerate(children):
            visit(child, left + [c for c in children[:i] if isinstance(c, Expr)])

    if isinstance(stmt, AssignStmt):
        roots: list[Node] = [stmt.value]
    else:
        roots = [c for c in iter_children(stmt) if not isinstance(c, Stmt)]
    for i, root in enumerate(roots):
        visit(root, [r for r in roots[:i] if isinstance(r, Expr)])
    return found


def _read_after(fn: Function, stmt: Stmt, var: Var) -> bool:
    """Whether `var` is read by a statement after `stmt` in `fn` (in evaluation order)."""
    order = _Order(list(fn.body.stmts) if isinstance(fn.body, SeqStmts) else [fn.body])
    at = order.position.get(id(stmt))
    return at is not None and any(position > at for position, _ in order.reads.get(var.id, ()))


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
