"""Syntax highlighting of `pl` source for HTML, one line at a time, with no dependencies.

`pl` programs are Python text, so Python's own `tokenize` finds the tokens. The result is a list
with one HTML fragment per source line (tokens wrapped in `<span class="tok-KIND">`), because the
before/after page numbers, colours and links individual lines. Text that does not tokenize (a
half-typed notebook cell) is still shown, escaped and uncoloured.
"""

from __future__ import annotations

import io
import keyword
import token
import tokenize
from html import escape

TOKEN_CSS = """
.tok-kw { color: #8e44ad; font-weight: 600; }
.tok-str { color: #2e7d32; }
.tok-num { color: #b35900; }
.tok-com { color: #7f8c8d; font-style: italic; }
.tok-deco { color: #1565c0; }
.tok-def { color: #c0392b; font-weight: 600; }
.tok-pl { color: #00796b; }
.tok-self { color: #7f8c8d; }
"""
"""The colours of each token kind; every page or notebook cell using `highlight_lines` embeds it."""

_CONSTANTS = frozenset({"True", "False", "None"})


def _kind(tok: tokenize.TokenInfo, previous: tokenize.TokenInfo | None, in_decorator: bool) -> str | None:
    if tok.type == token.COMMENT:
        return "com"
    if tok.type == token.STRING:
        return "str"
    if tok.type == token.NUMBER:
        return "num"
    if tok.type == token.OP and tok.string == "@":
        return "deco"
    if tok.type != token.NAME:
        return None
    if in_decorator:
        return "deco"
    if previous is not None and previous.type == token.NAME and previous.string in ("def", "class"):
        return "def"
    if keyword.iskeyword(tok.string) or tok.string in _CONSTANTS:
        return "kw"
    if tok.string == "pl":
        return "pl"
    if tok.string == "self":
        return "self"
    return None


def highlight_lines(source: str) -> list[str]:
    """One HTML fragment per line of `source` (same count as `source.splitlines()`)."""
    lines = source.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [escape(line) for line in lines]
    out: list[list[str]] = [[] for _ in lines]
    cursor = [0] * len(lines)  # next unwritten column of each line

    def emit(row: int, end_col: int, css: str | None) -> None:
        text = lines[row][cursor[row] : end_col]
        if text:
            out[row].append(f'<span class="tok-{css}">{escape(text)}</span>' if css else escape(text))
        cursor[row] = max(cursor[row], end_col)

    previous: tokenize.TokenInfo | None = None
    in_decorator = False
    for tok in tokens:
        if tok.type in (token.NEWLINE, token.NL, token.ENDMARKER, token.INDENT, token.DEDENT):
            in_decorator = False if tok.type in (token.NEWLINE, token.NL) else in_decorator
            continue
        css = _kind(tok, previous, in_decorator)
        if tok.type == token.OP and tok.string == "@":
            in_decorator = True
        elif tok.type == token.OP and tok.string == "(":
            in_decorator = False  # `@pl.function(type=...)`: only the name is the decorator
        (srow, scol), (erow, ecol) = tok.start, tok.end
        for row in range(srow - 1, min(erow, len(lines))):
            start = scol if row == srow - 1 else 0
            end = ecol if row == erow - 1 else len(lines[row])
            emit(row, start, None)  # whitespace before the token
            emit(row, end, css)
        previous = tok
    for row, line in enumerate(lines):
        emit(row, len(line), None)
    return ["".join(parts) for parts in out]


def highlighted_block(source: str) -> str:
    """A `<pre>` of highlighted source, with its token colours (for notebooks)."""
    body = "\n".join(highlight_lines(source))
    # A host page's CSS may set `white-space` on `pre`, `code` or `span` (JupyterLab does): the
    # indentation is the program's structure, so it is kept whatever the host says.
    keep = "pre.nanopto-code, pre.nanopto-code span { white-space: pre !important; }"
    return f'<style>{TOKEN_CSS}{keep}</style><pre class="nanopto-code">{body}</pre>'
