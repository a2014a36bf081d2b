"""Write the files `nanopto inline --egraph FILE.html|FILE.svg|FILE.dot --html FILE.html` asks for.

The e-graph picture of the page and of `--egraph FILE.html` is egglog's own viewer
(`egraph_viewer`), which needs nothing beyond the pip install; `.svg` (Graphviz) and `.dot` stay
for those who have Graphviz.

Both read the one recorded run of the pipeline (`pipeline_run.PipelineRun`): the e-graph of every
saturation (each InlineFunctions stage and each rewrite pass of the user's, chosen per pass from a
menu), and every pass's rules with their match counts. The page explains the first
InlineFunctions run that spliced anything (a later run finds no Inline functions left); its
"after" pane is the output of the whole pipeline.
"""

from __future__ import annotations

from nanopto.tools.egraph_dot import DEFAULT_MAX_NODES, EGraphOutputError, write_egraph
from nanopto.tools.egraph_viewer import viewer_css, viewer_fragment, viewer_page
from nanopto.tools.files import write_whole_file
from nanopto.tools.html_page import page_for_file
from nanopto.tools.pipeline_run import PipelineRun, provenance_in

__all__ = ["provenance_in", "write_inline_views"]


def write_inline_views(
    run: PipelineRun,
    *,
    egraph_path: str | None,
    html_path: str | None,
    max_nodes: int = DEFAULT_MAX_NODES,
    pipeline: str,
) -> None:
    """Write the e-graph picture and/or the HTML page; problems raise EGraphOutputError."""
    snapshots = run.snapshots
    if egraph_path is not None and egraph_path.lower().endswith((".html", ".htm")):
        _write(egraph_path, "--egraph", viewer_page(snapshots, run.file))
    elif egraph_path is not None:
        write_egraph(egraph_path, snapshots, max_nodes)
    if html_path is None:
        return
    note = None if snapshots else "Nothing was saturated (no Inline call sites, no rewrite pass), so there is no e-graph to show."
    picture = viewer_fragment(snapshots) if snapshots else None
    page = page_for_file(
        run.file,
        run.source or "",
        run.before,
        run.after,
        f"after {pipeline}",
        run.shown_inline(),
        picture,
        note,
        viewer_css(),
        passes=run.passes,
    )
    _write(html_path, "--html", page)


def _write(path: str, option: str, text: str) -> None:
    try:
        write_whole_file(path, text)
    except OSError as exc:
        raise EGraphOutputError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
