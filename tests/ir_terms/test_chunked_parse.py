"""A large source is parsed a method at a time (`parser.CHUNKED_FROM`): Python's parser holds the
whole syntax tree plus its own copy while building it, 210 bytes per byte of source. The result,
the spans and every error must be those of parsing the module whole."""

from __future__ import annotations

import random

import pytest

from nanopto.ir_terms import parser
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk
from nanopto.tools import fuzz


def _outcome(source: str, chunked_from: int, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, list[object]]:
    monkeypatch.setattr(parser, "CHUNKED_FROM", chunked_from)
    try:
        program = parse_program(source, "c.py")
    except ParserError as err:
        return "error", str(err), []
    return "ok", python_print(program), [getattr(node, "span", None) for node in walk(program)]


def _inputs() -> list[str]:
    rng = random.Random(11)
    drawn = [fuzz.draw(rng, fuzz.GENERATORS)[1] for _ in range(300)]
    return [*fuzz.corpus(), *drawn]


CUT_IN_A_STRING = '''import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        """A docstring with a line at the class body's indentation:
    @pl.function
    def not_a_method(self):
"""
        return k
'''

LATER_SYNTAX_ERROR = '''import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return self.undefined(k)

    @pl.function
    def later(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return k +
'''


@pytest.mark.parametrize("source", [CUT_IN_A_STRING, LATER_SYNTAX_ERROR], ids=["cut-in-a-string", "later-syntax-error"])
def test_a_wrong_cut_or_a_later_syntax_error_reads_as_the_whole_parse(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _outcome(source, 0, monkeypatch) == _outcome(source, 10**12, monkeypatch)


def test_a_later_syntax_error_is_reported_before_an_earlier_methods_mistake(monkeypatch: pytest.MonkeyPatch) -> None:
    kind, message, _ = _outcome(LATER_SYNTAX_ERROR, 0, monkeypatch)
    assert kind == "error" and "c.py:11:" in message and "syntax error" in message


def test_chunked_and_whole_parses_agree_on_programs_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each input parsed a method at a time, with long bodies in pieces of the default size and
    with every body of more than 6 lines cut every 3 (`BODY_PIECE_LINES`: inside brackets, strings
    and blocks the cut is refused, or its piece does not parse and the module is parsed whole),
    against the same input parsed whole (once: the piece size plays no part in it)."""
    cut: list[int] = []
    piece = parser._ProgramParser._parse_piece

    def counted(self: parser._ProgramParser, start: int, stop: int) -> object:
        cut.append(start)
        return piece(self, start, stop)

    monkeypatch.setattr(parser._ProgramParser, "_parse_piece", counted)
    default_piece_lines, cut_every_3 = parser.BODY_PIECE_LINES, 0
    for source in _inputs():
        whole = _outcome(source, 10**12, monkeypatch)
        monkeypatch.setattr(parser, "BODY_PIECE_LINES", default_piece_lines)
        assert _outcome(source, 0, monkeypatch) == whole, source[:500]
        monkeypatch.setattr(parser, "BODY_PIECE_LINES", 3)
        before = len(cut)
        assert _outcome(source, 0, monkeypatch) == whole, source[:500]
        cut_every_3 += len(cut) - before
    assert cut_every_3 > 50  # the pieces were parsed one at a time
