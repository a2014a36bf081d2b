"""A jit function's source as an `ast.FunctionDef` located in the user's file.

The body is never run: like `@pl.program`, `@pl.jit` reads the function's text. The tree keeps the
line and column each node has in the user's file (not in the excerpt `inspect` returns), so that a
parse error, a span in the IR and a JIT argument error all point at the user's own line.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nanopto.jit.errors import JITError

__all__ = ["FunctionSource", "read_source"]


@dataclass(frozen=True)
class FunctionSource:
    """Where a function is written: its syntax tree in file coordinates and the file's text."""

    node: ast.FunctionDef
    file: str
    text: str

    def error(self, node: ast.AST | None, message: str, *, hint: str | None = None, parameter: str | None = None) -> JITError:
        """A `JITError` at `node` of this function (its `def` line when `node` is None)."""
        where = node if node is not None else self.node
        line = getattr(where, "lineno", self.node.lineno)
        col = getattr(where, "col_offset", 0)
        lines = self.text.splitlines()
        text = lines[line - 1] if 1 <= line <= len(lines) else None
        return JITError(
            message,
            file=self.file,
            line=line,
            col=col,
            hint=hint,
            source_line=text,
            function=self.node.name,
            parameter=parameter,
        )

    def param_node(self, name: str) -> ast.arg | None:
        return next((a for a in self.node.args.args if a.arg == name), None)


def read_source(fn: Callable[..., Any], decorator: str) -> FunctionSource:
    """Parse `fn`'s own source text; a function without readable source is a `JITError`."""
    name = getattr(fn, "__name__", "<function>")
    try:
        lines, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        raise JITError(
            f"cannot read the source of {decorator} function {name!r}: {exc}",
            hint="define jit functions in a file (or a block whose source Python keeps), not with exec of a string",
            function=name,
        ) from None
    text = "".join(linecache.getlines(file)) or "".join(lines)
    first = lines[0]
    indent = len(first) - len(first.lstrip())
    plain = f"{decorator} decorates a plain `def` function; {name!r} is not one"
    hint = "write `def f(...):` under the decorator" if name == "<lambda>" else None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:  # `pl.jit(\n    lambda a: a)`: the lines inspect gives are not a statement
        raise JITError(plain, file=file, line=start, function=name, hint=hint) from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or name == "<lambda>":
        raise JITError(plain, file=file, line=start, function=name, hint=hint)
    ast.increment_lineno(node, start - 1)
    if indent:
        for sub in ast.walk(node):
            if isinstance(getattr(sub, "col_offset", None), int):
                sub.col_offset += indent  # type: ignore[attr-defined]
                end = getattr(sub, "end_col_offset", None)
                if isinstance(end, int):
                    sub.end_col_offset = end + indent  # type: ignore[attr-defined]
    return FunctionSource(node, file, text)
