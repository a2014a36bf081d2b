"""The error type the parser raises, and how it shows the user where the problem is.

A parse error is read by a person looking at their own source, so it carries the location, the
offending line with a caret under the column and, where there is an obvious rewrite, a hint. Every
bad input becomes a `ParserError`: callers can catch one type and never see a Python traceback.
A failure that is not about the input (a bug in the parser) is an `InternalParserError` instead:
located like a parse error so it can be reported, but never taken for the user's mistake.
Its subclasses are PyPTO's, so a test that expects `ParserSyntaxError` or
`UnsupportedFeatureError` reads the same against nanopto.
"""

from __future__ import annotations

import re
from typing import Any


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
        source: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self._source = source
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.hint = hint
        self.source_line = source_line

    @property
    def source_lines(self) -> list[str] | None:
        """The lines of the source, indexed by `line - 1` (PyPTO's name); when the parser had
        only part of the file, just the line it quotes; None when it has no source."""
        if self._source is not None:
            return [line.rstrip("\n") for line in self._source]
        return None if self.source_line is None else [self.source_line.rstrip("\n")]

    @property
    def span(self) -> dict[str, Any]:
        """The location under PyPTO's keys; `column` and `begin_column` are 1-based there, so
        they are `col + 1` (docs/coming-from-pypto.md#what-differs-and-why)."""
        return {
            "filename": self.file,
            "file": self.file,
            "line": self.line,
            "column": self.col + 1,
            "begin_line": self.line,
            "begin_column": self.col + 1,
        }

    def __str__(self) -> str:
        message = self.message if len(self.message) <= _MESSAGE_LIMIT else self.message[:_MESSAGE_LIMIT] + " [...]"
        parts = [f"{self.file}:{self.line}:{self.col}: {message}"]
        if self.source_line is not None:
            text, caret = quoted_window(self.source_line.rstrip("\n").expandtabs(1), self.col)
            parts.append(f"    {text}")
            parts.append("    " + " " * caret + "^")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


_MESSAGE_LIMIT = 2000
_WINDOW = 160
"""Characters of an offending line quoted around the column: a one-line 50 MB file must not be
written to the terminal whole."""


def quoted_window(text: str, col: int) -> tuple[str, int]:
    """At most `_WINDOW` characters of `text` around `col`, marked `...` where cut, and where the
    caret goes in what is returned."""
    col = max(0, min(col, len(text)))
    if len(text) <= _WINDOW:
        return text, col
    start = max(0, min(col - _WINDOW // 2, len(text) - _WINDOW))
    window = text[start : start + _WINDOW]
    head = "..." if start > 0 else ""
    tail = "..." if start + _WINDOW < len(text) else ""
    return head + window + tail, len(head) + col - start


class ParserSyntaxError(ParserError):
    """A statement or call in a shape the `pl` grammar does not have (the default kind)."""


class PythonSyntaxError(ParserSyntaxError, SyntaxError):
    """Source that is not Python at all, which Python's own parser rejects. Also a `SyntaxError`,
    as PyPTO's parser raises one there, so either `except` catches it."""

    def __init__(self, message: str, **location: Any) -> None:
        super().__init__(message, **location)
        self.msg = message
        self.filename = self.file
        self.lineno = self.line
        self.offset = self.col + 1
        self.text = self.source_line


class ParserTypeError(ParserError):
    """A type annotation that is malformed or names no `pl` type."""


class UndefinedVariableError(ParserError):
    """A name read before anything binds it."""


class UnsupportedFeatureError(ParserError):
    """Python that is valid but outside what `pl` supports (`for ... else`, `*args`, `x += 1`)."""


class SSAViolationError(ParserError):
    """PyPTO's error for a name assigned twice under `strict_ssa=True`. Offered under PyPTO's name
    only: nanopto's parser binds names before SSA (an assignment again rebinds the name), so it
    never raises this (docs/coming-from-pypto.md)."""


class InvalidOperationError(ParserError):
    """An operation that does not exist or is not allowed where it is written: an unknown
    `pl.<op>`, or `break` / `continue` outside a sequential loop."""


class InternalParserError(RuntimeError):
    """A bug in the parser, not in the source: an exception the parser did not mean to raise,
    with the location it was parsing (`file:line:col: internal parser error (KeyError): ...`).
    Not a `ParserError`: the command line reports it as an internal error (exit 3)."""

    def __init__(self, message: str, *, file: str, line: int, col: int) -> None:
        super().__init__(f"{file}:{line}:{col}: {message}")
        self.message = message
        self.file = file
        self.line = line
        self.col = col


class ErrorRenderer:
    """PyPTO's renderer, by name: the message, then its location after a `-->` arrow, the quoted
    line with a caret under the column, and the hint. The location is the one `str(error)` gives
    (0-based column). An exception that is not a `ParserError` renders as `str(error)`. nanopto
    prints no colour."""

    def __init__(self, use_color: bool = False) -> None:
        self.use_color = use_color

    def render(self, error: BaseException) -> str:
        if not isinstance(error, ParserError):
            return str(error)
        rows = [f"error: {error.message}", f"  --> {error.file}:{error.line}:{error.col}"]
        if error.source_line is not None:
            text, caret = quoted_window(error.source_line.rstrip("\n").expandtabs(1), error.col)
            number = str(error.line)
            margin = " " * len(number)
            rows += [f"{margin} |", f"{number} | {text}", f"{margin} | " + " " * caret + "^"]
        if error.hint:
            rows.append(f"hint: {error.hint}")
        return "\n".join(rows)


_CHECK_TAIL = "Check failed:"
_BACKEND_NOISE = ("\n\nC++ Traceback", "\n\nNo stack trace available")
_TRAILING_LOCATION = re.compile(r"\s*\[[^\[\]]*:\d+:-?\d+\]\s*$")
_UNSPECIFIED_CHECK = "a check failed without a message"


def concise_error_message(exc: BaseException, strip_trailing_span: bool = False) -> str:
    """What a user should read of an exception raised by a PyPTO-style backend: its message
    without a C++ traceback block, without the `Check failed: ...` line a failed check appends
    and, with `strip_trailing_span`, without the `[file:line:col]` such a check leaves at the end
    of the message (only when that line was there). A nanopto error has none of these, so its
    message comes back unchanged."""
    message = str(exc)
    for marker in _BACKEND_NOISE:
        message = message.split(marker, 1)[0]
    stripped = message.startswith(_CHECK_TAIL)
    if stripped:
        message = ""
    elif (at := message.rfind("\n" + _CHECK_TAIL)) != -1:
        message, stripped = message[:at], True
    if strip_trailing_span and stripped:
        message = _TRAILING_LOCATION.sub("", message)
    message = message.strip()
    return _UNSPECIFIED_CHECK if stripped and not message else message
