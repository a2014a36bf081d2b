"""Terms loaded as rows (`nanopto.ir_terms.term_rows`) come back exactly as they went in."""

from __future__ import annotations

import tempfile
from pathlib import Path

import egglog.bindings as eb
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from nanopto.cli import main
from nanopto.egraph import extract_roots
from nanopto.ir_terms.encoding import Constructor
from nanopto.ir_terms.term_rows import (
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


def test_awkward_strings_and_shared_terms_survive_a_load_and_an_extraction() -> None:
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


def test_top_level_forms_respect_strings_and_comments() -> None:
    text = '(a "(" b) ; (not a form)\n(c ")" (d))\n(e "\\"(")'
    assert top_level_forms(text) == ['(a "(" b)', '(c ")" (d))', '(e "\\"(")']


def test_an_unwritable_temporary_directory_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", full)
    with pytest.raises(RowsWriteError, match="No space left on device; point TMPDIR at a writable directory"):
        load_rows(eb.EGraph(), TermRows())
    assert main(["inline", str(EXAMPLES / "twice.py")]) == 2
    assert capsys.readouterr().err.startswith("nanopto: error: could not write the e-graph's rows")
