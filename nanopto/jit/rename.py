"""The JIT's own alpha-rename, as docs/specification.md ("JIT helpers") describes it.

A straight-line rebinding of a parameter, at the depth where the parameter was bound (the top
level of the function body), gets a fresh name, and every later read of the parameter's name reads
the fresh one. A rebinding inside a nested body (`pl.range`, `pl.spmd`, `if`, `while`, a `with`
scope) is left as written: it reaches InlineFunctions as a def-site of the parameter, and the
rebinding table (docs/specification.md, "Rebinding a parameter") is what protects the caller then.
The rename alone is not enough, and the tests show both halves.

Only input parameters are renamed. A `pl.Out` / `pl.InOut` parameter's rebinding may be the very
write the caller sees (an Out scalar's `n = n + 1` is written back to the caller's variable, the
rebinding table's "explicit Out / InOut scalar" row), so a fresh name there would change what the
program computes; such rebindings are left to InlineFunctions like the nested ones.

Fresh names use the IR's reserved auto-name grammar (`a__jit_v1`), so they can never collide with
a name the user wrote; `renamed` maps each back to the user's name for error messages.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["JitRename", "rename_rebound_params"]


@dataclass
class JitRename:
    """What the rename did to one function: fresh name -> the user's name."""

    renamed: dict[str, str] = field(default_factory=dict)


def rename_rebound_params(fn: ast.FunctionDef, params: Iterable[str]) -> JitRename:
    """Rename, in place, `fn`'s top-level rebindings of `params`, its input parameters (see the
    module docstring)."""
    renamer = _Renamer(set(params))
    renamer.block(fn.body, depth=0, shadow=frozenset())
    return JitRename(dict(renamer.renamed))


class _Renamer:
    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.current: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.renamed: dict[str, str] = {}

    def fresh(self, name: str) -> str:
        version = self.versions.get(name, 0) + 1
        self.versions[name] = version
        new = f"{name}__jit_v{version}"
        self.renamed[new] = name
        return new

    # -- reads --------------------------------------------------------------------------------

    def reads(self, node: ast.AST | None, shadow: frozenset[str]) -> None:
        if node is None:
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in shadow:
                sub.id = self.current.get(sub.id, sub.id)

    # -- writes -------------------------------------------------------------------------------

    def store(self, target: ast.expr, depth: int, shadow: frozenset[str]) -> None:
        if isinstance(target, ast.Name):
            if target.id in shadow:
                return
            if depth == 0 and target.id in self.params:
                self.current[target.id] = self.fresh(target.id)
            target.id = self.current.get(target.id, target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.store(element, depth, shadow)
        else:  # `x[i] = v` writes through x: a read of the name, not a rebinding
            self.reads(target, shadow)

    # -- statements ---------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], depth: int, shadow: frozenset[str]) -> None:
        for stmt in stmts:
            self.stmt(stmt, depth, shadow)

    def stmt(self, stmt: ast.stmt, depth: int, shadow: frozenset[str]) -> None:
        match stmt:
            case ast.Assign():
                self.reads(stmt.value, shadow)
                for target in stmt.targets:
                    self.store(target, depth, shadow)
            case ast.AnnAssign():
                self.reads(stmt.value, shadow)
                self.store(stmt.target, depth, shadow)
            case ast.For():
                self.reads(stmt.iter, shadow)
                header = frozenset(n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name))
                self.block(stmt.body, depth + 1, shadow | header)
                self.block(stmt.orelse, depth + 1, shadow)
            case ast.While():
                self.reads(stmt.test, shadow)
                self.block(stmt.body, depth + 1, shadow)
                self.block(stmt.orelse, depth + 1, shadow)
            case ast.If():
                self.reads(stmt.test, shadow)
                self.block(stmt.body, depth + 1, shadow)
                self.block(stmt.orelse, depth + 1, shadow)
            case ast.With():
                for item in stmt.items:
                    self.reads(item.context_expr, shadow)
                    if item.optional_vars is not None:
                        self.store(item.optional_vars, depth + 1, shadow)
                self.block(stmt.body, depth + 1, shadow)
            case _:
                self.reads(stmt, shadow)
