"""The comment table the parser attaches statements' leading comments from
(docs/coming-from-pypto.md#leading-comments-and-inlinestmt): the quick scan reads exactly the
comments Python's `tokenize` reads, `#` in strings of every kind, strings across lines, line
continuations and sources that do not parse included."""

from __future__ import annotations

import ast

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from nanopto.ir_terms import parse_comments
from nanopto.ir_terms.parse_comments import extract_line_comments
from nanopto.ir_terms.parser import parse_program

TRICKY = {
    "a comment after a string holding #": ('x = "a # b"  # real\n', {1: [(13, "real")]}),
    "single quotes and an escaped quote": ("x = 'it\\'s # not'  # yes\n", {1: [(19, "yes")]}),
    "triple-quoted across lines": ('x = """one # no\ntwo # no\n"""  # three\n', {3: [(5, "three")]}),
    "triple quotes with quotes inside": ("x = '''a '' # b ''' + 'c'  # d\n", {1: [(27, "d")]}),
    "an f-string with # in a format spec": ('x = f"{y:#>4} {\'#\'}"  # z\n', {1: [(22, "z")]}),
    "a raw string ending in an escaped quote": ('x = r"\\" # "  # w\n', {1: [(14, "w")]}),
    "an implicit concatenation with a comment between": ('x = ("a#"  # one\n     "b#")  # two\n', {1: [(11, "one")], 2: [(12, "two")]}),
    "a line continuation": ("x = 1 + \\\n    2  # after\n", {2: [(7, "after")]}),
    "a backslash-newline inside a triple string": ('x = """a\\\n# no"""  # yes\n', {2: [(9, "yes")]}),
    "a one-quote string continued by a backslash": ('x = "a\\\n# no"  # yes\n', {2: [(7, "yes")]}),
    "an empty string before a comment": ("x = ''  # e\ny = \"\"#f\n", {1: [(8, "e")], 2: [(6, "f")]}),
    "comment-only lines at any indentation": ("if x:\n    # in\n  # odd\ny = 1\n#top\n", {2: [(4, "in")], 3: [(2, "odd")], 5: [(0, "top")]}),
    "a comment's text keeps its own # and trailing space goes": ("x = 1  ## two  \t\n", {1: [(7, "# two")]}),
    "a non-ASCII string before the comment": ('x = "é#ü"  # ö\n', {1: [(11, "ö")]}),
    "a carriage return in a comment line": ("# a\rb\nx = 1  # c\rd\n", {1: [(0, "a\rb")], 2: [(7, "c")]}),
    "no newline at the end": ("x = 1  # last", {1: [(7, "last")]}),
    "an unterminated one-quote string (does not parse)": ("x = 'abc  # seen\n", {1: [(10, "seen")]}),
    "an unterminated triple string (does not parse)": ("# before\nx = '''abc  # not\n", {1: [(0, "before")]}),
    "an unterminated triple string that looks closed (does not parse)": ("x = '''abc'  # in it\n", {}),
}


TOKENIZED = {
    "a one-quote string continued by a backslash",
    "a carriage return in a comment line",
    "an unterminated one-quote string (does not parse)",
    "an unterminated triple string (does not parse)",
    "an unterminated triple string that looks closed (does not parse)",
}
"""The sources the scan leaves to `tokenize`; it reads every other one alone, which is its speed."""


def _no_tokenize(source: str) -> parse_comments.LineComments:
    raise AssertionError("the scan fell back to tokenize")


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_sources_read_as_tokenize_reads_them(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source, expected = TRICKY[name]
    assert parse_comments._tokenized_comments(source) == expected
    if name not in TOKENIZED:
        monkeypatch.setattr(parse_comments, "_tokenized_comments", _no_tokenize)
    assert extract_line_comments(source) == expected


def test_where_tokenize_gives_up_the_scan_reads_on() -> None:
    """A dedent to no enclosing level stops `tokenize` (it keeps the comments before it); the scan
    finds the later ones too. Python's parser rejects such a source, so no statement is converted
    and no comment attached past that line either way."""
    source = "if x:\n    y = 1\n  # a\n  z = 2  # b\n"
    with pytest.raises(SyntaxError):
        ast.parse(source)
    assert parse_comments._tokenized_comments(source) == {3: [(2, "a")]}
    assert extract_line_comments(source) == {3: [(2, "a")], 4: [(9, "b")]}


_PREFIXES = ["", "r", "b", "u", "f", "rb", "Rb", "fr", "F", "BR"]
_QUOTES = ["'", '"', "'''", '"""']


@st.composite
def _string_literal(draw: st.DrawFn) -> str:
    """A string literal of any prefix and quote whose body holds `#`, quotes, escapes, braces and
    (triple-quoted) newlines."""
    prefix, quote = draw(st.sampled_from(_PREFIXES)), draw(st.sampled_from(_QUOTES))
    other = '"' if quote[0] == "'" else "'"
    pieces = ["a", " ", "#", "é", other, "\\" + quote[0], "\\\\", "\\\n"]
    if "f" in prefix.lower():
        pieces += ["{{", "}}", "{x}", "{x!r:#>4}", "{" + other + "#" + other + "}"]
    else:
        pieces += ["{", "}"]
    if len(quote) == 3:
        pieces += ["\n", quote[0] + "a", "\n# x\n"]
    body = "".join(draw(st.lists(st.sampled_from(pieces), max_size=6)))
    return prefix + quote + body + quote


_COMMENT = st.text(st.sampled_from("a #'\"\\\té"), max_size=6).map(lambda text: "#" + text)


@st.composite
def _statement(draw: st.DrawFn) -> str:
    literal, comment = draw(_string_literal()), draw(_COMMENT)
    second = draw(_string_literal())
    forms = [
        f"x = {literal}",
        f"x = {literal}  {comment}",
        f"x = {literal} {second}{comment}",
        f"x = ({literal}  {comment}\n     {second})  {comment}",
        f"x = 1 + \\\n    {literal}  {comment}",
        f"if x:  {comment}\n    {comment}\n    y = {literal}\n  {comment}",
        f"def f():\n    {literal}\n    return {second}  {comment}",
        comment,
    ]
    return draw(st.sampled_from(forms))


@given(st.lists(_statement(), min_size=1, max_size=4), st.booleans())
def test_the_scan_reads_the_comments_tokenize_reads(statements: list[str], final_newline: bool) -> None:
    source = "\n".join(statements) + ("\n" if final_newline else "")
    try:
        ast.parse(source)
    except SyntaxError:
        assume(False)
    assert extract_line_comments(source) == parse_comments._tokenized_comments(source)


def test_a_hash_in_a_string_argument_attaches_no_comment() -> None:
    source = (
        "import nanopto.language as pl\n\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function\n"
        "    def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n"
        '        """Twice x: # is text here."""\n'
        "        # the sum\n"
        '        y = pl.add(x, x)  # twice, "#" kept\n'
        "        return y\n"
    )
    stmt = parse_program(source).get_function("main").body.stmts[0]
    assert list(stmt.leading_comments) == ["Twice x: # is text here.", "the sum", 'twice, "#" kept']
