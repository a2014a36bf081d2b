"""`nanopto serve`: the playground's JSON API, its token and Host checks, and the page in a browser.

The server is started on port 0 (a free port) in a thread; the browser test drives the system
Chromium through Playwright (fixtures in conftest.py) and is skipped, saying why, without either.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until_still
from test_egraph_viewer import _drawn_pixels

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.cli import build_parser
from nanopto.tools.examples import example_source, rules_example_source
from nanopto.tools.html_page import PALETTE
from nanopto.tools.serve import (
    PlaygroundLimits,
    PlaygroundServer,
    RequestError,
    examples_listing,
    run_request,
    steps_request,
)

TWICE = example_source("twice")
FOLD = rules_example_source("fold_mul_one")


# ---------------------------------------------------------------------------------------------
# The API, called directly
# ---------------------------------------------------------------------------------------------


def test_a_run_returns_every_view() -> None:
    got = run_request({"program": TWICE})
    assert got["ok"] and got["pipeline"] == ["inline-functions"]
    assert "t_inline0 = pl.add(t_inline0, t_inline0)" in got["after"]
    [site] = got["sites"]
    assert site["helper"] == "twice" and site["line"] == 20
    assert site["bindings"][0]["row"] and site["bindings"][0]["bind_local"]
    inline = next(p for p in got["passes"] if p["name"] == "inline-functions")
    assert inline["changed"] and {"rule": "splice-assign", "matches": 1} in inline["rules"]
    assert 'data-from="b-L15"' in got["html"]["panes"]  # the spliced line links to the helper's line 15
    # the page builds the sites table from these records: the slice the panes explain, coloured
    # as the chips are
    assert got["shown_sites"] == [0, 1] and got["site_colours"] == len(PALETTE) and "sites" not in got["html"]
    [stage] = got["egraphs"]
    assert json.loads(stage["folded"])["nodes"] and stage["title"].startswith("stage 1: main")


def test_user_rules_run_and_a_rule_that_never_fired_is_named() -> None:
    got = run_request({"program": TWICE, "rules": FOLD})
    assert got["pipeline"][-1] == "fold-mul-one"
    fold = got["passes"][-1]
    assert fold["user"] and fold["never_fired"] == ["mul-x-one", "mul-one-x"]
    program = TWICE.replace("w = pl.add(a, u)", "m = pl.mul(u, 1)\n        w = pl.add(a, m)")
    fired = run_request({"program": program, "rules": FOLD})["passes"][-1]
    assert fired["never_fired"] == ["mul-one-x"] and fired["rules"][0]["matches"] >= 1


EXITING_PASS = """from dataclasses import dataclass
from typing import ClassVar

from nanopto.passes import Pass


@dataclass(frozen=True)
class Leave(Pass):
    name: ClassVar[str] = "leave"

    def run(self, program):
        raise SystemExit(0)


PASSES = [Leave()]
"""
"""A Python pass that tries to end the process while the pipeline runs it: contained, and located
at its line of the rules editor (not the temporary file the playground imported it from)."""


@pytest.mark.parametrize(
    ("payload", "where", "line"),
    [
        ({"program": TWICE.replace("return w", "return w +")}, "program", 22),
        ({"program": TWICE.replace("return w", "return zz")}, "program", 22),
        ({"program": TWICE, "rules": "from nanopto import passes\n\nPASSES = [1 / 0]\n"}, "rules", 3),
        ({"program": TWICE, "rules": EXITING_PASS}, "rules", 12),
        ({"program": TWICE, "pipeline": "inline-functions,no-such-pass"}, "pipeline", None),
        ({"program": "x" * 300}, "program", None),
    ],
)
def test_errors_name_their_editor_and_line(payload: dict[str, Any], where: str, line: int | None) -> None:
    with pytest.raises(RequestError) as caught:
        run_request(payload, PlaygroundLimits(max_source_chars=250) if len(payload["program"]) == 300 else None)
    assert caught.value.where == where and caught.value.line == line, caught.value.as_json()


def test_step_through_records_each_iteration() -> None:
    got = steps_request({"program": example_source("nested")})
    descriptions = [s["description"] for s in got["steps"]]
    assert descriptions[:3] == [
        "splice 'square' into 'quad' at line 19",
        "splice 'square' into 'quad' at line 20",
        "splice 'quad' into 'main' at line 25",
    ]
    assert all(step["iterations"] for step in got["steps"][:3])
    assert "y_inline" in got["steps"][-1]["program"]


def test_step_through_ends_with_each_user_pass_and_every_rule_of_it() -> None:
    program = TWICE.replace("w = pl.add(a, u)", "m = pl.mul(u, 1)\n        w = pl.add(a, m)")
    got = steps_request({"program": program, "rules": FOLD})
    last = got["steps"][-1]
    assert last["description"] == "pass fold-mul-one" and last["number"] == len(got["steps"])
    assert list(last["matches"]) == ["mul-x-one", "mul-one-x"] and last["matches"]["mul-x-one"] >= 1
    assert last["never_fired"] == ["mul-one-x"] and "pl.mul(" not in last["program"]


def test_examples_are_listed_with_their_summaries() -> None:
    listing = examples_listing()
    assert [e["name"] for e in listing["programs"]][:3] == ["single_site", "multiple_sites", "twice"]
    rules = {r["name"]: r["summary"] for r in listing["rules"]}
    assert rules["fold_mul_one"] and rules["fold_constants"]


def test_the_command_line_has_serve() -> None:
    args = build_parser().parse_args(["serve", "--port", "0"])
    assert args.port == 0 and args.handler.__name__ == "cmd_serve"


# ---------------------------------------------------------------------------------------------
# Over HTTP: the token, Host and Origin checks
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    running = PlaygroundServer(0)
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def request(
    server: PlaygroundServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    connection.request(method, path, body=data, headers=headers or {})
    response = connection.getresponse()
    return response.status, response.read()


def test_it_listens_on_loopback_only(server: PlaygroundServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=") and len(server.token) >= 24


def test_requests_without_the_token_are_refused(server: PlaygroundServer) -> None:
    for path in ("/", "/api/examples", "/static/playground.js", "/?token=wrong"):
        status, body = request(server, "GET", path)
        assert status == 403, path
        assert b"token" in body and server.token.encode() not in body
    status, _ = request(server, "POST", "/api/run", {"program": TWICE})
    assert status == 403


def test_the_page_and_its_files_are_served_with_the_token(server: PlaygroundServer) -> None:
    status, page = request(server, "GET", f"/?token={server.token}")
    assert status == 200 and f'content="{server.token}"'.encode() in page
    assert b"parsed, never run" in page and b"imports and runs" in page  # the page says which code runs
    for name in ("playground.js", "playground.css", "viewer.js", "viewer.css"):
        status, _ = request(server, "GET", f"/static/{name}", headers={"X-Nanopto-Token": server.token})
        assert status == 200, name
    for name in ("../serve.py", "..%2Fserve.py", "nope.js"):
        status, _ = request(server, "GET", f"/static/{name}?token={server.token}")
        assert status == 404, name


def test_a_foreign_host_or_origin_is_refused(server: PlaygroundServer) -> None:
    token = {"X-Nanopto-Token": server.token}
    status, _ = request(server, "GET", "/api/examples", headers={**token, "Host": f"evil.example:{server.port}"})
    assert status == 403  # a DNS-rebinding page sends its own host name
    status, _ = request(server, "POST", "/api/run", {"program": TWICE}, {**token, "Origin": "http://evil.example"})
    assert status == 403
    status, _ = request(server, "GET", "/api/examples", headers={**token, "Host": f"localhost:{server.port}"})
    assert status == 200


def test_the_api_over_http(server: PlaygroundServer) -> None:
    token = {"X-Nanopto-Token": server.token, "Content-Type": "application/json"}
    status, body = request(server, "POST", "/api/run", {"program": TWICE}, token)
    got = json.loads(body)
    assert status == 200 and got["ok"] and "t_inline0" in got["after"]
    status, body = request(server, "POST", "/api/run", {"program": "def"}, token)
    assert status == 200 and json.loads(body)["error"]["where"] == "program"
    status, _ = request(server, "POST", "/api/run", b"x" * (server.limits.max_body_bytes + 1), token)
    assert status == 413
    status, _ = request(server, "POST", "/api/run", b"not json", token)
    assert status == 400
    status, body = request(server, "GET", f"/api/example?name=rules/fold_mul_one&token={server.token}")
    assert status == 200 and "PASSES" in json.loads(body)["source"]


ENDLESS = "from nanopto import passes\nimport time\n\nwhile True:  # never ends; sleeps, so the time limit does not cost the suite a core\n    time.sleep(0.05)\n"
"""A rules file that never ends."""


def test_a_rules_file_that_never_ends_is_stopped_and_the_server_keeps_serving() -> None:
    """An endless loop in a rules file runs in the worker process, which is killed at the time
    limit; the page gets an error saying so, and the next run works in a fresh worker. (The limit
    is 1 s, the time this test waits with its core idle; the runs after the stopped one get a limit
    no loaded machine reaches.)"""
    limits = PlaygroundLimits(request_timeout=1.0, max_memory_bytes=2**30)
    running = PlaygroundServer(0, limits=limits)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    token = {"X-Nanopto-Token": running.token, "Content-Type": "application/json"}
    try:
        looping = {"program": TWICE, "rules": ENDLESS}
        status, body = request(running, "POST", "/api/run", looping, token)
        error = json.loads(body)["error"]
        assert status == 200 and error["where"] == "run", error
        assert "did not finish within 1 s and was stopped" in error["message"] and "endless loop" in error["message"]
        assert running.worker is not None and running.worker.restarts == 1
        running.worker.timeout = 60.0
        status, body = request(running, "GET", "/api/examples", headers=token)
        assert status == 200  # the server itself never stopped
        status, body = request(running, "POST", "/api/run", {"program": TWICE}, token)
        assert status == 200 and json.loads(body)["ok"], body[:300]
        # The worker's memory is capped: a rules file taking 2 GiB fails with an error, not the machine.
        greedy = {"program": TWICE, "rules": "BIG = bytearray(2 * 2**30)\n"}
        status, body = request(running, "POST", "/api/run", greedy, token)
        error = json.loads(body)["error"]
        assert status == 200 and error["where"] == "rules" and "MemoryError" in error["message"], error
        status, body = request(running, "POST", "/api/steps", {"program": TWICE}, token)
        assert status == 200 and json.loads(body)["ok"]
        assert running.worker.restarts == 1
    finally:
        running.shutdown()
        running.server_close()


# ---------------------------------------------------------------------------------------------
# In a real browser
# ---------------------------------------------------------------------------------------------


def test_the_page_runs_an_example(page: Any, server: PlaygroundServer, tmp_path: Path) -> None:
    page.goto(server.url)
    page.wait_for_selector("body[data-ready]", timeout=30_000)
    page.select_option("#example", "twice")  # loads the example and runs it
    page.wait_for_selector("body[data-state=done]", timeout=60_000)
    after = page.inner_text("#result .pane#after")
    assert "t_inline0 = pl.add(t_inline0, t_inline0)" in after
    assert page.locator("#result .line.spliced[data-from]").count() == 1
    page.screenshot(path=str(tmp_path / "playground.png"), full_page=True)
    # The e-graph tab draws egglog's viewer, loaded from the server.
    page.click("button[data-tab=egraph]")
    page.wait_for_selector("#egraph[data-rendered] .react-flow__node", timeout=60_000)
    wait_until_still(page, "#egraph")
    shot = page.locator("#eg-view").screenshot(path=str(tmp_path / "playground-egraph.png"))
    assert _drawn_pixels(shot) > 5000, "the e-graph view is (nearly) blank"
    # An error shows at its line in the editor.
    set_editor(page, "program", TWICE.replace("return w", "return w +"))
    page.click("#run")
    page.wait_for_selector("body[data-state=error]", timeout=60_000)
    assert error_line(page, "program") == 22
    assert "line 22" in page.inner_text("#program-error")
    assert not page.errors


def set_editor(page: Any, name: str, text: str) -> None:
    """Replace an editor's text as a paste would (the page's editors are CodeMirror views)."""
    page.evaluate("([name, text]) => { window.nanoptoEditors[name].text = text; }", [name, text])


def error_line(page: Any, name: str) -> int:
    """The line number the editor marks as the error's line."""
    page.wait_for_selector(f"#{name}-editor .cm-error-line", timeout=10_000)
    return int(page.evaluate(
        """(name) => {
            const view = window.nanoptoEditors[name].view;
            const line = document.querySelector(`#${name}-editor .cm-error-line`);
            return view.state.doc.lineAt(view.posAtDOM(line)).number;
        }""",
        name,
    ))


def test_the_page_reports_a_run_that_was_stopped_and_runs_again(page: Any) -> None:
    """The endless run is stopped at a limit of 1 s (the time this test waits with its core idle);
    the runs after it get a limit no loaded machine reaches."""
    running = PlaygroundServer(0, limits=PlaygroundLimits(request_timeout=1.0))
    threading.Thread(target=running.serve_forever, daemon=True).start()
    try:
        page.goto(running.url)
        page.wait_for_selector("body[data-ready]", timeout=30_000)
        set_editor(page, "program", TWICE)
        set_editor(page, "rules", ENDLESS)
        page.click("#run")
        page.wait_for_selector("body[data-state=error]", timeout=60_000)
        shown = page.inner_text("#run-error")
        assert "did not finish within 1 s and was stopped" in shown and "keeps serving" in shown
        assert running.worker is not None
        running.worker.timeout = 60.0
        set_editor(page, "rules", "")
        page.click("#run")
        page.wait_for_selector("body[data-state=done]", timeout=60_000)
        assert "t_inline0" in page.inner_text("#result .pane#after")
        # The step-through ends with the rules file's pass, every rule of it shown.
        set_editor(page, "rules", FOLD)
        page.click("button[data-tab=steps]")
        page.click("#steps-run")
        page.wait_for_selector("#step-list div[data-i]", timeout=60_000)
        page.locator("#step-list div[data-i]").last.click()
        detail = page.inner_text("#step-detail")
        assert "pass fold-mul-one" in detail and "mul-one-x" in detail and "never fired" in detail
        assert not page.errors
    finally:
        running.shutdown()
        running.server_close()


def test_the_sites_table_shows_the_run_the_panes_explain() -> None:
    """A pipeline that runs InlineFunctions twice: the first run splices, the second finds no
    Inline function left; the table's slice of the site records is the first run's."""
    got = run_request({"program": TWICE, "pipeline": "inline-functions,inline-functions"})
    assert got["ok"] and got["pipeline"] == ["inline-functions", "inline-functions"]
    assert [s["helper"] for s in got["sites"]] == ["twice"] and got["shown_sites"] == [0, 1]
    nothing = run_request({"program": "import nanopto.language as pl\n\n\n@pl.program\nclass P:\n"
                           "    @pl.function\n    def main(self, x):\n        return x\n"})
    assert nothing["ok"] and nothing["sites"] == [] and nothing["shown_sites"] == [0, 0]
