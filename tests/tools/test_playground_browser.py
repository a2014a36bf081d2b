"""The playground as a person uses it, in a real headless Chromium (Playwright, the system's
browser: set NANOPTO_CHROMIUM to use another binary; the tests skip, saying why, without one):
the code editor, the error and the stale banner, the permalink, the e-graph drawn where the user
looks, the changed lines of the step-through, and `nanopto serve` on a busy port then on --port 0.

Screenshots are written to the test's tmp_path and looked at: pixels of the colours the page
uses, not just the DOM.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until_still
from test_html_page import count_near, png_pixels
from test_playground import set_editor
from test_playground_scale import _flat

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.tools.examples import example_source, rules_example_source
from nanopto.tools.html_page import site_colours
from nanopto.tools.serve import PlaygroundLimits, PlaygroundServer, run_request

TWICE = example_source("twice")
FOLD = rules_example_source("fold_mul_one")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    running = PlaygroundServer(0)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    yield running
    running.shutdown()
    running.server_close()


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready]", timeout=60_000)


def run_example(page: Any, name: str) -> None:
    runs = int(page.evaluate("document.body.dataset.runs || '0'"))
    page.select_option("#example", name)
    page.wait_for_function(f"Number(document.body.dataset.runs || 0) > {runs}", timeout=90_000)


def count_colour(png: bytes, colour: tuple[int, int, int], tolerance: int = 40) -> int:
    return count_near(png_pixels(png), colour, tolerance)


def test_the_editor_highlights_pl_and_the_menu_follows_the_text(page: Any, server: PlaygroundServer, tmp_path: Path) -> None:
    open_page(page, server.url)
    run_example(page, "twice")
    editor = page.locator("#program-editor .cm-content")
    assert "def twice(self, t: pl.Tensor[[4], pl.FP32])" in editor.inner_text()
    shot = page.locator("#program-editor").screenshot(path=str(tmp_path / "editor.png"))
    # CodeMirror's highlight style: keywords purple (#708), strings red (#a11), names blue (#00f).
    assert count_colour(shot, (0x77, 0x00, 0x88)) > 150, "no keyword is highlighted"
    assert page.locator("#program-editor .cm-gutters .cm-lineNumbers").count() == 1
    assert page.input_value("#example") == "twice"
    # Typing in the editor edits the program, and the menu no longer names an example.
    page.locator("#program-editor .cm-line").last.click()
    page.keyboard.press("End")
    page.keyboard.type("  # edited")
    assert page.evaluate("window.nanoptoEditors.program.text").rstrip().endswith("# edited")
    assert page.input_value("#example") == ""
    assert not page.errors


def test_an_error_is_prominent_and_the_old_results_are_greyed(page: Any, server: PlaygroundServer, tmp_path: Path) -> None:
    open_page(page, server.url)
    run_example(page, "twice")
    assert page.locator("#stale").is_hidden() and page.locator("#run-error").is_hidden()
    set_editor(page, "program", TWICE.replace("return w", "return w +"))
    page.click("#run")
    page.wait_for_selector("body[data-state=error]", timeout=60_000)
    banner = page.locator("#run-error")
    assert banner.is_visible() and banner.inner_text().startswith("Error in program.py: line 22")
    box = banner.bounding_box()
    assert box is not None and box["y"] < 200 and box["height"] > 30  # at the top, not small print
    assert page.locator("#stale").is_visible() and "last run that worked" in page.inner_text("#stale")
    assert float(page.evaluate("getComputedStyle(document.querySelector('#results main')).opacity")) < 0.5
    assert page.locator("#program-editor .cm-error-line").count() == 1
    assert page.locator("#program-editor .cm-lint-marker-error").count() == 1
    shot = png_pixels(page.screenshot(path=str(tmp_path / "stale.png")))
    assert count_near(shot, (0xEF, 0x44, 0x44), 30) > 1000, "the error banner's red frame is not drawn"
    assert count_near(shot, (0xFE, 0xF3, 0xC7), 8) > 5000, "the stale banner is not drawn"
    # Fixing the error and running again clears both.
    set_editor(page, "program", TWICE)
    page.click("#run")
    page.wait_for_selector("body[data-state=done]", timeout=60_000)
    assert page.locator("#stale").is_hidden() and page.locator("#run-error").is_hidden()
    assert page.locator("#results.stale").count() == 0
    assert not page.errors


def test_a_permalink_carries_program_rules_and_pipeline_in_the_fragment(page: Any, server: PlaygroundServer, browser: Any) -> None:
    open_page(page, server.url)
    program = TWICE.replace("w = pl.add(a, u)", "m = pl.mul(u, 1)\n        w = pl.add(a, m)")
    set_editor(page, "program", program)
    set_editor(page, "rules", FOLD)
    page.fill("#pipeline", "hoist-nested-calls,inline-functions,fold-mul-one")
    page.click("#permalink")
    page.wait_for_selector("#share:not([hidden])")
    url = page.input_value("#share-url")
    address, _, fragment = url.partition("#")
    assert address == f"http://127.0.0.1:{server.port}/" and server.token not in url
    assert fragment.startswith(("z=", "p=")) and "pl.mul" not in fragment  # encoded, not sent
    assert page.evaluate("location.hash") == "#" + fragment
    # Opened in a fresh tab of the user's own playground, it restores the case and runs it.
    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    try:
        open_page(other, f"{server.url}#{fragment}")
        other.wait_for_selector("body[data-state=done]", timeout=90_000)
        assert other.evaluate("window.nanoptoEditors.program.text") == program
        assert other.evaluate("window.nanoptoEditors.rules.text") == FOLD
        assert other.input_value("#pipeline") == "hoist-nested-calls,inline-functions,fold-mul-one"
        assert "pl.mul" not in other.inner_text("#result .pane#after")  # fold-mul-one ran
    finally:
        other.context.close()
    assert not page.errors


def test_the_egraph_is_drawn_where_the_user_looks(page: Any, server: PlaygroundServer, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, server.url)
    run_example(page, "nested")
    page.click("button[data-tab=egraph]")
    page.wait_for_selector("#egraph[data-rendered] .react-flow__node", timeout=60_000)
    box = page.locator("#eg-view").bounding_box()
    assert box is not None and 0 <= box["y"] < 300, box  # scrolled to, not below the fold
    assert page.locator("#eg-wait").is_hidden()
    wait_until_still(page, "#egraph")
    shot = page.screenshot(path=str(tmp_path / "egraph.png"))
    image = png_pixels(shot)
    assert image.shape[0] * image.shape[1] - count_near(image, (255, 255, 255), 12) > 20_000
    assert not page.errors


def test_the_step_through_marks_the_lines_each_step_changed(page: Any, server: PlaygroundServer) -> None:
    open_page(page, server.url)
    set_editor(page, "program", TWICE)
    page.click("button[data-tab=steps]")
    page.click("#steps-run")
    page.wait_for_selector("#step-list div[data-i]", timeout=60_000)
    changed = page.locator("#step-detail pre .chg").all_inner_texts()
    assert any("t_inline0 = pl.add(t_inline0, t_inline0)" in line for line in changed), changed
    assert not any("def main" in line for line in changed)  # unchanged lines are not marked
    assert not page.errors


def _css_rgb(colour: str) -> str:
    """`#rrggbb` as the browser's computed style spells it."""
    return "rgb({}, {}, {})".format(*(int(colour[i : i + 2], 16) for i in (1, 3, 5)))


def test_a_long_program_shows_at_once_and_its_sites_when_their_tab_opens(page: Any) -> None:
    """Plain panes are laid out a block at a time, as they scroll into view, and the sites table
    goes into the page when its tab is opened: what the user sees is the same."""
    running = PlaygroundServer(0, limits=PlaygroundLimits(max_detail_lines=10))
    threading.Thread(target=running.serve_forever, daemon=True).start()
    try:
        open_page(page, running.url)
        set_editor(page, "program", _flat(90))
        page.click("#run")
        page.wait_for_selector("body[data-state=done]", timeout=90_000)
        blocks = page.locator("#result .pane#after .lines")
        assert blocks.count() > 2
        visibility = "(b) => getComputedStyle(b).contentVisibility"
        assert blocks.first.evaluate(visibility) == "visible" and blocks.nth(1).evaluate(visibility) == "auto"
        assert page.inner_text("#result .pane#after").split("\n")[1] == "1"  # the first block, at once
        last = blocks.last
        last.scroll_into_view_if_needed()
        after = run_request({"program": _flat(90)})["after"].splitlines()
        numbers, lines = last.locator(".no"), last.locator("div:not(.no)")
        assert lines.inner_text().splitlines()[-1] == after[-1] and numbers.inner_text().split()[-1] == str(len(after))
        number_box, line_box = numbers.bounding_box(), lines.bounding_box()  # laid out when shown:
        assert number_box is not None and line_box is not None and line_box["height"] > 10
        assert number_box["x"] + number_box["width"] <= line_box["x"] and number_box["y"] == line_box["y"]  # side by side
        bg, fg = site_colours(5)
        chip = page.locator('#result .chip[data-site="5"]')
        assert chip.evaluate("(c) => getComputedStyle(c).backgroundColor") == _css_rgb(bg)
        assert chip.locator("b").evaluate("(b) => getComputedStyle(b).color") == _css_rgb(fg)
        assert page.locator("#sites table").count() == 0  # not yet in the page
        page.click("button[data-tab=sites]")
        rows = page.locator("#sites > table > tbody > tr")
        assert rows.count() == 91  # the header and one row per site
        assert "self.h(y)" in rows.nth(90).inner_text()
        page.click("button[data-tab=result]")
        page.click("#run")  # a new run replaces the table, which waits again for its tab
        page.wait_for_function("Number(document.body.dataset.runs) === 2", timeout=90_000)
        assert page.locator("#sites table").count() == 0
        assert not page.errors
    finally:
        running.shutdown()
        running.server_close()


def _nanopto(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "nanopto", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
    )


def test_a_busy_port_is_reported_and_port_0_serves_the_page(page: Any, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = _nanopto("serve", "--port", str(port))
        _, err = busy.communicate(timeout=120)
    assert busy.returncode == 2 and "Address already in use" in err and "--port 0" in err
    served = _nanopto("serve", "--port", "0")
    try:
        assert served.stdout is not None
        url = served.stdout.readline().split(": ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and f":{port}/" not in url
        open_page(page, url)
        run_example(page, "bump")
        assert "n_inline0" in page.inner_text("#result .pane#after")
        page.screenshot(path=str(tmp_path / "port0.png"))
        assert not page.errors
    finally:
        served.send_signal(signal.SIGTERM)
        served.wait(timeout=60)


def test_the_editor_ships_in_the_package_and_is_served(server: PlaygroundServer) -> None:
    """CodeMirror is bundled into one module in the package (no CDN, no network): the wheel's
    package data takes every .js of the playground folder."""
    from importlib import resources

    from nanopto.tools.serve import static_file

    bundled = resources.files("nanopto.tools") / "playground" / "editor.js"
    assert bundled.is_file() and "createEditor" in bundled.read_text(encoding="utf-8")
    assert '"tools/playground/*.js"' in (REPO / "pyproject.toml").read_text()
    found = static_file("editor.js")
    assert found is not None and found[1].startswith("text/javascript")
    page = (resources.files("nanopto.tools") / "playground" / "playground.js").read_text(encoding="utf-8")
    assert "/static/editor.js" in page and "http" not in page.replace("http-equiv", "")


def test_the_sites_table_the_page_builds_says_what_the_static_page_says(page: Any, server: PlaygroundServer) -> None:
    """The page builds its sites table from the answer's site records; `nanopto inline --html`
    builds it in Python (`_sites_table`). Both say the same, cell for cell, coloured alike."""
    from nanopto.ir_terms.parser import parse_program
    from nanopto.passes.inlining import inline_program
    from nanopto.tools.html_page import InlinePage, _sites_table

    open_page(page, server.url)
    run_example(page, "twice")
    page.click("button[data-tab=sites]")
    shown = page.locator("#sites td.site")
    assert shown.count() == 1
    bg, fg = site_colours(0)
    assert shown.evaluate("(c) => getComputedStyle(c).backgroundColor") == _css_rgb(bg)
    assert shown.evaluate("(c) => getComputedStyle(c).borderLeftColor") == _css_rgb(fg)
    before = parse_program(TWICE, "program.py")
    result = inline_program(before)
    static = _sites_table(InlinePage("program.py", TWICE, before, result.program, "after", result, TWICE, None, None))
    cells = "(root) => [...root.querySelectorAll('td, th')].map((c) => c.textContent.trim())"
    made_here = page.evaluate(f"(h) => {{ const d = document.createElement('div'); d.innerHTML = h; return ({cells})(d); }}", static)
    assert "bound to fresh local t_inline0 = a" in made_here
    assert page.locator("#sites").evaluate(cells) == made_here
    assert not page.errors
