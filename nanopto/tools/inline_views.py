"""Write the files `nanopto inline --egraph FILE.html|FILE.svg|FILE.dot --html FILE.html` asks for.

The e-graph picture of the page and of `--egraph FILE.html` is egglog's own viewer
(`egraph_viewer`), which needs nothing beyond the pip install; `.svg` (Graphviz) and `.dot` stay
for those who have Graphviz.

Both views need the e-graph of every saturation stage, so the CLI re-runs InlineFunctions on the
inputs the pipeline gave it with an `EGraphCollector` observing each stage (the pass is
deterministic, so this is the run the pipeline made) and hands the results here. The page
explains the first InlineFunctions run that spliced anything (a later run finds no Inline
functions left); its "after" pane is the output of the whole pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nanopto.ir_terms.nodes import Program, Var
from nanopto.ir_terms.schema import walk
from nanopto.passes.inlining import InlineResult
from nanopto.tools.egraph_dot import (
    DEFAULT_MAX_NODES,
    EGraphOutputError,
    EGraphSnapshot,
    write_egraph,
)
from nanopto.tools.egraph_viewer import viewer_css, viewer_fragment, viewer_page
from nanopto.tools.html_page import page_for_file


def provenance_in(program: Program, result: InlineResult) -> dict[int, int]:
    """`result.provenance` re-keyed to the Vars of `program`, matched by name.

    The CLI's re-run creates Vars with new ids, and later passes may rebuild the program, but a
    fresh local's name (`t_inline0`) is the same in every run: the counter is deterministic.
    """
    site_of_name = {
        node.name: result.provenance[node.id]
        for node in walk(result.program)
        if isinstance(node, Var) and node.id in result.provenance
    }
    return {
        node.id: site_of_name[node.name]
        for node in walk(program)
        if isinstance(node, Var) and node.name in site_of_name
    }


def write_inline_views(
    *,
    egraph_path: str | None,
    html_path: str | None,
    max_nodes: int = DEFAULT_MAX_NODES,
    file: str,
    source: str,
    before: Program,
    after: Program,
    pipeline: str,
    results: Sequence[InlineResult],
    snapshots: Sequence[EGraphSnapshot],
) -> None:
    """Write the e-graph picture and/or the HTML page; problems raise EGraphOutputError."""
    if egraph_path is not None and egraph_path.lower().endswith((".html", ".htm")):
        _write(egraph_path, "--egraph", viewer_page(snapshots, file))
    elif egraph_path is not None:
        write_egraph(egraph_path, snapshots, max_nodes)
    if html_path is None:
        return
    note = None if snapshots else "No Inline call sites: nothing was saturated, so there is no e-graph to show."
    picture = viewer_fragment(snapshots) if snapshots else None
    spliced = [r for r in results if r.sites]
    result = spliced[0] if spliced else (results[0] if results else None)
    if result is not None:
        result = replace(result, provenance=provenance_in(after, result))
    page = page_for_file(file, source, before, after, f"after {pipeline}", result, picture, note, viewer_css())
    _write(html_path, "--html", page)


def _write(path: str, option: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise EGraphOutputError(f"{option} {path}: cannot write: {exc.strerror or exc}") from None
