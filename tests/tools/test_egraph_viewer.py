"""The e-graph picture that needs only the pip install (egglog's viewer), and the notebook fixes.

The browser tests drive the system Chromium through Playwright (fixtures in conftest.py) and are
skipped, saying why, without either. Their screenshots are kept under the pytest temporary
directory (`pytest --basetemp DIR` to keep them somewhere known).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until_still
from test_html_page import colour_counts, png_pixels

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.cli import main
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.terms.encoding import ir_constructors
from nanopto.tools import repr_hooks
from nanopto.tools.egraph_dot import EGraphCollector, EGraphSnapshot
from nanopto.tools.egraph_viewer import (
    HIDDEN_OPS,
    LIST_OPS,
    class_sites,
    constructor_notes,
    fold_egraph,
    full_egraph,
    viewer_fragment,
)
from nanopto.tools.html_page import inline_result_html

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "nanopto" / "examples"


def snapshots(name: str) -> list[EGraphSnapshot]:
    program = parse_program((EXAMPLES / f"{name}.py").read_text(), f"{name}.py")
    collector = EGraphCollector()
    inline_program(hoist_program(program), observer=collector)
    return collector.snapshots


# ---------------------------------------------------------------------------------------------
# What the viewer is given
# ---------------------------------------------------------------------------------------------


def test_the_folded_picture_hides_helpers_and_folds_lists_and_literals() -> None:
    [stage] = snapshots("twice")
    folded = fold_egraph(stage.egraph)
    labels = [node["op"] for node in folded["nodes"].values()]
    assert not any(label.split("(")[0] in HIDDEN_OPS for label in labels)
    # Ids are the IR's Var ids (a process-wide counter): matched as any number.
    assert any(re.fullmatch(r'Var\("t", Tensor\[FP32\], \d+\)', label) for label in labels)
    assert any(re.fullmatch(r'RVar\("t", Tensor\[FP32\], \d+, 0\)', label) for label in labels)
    # `t = pl.add(t, t)` is one AssignOp2 term, its two arguments its own.
    assert 'AssignOp2(·, "add", ·, ·, @15:12, "False", @15:8)' in labels
    assert not any(label.startswith(("ExCons", "ExNil", "ExL2", "SL2", "TTensor", "TUnknown")) for label in labels)
    for node in folded["nodes"].values():  # a picture egglog's viewer can draw: no dangling child
        assert all(child in folded["nodes"] for child in node["children"])
        assert node["eclass"] in folded["class_data"]
    assert len(folded["nodes"]) < len(stage.egraph.nodes) / 3  # 16 of 58 e-nodes
    # The class of the spliced call site is typed by its site, so the viewer colours it apart.
    assert "site 0" in {data["type"] for data in folded["class_data"].values()}


def test_the_full_picture_keeps_every_enode() -> None:
    [stage] = snapshots("twice")
    full = full_egraph(stage.egraph)
    assert set(full["nodes"]) == set(stage.egraph.nodes)
    assert {"SubEx", "WireAssign", "Arg", "Body", "Ret"} <= {n["op"] for n in full["nodes"].values()}
    assert set(class_sites(stage.egraph).values()) == {0}


def test_multi_site_stages_name_each_site() -> None:
    stages = snapshots("nested")
    assert [s.title.split(":")[0] for s in stages] == ["stage 1", "stage 2"]
    assert set(class_sites(stages[0].egraph).values()) == {0, 1}  # quad's two calls of square


def test_every_constructor_has_a_legend_entry_and_a_docs_entry() -> None:
    notes = constructor_notes()
    names = {c.name for c in ir_constructors()} | HIDDEN_OPS | LIST_OPS | {"At", "RVar", "RIterArg"}
    assert names <= set(notes)
    page = (ROOT / "docs" / "reading-an-egraph.md").read_text()
    missing = sorted(name for name in names if f"`{name}`" not in page)
    assert not missing, f"docs/reading-an-egraph.md does not explain {missing}"


def test_the_fragment_embeds_the_module_safely() -> None:
    text = viewer_fragment(snapshots("twice"))
    module = text.split('id="np-visualizer-js">', 1)[1].split("</script>", 1)[0]
    assert "</" not in module and len(module) > 1_000_000  # the whole module, with nothing closing its tag early
    data = text.split('id="np-egraph-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)[0]["title"].startswith("stage 1: main")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the viewer must not load anything"


# ---------------------------------------------------------------------------------------------
# Notebook views: file line numbers, indentation whatever the host CSS says
# ---------------------------------------------------------------------------------------------


def test_notebook_views_number_lines_as_the_file_does() -> None:
    program = parse_program((EXAMPLES / "twice.py").read_text(), "twice.py")
    view = inline_result_html(inline_program(program))
    # The spliced line comes from twice.py line 15 (`t = pl.add(t, t)`) and says so, as the CLI does.
    assert "twice:15" in html.unescape(view)
    rows = dict(re.findall(r'id="np\d+-b-L(\d+)"[^>]*><a class="no" href="[^"]*">(\d*)</a><code>(?:.*?)</code>', view))
    shown = {int(label) for label in rows.values() if label}
    assert {15, 20} <= shown  # the helper's statement and the call site, numbered by their file lines
    assert re.search(r">15</a><code>.*t = pl.add\(t, t\)", html.unescape(re.sub(r"<span[^>]*>|</span>", "", view)))


JUPYTERLAB_LIKE_CSS = """
.jp-RenderedHTMLCommon code { white-space: normal; padding: 1px 5px; background: #eee; }
.jp-RenderedHTMLCommon span { white-space: normal; }
.jp-RenderedHTMLCommon pre { white-space: normal; }
"""
"""What JupyterLab's rendered-HTML styles do to `code`/`span`/`pre` (the rules that collapsed the
indentation of lines starting with a highlighted keyword)."""


def _indent_px(page: Any, selector: str, text: str) -> float:
    """How far right of its code element the first token of the line containing `text` starts."""
    return float(
        page.evaluate(
            """([selector, text]) => {
                for (const code of document.querySelectorAll(selector)) {
                    if (!code.textContent.includes(text)) continue;
                    const range = document.createRange();
                    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
                    let node; while ((node = walker.nextNode()) && !node.textContent.trim()) {}
                    const start = node.textContent.search(/\\S/);
                    range.setStart(node, start); range.setEnd(node, start + 1);
                    return range.getBoundingClientRect().left - code.getBoundingClientRect().left;
                }
                return -1;
            }""",
            [selector, text],
        )
    )


def test_indentation_survives_jupyterlab_css(page: Any) -> None:
    repr_hooks.install()
    program = parse_program((EXAMPLES / "twice.py").read_text(), "twice.py")
    result = inline_program(program)
    body = f'<div class="jp-RenderedHTMLCommon">{result._repr_html_()}{program._repr_html_()}</div>'
    page.set_content(f"<!DOCTYPE html><html><head><style>{JUPYTERLAB_LIKE_CSS}</style></head><body>{body}</body></html>")
    # `return w` starts with a highlighted keyword, 8 spaces in: it must sit 8 columns right.
    char = float(page.evaluate("() => { const s = document.createElement('span'); s.textContent = 'x'.repeat(100);"
                                " document.querySelector('.np .line code').appendChild(s); const w = s.getBoundingClientRect().width;"
                                " s.remove(); return w / 100; }"))
    assert _indent_px(page, ".np .line code", "return w") == pytest.approx(8 * char, abs=1.5)
    assert _indent_px(page, ".np .line code", "t = pl.add(t, t)") == pytest.approx(8 * char, abs=1.5)
    block = float(page.evaluate("() => { const pre = document.querySelector('pre.nanopto-code');"
                                " const line = pre.textContent.split('\\n').findIndex(l => l.trim() === 'return w');"
                                " return line; }"))
    assert block > 0
    # In the plain block too: the whole `pre` keeps its line breaks and spaces.
    text = page.evaluate("() => document.querySelector('pre.nanopto-code').innerText")
    assert "\n        return w" in text
    assert not page.errors


# ---------------------------------------------------------------------------------------------
# In a real browser: the viewer draws the graph offline
# ---------------------------------------------------------------------------------------------


def _wait_drawn(page: Any, root: str = "#np-egraph") -> int:
    page.wait_for_selector(f"{root}[data-rendered]", timeout=60_000)
    page.wait_for_selector(f"{root} .react-flow__node", timeout=60_000)
    wait_until_still(page, root)  # the layout animates into place
    return int(page.locator(f"{root} .react-flow__node").count())


def _drawn_pixels(png: bytes) -> int:
    """Pixels of a screenshot that are neither the background nor near-white."""
    counts = colour_counts(png_pixels(png))
    background = counts.most_common(1)[0][0]
    return sum(n for colour, n in counts.items() if colour != background and sum(colour) < 3 * 235)


def _nodes_in_view(page: Any) -> int:
    """The e-node boxes of the viewer that the browser shows (not hidden, inside the view)."""
    return int(
        page.evaluate(
            """() => {
                const view = document.querySelector('#np-egraph .eg-view').getBoundingClientRect();
                return [...document.querySelectorAll('#np-egraph .react-flow__node')].filter(node => {
                    const box = node.getBoundingClientRect();
                    return node.checkVisibility({visibilityProperty: true, opacityProperty: true})
                        && box.width > 0 && box.height > 0
                        && box.right > view.left && box.left < view.right
                        && box.bottom > view.top && box.top < view.bottom;
                }).length;
            }"""
        )
    )


def test_egraph_html_file_draws_the_graph_offline(page: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.html"
    assert main(["inline", str(EXAMPLES / "twice.py"), "--egraph", str(out)]) == 0
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri())
    folded = _wait_drawn(page)
    assert folded >= 10
    assert "RVar" in page.inner_text("#np-egraph .eg-view")
    shot = page.locator("#np-egraph .eg-view").screenshot(path=str(tmp_path / "egraph-viewer.png"))
    assert _drawn_pixels(shot) > 5000, "the viewer area is (nearly) blank"
    # The viewer's chrome alone passes the pixel count: the node boxes themselves must be on show.
    assert _nodes_in_view(page) >= 1, "no e-node box is visible in the viewer"
    # The switch shows the raw e-graph: the helper terms appear and there are more boxes.
    page.check("#np-egraph input[type=checkbox]")
    page.wait_for_function("() => document.querySelector('#np-egraph').dataset.rendered === '2'")
    page.wait_for_function(
        "n => document.querySelectorAll('#np-egraph .react-flow__node').length > n", arg=folded, timeout=60_000
    )
    assert "WireAssign" in page.inner_text("#np-egraph .eg-view")
    assert all(url.startswith(("file:", "blob:", "data:")) for url in requests), requests
    assert not page.errors


def test_the_html_page_shows_the_viewer(page: Any, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert main(["inline", str(EXAMPLES / "nested.py"), "--html", str(out)]) == 0
    page.goto(out.as_uri())
    assert _wait_drawn(page) >= 10
    assert page.locator("#np-egraph select option").count() == 2  # one picture per stage
    page.locator("#egraph").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "html-page.png"), full_page=True)
    assert page.evaluate("() => document.documentElement.dataset.linked") == "5"  # the page's own script ran
    assert not page.errors
