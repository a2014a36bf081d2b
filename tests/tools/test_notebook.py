"""Notebook views: the e-graph widget of a pass run, and the HTML reprs."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from nanopto import ir
from nanopto.passes.inlining import inline_program
from nanopto.tools import repr_hooks
from nanopto.tools.notebook import egraph_widget, inline_egraphs

NESTED = ir.parse_program(files("nanopto.examples").joinpath("nested.py").read_text(), "nested.py")


def test_each_stage_is_serialized_with_the_spliced_terms() -> None:
    stages = inline_egraphs(NESTED)
    assert len(stages) == 2  # the helper's own expansion, then main
    ops = {node["op"] for node in json.loads(stages[-1])["nodes"].values()}
    assert {"At", "RVar", "SubSL", "Body"} <= ops


def test_widget_holds_every_stage() -> None:
    pytest.importorskip("anywidget")
    widget = egraph_widget(NESTED)
    assert len(widget.egraphs) == 2
    assert all(json.loads(g)["nodes"] for g in widget.egraphs)


def test_html_reprs_show_source_and_before_after() -> None:
    repr_hooks.install()  # the tools layer attaches the views; the IR does not import them
    source = NESTED._repr_html_()
    assert '<pre class="nanopto-code">' in source and '<span class="tok-def">main</span>' in source
    html = inline_program(NESTED)._repr_html_()
    assert "main" in html and "_inline" in html
