"""Functions written outside a `@pl.program` class: standalone functions and inline templates.

A module-level `@pl.function` is parsed on its own into a `Function`; a program that calls it by
name gets it as one more of its functions. A module-level `@pl.inline` is an `InlineFunction`: a
template the parser splices at each call site (its body parsed in the caller, with its parameters
bound to the arguments), so no function is left behind. Both are PyPTO's forms.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class InlineFunction:
    """A `@pl.inline` template: its source (dedented), where it came from, and the Python values
    its body may name (module constants, `pl.dynamic` dims). Not callable from Python."""

    name: str
    source: str
    file: str
    line_offset: int
    closure: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    col_offset: int = 0
    """The indentation `source` lost when it was dedented (`parse_program`'s `col_offset`)."""

    def definition(self) -> ast.FunctionDef:
        """The template's `def`, parsed from its source (line numbers relative to `source`)."""
        module = ast.parse(self.source)
        node = next(s for s in module.body if isinstance(s, ast.FunctionDef))
        return node

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"@pl.inline function '{self.name}' is a template the parser splices into a "
            "@pl.program; it cannot be called from Python"
        )
