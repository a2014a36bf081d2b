"""Notebook views of a pass run: egglog's own interactive e-graph widget.

`Program._repr_html_` and `InlineResult._repr_html_` render source and before/after views; this
module adds the e-graph at saturation of each InlineFunctions stage, in egglog-python's
`VisualizerWidget` (the widget egglog shows for its own `EGraph.display()`), so a notebook user can
click through the classes the rules built. It needs the `notebook` extra (anywidget, IPython).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import egglog.bindings as eb

from nanopto.egraph import StageReport
from nanopto.ir_terms.nodes import Program
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.stage import Stage


@dataclass
class SerializedStages:
    """A `Stage` observer keeping each stage's serialized e-graph as egglog's JSON."""

    json: list[str] = field(default_factory=list)

    def __call__(self, stage: Stage, egraph: eb.EGraph, report: StageReport) -> None:
        self.json.append(egraph.serialize([]).to_json())


def inline_egraphs(program: Program) -> list[str]:
    """Run the default pipeline on `program` and return the JSON of every InlineFunctions stage's
    saturated e-graph."""
    stages = SerializedStages()
    inline_program(hoist_program(program), observer=stages)
    return stages.json


def egraph_widget(program: Program) -> Any:
    """egglog's e-graph widget showing each InlineFunctions stage of `program` (last one first shown)."""
    egraphs = inline_egraphs(program)
    try:
        from egglog.visualizer_widget import VisualizerWidget
    except ImportError as exc:
        raise ImportError(
            "the e-graph widget needs anywidget and IPython: pip install 'nanopto[notebook]'"
        ) from exc
    return VisualizerWidget(egraphs=egraphs)
