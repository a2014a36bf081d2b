"""Notebook views of a pipeline run: egglog's own interactive e-graph widget.

`Program._repr_html_`, `InlineResult._repr_html_` and `PipelineRun._repr_html_` render source and
before/after views with the rule trace of every pass (`repr_hooks`); this module adds the e-graph
at saturation of every pass of the pipeline (each InlineFunctions stage, each rewrite pass of the
user's), in egglog-python's `VisualizerWidget` (the widget egglog shows for its own
`EGraph.display()`), so a notebook user can click through the classes the rules built. It needs
the `notebook` extra (anywidget, IPython).

    run = run_pipeline(program, rules=["my_rules.py"])   # one run, every pass traced
    run                                                  # before/after, sites, every pass's rules
    egraph_widget(run)                                   # every pass's e-graphs
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nanopto.ir_terms.nodes import Program
from nanopto.passes.pass_base import Pass
from nanopto.tools.egraph_viewer import fold_egraph, full_egraph
from nanopto.tools.pipeline_run import PipelineRun, run_pipeline

__all__ = ["egraph_widget", "inline_egraphs", "pipeline_egraphs", "run_pipeline"]


def pipeline_egraphs(run: PipelineRun, *, folded: bool = False) -> list[str]:
    """The JSON of every saturation's e-graph in `run`, in pipeline order: egglog's serialization
    (typed by call site), or with `folded` the readable picture of the `--html` page."""
    return [json.dumps(fold_egraph(s.egraph) if folded else full_egraph(s.egraph)) for s in run.snapshots]


def inline_egraphs(program: Program, rules: Sequence[str | Pass] = ()) -> list[str]:
    """Run the default pipeline (then the passes of `rules`) on `program` and return the JSON of
    every saturation's e-graph: each InlineFunctions stage, then each user pass."""
    return pipeline_egraphs(run_pipeline(program, rules=rules))


def egraph_widget(
    run: PipelineRun | Program, rules: Sequence[str | Pass] = (), *, folded: bool = True
) -> Any:
    """egglog's e-graph widget showing every saturation of a pipeline run (given, or run now on a
    program with the default pipeline and the passes of `rules`), the user's passes included.
    `folded=False` shows the raw e-graph, helper terms and lists included."""
    if isinstance(run, Program):
        run = run_pipeline(run, rules=rules)
    egraphs = pipeline_egraphs(run, folded=folded)
    try:
        from egglog.visualizer_widget import VisualizerWidget
    except ImportError as exc:
        raise ImportError(
            "the e-graph widget needs anywidget and IPython: pip install 'nanopto[notebook]'"
        ) from exc
    return VisualizerWidget(egraphs=egraphs)
