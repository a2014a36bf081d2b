"""Line provenance for the HTML view: each inlined line's call site and the input line it came from."""

from __future__ import annotations

from pathlib import Path

import nanopto.passes  # noqa: F401  (registers the passes; breaks the engine import cycle)
from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.inlining import inline_program
from nanopto.tools.line_origins import LineKind, line_origins, span_lines, statement_lines

EXAMPLES = Path(__file__).resolve().parents[2] / "nanopto" / "examples"


def origins_by_text(name: str) -> dict[str, tuple[int | None, LineKind, int, str | None]]:
    source = (EXAMPLES / f"{name}.py").read_text()
    before = parse_program(source, f"{name}.py")
    result = inline_program(before)
    text = python_print(result.program)
    lines = text.splitlines()
    found = line_origins(before, result.program, text, result.sites, result.provenance)
    return {lines[row - 1].strip(): (o.site, o.kind, o.source_line, o.helper) for row, o in found.items()}


def test_twice_binding_splice_and_wiring() -> None:
    # twice.py: line 15 is `t = pl.add(t, t)` in the helper, line 20 is the site `u = self.twice(a)`.
    assert origins_by_text("twice") == {
        "t_inline0: pl.Tensor[[4], pl.FP32] = a": (0, LineKind.BOUND, 20, "twice"),
        "t_inline0 = pl.add(t_inline0, t_inline0)": (0, LineKind.SPLICED, 15, "twice"),
        "u = t_inline0": (0, LineKind.WIRED, 20, "twice"),
    }


def test_each_site_gets_its_own_lines() -> None:
    got = origins_by_text("multiple_sites")
    sites = {text: origin[0] for text, origin in got.items()}
    assert sorted(set(sites.values())) == [0, 1]
    assert sites["a2 = y_inline0"] == 0 and sites["b2 = y_inline1"] == 1
    assert {origin[2] for origin in got.values() if origin[1] is LineKind.SPLICED} == {10}  # square's body


def test_nested_lines_link_to_the_helper_they_were_written_in() -> None:
    got = origins_by_text("nested")
    assert {origin[0] for origin in got.values()} == {2}  # everything in main came through site 2
    helpers = {origin[3] for origin in got.values() if origin[1] is LineKind.SPLICED}
    assert helpers == {"square", "quad"}
    assert [o[2] for o in got.values() if o[3] == "square"] == [14, 14]


def test_a_first_statement_without_fresh_locals_joins_the_following_site() -> None:
    got = origins_by_text("multi_return")
    assert got["q = pl.tensor.assemble(q, x, [0])"] == (0, LineKind.SPLICED, 14, "helper")


def test_a_discarded_result_is_marked() -> None:
    got = origins_by_text("discard")
    assert got["pl.tile.store(t, [0, 0], out)"] == (0, LineKind.DISCARDED, 21, "writeout")


def test_statement_lines_find_every_simple_statement_of_the_printed_program() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        program = parse_program(path.read_text(), path.name)
        text = python_print(program)
        found = statement_lines(program, text)
        lines = text.splitlines()
        for row, stmt in found.items():
            first = python_print(stmt).strip().splitlines()[0]
            assert lines[row - 1].strip() == first or lines[row - 1].rstrip().endswith(
                python_print(stmt).strip().split(" = ", 1)[-1]
            ), (path.name, row)
        returns = [row for row, stmt in found.items() if isinstance(stmt, n.ReturnStmt)]
        assert len(returns) == sum(1 for line in lines if line.strip().startswith("return")), path.name


def test_span_lines_maps_source_lines_to_printed_lines() -> None:
    source = (EXAMPLES / "twice.py").read_text()
    program = parse_program(source, "twice.py")
    text = python_print(program)
    rows = span_lines(program, text)
    printed = text.splitlines()
    assert printed[rows[15] - 1].strip() == "t = pl.add(t, t)"  # source line 15
    assert printed[rows[20] - 1].strip() == "u = self.twice(a)"
    assert printed[rows[14] - 1].strip().startswith("def twice(")  # the function's own span
