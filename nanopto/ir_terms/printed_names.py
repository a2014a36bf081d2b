"""The names the printer gives variables: distinct Vars never print as one identifier.

A Var's identity is its `id`; its `name` is a hint. The parser gives every name one Var per
scope, so whatever it (or a pass) builds prints with the names it has. IR built by hand can hold
two distinct Vars with one name where the printed text would read back as one variable, and a
use of a Var the function never binds. Per function (or per statement printed alone):

- names are checked as the parser would read them back: a function-level name (a parameter, an
  assignment, a `with ... as` or a loop's result) is one variable from where it is bound on; a
  loop header's names (`for i, (acc,) in ...`, `for c in pl.spmd(...)`) hold inside that loop
  only. Two distinct Vars with one name that this scoping tells apart (sibling loops that both
  count with `i`) keep the name;
- when a name would be read back as the wrong variable, every Var of that name is renamed but
  the first (parameters, then definitions in statement order, then uses): `acc`, `acc_1`,
  `acc_2`, ..., skipping a name another variable of the function has (an auto-name takes the
  suffix on its base: `t_1__inline_arg_v0`);
- a use in a function that no parameter or definition binds (malformed IR, a variable leaked
  from elsewhere) prints with the suffix `__FREE_VAR`, so the text is visibly not a program;
- a program's symbolic dimensions (free scalar index Vars, printed `N = pl.dynamic("N")`) are
  program-wide: never renamed nor marked.

Renaming rebuilds the printed tree with renamed Vars (same ids), so the printer itself only ever
prints `var.name`; a tree that needs no renaming (all that nanopto builds) is printed as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from nanopto.ir_terms import spmd_forms
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.names import AutoName, join_name_suffix, parse_auto_name
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Expr,
    ForStmt,
    IfStmt,
    IterArg,
    Node,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.schema import Mutator, children_of, type_exprs, walk_stmts
from nanopto.ir_terms.types import ScalarType

__all__ = ["FREE_VAR_MARKER", "definitions", "is_dimension", "printed_names", "renamed"]

FREE_VAR_MARKER = "__FREE_VAR"
"""The suffix of a variable a function uses but never binds."""


def definitions(body: Stmt) -> list[Var]:
    """The Vars the statements of `body` bind, in statement order (a Var bound twice twice):
    assignment targets, loop variables, iter args, results of loops and ifs, scope variables.
    A statement walk: expressions bind nothing."""
    out: list[Var] = []
    for stmt in walk_stmts(body):
        if isinstance(stmt, AssignStmt):
            out.append(stmt.var)
        elif isinstance(stmt, ForStmt):
            out += (stmt.loop_var, *stmt.iter_args, *stmt.return_vars)
        elif isinstance(stmt, WhileStmt):
            out += (*stmt.iter_args, *stmt.return_vars)
        elif isinstance(stmt, IfStmt):
            out += stmt.return_vars
        elif isinstance(stmt, ScopeStmt) and stmt.var is not None:
            out.append(stmt.var)
    return out


def is_dimension(var: Var) -> bool:
    """Whether `var`, if a function does not bind it, is a program's symbolic dimension (a scalar
    index, printed `N = pl.dynamic("N")`) rather than a free use."""
    return isinstance(var.type, ScalarType) and var.type.dtype is DataType.INDEX


def printed_names(
    occurrences: Sequence[Var], params: Sequence[Var], body: Stmt, *, closed: bool
) -> dict[int, str]:
    """The printed name of each Var (by id) that does not print as its own name.

    `occurrences` is every Var occurrence below the root in walk order (the printer's
    `_var_occurrences`); `closed` says the root is a function, whose every free use is marked
    and whose free scalar index Vars are the program's symbolic dimensions."""
    distinct: dict[int, Var] = {v.id: v for v in occurrences}
    first_by_name: dict[str, int] = {}
    shared: set[str] = set()
    for var in distinct.values():
        if first_by_name.setdefault(var.name, var.id) != var.id:
            shared.add(var.name)
    defs = definitions(body) if closed or shared else []
    if closed:
        bound = {v.id for v in params}
        bound.update(v.id for v in defs)
        dims = {i for i, v in distinct.items() if i not in bound and is_dimension(v)}
        free = [v for i, v in distinct.items() if i not in bound and i not in dims]
    else:
        dims, free = set(), []
    if not shared and not free:
        return {}  # the common case: every name is one Var
    renames: dict[int, str] = {}
    if shared:
        dim_names = {distinct[i].name for i in dims}
        conflated = _conflated(params, body, shared, dims, closed)
        if conflated:
            order: dict[int, Var] = {v.id: v for v in (*params, *defs)}
            order.update(distinct)
            renames = _suffixed(order.values(), conflated, dims, dim_names, set(first_by_name))
    for var in free:
        renames[var.id] = renames.get(var.id, var.name) + FREE_VAR_MARKER
    return renames


def _suffixed(
    order: Iterable[Var], conflated: set[str], dims: set[int], dim_names: set[str], taken: set[str]
) -> dict[int, str]:
    """`name_1`, `name_2`, ... for every Var of a conflated name but its first holder (a
    dimension holds its name always)."""
    renames: dict[int, str] = {}
    kept: set[str] = set(dim_names)
    next_suffix: dict[str, int] = {}
    for var in order:
        name = var.name
        if name not in conflated or var.id in dims:
            continue
        if name not in kept:
            kept.add(name)
            continue
        k = next_suffix.get(name, 1)
        while _with_suffix(name, k) in taken:
            k += 1
        next_suffix[name] = k + 1
        renames[var.id] = _with_suffix(name, k)
        taken.add(renames[var.id])
    return renames


def _with_suffix(name: str, k: int) -> str:
    """`name_k`; an auto-name takes the suffix on its base (`t_1__inline_arg_v0`), so the name
    keeps its grammar (docs/specification.md, "Alpha-renaming") and the parser reads it back."""
    auto = parse_auto_name(name)
    if auto is None:
        return join_name_suffix(name, str(k))
    return str(AutoName(join_name_suffix(auto.base, str(k)), auto.qualifiers, auto.role, auto.version))


_Todo = Callable[[], None]


def _conflated(params: Sequence[Var], body: Stmt, names: set[str], dims: set[int], closed: bool) -> set[str]:
    """Which of `names` (each held by several Vars) the parser would read back as the wrong
    Var: it binds as `nanopto.ir_terms.parser` does, and a use or a rebinding that meets another
    Var of its name is a conflation. A use nothing binds is one too in a function (that Var is
    free, and takes a suffix as well as the mark); in a statement printed alone, its first use
    binds it, as the missing context would."""
    scope: dict[str, int] = {}
    outer: dict[str, int] = {}  # the module's dimensions; a statement's context
    header: set[int] = set()
    bad: set[str] = set()

    def lookup(name: str) -> int | None:
        found = scope.get(name)
        return outer.get(name) if found is None else found

    def use(var: Var) -> None:
        name = var.name
        if name not in names:
            return
        found = lookup(name)
        if found is None:
            if var.id in dims or not closed:
                outer[name] = var.id
            else:
                bad.add(name)
        elif found != var.id:
            bad.add(name)

    def bind(var: Var) -> None:
        """An assignment: the name's Var if it has one, else a new binding."""
        if var.name not in names:
            return
        found = lookup(var.name)
        if found is None:
            scope[var.name] = var.id
        elif found != var.id:
            bad.add(var.name)

    def bind_results(results: Sequence[Var]) -> None:
        """A loop's or if's results: a name bound outside any loop header is reused, else bound
        anew (shadowing a header name until that loop ends, as the parser does)."""
        for var in results:
            if var.name not in names:
                continue
            found = lookup(var.name)
            if found is None or found in header:
                scope[var.name] = var.id
            elif found != var.id:
                bad.add(var.name)

    def enter(vars_: Sequence[Var]) -> _Todo:
        """Bind a loop header's names for its body; the returned step restores the outer ones."""
        saved: dict[str, int | None] = {}
        for var in vars_:
            if var.name not in names:
                continue
            if var.name in saved:  # bound twice in one header
                bad.add(var.name)
                continue
            saved[var.name] = scope.get(var.name)
            scope[var.name] = var.id
            header.add(var.id)

        def leave() -> None:
            for var in vars_:
                header.discard(var.id)
            for name, previous in saved.items():
                if previous is None:
                    scope.pop(name, None)
                else:
                    scope[name] = previous

        return leave

    def uses(*exprs: Expr | None) -> None:
        for expr in exprs:
            if expr is not None:
                _uses_in(expr, names, use)

    for var in params:
        if var.name in names and scope.setdefault(var.name, var.id) != var.id:
            bad.add(var.name)
    for var in params:
        _uses_in_type(var, names, use)
    stack: list[Stmt | _Todo] = [body]
    while stack:
        item = stack.pop()
        if not isinstance(item, Stmt):
            item()
            continue
        todo: list[Stmt | _Todo] = []
        match item:
            case SeqStmts(stmts=stmts):
                todo = list(stmts)
            case AssignStmt(var=var, value=value):
                uses(value)
                if item.annotated:
                    _uses_in_type(var, names, use)
                bind(var)
            case ForStmt():
                uses(item.start, item.stop, item.step, *(k.value for k in item.attrs))
                uses(*(a.init_value for a in item.iter_args))
                leave = enter([item.loop_var, *item.iter_args])
                todo = [item.body, leave, partial(bind_results, item.return_vars)]
            case WhileStmt():
                uses(*(a.init_value for a in item.iter_args))
                leave = enter(item.iter_args)
                uses(item.cond)
                todo = [item.body, leave, partial(bind_results, item.return_vars)]
            case IfStmt():
                uses(item.cond)
                branches = [b for b in (item.then_body, item.else_body) if b is not None]
                todo = [*branches, partial(bind_results, item.return_vars)]
            case ScopeStmt() if (loop := spmd_forms.for_form(item)) is not None:
                # printed `for i in pl.spmd(...)`: the block-index binding is the loop's header
                uses(*item.args, *(k.value for k in (*item.kwargs, *loop.incore.kwargs)), *item.dumps)
                leave = enter([loop.var])
                todo = [SeqStmts(loop.body), leave]
            case ScopeStmt():
                uses(*item.args, *(k.value for k in item.kwargs), *item.dumps)
                if item.for_form and item.var is not None:
                    leave = enter([item.var])
                    todo = [item.body, leave]
                else:
                    if item.var is not None:
                        bind(item.var)
                    todo = [item.body]
            case _:  # values only (return, yield, an evaluated call), or no variables at all
                for child in children_of(item):
                    if isinstance(child, Stmt):
                        todo.append(child)
                    else:
                        _uses_in(child, names, use)
        stack += reversed(todo)
    return bad


def _uses_in(expr: Node, names: set[str], use: Callable[[Var], None]) -> None:
    """`use` each Var of an expression whose name is in `names` (not the Vars inside a Var's
    type: a use prints its name only)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Var):
            if node.name in names:
                use(node)
            continue
        stack += children_of(node)


def _uses_in_type(var: Var, names: set[str], use: Callable[[Var], None]) -> None:
    """The Vars of a type the text spells out (a parameter's, an annotated assignment's)."""
    for dim in type_exprs(var.type):
        _uses_in(dim, names, use)


class _Renamer(Mutator):
    """The tree with each Var in `names` (by id) renamed, keeping its id."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def visit_Var(self, var: Var) -> Var:
        rebuilt: Var = self.generic_visit(var)
        name = self.names.get(var.id)
        return rebuilt if name is None else dataclasses.replace(rebuilt, name=name, id=var.id)

    def visit_IterArg(self, var: IterArg) -> IterArg:
        return self.visit_Var(var)  # type: ignore[return-value]


def renamed(root: Node, names: dict[int, str]) -> Node:
    """`root` with the Vars in `names` renamed (`root` itself when there are none)."""
    if not names:
        return root
    result: Node = _Renamer(names).visit(root)
    return result
