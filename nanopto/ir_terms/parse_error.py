"""The error type the parser raises, and how it shows the user where the problem is.

A parse error is read by a person looking at their own source, so it carries the location, the
offending line with a caret under the column and, where there is an obvious rewrite, a hint. Every
bad input becomes a `ParserError`: callers can catch one type and never see a Python traceback.
Its subclasses are PyPTO's, so a test that expects `ParserSyntaxError` or
`UnsupportedFeatureError` reads the same against nanopto.
"""

from __future__ import annotations


class ParserError(ValueError):
    """A `pl` source the parser rejects; `line` is 1-based, `col` 0-based (as Python's `ast`)."""

    def __init__(
        self,
        message: str,
        *,
        file: str = "<string>",
        line: int = 0,
        col: int = 0,
        hint: str | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.hint = hint
        self.source_line = source_line

    def __str__(self) -> str:
        parts = [f"{self.file}:{self.line}:{self.col}: {self.message}"]
        if self.source_line is not None:
            text = self.source_line.rstrip("\n").expandtabs(1)
            parts.append(f"    {text}")
            parts.append("    " + " " * max(0, min(self.col, len(text))) + "^")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class ParserSyntaxError(ParserError):
    """A statement or call in a shape the `pl` grammar does not have (the default kind)."""


class ParserTypeError(ParserError):
    """A type annotation that is malformed or names no `pl` type."""


class UndefinedVariableError(ParserError):
    """A name read before anything binds it."""


class UnsupportedFeatureError(ParserError):
    """Python that is valid but outside what `pl` supports (`for ... else`, `*args`, `x += 1`)."""
