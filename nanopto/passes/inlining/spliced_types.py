"""Types for the Vars inlining creates, derived from what defines them.

docs/specification.md, "Dynamic dimensions and types": "Derive locals from their first assignment ...; derive For/While tensor carries from
their actual initializer, and merge results from the corresponding values. Propagate returned types
to receivers and downstream uses." A helper written without annotations is spliced with fresh
locals whose formal type is unknown; once the actuals are in place, the caller's types tell what
they are. Only the given target Vars (fresh locals and receivers) are retyped, and a Var keeps its
id, so every use sees the refined type.

Most sites splice a copy that is its template renamed: the stock rules copy each statement with
fresh Vars, and the Vars each formal stands for have the formal's type. A copy's value then has its
template statement's type, renamed (`infer` reads a Var only through its type, and the op rules
read arguments only as constants, symbols and lists). Where the template's own statements teach
nothing, neither do the copy's: `_Copy` answers for them without typing each copy again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nanopto.ir_terms.infer import type_reader, weakly_bound
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    SeqStmts,
    Stmt,
    Submit,
    Var,
    WhileStmt,
    YieldStmt,
    slot_constructor,
)
from nanopto.ir_terms.schema import Mutator, type_exprs, walk, walk_stmts
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, TupleType, Type, UnknownType
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate, InlineError


class _Copy:
    """One site whose copy is its template renamed (`renamed_copies`), as the Vars standing for
    its formals are typed now: while their types are the formals' and no local of the copy has
    been learnt, each copied statement teaches what its template statement teaches: nothing."""

    __slots__ = ("checked_at", "learnt", "renamed", "stand_ins")

    def __init__(self, stand_ins: tuple[tuple[Var, Type], ...]) -> None:
        self.stand_ins = stand_ins
        """(the Var a formal stands for at the site, the formal's type), for each formal."""
        self.checked_at = -1
        """How many types the typer knew when `renamed` was last decided (it learns, never forgets)."""
        self.renamed = False
        self.learnt = False
        """A local of the copy was learnt: its uses no longer read the template's types."""

    def teaches_nothing(self, typer: _Typer) -> bool:
        """Whether typing a copied statement now would learn nothing (decided again after each
        type the typer learns)."""
        if self.learnt:
            return False
        if self.checked_at != len(typer.known):
            self.checked_at = len(typer.known)
            self.renamed = True
            for var, ty in self.stand_ins:  # a loop, not all() over a generator: decided for every copy
                if typer.of_var(var) != ty:
                    self.renamed = False
                    break
        return self.renamed


class _Typer:
    def __init__(self, targets: set[int], unresolved: set[int], copies: Mapping[int, _Copy] | None = None) -> None:
        self.targets = targets
        self.unresolved = unresolved
        self.copies = copies or {}
        """Fresh local id -> its site's copy, for the sites `renamed_copies` found."""
        self.known: dict[int, Type] = {}
        self.typed: set[int] = set()
        """The targets met with a declared type (`derive_types` asks whether they keep it)."""
        self.of = type_reader(weakly_bound(self.of_var))
        self.reading: list[Var] | None = None
        """While `learn` types a source: the Vars whose types it read."""
        self.learnt_from: dict[int, tuple[int, Expr, list[Var]]] = {}
        """Target id -> (len(known) once it was learnt, its source, the Vars typing the source read)."""

    def of_var(self, var: Var) -> Type:
        if self.reading is not None:
            self.reading.append(var)
        known = self.known.get(var.id)
        if known is not None:
            return known
        if self.unresolved and var.id in self.targets and mentions(var.type, self.unresolved):
            return UnknownType()  # an ambiguous symbolic extent: derive it from the operands instead
        return var.type

    def learn(self, var: Var, source: Expr) -> bool:
        """Give a target Var whose type is still unknown the type of `source`, its definition; True
        when something was learnt. Only such a Var has its source typed: that is the costly part."""
        if var.id not in self.targets or var.id in self.known:
            return False  # (a type learnt is never unknown)
        declared = var.type  # `of_var`, written out: this runs once per spliced statement
        if not isinstance(declared, UnknownType):
            self.typed.add(var.id)
            if not (self.unresolved and mentions(declared, self.unresolved)):
                return False
        copy = self.copies.get(var.id)
        if copy is not None and copy.teaches_nothing(self):
            return False  # its template statement's type is unknown or not learnt (`renamed_copies`)
        reads: list[Var] = []
        self.reading = reads
        try:
            ty = self.of(source)
        finally:
            self.reading = None
        if isinstance(ty, UnknownType) or (self.unresolved and mentions(ty, self.unresolved)):
            return False
        self.known[var.id] = ty
        self.learnt_from[var.id] = (len(self.known), source, reads)
        if copy is not None:
            copy.learnt = True
        return True

    def still_its_sources(self, var: Var, source: Expr) -> bool:
        """Whether `var` was learnt from `source` and typing `source` now would give the same type:
        no Var it read has been learnt since. A source's type is a function of the types `of_var`
        gives the Vars it reads (its other parts do not change), and a type, once learnt, stays."""
        found = self.learnt_from.get(var.id)
        if found is None or found[1] is not source:
            return False
        at, _, reads = found
        learnt = self.learnt_from
        for v in reads:  # a loop, not all() over a generator: asked for every learnt assignment
            read = learnt.get(v.id)
            if read is not None and read[0] >= at:
                return False
        return True

    def visit(self, stmt: Any) -> bool:
        if type(stmt) is AssignStmt:  # the commonest statement, before the patterns below
            return isinstance(stmt.var, Var) and self.learn(stmt.var, stmt.value)
        learnt = False
        match stmt:
            case AssignStmt(var=Var() as var, value=value):
                learnt = self.learn(var, value)
            case AssignStmt():
                pass  # a target that is no variable: only a planted binding policy makes one, and the checker names it
            case ForStmt(iter_args=iter_args, return_vars=results) | WhileStmt(iter_args=iter_args, return_vars=results):
                for carry in iter_args:
                    learnt = self.learn(carry, carry.init_value) or learnt
                for carry, result in zip(iter_args, results, strict=False):
                    learnt = self.learn(result, carry) or learnt
            case IfStmt(then_body=body, return_vars=results) if results:
                values = _yielded(body)
                for result, value in zip(results, values, strict=False):
                    learnt = self.learn(result, value) or learnt
        return learnt


def _yielded(body: Stmt) -> tuple[Expr, ...]:
    last = body.stmts[-1] if isinstance(body, SeqStmts) and body.stmts else body
    return last.values if isinstance(last, YieldStmt) else ()


class _Retype(Mutator):
    def __init__(self, types: dict[int, Type], annotate: set[int]) -> None:
        self.types = types
        self.annotate = annotate
        """The target Vars whose assignment prints its annotation (`_declared_otherwise`)."""
        self.rebuilt: dict[int, tuple[Var, Var]] = {}
        """Var id -> (a Var object met, its rebuilt self)."""

    def leave(self, node: Any) -> Any:
        if self.annotate and isinstance(node, AssignStmt) and node.var.id in self.annotate:
            return dataclasses.replace(node, annotated=True)
        return node

    def visit_Var(self, var: Var) -> Var:
        return self._retyped(var)

    def visit_IterArg(self, var: Var) -> Var:
        return self._retyped(var)

    def _retyped(self, var: Var) -> Var:
        done = self.rebuilt.get(var.id)
        if done is not None and done[0] is var:
            return done[1]  # a Var object is shared by its definition and uses, and immutable: rebuilt once
        ty = self.types.get(var.id)
        if ty is not None and type(var) is Var:
            # A plain Var's only children are its type's: replaced whole, they need no visit.
            rebuilt: Var = _var_of_type(var.name, ty, var.id, var.span)
        else:
            rebuilt = self.generic_visit(var)  # an IterArg's initial value too
            if ty is not None:
                rebuilt = dataclasses.replace(rebuilt, type=ty, id=var.id)
        self.rebuilt[var.id] = (var, rebuilt)
        return rebuilt


_var_of_type = slot_constructor(Var, ("name", "type", "id", "span"))
"""`Var(name, type, id=id, span=span)`, built slot by slot (`slot_constructor`): a typed program's
retyping rebuilds every spliced Var whose type was learnt (50,000 at typed-10000)."""


def mentions(ty: Type, symbols: set[int]) -> bool:
    return any(isinstance(v, Var) and v.id in symbols for e in type_exprs(ty) for v in walk(e))


_WITH_EXPRESSIONS = (TensorType, TileType, ArrayType, TupleType)
"""The types `type_exprs` finds expressions in."""


def callee_only_symbols(fn: Function, targets: set[int], target_vars: Iterable[Var] | None = None) -> set[int]:
    """Symbols in the types of spliced Vars that the caller itself never mentions: dimensions the
    per-site binding could not resolve (the arguments disagreed on them).

    `target_vars` are the target Vars occurring in `fn` when the caller knows them (the inliner
    does); otherwise `fn` is walked to find them.
    """
    if target_vars is None:
        target_vars = [node for node in walk(fn.body) if isinstance(node, Var) and node.id in targets]
    symbols = {
        v.id
        for var in target_vars
        if type(var.type) is not UnknownType and isinstance(var.type, _WITH_EXPRESSIONS)  # most are unknown: no expression
        for e in type_exprs(var.type)
        for v in walk(e)
        if isinstance(v, Var)
    }
    if not symbols:  # the common case: spliced types name no symbol at all
        return symbols
    other_vars = [node for node in walk(fn.body) if isinstance(node, Var) and node.id not in targets]
    visible: set[int] = set()
    for param in fn.param_list:
        visible.add(param.var.id)
        visible.update(v.id for e in type_exprs(param.var.type) for v in walk(e) if isinstance(v, Var))
    for var in other_vars:
        visible.update(v.id for e in type_exprs(var.type) for v in walk(e) if isinstance(v, Var))
    defined = {stmt.var.id for stmt in walk_stmts(fn.body) if isinstance(stmt, AssignStmt)}
    return symbols - visible - defined


def renamed_copies(
    sites: Sequence[CallSite], spliced: Mapping[int, HelperTemplate], fresh: Mapping[tuple[int, int], Var]
) -> dict[int, _Copy]:
    """Fresh local id -> its site's `_Copy`, for the sites whose copy is their template renamed and
    whose template teaches its own locals nothing (`_teaches_nothing`).

    `spliced` is the template spliced at each site (site number -> template), given only where the
    stock rules ran: other rules may rewrite a copy beyond renaming it. Such a site has every formal
    standing for a Var (the actual, or the fresh local bound to it); its template's Vars have types
    that name no Var, so no dimension is bound and a copied local has its original's type. A template
    spliced once is left out: typing it would cost what typing its one copy costs.
    """
    by_template: dict[int, list[CallSite]] = {}  # id(template) -> its sites; `spliced` holds the templates
    for site in sites:
        template = spliced.get(site.number)
        if template is not None:
            by_template.setdefault(id(template), []).append(site)
    at_site: dict[int, tuple[_Copy, frozenset[int]]] = {}  # site number -> its copy, its template's locals
    for group in by_template.values():
        template = spliced[group[0].number]
        if len(group) < 2 or not _teaches_nothing(template):
            continue
        for site in group:
            if len(site.bindings) != len(template.function.param_list):
                continue
            stand_ins = []
            for b in site.bindings:
                stand_in = fresh.get((b.param.id, site.number)) if b.bind_local else b.actual
                if not isinstance(stand_in, Var):
                    break
                stand_ins.append((stand_in, b.param.type))
            else:
                at_site[site.number] = (_Copy(tuple(stand_ins)), template.local_ids)
    copies: dict[int, _Copy] = {}
    for (var_id, number), local in fresh.items():  # read in turn: a lookup by pair hashes the pair
        found = at_site.get(number)
        if found is not None and var_id in found[1]:
            copies[local.id] = found[0]
    return copies


def _teaches_nothing(template: HelperTemplate) -> bool:
    """Whether typing the template's body from its formals' types learns none of its locals, and
    its copies are typed as it is: its Vars' types name no Var, and no op call mixes an unknown
    operand with a scalar (a copied `pl.add` of two scalars reads as `a + b`, typed by the
    known operand where the call is unknown)."""
    params = {p.var.id for p in template.function.param_list}
    if any(_names_a_var(p.var.type) for p in template.function.param_list):
        return False
    typer = _Typer(set(template.local_ids), set())
    for node in template.body_nodes:
        if isinstance(node, Var) and node.id not in params and _names_a_var(node.type):
            return False
        if isinstance(node, Call) and len(node.args) > 1:
            operands = [typer.of(arg) for arg in node.args]
            if any(isinstance(ty, UnknownType) for ty in operands) and any(isinstance(ty, ScalarType) for ty in operands):
                return False
    return not any([typer.visit(stmt) for stmt in walk_stmts(SeqStmts(template.body))])


def _names_a_var(ty: Type) -> bool:
    return isinstance(ty, _WITH_EXPRESSIONS) and any(isinstance(v, Var) for e in type_exprs(ty) for v in walk(e))


def derive_types(
    fn: Function, targets: set[int], target_vars: Iterable[Var] | None = None, copies: Mapping[int, _Copy] | None = None
) -> Function:
    """`fn` with each target Var of unknown type typed from its definition (to a fixpoint).

    A spliced local whose type names a callee-only symbol (`[N, 4]` where the arguments gave `N`
    different extents) is re-derived from its operands; if that cannot resolve it, the program is
    rejected naming the dimension (docs/specification.md, "Dynamic dimensions and types").
    """
    if not targets:
        return fn
    unresolved = callee_only_symbols(fn, targets, target_vars)
    typer = _Typer(targets, unresolved, None if unresolved else copies)  # a copy's symbols are the template's
    statements = list(walk_stmts(fn.body))
    _learn_all(typer, statements)
    if unresolved:
        _reject_unresolved(fn, typer, unresolved)
    # The targets typed now: learnt, or met with a declared type (else unknown: not declared).
    typed = typer.known.keys() | typer.typed
    declared = {
        stmt.var.id
        for stmt in (statements if typed else ())  # none, the untyped helpers' case, without the scan
        if isinstance(stmt, AssignStmt)
        and isinstance(stmt.var, Var)  # a planted binding policy may assign to another expression
        and not stmt.annotated
        and stmt.var.id in typed
        and not typer.still_its_sources(stmt.var, stmt.value)  # learnt from it: its own type (saves typing it again)
        and _declared_otherwise(typer, stmt)
    }
    if not typer.known and not declared:
        return fn
    retyped: Function = _Retype(typer.known, declared).visit(fn)
    return retyped


def _learn_all(typer: _Typer, statements: list[Stmt]) -> None:
    """Visit `statements` in order until a pass learns nothing (the fixpoint). An assignment that
    learnt is not visited again: its one target is known, so `learn` would return at once."""
    pending = statements
    while True:
        learnt = [typer.visit(stmt) for stmt in pending]
        if not any(learnt):
            return
        pending = [stmt for stmt, done in zip(pending, learnt, strict=True) if not done or type(stmt) is not AssignStmt]


def _declared_otherwise(typer: _Typer, stmt: AssignStmt) -> bool:
    """Whether a target keeps a type its value does not have: a receiver typed by the helper's
    declared return type, a fresh local by the formal's, where the value's own type differs. Such
    an assignment prints its annotation, or the text would read back with the value's type."""
    declared = typer.of_var(stmt.var)
    if isinstance(declared, UnknownType) or _launch(stmt.value):
        return False
    own = typer.of(stmt.value)
    return not isinstance(own, UnknownType) and own != declared


def _launch(value: Expr) -> bool:
    """A submit or a call of a program function: its type is the callee's results, which
    `type_of` does not see outside the program, so the Var's own type is the one to keep."""
    return isinstance(value, Submit) or (isinstance(value, Call) and value.function)


def _reject_unresolved(fn: Function, typer: _Typer, unresolved: set[int]) -> None:
    for node in walk(fn.body):
        if isinstance(node, AssignStmt) and node.var.id in typer.targets and node.var.id not in typer.known:
            names = sorted({v.name for e in type_exprs(node.var.type) for v in walk(e) if isinstance(v, Var) and v.id in unresolved})
            if names:
                where = f"{node.span}: " if node.span is not None else ""
                raise InlineError(
                    f"{where}the local '{node.var.name}' spliced into '{fn.name}' has dimension "
                    f"{', '.join(repr(n) for n in names)}, which the call's arguments bind to different "
                    "extents and its operands do not determine; give the helper's parameters distinct "
                    "symbols for the extents that differ"
                )
