"""Large programs in the playground: the e-graph fold is linear, every picture is cut to its node
budget and says so, a huge e-graph is serialized in part, a long program gets plain panes.

How long a 10,000-site program takes is measured by `bench/playground_bench.py`, not here.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.tools import pipeline_run
from nanopto.tools.egraph_dot import EGraphCollector, ENode, SerializedEGraph
from nanopto.tools.egraph_viewer import HIDDEN_OPS, fold_egraph, viewer_stages
from nanopto.tools.examples import example_source
from nanopto.tools.html_page import CHIP_BLOCK, PANE_BLOCK_LINES
from nanopto.tools.serve import PlaygroundLimits, run_request


def _chain(n: int) -> SerializedEGraph:
    """`n` classes, each node pointing at the one below; the bottom one is a hidden helper term,
    so every node above it is a pending rewrite the fold drops, one after the other."""
    hidden = sorted(HIDDEN_OPS)[0]
    nodes = {"n0": ENode("n0", hidden, (), "c0", False)}
    for i in range(1, n):
        nodes[f"n{i}"] = ENode(f"n{i}", "Call", (f"n{i - 1}",), f"c{i}", False)
    nodes[f"n{n}"] = ENode(f"n{n}", "Root", (), f"c{n}", False)
    classes = {node.eclass: [node.id] for node in nodes.values()}
    return SerializedEGraph(nodes, classes, {c: "Ex" for c in classes})


def test_the_fold_is_linear_in_the_egraph(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of pending rewrites used to take one sweep of the whole e-graph per link."""
    calls = 0
    real = SerializedEGraph.is_primitive

    def counted(self: SerializedEGraph, eclass: str) -> bool:
        nonlocal calls
        calls += 1
        return real(self, eclass)

    monkeypatch.setattr(SerializedEGraph, "is_primitive", counted)
    n = 3000
    folded = fold_egraph(_chain(n))
    assert list(folded["nodes"]) == [f"n{n}"]  # the whole pending chain is dropped, the root stays
    assert calls <= 10 * n, f"{calls} is_primitive calls for {n} e-nodes"


def _assert_drawable(picture: dict[str, Any]) -> None:
    for node in picture["nodes"].values():  # egglog's viewer needs every child present
        assert all(child in picture["nodes"] for child in node["children"])
        assert node["eclass"] in picture["class_data"]


def test_each_picture_is_cut_to_its_node_budget_and_says_so() -> None:
    got = run_request({"program": example_source("nested")}, PlaygroundLimits(max_egraph_nodes=40))
    assert got["ok"] and got["egraphs"]
    for stage in got["egraphs"]:
        folded, full = json.loads(stage["folded"]), json.loads(stage["full"])
        _assert_drawable(folded)
        _assert_drawable(full)
        assert stage["counts"][0] <= 40 and stage["counts"][1] <= 40 + sum(
            1 for n in full["nodes"] if n.startswith("primitive-")
        )
        assert stage["note"].startswith("cut: showing") and "of" in stage["note"]
    assert "…" in "".join(n["op"] for s in got["egraphs"] for n in json.loads(s["folded"])["nodes"].values())
    whole = run_request({"program": example_source("nested")})
    assert [s["note"] for s in whole["egraphs"]] == ["", ""]  # the shipped examples fit the budget


def test_a_huge_egraph_is_serialized_in_part() -> None:
    program = hoist_program(parse_program(example_source("nested")))
    collector = EGraphCollector(max_rows=50, calls_when_cut=2)
    inline_program(program, observer=collector)
    last = collector.snapshots[-1]
    assert last.rows is not None and last.rows > 50
    assert "[...]" in {node.op for node in last.egraph.nodes.values()}
    [stage] = viewer_stages([last], max_nodes=500)
    assert stage["note"].startswith(f"cut: the e-graph has {last.rows} rows")
    _assert_drawable(json.loads(stage["folded"]))


def test_a_long_program_gets_plain_panes_at_once() -> None:
    source = example_source("twice").replace("return w", "return w  # <b>")
    got = run_request({"program": source}, PlaygroundLimits(max_detail_lines=10))
    panes = got["html"]["panes"]
    assert "highlighting and line origins are shown for programs of up to 10 lines" in panes
    assert "tok-" not in panes and "data-from" not in panes and "&lt;b&gt;" in panes
    assert got["after"].count("\n") > 10 and "t_inline0" in got["after"]


def _flat(sites: int) -> str:
    """`main` calling a 5-statement Inline helper `sites` times (the bench's shape)."""
    calls = "".join("        y = self.h(y)\n" for _ in range(sites))
    return (
        "import nanopto.language as pl\n\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n    def h(self, x):\n"
        "        a = pl.add(x, x)\n        b = pl.mul(a, x)\n        c = pl.sub(b, a)\n        d = pl.add(c, b)\n"
        "        return d\n\n    @pl.function\n    def main(self, y):\n" + calls + "        return y\n"
    )


LATER = re.compile(r'^<div class="(\w+ )?chunk" style="contain-intrinsic-size:auto none auto (\d+)px">')
"""The opening of a block after the first (`html_page._later`), its class, and its height till shown."""


def _split_blocks(html_text: str, first: str, later_class: str) -> list[str]:
    """`html_text` (what a pane's `.code` or the legend holds) cut at each block after the first;
    the first must open with `first` when that is not empty (a pane's first lines have no wrapper)."""
    parts = re.split(r'(?=<div class="' + later_class + r'chunk" )', html_text)
    assert parts[0].startswith(first)
    for part in parts[1:]:
        opening = LATER.match(part)
        assert opening is not None and opening.group(1) == (later_class or None)
    return parts


def test_plain_panes_come_in_blocks_the_browser_lays_out_when_shown() -> None:
    got = run_request({"program": _flat(90) + "# <b>\n"}, PlaygroundLimits(max_detail_lines=10))
    panes = got["html"]["panes"]
    assert len(got["after"].splitlines()) > 2 * PANE_BLOCK_LINES
    assert ".np .chunk { content-visibility: auto;" in got["html"]["css"]
    for pane, text in zip(panes.split('<div class="pane" id=')[1:], [_flat(90) + "# <b>\n", got["after"]], strict=True):
        code = pane.split('<div class="code">', 1)[1]
        parts = _split_blocks(code, '<div class="lines">', "lines ")
        blocks = [re.findall(r'^<div [^>]*><div class="no">([^<]*)</div><div>([^<]*)</div></div>', part) for part in parts]
        lines = text.splitlines()
        assert len(blocks) == -(-len(lines) // PANE_BLOCK_LINES) and all(len(b) == 1 for b in blocks)
        # each block: its line numbers beside its lines, every line once, in order, escaped
        assert [int(row) for [(numbers, _)] in blocks for row in numbers.split("\n")] == list(range(1, len(lines) + 1))
        assert [line for [(_, texts)] in blocks for line in texts.split("\n")] == [html.escape(line) for line in lines]
    assert "# &lt;b&gt;" in panes


def test_detailed_panes_come_in_blocks_too() -> None:
    """Highlighted lines with their origins, the first 200 as ever, the rest in blocks the browser
    lays out when shown (4,500 such lines took it 3.4 s at once)."""
    got = run_request({"program": _flat(60)})
    after_lines = got["after"].splitlines()
    assert len(after_lines) > PANE_BLOCK_LINES and "data-from" in got["html"]["panes"]
    before_pane, after_pane = got["html"]["panes"].split('<div class="pane" id=')[1:]
    for side, pane, count in (("b", before_pane, len(_flat(60).splitlines())), ("a", after_pane, len(after_lines))):
        parts = _split_blocks(pane.split('<div class="code">', 1)[1], '<div class="line', "")
        assert len(parts) == -(-count // PANE_BLOCK_LINES)
        rows = [int(r) for part in parts for r in re.findall(rf'id="{side}-L(\d+)"', part)]
        assert rows == list(range(1, count + 1))  # every line once, in order
        assert all(part.count('<div class="line') <= PANE_BLOCK_LINES for part in parts)
        if len(parts) > 1:  # a block not laid out yet is as tall as its lines will be
            height = LATER.match(parts[-1])
            assert height is not None and int(height.group(2)) == round((count - PANE_BLOCK_LINES * (len(parts) - 1)) * 13 * 1.55)
    few = run_request({"program": _flat(3)})["html"]["panes"]
    assert "chunk" not in few  # a short program's panes are as they always were


def test_a_long_legend_of_sites_comes_in_blocks_and_a_short_one_in_one() -> None:
    many = run_request({"program": _flat(CHIP_BLOCK + 3)}, PlaygroundLimits(max_detail_lines=10))["html"]["chips"]
    blocks = _split_blocks(many, '<div class="legend">', "legend ")
    assert [len(re.findall(r'class="chip c\d" data-site="(\d+)"', b)) for b in blocks] == [CHIP_BLOCK, 3]
    assert re.findall(r'data-site="(\d+)"', many) == [str(i) for i in range(CHIP_BLOCK + 3)]
    # a chip's colours are its class: the site's colours (`site_colours`), as the panes use them
    assert all(int(c) == int(n) % 8 for c, n in re.findall(r'class="chip c(\d)" data-site="(\d+)"', many))
    few = run_request({"program": _flat(3)})["html"]["chips"]
    assert few.startswith('<div class="legend">') and few.count("<div") == 1 and few.count('class="chip c') == 3


def test_plain_panes_do_not_re_key_line_origins_and_detailed_ones_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain panes show no line origins, so the run's provenance is not re-keyed to the final
    program for them (a walk of the whole program, a fifth of a second at 10,000 sites)."""
    keyed: list[int] = []
    real = pipeline_run.provenance_in

    def counted(program: Any, result: Any) -> dict[int, int]:
        keyed.append(1)
        return real(program, result)

    monkeypatch.setattr(pipeline_run, "provenance_in", counted)
    plain = run_request({"program": _flat(3)}, PlaygroundLimits(max_detail_lines=10))
    assert plain["ok"] and "data-from" not in plain["html"]["panes"] and not keyed
    assert [s["number"] for s in plain["sites"]] == [0, 1, 2] and plain["shown_sites"] == [0, 3]
    detailed = run_request({"program": _flat(3)})
    assert detailed["ok"] and "data-from" in detailed["html"]["panes"] and keyed == [1]


def test_a_run_says_how_much_cpu_each_part_took() -> None:
    got = run_request({"program": _flat(3)})
    assert set(got["timings"]) == {"parse", "rules", "passes", "print", "sites", "sections", "egraphs"}
    assert all(isinstance(s, float) and s >= 0 for s in got["timings"].values())
    assert got["timings"]["passes"] > 0
