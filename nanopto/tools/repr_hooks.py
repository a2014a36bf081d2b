"""Rich notebook views, installed from above: a Program shows as highlighted `pl` source, an
InlineResult as a before/after view with its rule trace, and a PipelineRun (`run_pipeline`) as the
same view for a whole pipeline with the rules of every pass, the user's included, and a warning
for each user rule that never matched.

The IR and the pass know nothing of HTML; this module attaches `_repr_html_` to their classes.
`nanopto` registers the same views with IPython's formatter when it is imported inside IPython,
so a notebook user sees them without importing anything from here.
"""

from __future__ import annotations

from typing import Any

from nanopto.ir_terms.nodes import HTML_VIEWS, Function, Program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.inlining import InlineResult
from nanopto.tools.highlight import highlighted_block
from nanopto.tools.html_page import inline_result_html, pipeline_run_html, program_html
from nanopto.tools.pipeline_run import PipelineRun


def function_html(function: Function) -> str:
    """`Function._repr_html_`: the function printed as `pl` source, highlighted."""
    return highlighted_block(python_print(function))


def install() -> None:
    """Register the rich views of Program, Function and PipelineRun (their `_repr_html_`, defined
    on the classes, falls back to plain text without them) and give InlineResult its
    `_repr_html_` (idempotent)."""
    HTML_VIEWS[Program] = program_html
    HTML_VIEWS[Function] = function_html
    HTML_VIEWS[PipelineRun] = pipeline_run_html
    setattr(InlineResult, "_repr_html_", inline_result_html)  # noqa: B010 - a hook attached from above


install()  # importing the views is asking for them


def html_of(value: Any) -> str | None:
    """The rich view of `value`, for IPython's formatter (None: no view of ours)."""
    if isinstance(value, Program):
        return program_html(value)
    if isinstance(value, Function):
        return function_html(value)
    if isinstance(value, InlineResult):
        return inline_result_html(value)
    if isinstance(value, PipelineRun):
        return pipeline_run_html(value)
    return None
