"""The `#` comments of a `pl` source, which the parser attaches to the statements they precede
(docs/coming-from-pypto.md#leading-comments-and-inlinestmt).

Python's `tokenize` tells a comment from a `#` inside a string, but it reads every token of the
source, which made parsing a 10,000-line program with one comment 60% slower than the same
program without it. In Python source a `#` or a quote outside a string and a comment always
starts one, so one regular-expression scan over the quotes and `#`s finds the same comments; a
source where the scan could read a string differently from `tokenize` (a carriage return, a
one-quote string continued by a backslash, a string left open, an f-string where quotes may
nest) is tokenized instead. So the result is `tokenize`'s for every source Python parses, and for
one it does not parse too, except past a line where `tokenize` gives up (a dedent to no enclosing
level), where the scan reads on; the parser never attaches a comment past a line that does not parse.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize

LineComments = dict[int, list[tuple[int, str]]]
"""Comments by line (1-based): (column, text after the `#` and one space), in source order."""

_SCAN = re.compile(
    r"""
      (?P<comment>\#[^\n]*)
    | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''
    | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
    | '(?!'')[^\n'\\]*(?:\\[^\n][^\n'\\]*)*'
    | "(?!"")[^\n"\\]*(?:\\[^\n][^\n"\\]*)*"
    | (?P<odd>['"])
    """,
    re.VERBOSE | re.DOTALL,
)
"""From a `#` or a quote on: a comment, a whole string, or (`odd`) a quote that starts neither a
one-line string nor a closed triple-quoted one, which `tokenize` alone reads exactly."""

_NESTED_FSTRINGS = sys.version_info >= (3, 12)
"""From Python 3.12 an f-string's braces may hold strings in its own quotes (PEP 701)."""


def extract_line_comments(source: str) -> LineComments:
    """Every `#` comment of `source` by line: (column, text after the `#` and one space), in
    source order (PyPTO's name). Best effort: a source `tokenize` cannot finish keeps the comments
    read so far."""
    if "#" not in source:
        return {}
    if "\r" in source:  # `tokenize` ends a comment at a carriage return, but not a whole-line one
        return _tokenized_comments(source)
    comments: LineComments = {}
    line, line_start, counted = 1, 0, 0
    for match in _SCAN.finditer(source):
        start = match.start()
        if match.lastgroup == "odd" or (_NESTED_FSTRINGS and "f" in source[max(0, start - 2) : start].lower()):
            return _tokenized_comments(source)
        if match.lastgroup != "comment":
            continue
        newlines = source.count("\n", counted, start)
        if newlines:
            line += newlines
            line_start = source.rindex("\n", counted, start) + 1
        counted = start
        comments.setdefault(line, []).append((start - line_start, _comment_text(match.group())))
    return comments


def _tokenized_comments(source: str) -> LineComments:
    """The comments `tokenize` reads (the reference the scan above agrees with)."""
    comments: LineComments = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                comments.setdefault(tok.start[0], []).append((tok.start[1], _comment_text(tok.string)))
    except (tokenize.TokenError, SyntaxError):
        pass  # `ast.parse` accepted the source; a comment table is best effort
    return comments


def _comment_text(comment: str) -> str:
    text = comment[1:]
    return (text[1:] if text[:1] == " " else text).rstrip()
