"""The e-graph picture: DOT from egglog's serialized e-graph, and the visible note when it is cut."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest

import nanopto.passes  # noqa: F401  (registers the passes; breaks the engine import cycle)
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining import inline_program
from nanopto.tools import egraph_dot as ed
from nanopto.tools.egraph_dot import (
    CUT_HINT,
    EGraphCollector,
    EGraphOutputError,
    EGraphSnapshot,
    SerializedEGraph,
    egraph_dot,
    node_label,
    select_classes,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "nanopto" / "examples"


def _node(op: str, eclass: str, *children: str, subsumed: bool = False) -> dict[str, object]:
    return {"op": op, "children": list(children), "eclass": eclass, "cost": 1.0, "subsumed": subsumed}


def chain(length: int) -> SerializedEGraph:
    """SL-0 -> SL-1 -> ... -> SL-(length-1), one `SOne` each; SL-0 also holds `Root(0)`."""
    nodes: dict[str, object] = {
        "primitive-i64-0": _node("0", "i64-0"),
        "function-0-Root": _node("Root", "SL-0", "primitive-i64-0"),
    }
    for i in range(length):
        nodes[f"n{i}"] = _node("SOne", f"SL-{i}", *([f"n{i + 1}"] if i + 1 < length else []))
    data = {"nodes": nodes, "class_data": {f"SL-{i}": {"type": "SL"} for i in range(length)}}
    return SerializedEGraph.from_json(json.dumps(data))


def test_select_keeps_whole_classes_breadth_first_from_the_root() -> None:
    egraph = chain(10)  # SL-0 holds Root and n0 (2 e-nodes), SL-1..SL-9 one each: 11 e-nodes
    everything = select_classes(egraph, 1000)
    assert not everything.cut
    assert everything.shown_nodes == everything.total_nodes == 11
    assert everything.classes[0] == "SL-0"

    cut = select_classes(egraph, 5)
    assert cut.cut
    assert cut.classes == ["SL-0", "SL-1", "SL-2", "SL-3"]
    assert (cut.shown_nodes, cut.total_nodes, len(cut.classes), cut.total_classes) == (5, 11, 4, 10)
    assert cut.note() == f"showing 5 of 11 e-nodes (4 of 10 e-classes); {CUT_HINT}"


def test_a_cut_picture_says_so_in_its_label_and_points_at_what_is_missing() -> None:
    snapshot = EGraphSnapshot("stage 1: main (site 0)", chain(10))
    dot = egraph_dot([snapshot], max_nodes=5)
    assert "showing 5 of 11 e-nodes (4 of 10 e-classes); pass --egraph-max-nodes to raise" in dot
    assert "e-classes not shown" in dot  # the edge out of the last drawn class goes to the note
    assert dot.count("subgraph cluster_s0_SL_") == 4

    whole = egraph_dot([snapshot], max_nodes=11)
    assert "showing" not in whole and "not shown" not in whole
    assert whole.count("subgraph cluster_s0_SL_") == 10


def test_a_class_too_big_for_the_budget_is_left_out_not_half_drawn() -> None:
    egraph = chain(3)
    selection = select_classes(egraph, 1)  # SL-0 has 2 e-nodes: nothing fits
    assert selection.classes == [] and selection.cut
    assert "showing 0 of 4 e-nodes" in selection.note()


def test_labels_write_primitives_in_place_and_shorten_spans() -> None:
    data = {
        "nodes": {
            "primitive-String-1": _node('"t"', "String-1"),
            "primitive-String-2": _node('"15:12:twice.py"', "String-2"),
            "function-0-TUnknown": _node("TUnknown", "Ty-3"),
            "function-0-AssignStmt": _node(
                "AssignStmt", "St-4", "primitive-String-1", "function-0-TUnknown", "primitive-String-2"
            ),
        }
    }
    egraph = SerializedEGraph.from_json(json.dumps(data))
    assert node_label(egraph, egraph.nodes["function-0-AssignStmt"]) == 'AssignStmt("t", ·, @15:12)'
    assert node_label(egraph, egraph.nodes["function-0-TUnknown"]) == "TUnknown"


def test_malformed_serializations_are_reported() -> None:
    with pytest.raises(ValueError, match="expected an object with a 'nodes' map"):
        SerializedEGraph.from_json("[]")
    with pytest.raises(ValueError, match="has child 'missing'"):
        SerializedEGraph.from_json(json.dumps({"nodes": {"a": _node("F", "X-1", "missing")}}))
    with pytest.raises(ValueError, match="lacks 'eclass'"):
        SerializedEGraph.from_json(json.dumps({"nodes": {"a": {"op": "F", "children": []}}}))


def test_the_collector_sees_every_stage_of_a_real_run() -> None:
    source = (EXAMPLES / "nested.py").read_text()
    collector = EGraphCollector()
    result = inline_program(parse_program(source, "nested.py"), observer=collector)
    assert [s.title.split(":")[0] for s in collector.snapshots] == ["stage 1", "stage 2"]
    assert "quad" in collector.snapshots[0].title and "main" in collector.snapshots[1].title
    last = collector.snapshots[-1].egraph
    ops = {node.op for node in last.nodes.values()}
    assert {"Root", "Body", "SubEx"} <= ops  # the helper terms are there, drawn dimmed
    assert any(node.subsumed for node in last.nodes.values())  # the spliced call
    dot = egraph_dot(collector.snapshots)
    assert dot.count("subgraph cluster_s1_stage") == 1
    assert 'tooltip="subsumed"' in dot and 'tooltip="unextractable helper"' in dot
    assert "showing" not in dot  # the default budget draws every shipped example whole
    assert result.sites  # the observer did not disturb the run
    assert not any(op.startswith(("Load_", "Handle_")) for op in ops)  # the loader leaves no trace


def test_no_sites_draws_an_empty_picture_that_says_why() -> None:
    assert "no Inline call sites" in egraph_dot([])


def test_max_nodes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        egraph_dot([], max_nodes=0)


def test_egraph_paths_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EGraphOutputError, match=r"must end in \.html, \.svg or \.dot"):
        ed.check_egraph_path(str(tmp_path / "graph.png"))
    ed.check_egraph_path(str(tmp_path / "graph.dot"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EGraphOutputError, match=r"'dot' is not installed.*--egraph out\.dot"):
        ed.check_egraph_path(str(tmp_path / "graph.svg"))
    ed.write_egraph(str(tmp_path / "graph.dot"), [])  # .dot needs no Graphviz
    assert (tmp_path / "graph.dot").read_text().startswith("digraph egraph {")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed (.ci/run installs it)")
def test_render_svg_keeps_the_cut_note_visible() -> None:
    svg = ed.render_svg(egraph_dot([EGraphSnapshot("stage 1", chain(10))], max_nodes=5))
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "pass --egraph-max-nodes to raise" in html.unescape(svg)  # dot writes '-' as &#45;
    assert ed.svg_body(svg).startswith("<svg")
    with pytest.raises(EGraphOutputError, match="'dot' failed"):
        ed.render_svg("digraph {")
