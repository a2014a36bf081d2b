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

from nanopto.ir_terms.nodes import Program
from nanopto.passes.inlining import InlineResult
from nanopto.tools.html_page import inline_result_html, pipeline_run_html, program_html
from nanopto.tools.pipeline_run import PipelineRun


def install() -> None:
    """Give Program, InlineResult and PipelineRun their `_repr_html_` (idempotent)."""
    setattr(Program, "_repr_html_", program_html)  # noqa: B010 - a hook attached from above
    setattr(InlineResult, "_repr_html_", inline_result_html)  # noqa: B010
    setattr(PipelineRun, "_repr_html_", pipeline_run_html)  # noqa: B010


def html_of(value: Any) -> str | None:
    """The rich view of `value`, for IPython's formatter (None: no view of ours)."""
    if isinstance(value, Program):
        return program_html(value)
    if isinstance(value, InlineResult):
        return inline_result_html(value)
    if isinstance(value, PipelineRun):
        return pipeline_run_html(value)
    return None
