"""PyPTO's traversal classes, `IRVisitor` and `IRMutator`, over nanopto's nodes.

A subclass overrides `visit_<snake_case_class>` (`visit_call`, `visit_assign_stmt`,
`visit_program`); a scope statement is visited as its PyPTO kind first
(`visit_split_aiv_scope_stmt`, `visit_spmd_scope_stmt`, ...), then as `visit_scope_stmt`. Every
`visit_*` method the subclass does not define is the default: visit the children (the visitor)
or rebuild the node from its visited children (the mutator), so `super().visit_call(op)` works
in an override. nanopto's own passes use `nanopto.ir_terms.schema.Mutator`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from nanopto.ir_terms.nodes import Node, ScopeKind, ScopeStmt
from nanopto.ir_terms.schema import children_of, map_children

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NAMES: dict[type, tuple[str, ...]] = {}
_SCOPE_NAMES: dict[ScopeKind, str] = {
    ScopeKind.InCore: "visit_in_core_scope_stmt",
    ScopeKind.Hierarchy: "visit_hierarchy_scope_stmt",
    ScopeKind.Cluster: "visit_cluster_scope_stmt",
    ScopeKind.Graph: "visit_graph_scope_stmt",
    ScopeKind.Spmd: "visit_spmd_scope_stmt",
    ScopeKind.SplitAiv: "visit_split_aiv_scope_stmt",
    ScopeKind.Runtime: "visit_runtime_scope_stmt",
}


def _visit_name(cls: type) -> str:
    """`visit_<snake_case class name>`: `AssignStmt` -> `visit_assign_stmt`."""
    return f"visit_{_SNAKE.sub('_', cls.__name__).lower()}"


def _method_names(node: Node) -> tuple[str, ...]:
    if isinstance(node, ScopeStmt):
        return (_SCOPE_NAMES[node.kind], "visit_scope_stmt")
    names = _NAMES.get(type(node))
    if names is None:
        names = tuple(_visit_name(c) for c in type(node).__mro__ if c is not object)
        _NAMES[type(node)] = names
    return names


class _Dispatch:
    def visit(self, node: Any) -> Any:
        """Visit `node` with the most specific `visit_*` method a subclass defines."""
        base = _BASES[isinstance(self, IRMutator)]
        for name in _method_names(node):
            method = getattr(type(self), name, None)
            if method is not None and method is not getattr(base, name, None):
                return getattr(self, name)(node)
        return self.generic_visit(node)

    def generic_visit(self, node: Any) -> Any:
        raise NotImplementedError

    def __getattr__(self, name: str) -> Callable[[Any], Any]:
        if name.startswith("visit_"):
            return self.generic_visit
        raise AttributeError(name)


def _defaults(cls: type[_Dispatch]) -> type[_Dispatch]:
    """Give `cls` a `visit_<name>` for every node class and scope kind, each the default, so an
    override can call `super().visit_<name>(node)`."""
    import nanopto.ir_terms.nodes as n

    names = set(_SCOPE_NAMES.values())
    for value in vars(n).values():
        if isinstance(value, type) and issubclass(value, Node):
            names.add(_visit_name(value))
    for name in names:
        if name not in vars(cls):
            setattr(cls, name, cls.generic_visit)
    return cls


class IRVisitor(_Dispatch):
    """A read-only traversal: every node's children are visited, pre-order."""

    def generic_visit(self, node: Any) -> None:
        for child in children_of(node):
            self.visit(child)

    def visit_program(self, program: Any) -> None:
        self.generic_visit(program)


class IRMutator(_Dispatch):
    """A rewriting traversal: every node is rebuilt from its visited children (the same object
    when none changed)."""

    def generic_visit(self, node: Any) -> Any:
        return map_children(node, self.visit)

    def visit_program(self, program: Any) -> Any:
        return self.generic_visit(program)


_defaults(IRVisitor)
_defaults(IRMutator)
_BASES = {False: IRVisitor, True: IRMutator}
