"""The `--html` page in a real headless browser, the `--egraph` files, and the notebook views.

The browser tests open the page in the headless Chromium the other browser tests share (the
`page` fixture in conftest.py, through Playwright): the DOM after the page's script ran, and a
screenshot. Without Chromium or Playwright they are skipped and say why; the page's text is still
checked.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import numpy.typing as npt
import pytest
from conftest import run_cli

import nanopto.passes  # noqa: F401  (registers the passes; breaks the engine import cycle)
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining import inline_program
from nanopto.tools import repr_hooks
from nanopto.tools.highlight import highlight_lines
from nanopto.tools.html_page import site_colours

EXAMPLES = Path(__file__).resolve().parents[2] / "nanopto" / "examples"
DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz 'dot' is not installed (.ci/run installs it)")


def run_nanopto(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command in this process (tests/conftest.py `run_cli`), with `env` set while it runs."""
    with mock.patch.dict(os.environ, env or {}):
        return run_cli(*args, cwd=cwd)


def png_pixels(data: bytes) -> npt.NDArray[np.uint8]:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) into an RGB image of
    shape (height, width, 3). The None, Sub and Up filters, most of Chromium's rows, are undone
    with numpy; Average and Paeth, which read the pixel just decoded, byte by byte."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG format"
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, stride + 1)
    image = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = int(raw[y, 0]), raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum per channel, modulo 256
            row = line.reshape(width, channels).cumsum(axis=0, dtype=np.uint8).reshape(stride)
        elif kind == 2:  # Up
            row = line + previous
        else:
            out, up = line.tolist(), previous.tolist()
            for x in range(stride):
                left = out[x - channels] if x >= channels else 0
                if kind == 3:
                    out[x] = (out[x] + (left + up[x]) // 2) & 0xFF
                else:
                    corner = up[x - channels] if x >= channels else 0
                    p = left + up[x] - corner
                    pa, pb, pc = abs(p - left), abs(p - up[x]), abs(p - corner)
                    out[x] = (out[x] + (left if pa <= pb and pa <= pc else up[x] if pb <= pc else corner)) & 0xFF
            row = np.array(out, dtype=np.uint8)
        image[y] = row
        previous = row
    return image.reshape(height, width, channels)[:, :, :3]


def colour_counts(image: npt.NDArray[np.uint8]) -> Counter[tuple[int, int, int]]:
    """How many pixels of `image` have each colour."""
    packed = image.reshape(-1, 3).astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1], dtype=np.uint32)
    values, counts = np.unique(packed, return_counts=True)
    return Counter({(int(v) >> 16, (int(v) >> 8) & 0xFF, int(v) & 0xFF): int(n) for v, n in zip(values, counts, strict=True)})


def count_near(image: npt.NDArray[np.uint8], colour: tuple[int, int, int], tolerance: int) -> int:
    """How many pixels are within `tolerance` of `colour` in every channel."""
    distance = np.abs(image.astype(np.int16) - np.array(colour, dtype=np.int16))
    return int(np.all(distance <= tolerance, axis=-1).sum())


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


# ---------------------------------------------------------------------------------------------
# Through the real entry point
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nested_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html")
    proc = run_nanopto("inline", str(EXAMPLES / "nested.py"), "--html", "page.html", cwd=out)
    assert proc.returncode == 0, proc.stderr
    assert "def main" in proc.stdout and "trace" not in proc.stdout  # stdout is unchanged by --html
    return out / "page.html"


def test_the_page_is_self_contained_and_complete(nested_page: Path) -> None:
    text = nested_page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the page must not load anything"
    assert "<script>" in text and "<style>" in text
    for anchor in ('id="before"', 'id="after"', 'id="sites"', 'id="rules"', 'id="egraph"'):
        assert anchor in text
    # Every line of main's body came through site 2 and links to its origin in the before pane.
    spliced = re.findall(r'<div class="line (spliced|bound|wired|discarded) s(\d+)"[^>]*data-from="b-L(\d+)"', text)
    assert [(kind, site) for kind, site, _ in spliced] == [("spliced", "2")] * 4 + [("wired", "2")]
    assert [int(line) for _, _, line in spliced] == [14, 19, 14, 20, 25]  # square, quad, square, quad, site
    for _, _, line in spliced:
        assert f'id="b-L{line}"' in text
    assert "splice-assign" in text and "rename-local" in text  # the rule trace
    assert "read-only: substituted directly" in text  # the rebinding rows
    # The e-graph is egglog's own viewer, with the module text inline: no Graphviz needed.
    assert 'id="np-visualizer-js"' in text and "stage 2: main" in html.unescape(text)
    assert "Graphviz" not in text.split('id="np-visualizer-js"')[0]


@needs_dot
def test_egraph_svg_and_dot_files(tmp_path: Path) -> None:
    proc = run_nanopto("inline", str(EXAMPLES / "twice.py"), "--egraph", "g.svg", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "Root(0)" in svg and "showing" not in svg

    proc = run_nanopto(
        "inline", str(EXAMPLES / "nested.py"), "--egraph", "g.dot", "--egraph-max-nodes", "25", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith("digraph egraph {")
    assert re.search(r"stage 2: showing \d+ of \d+ e-nodes \(\d+ of \d+ e-classes\); pass --egraph-max-nodes", dot)
    rendered = subprocess.run([DOT or "dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True)
    assert "pass --egraph-max-nodes to raise" in html.unescape(rendered.stdout)


def test_egraph_option_errors_exit_2(tmp_path: Path) -> None:
    example = str(EXAMPLES / "twice.py")
    proc = run_nanopto("inline", example, "--egraph", "g.png", cwd=tmp_path)
    assert proc.returncode == 2 and "--egraph g.png: the file name must end in .html, .svg or .dot" in proc.stderr
    proc = run_nanopto("inline", example, "--egraph", "g.dot", "--egraph-max-nodes", "0", cwd=tmp_path)
    assert proc.returncode == 2 and "--egraph-max-nodes must be at least 1" in proc.stderr
    # No Graphviz on PATH: .svg is refused up front with a pointer to .dot; .dot and --html still work.
    env = {"PATH": str(tmp_path / "no-bin"), "HOME": str(tmp_path)}
    proc = run_nanopto("inline", example, "--egraph", "g.svg", cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "'dot' is not installed" in proc.stderr and "--egraph out.dot" in proc.stderr
    assert not (tmp_path / "g.svg").exists()
    assert "--egraph out.html" in proc.stderr
    proc = run_nanopto("inline", example, "--egraph", "g.html", "--html", "p.html", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert 'id="np-visualizer-js"' in (tmp_path / "p.html").read_text()
    assert 'id="np-visualizer-js"' in (tmp_path / "g.html").read_text()
    proc = run_nanopto("inline", example, "--html", str(tmp_path / "missing-dir" / "p.html"), cwd=tmp_path)
    assert proc.returncode == 2 and "cannot write" in proc.stderr


# ---------------------------------------------------------------------------------------------
# In a real browser
# ---------------------------------------------------------------------------------------------


def test_the_browser_renders_both_panes_with_coloured_linked_lines(nested_page: Path, page: Any) -> None:
    page.goto(nested_page.as_uri())
    dom = page.content()
    assert 'data-linked="5"' in dom  # the page's script ran and wired all five inlined lines
    assert re.search(r'<div class="pane" id="before">.*<div class="pane" id="after">', dom, re.S)
    bg, fg = site_colours(2)
    coloured = re.findall(rf'class="line \w+ s2"[^>]*style="background:{bg};border-left-color:{fg}"', dom)
    assert len(coloured) == 5
    assert dom.count('class="tok-kw"') > 10  # highlighted source
    assert not page.errors


def test_a_screenshot_shows_the_site_colour(nested_page: Path, page: Any, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(nested_page.as_uri())
    image = png_pixels(page.screenshot(path=str(tmp_path / "page.png")))
    assert image.shape[:2] == (900, 1400)
    counts = colour_counts(image)
    assert len(counts) > 50, "the screenshot is (nearly) blank"
    bg, fg = site_colours(2)
    # Five 20px-high lines across the after pane, plus the site line in the before pane.
    assert counts[_rgb(bg)] > 5 * 15 * 400, counts.most_common(5)
    assert counts[_rgb(fg)] > 100  # the line borders and the site badge


# ---------------------------------------------------------------------------------------------
# Notebooks and highlighting
# ---------------------------------------------------------------------------------------------


def test_notebook_views() -> None:
    repr_hooks.install()  # the tools layer attaches the views; the IR does not import them
    program = parse_program((EXAMPLES / "twice.py").read_text(), "twice.py")
    shown = program._repr_html_()
    assert '<pre class="nanopto-code">' in shown and '<span class="tok-kw">def</span>' in shown

    result = inline_program(program)
    view = result._repr_html_()
    assert "<script" not in view and "body {" not in view  # safe in untrusted notebooks, no global styles
    assert 'id="np' in view  # ids are prefixed per view, so two views in one notebook do not clash
    spliced = re.findall(r'class="line (\w+) s0" id="(np\d+-)a-L\d+" data-site="0" data-from="\2b-L(\d+)"', view)
    assert [kind for kind, _, _ in spliced] == ["bound", "spliced", "wired"]
    # The before pane is the printed input: links point at its lines, not at twice.py's.
    prefix = spliced[0][1]
    target = spliced[1][2]
    line = re.search(rf'id="{prefix}b-L{target}"[^>]*>.*?<code>(.*?)</code>', view)
    assert line is not None and re.sub("<[^>]+>", "", html.unescape(line.group(1))).strip() == "t = pl.add(t, t)"


def test_highlighting_keeps_the_text_and_marks_tokens() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        source = path.read_text()
        lines = highlight_lines(source)
        assert len(lines) == len(source.splitlines())
        for original, marked in zip(source.splitlines(), lines, strict=True):
            assert html.unescape(re.sub("<[^>]+>", "", marked)) == original, path.name
    assert highlight_lines("x = 1  # n")[0] == 'x = <span class="tok-num">1</span>  <span class="tok-com"># n</span>'
    assert highlight_lines("def f(:\n  (") == ["def f(:", "  ("]  # untokenizable text is still shown
