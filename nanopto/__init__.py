"""nanopto: a nanopass-style term-rewriting system for the `pl` tile IR.

Its central pass, InlineFunctions, splices alpha-renamed copies of `FunctionType.Inline` helpers
at their call sites; the splicing, substitution and tuple projection are egglog rewrite rules run
to saturation, and a Python checker enforces the rebinding table (docs/specification.md) on the
result.
"""

import sys
from typing import Any

__version__ = "0.1.0"


def _register_notebook_views() -> None:
    """Inside IPython, show Programs, InlineResults and PipelineRuns with `nanopto.tools.repr_hooks` (imported
    only when something is displayed, so importing nanopto stays cheap)."""
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None  # type: ignore[attr-defined]
    if shell is None:
        return

    def show(value: Any) -> str | None:
        from nanopto.tools.repr_hooks import html_of

        return html_of(value)

    html = shell.display_formatter.formatters["text/html"]
    html.for_type_by_name("nanopto.ir_terms.nodes", "Program", show)
    html.for_type_by_name("nanopto.passes.inlining.driver", "InlineResult", show)
    html.for_type_by_name("nanopto.tools.pipeline_run", "PipelineRun", show)


_register_notebook_views()
