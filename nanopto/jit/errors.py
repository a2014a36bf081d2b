"""The one error type the JIT front end raises for a call it cannot specialize.

A `@pl.jit` error is read by the person who wrote the function, so it has the shape of a parse
error: the user's file, line and column, the offending line with a caret, and a hint. It is a
`ParserError` because it is reported against the source text exactly as one, and so that a caller
catching parse errors catches these too.
"""

from __future__ import annotations

from nanopto.ir_terms.parse_error import ParserError

__all__ = ["JITError"]


class JITError(ParserError):
    """A `@pl.jit` function called with arguments it cannot take, or used in a way it cannot be.

    `function` is the user's name of the function, `parameter` the user's name of the parameter at
    fault (when there is one).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str = "<unknown>",
        line: int = 0,
        col: int = 0,
        hint: str | None = None,
        source_line: str | None = None,
        function: str | None = None,
        parameter: str | None = None,
    ) -> None:
        super().__init__(message, file=file, line=line, col=col, hint=hint, source_line=source_line)
        self.function = function
        self.parameter = parameter
