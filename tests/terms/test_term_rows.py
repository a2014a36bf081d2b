"""Terms loaded as rows (`nanopto.terms.term_rows`) come back exactly as they went in."""

from __future__ import annotations

import tempfile
from pathlib import Path

import egglog.bindings as eb
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from nanopto.cli import main
from nanopto.egraph import extract_roots
from nanopto.egraph.engine import ExtractedRoot, extract_all_roots
from nanopto.ir_terms.parser import parse_program
from nanopto.terms import term_rows
from nanopto.terms.encoding import Constructor, Encoder, ir_declarations, ir_load_declarations
from nanopto.terms.term_rows import (
    RowsWriteError,
    TermRows,
    escape,
    load_declarations,
    load_rows,
    run_text,
    top_level_forms,
    unescape,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "nanopto" / "examples"
AWKWARD = ["", "lone \ud800 surrogate", " lead", "trail ", "  ", "tab\there", "new\nline", "cr\r", "back\\slash", "\\u{41}", "ü中", "a:b:c.py"]


@given(st.text() | st.sampled_from(AWKWARD) | st.text(alphabet=" \t\n\r\\\x85\u3000x"))
@example("  ")
def test_escape_is_invertible_and_leaves_nothing_input_would_change(text: str) -> None:
    escaped = escape(text)
    assert unescape(escaped) == text
    assert not any(c in escaped for c in "\t\n\r") and escaped == escaped.strip()


@given(
    st.lists(
        st.tuples(st.integers(), st.text() | st.sampled_from(AWKWARD), st.floats(), st.sampled_from(["x", "pl.add", "1:2:f.py"])),
        min_size=1,
        max_size=8,
    )
)
@example([(1, " lead", float("nan"), "x"), (2, "x", -0.0, "x")])
@example([(-1, "trail ", float("inf"), "x")])
@example([(0, "a\\b", 1e300, "x")])
def test_a_table_is_written_cell_by_cell_whichever_path_it_takes(rows: list[tuple[int, str, float, str]]) -> None:
    """Tables whose Strings need no escape take a one-format-per-row path; the text is the same."""
    expected = "".join("\t".join(term_rows._cell(c) for c in row) + "\n" for row in rows)
    assert term_rows._table_text(list(rows)) == expected
    plain = [(i, s, f) for i, _, f, s in rows]
    assert term_rows._table_text(plain) == "".join("\t".join(term_rows._cell(c) for c in row) + "\n" for row in plain)


def test_handles_number_the_distinct_terms_in_the_order_they_are_first_met() -> None:
    rows = TermRows()
    handles = [rows.term("Leaf", 1), rows.term("Pair", 0, 0), rows.term("Leaf", 1), rows.term("Leaf", 2), rows.term("Pair", 0, 0)]
    assert handles == [0, 1, 0, 2, 1]  # one handle per distinct term, across constructors
    assert rows.tables == {"Leaf": [(0, 1), (2, 2)], "Pair": [(1, 0, 0)]}


@pytest.mark.parametrize("small_table", [0, 100], ids=["read-from-files", "inserted-as-actions"])
def test_awkward_strings_and_shared_terms_survive_a_load_and_an_extraction(monkeypatch: pytest.MonkeyPatch, small_table: int) -> None:
    monkeypatch.setattr(term_rows, "SMALL_TABLE", small_table)
    constructors = [
        Constructor("Leaf", ("String", "i64"), "E"),
        Constructor("Pair", ("E", "E"), "E"),
        Constructor("Root", ("i64",), "E", unextractable=True),
    ]
    egraph = eb.EGraph()
    run_text(egraph, "(sort E)\n" + "\n".join(c.declaration() for c in constructors))
    run_text(egraph, load_declarations(["E"], constructors))
    rows = TermRows()
    leaves = [rows.term("Leaf", text, -i) for i, text in enumerate(AWKWARD)]
    assert rows.term("Leaf", AWKWARD[1], -1) == leaves[1]  # hash-consed: one row per distinct term
    tree = leaves[0]
    for leaf in leaves[1:]:
        tree = rows.term("Pair", tree, leaf)
    rows.union("E", rows.term("Root", 0), tree)
    load_rows(egraph, rows)
    (best,) = extract_roots(egraph, 1)
    found = []
    stack = [best.term]
    while stack:
        node = best.termdag.get(stack.pop())
        if node.name == "Leaf":
            text, number = (best.termdag.get(a).value.value for a in node.args)
            found.append((unescape(text), number))
        else:
            stack.extend(reversed(node.args))
    assert sorted(found, key=lambda f: -f[1]) == [(text, -i) for i, text in enumerate(AWKWARD)]
    sizes = egraph.run_program(eb.PrintSize(eb.RustSpan("t", 0, 0), None))[0]
    assert not any(name.startswith(("Load_", "Handle_")) and size for name, size in sizes.sizes)


def test_extracting_all_roots_at_once_finds_each_roots_own_term() -> None:
    # every function of every example in one e-graph, as a stage loads them
    functions = [fn for path in sorted(EXAMPLES.glob("*.py")) for fn in parse_program(path.read_text(), str(path)).function_list]
    encoder = Encoder()
    encoder.roots(functions)
    egraph = eb.EGraph()
    run_text(egraph, ir_declarations() + "\n" + ir_load_declarations())
    load_rows(egraph, encoder.rows)
    apart = [(best.termdag, best.term) for best in extract_roots(egraph, len(functions))]
    together = extract_all_roots(egraph, len(functions))
    assert len(functions) > 2 and all(isinstance(best, ExtractedRoot) for best in together)  # one extraction
    for (dag, term), best in zip(apart, together, strict=True):
        assert best.termdag.to_string(best.term) == dag.to_string(term)


def test_extracting_all_roots_falls_back_to_one_at_a_time_without_statement_lists() -> None:
    constructors = [Constructor("Leaf", ("i64",), "E"), Constructor("Root", ("i64",), "E", unextractable=True)]
    egraph = eb.EGraph()
    run_text(egraph, "(sort E)\n" + "\n".join(c.declaration() for c in constructors))
    run_text(egraph, load_declarations(["E"], constructors))
    rows = TermRows()
    for i in range(3):
        rows.union("E", rows.term("Root", i), rows.term("Leaf", 10 * i))
    load_rows(egraph, rows)
    extracted = extract_all_roots(egraph, 3)  # no SCat/SOne to hold them together: one extraction each
    assert not any(isinstance(best, ExtractedRoot) for best in extracted)
    assert [best.termdag.to_string(best.term) for best in extracted] == ["(Leaf 0)", "(Leaf 10)", "(Leaf 20)"]


def test_top_level_forms_respect_strings_and_comments() -> None:
    text = '(a "(" b) ; (not a form)\n(c ")" (d))\n(e "\\"(")'
    assert top_level_forms(text) == ['(a "(" b)', '(c ")" (d))', '(e "\\"(")']
    assert top_level_forms('(a) "(b) unclosed') == ["(a)"]
    with pytest.raises(ValueError, match="unbalanced"):
        top_level_forms('(a "x" (b)')


def test_an_unwritable_temporary_directory_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", full)
    monkeypatch.setattr(term_rows, "SMALL_TABLE", 0)  # small tables are inserted as actions, with no file
    rows = TermRows()
    rows.term("Leaf", 1)
    with pytest.raises(RowsWriteError, match="No space left on device; point TMPDIR at a writable directory"):
        load_rows(eb.EGraph(), rows)
    assert main(["inline", str(EXAMPLES / "twice.py")]) == 2
    assert capsys.readouterr().err.startswith("nanopto: error: could not write the e-graph's rows")
