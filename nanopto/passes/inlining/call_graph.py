"""The Inline -> Inline call graph: cycle detection and callee-first stages.

docs/specification.md, "Call graph and cycles": collect the Inline functions, reject a cycle before any splicing
(naming it, `a -> b -> a`), and visit callees before callers. Stages group helpers by depth so that
each stage's callees are already fully expanded.
"""

from __future__ import annotations

from collections.abc import Iterator

from nanopto.ir_terms.nodes import Call, Function, FunctionType, Node, Program
from nanopto.ir_terms.schema import nodes_of


class InlineCycleError(ValueError):
    """Recursive Inline functions (self or mutual) cannot be spliced."""


def inline_functions_of(program: Program) -> dict[str, Function]:
    return {f.name: f for f in program.function_list if f.func_type is FunctionType.Inline}


def calls_in(node: Node) -> Iterator[Call]:
    """Every call of a program function below `node`, in pre-order."""
    for sub in nodes_of(node):
        if isinstance(sub, Call) and sub.function:
            yield sub


def inline_callees(fn: Function, inline: dict[str, Function]) -> list[str]:
    """The Inline functions `fn` calls, in first-call order, each once."""
    seen: dict[str, None] = {}
    for call in calls_in(fn.body):
        if call.op in inline:
            seen.setdefault(call.op, None)
    return list(seen)


def check_acyclic(inline: dict[str, Function]) -> None:
    """Raise `InlineCycleError` naming the first cycle found, e.g. `a -> b -> a`."""
    edges = {name: inline_callees(fn, inline) for name, fn in inline.items()}
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for root in inline:
        if state.get(root):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(edges[root]))]
        path = [root]
        state[root] = 1
        while stack:
            name, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[name] = 2
                continue
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                first = next(call for call in calls_in(inline[cycle[0]].body) if call.op == cycle[1])
                where = f"{first.span}: " if first.span is not None else ""
                raise InlineCycleError(
                    f"{where}Cycle detected among Inline functions: {' -> '.join(cycle)} "
                    f"(this line: '{cycle[0]}' calls '{cycle[1]}'). "
                    "Recursive Inline functions cannot be spliced; make one of them an ordinary function."
                )
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(edges[nxt])))


def depth_of(inline: dict[str, Function]) -> dict[str, int]:
    """0 for a helper that calls no Inline function, else 1 + the deepest callee (acyclic input)."""
    depth: dict[str, int] = {}
    for name in inline:
        _depth(name, inline, depth)
    return depth


def _depth(name: str, inline: dict[str, Function], depth: dict[str, int]) -> int:
    """`name`'s depth, filling in its callees' (a module-level function: a nested one that calls
    itself is a reference cycle, nanopto/gc_pause.py)."""
    if name not in depth:
        callees = inline_callees(inline[name], inline)
        depth[name] = 1 + max((_depth(c, inline, depth) for c in callees), default=-1)
    return depth[name]
