"""The names the printer gives variables: distinct Vars never print as one identifier.

A Var's identity is its `id`; its `name` is a hint, and distinct Vars may share one: the parser
gives each loop header its own Vars (two sibling loops that count with `i`, the carried `acc` of
`for i, (acc,) in pl.range(n, init_values=(acc,))` beside the `acc` it starts from), and IR built
by hand or by a pass can hold any. Per function (or per statement printed alone), as PyPTO's
printer does (docs/01-splice-and-renaming.md#names-are-for-people-variables-are-identities):

- every Var of a name that several distinct Vars hold is renamed but the first (parameters, then
  definitions in statement order, then uses): `acc`, `acc_1`, `acc_2`, ..., skipping a name
  another variable of the function has (an auto-name takes the suffix on its base:
  `t_1__inline_arg_v0`), so no two Vars print alike and the text reads back as the same program
  whatever scoping it is read with;
- a use in a function that no parameter or definition binds (malformed IR, a variable leaked
  from elsewhere) prints with the suffix `__FREE_VAR`, so the text is visibly not a program;
- a program's symbolic dimensions (free scalar index Vars, printed `N = pl.dynamic("N")`) are
  program-wide: never renamed nor marked.

Renaming rebuilds the printed tree with renamed Vars (same ids), so the printer itself only ever
prints `var.name`; a tree whose names are all distinct is printed as it is.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from collections.abc import Iterable, Sequence

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.names import AutoName, join_name_suffix, parse_auto_name
from nanopto.ir_terms.nodes import (
    AssignStmt,
    ForStmt,
    IfStmt,
    IterArg,
    Node,
    ScopeStmt,
    Stmt,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.schema import Mutator, walk_stmts
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
    occurrences: Sequence[Var],
    params: Sequence[Var],
    body: Stmt,
    *,
    closed: bool,
    defs: Sequence[Var] | None = None,
    dimensions: list[Var] | None = None,
) -> dict[int, str]:
    """The printed name of each Var (by id) that does not print as its own name.

    `occurrences` is every Var occurrence below the root in walk order (the printer's
    `_var_occurrences`); `closed` says the root is a function, whose every free use is marked
    and whose free scalar index Vars are the program's symbolic dimensions: given `dimensions`,
    those are appended to it in the order they first occur (the program's `pl.dynamic` lines
    list them). `defs` is `definitions(body)`, when the caller has it already."""
    distinct: dict[int, Var] = {v.id: v for v in occurrences}
    names = list(map(_name, distinct.values()))
    shared = _repeated(names)
    if defs is None:
        defs = definitions(body) if closed or shared else []
    if closed:  # set operations: a large function has tens of thousands of Vars
        bound = set(map(_id, params))
        bound.update(map(_id, defs))
        unbound = distinct.keys() - bound
        dims = {i for i in unbound if is_dimension(distinct[i])}
        free = [distinct[i] for i in unbound - dims]
        if dims and dimensions is not None:
            dimensions += (var for i, var in distinct.items() if i in dims)
    else:
        dims, free = set(), []
    if not shared and not free:
        return {}  # the common case: every name is one Var
    renames: dict[int, str] = {}
    if shared:
        order: dict[int, Var] = {v.id: v for v in (*params, *defs)}
        order.update(distinct)
        renames = _suffixed(order.values(), shared, dims, {distinct[i].name for i in dims}, set(names))
    for var in free:
        renames[var.id] = renames.get(var.id, var.name) + FREE_VAR_MARKER
    return renames


_id = operator.attrgetter("id")
_name = operator.attrgetter("name")


def _repeated(names: list[str]) -> set[str]:
    """The names that occur more than once in `names`."""
    if len(set(names)) == len(names):
        return set()  # the common case, answered without counting
    return {name for name, count in Counter(names).items() if count > 1}


def _suffixed(
    order: Iterable[Var], shared: set[str], dims: set[int], dim_names: set[str], taken: set[str]
) -> dict[int, str]:
    """`name_1`, `name_2`, ... for every Var of a shared name but its first holder (a
    dimension holds its name always)."""
    renames: dict[int, str] = {}
    kept: set[str] = set(dim_names)
    next_suffix: dict[str, int] = {}
    for var in order:
        name = var.name
        if name not in shared or var.id in dims:
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
