"""`nanopto serve`: a local playground in the browser, served by the standard library alone.

The page (static files in `nanopto/tools/playground/`, egglog's viewer from egglog's wheel; no
network) lets a user edit a `pl` program and a rules file, pick a pipeline, run it and see
before/after with line origins, the rebinding table, the rules each pass fired, the e-graph, and
a step-through of saturation. The JSON API behind it:

    GET  /api/examples        the shipped programs and rules files, with their summaries
    GET  /api/example?name=N  one of them (`rules/NAME` for a rules file)
    POST /api/run             {program, rules, pipeline} -> the run, as data and HTML fragments
    POST /api/steps           {program, rules} -> InlineFunctions one site and one iteration at a
                              time, then each pass of the rules file with every rule's matches

Safety. The program is only parsed, never run; but a rules file is Python, and the server imports
(runs) it, as `nanopto inline --rules` does. So, like Jupyter, the server listens on 127.0.0.1
only, and every request must carry the random token printed in the URL (`?token=...`, or the
`X-Nanopto-Token` header), compared in constant time: another local user cannot guess it, and a
web page in the user's browser cannot read it. The Host header must name 127.0.0.1 or localhost
(a DNS-rebinding page sends its own host name), and a POST whose Origin is another site is
refused. Each run is bounded (`PlaygroundLimits`): input size, saturation time, iterations and
e-graph rows, the number of steps.

Runs happen one at a time in a child process (`serve_worker`), never in the server: a rules file
with an endless loop, or a run that overruns `request_timeout`, is killed (with everything it
started) and reported in the page while the server keeps serving; the child's memory is capped too.
One child at a time also suits egglog (its e-graphs may not move between threads) and the
process-wide pass registry.

The server itself holds up against a local user without the token: a body that is not a JSON
object of strings (a nesting bomb, a chunked body, `{"pipeline": [1]}`) is answered 400 with the
reason; every connection has a read timeout; at most `max_connections` are open at once, and when
that many are, the oldest one that has not yet shown the token is closed to make room, so idle
connections cannot starve the user's own requests; a dropped connection prints nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import secrets
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from nanopto.egraph import SaturationLimitError, SaturationLimits
from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.parse_error import ParserError
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes import (
    STRATEGY_PIPELINES,
    OptimizationStrategy,
    PassContext,
    PassManager,
)
from nanopto.passes.inlining import InlineResult
from nanopto.passes.inlining.steps import inline_steps
from nanopto.passes.pass_base import Pass
from nanopto.passes.rewrite import RewriteResult, RewriteRules
from nanopto.tools.egraph_viewer import constructor_notes, viewer_stages
from nanopto.tools.examples import (
    example_names,
    example_source,
    rules_example_names,
    rules_example_source,
    summary,
)
from nanopto.tools.html_page import PALETTE, detailed_panes, inline_sections
from nanopto.tools.inline_report import pass_rule_counts, rule_counts, site_record
from nanopto.tools.pipeline_run import PassRun, PipelineRun, record_run, traced
from nanopto.tools.rules_file import RulesFileError, load_rules_file
from nanopto.tools.serve_worker import RunWorker, WorkerAnswer, WorkerError

DEFAULT_PIPELINE = ",".join(STRATEGY_PIPELINES[OptimizationStrategy.Default])
PROGRAM_FILE = "program.py"
RULES_FILE = "rules.py"
STATIC = "playground"
TOKEN_HEADER = "X-Nanopto-Token"
WORKER_TARGET = "nanopto.tools.serve:worker_answer"


@dataclass(frozen=True)
class PlaygroundLimits:
    """Bounds on one request, so a pasted program or a looping rule cannot hold the machine."""

    max_source_chars: int = 200_000
    """Program text and rules text, each."""
    max_body_bytes: int = 1_000_000
    timeout: float = 20.0
    """Seconds per saturation run."""
    max_iterations: int = 2_000
    max_rows: int = 2_000_000
    max_steps: int = 400
    """Steps (and egglog iterations within them) returned by /api/steps."""
    request_timeout: float = 60.0
    """Seconds a whole run may take in the worker process before it is killed (`serve_worker`)."""
    max_memory_bytes: int | None = 4 * 2**30
    """The worker process's address-space cap (None: no cap)."""
    max_egraph_nodes: int = 500
    """E-nodes per e-graph picture; a larger e-graph is shown cut, and says so."""
    max_detail_lines: int = 5_000
    """Lines of the program after the pipeline up to which before/after are highlighted and each
    line's origin shown; a longer one is shown plain, so that it still shows within seconds."""


class InternalError(Exception):
    """A bug in nanopto met while answering, reported by the worker process."""


class RequestError(Exception):
    """A request the playground answers with an error shown in the page: where, what, which line."""

    def __init__(self, where: str, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.where = where
        self.message = message
        self.line = line
        self.col = col

    def as_json(self) -> dict[str, Any]:
        return {"where": self.where, "message": self.message, "line": self.line, "col": self.col}


# ---------------------------------------------------------------------------------------------
# Running a request (no HTTP here: the tests call these directly too)
# ---------------------------------------------------------------------------------------------


PAYLOAD_KEYS = ("program", "rules", "pipeline")


def check_payload(payload: object) -> dict[str, str]:
    """The body of a POST: a JSON object whose `program`, `rules` and `pipeline` are strings (each
    optional); anything else is refused with the reason. Only those keys go on to the worker."""
    if not isinstance(payload, dict):
        raise RequestError("http", "the body must be a JSON object: {\"program\": ..., \"rules\": ..., \"pipeline\": ...}")
    for key in PAYLOAD_KEYS:
        value = payload.get(key)
        if value is not None and not isinstance(value, str):
            raise RequestError("http", f"'{key}' must be a string, not {type(value).__name__}")
    return {key: payload[key] for key in PAYLOAD_KEYS if payload.get(key) is not None}


def _text(payload: dict[str, Any], key: str, limits: PlaygroundLimits) -> str:
    value = payload.get(key) or ""
    if not isinstance(value, str):
        raise RequestError(key, f"'{key}' must be a string, not {type(value).__name__}")
    if len(value) > limits.max_source_chars:
        raise RequestError(key, f"the {key} is {len(value)} characters; the playground takes at most {limits.max_source_chars}")
    return value


def parse(source: str) -> Program:
    """Parse the edited program (never run); a ParserError becomes an error at its line."""
    try:
        return parse_program(source, PROGRAM_FILE)
    except ParserError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        raise RequestError("program", f"{exc.message}{hint}", exc.line, exc.col + 1) from None


def load_rules(text: str) -> tuple[Pass, ...]:
    """Import the rules text as a rules file (it is Python the user runs) and return its passes."""
    if not text.strip():
        return ()
    with tempfile.TemporaryDirectory(prefix="nanopto-playground-") as folder:
        path = Path(folder) / RULES_FILE
        path.write_text(text, encoding="utf-8")
        try:
            return load_rules_file(str(path))
        except RulesFileError as exc:
            raise _rules_error(str(exc)) from None


def _rules_error(text: str) -> RequestError:
    """An error located in the rules text: its temporary file named as the page names it."""
    message = _RULES_PATH.sub(RULES_FILE, text)
    found = re.match(rf"{re.escape(RULES_FILE)}:(\d+): ", message)
    return RequestError("rules", message, int(found.group(1)) if found else None)


_RULES_PATH = re.compile(rf"\S*nanopto-playground-[^/\s]*/{re.escape(RULES_FILE)}")
"""The rules text's temporary file, as a rule or pass declared in it names its line
(`Rule.where`, a contained pass's error) while the pipeline runs."""


def _bounded(manager: PassManager, limits: PlaygroundLimits) -> PassManager:
    """Every saturating pass with the playground's limits and `trace=True` (its result is shown)."""
    bounded = []
    for pass_ in manager.passes:
        names = {f.name for f in dataclasses.fields(pass_)} if dataclasses.is_dataclass(pass_) else set()
        given = {o: min(getattr(pass_, o), getattr(limits, o)) for o in ("timeout", "max_iterations", "max_rows") if o in names}
        bounded.append(replace(pass_, **given) if given else pass_)  # type: ignore[type-var]
    return traced(PassManager(bounded))


def _line_of(message: str) -> int | None:
    found = re.search(rf"{re.escape(PROGRAM_FILE)}:(\d+)", message)
    return int(found.group(1)) if found else None


def _pass_rules(pass_: Pass, done: PassRun) -> list[dict[str, Any]]:
    """Per rule of one pass: its matches (all of a user pass's rules, fired or not), as the run
    recorded them."""
    if isinstance(done.trace, InlineResult):
        return [{"rule": rule, "matches": count} for rule, count in rule_counts(done.trace).items()]
    if isinstance(pass_, RewriteRules) and done.rules is not None:
        return [
            {"rule": rule.name, "ruleset": rs.name, "matches": done.rules[rule.name], "shape": f"{rule.before} => {rule.after}"}
            for rs in pass_.rulesets
            for rule in rs.rules
        ]
    return []


class _CpuTimes:
    """CPU seconds per part of one run (`run_request`'s `timings`): the machine is shared, so the
    bench reads these rather than wall times."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        started = time.process_time()
        try:
            yield
        finally:
            self.parts[name] = self.parts.get(name, 0.0) + time.process_time() - started


def run_request(payload: dict[str, Any], limits: PlaygroundLimits | None = None) -> dict[str, Any]:
    """POST /api/run: parse, load the rules, run the pipeline, and describe everything seen. Its
    `timings` are the CPU seconds of each part (`bench/playground_bench.py` prints them)."""
    limits = limits or PlaygroundLimits()
    cpu = _CpuTimes()
    source = _text(payload, "program", limits)
    rules_text = _text(payload, "rules", limits)
    with cpu.part("parse"):
        before = parse(source)
    with cpu.part("rules"):
        user_passes = load_rules(rules_text)
    pipeline = _text(payload, "pipeline", limits).strip() or ",".join([DEFAULT_PIPELINE, *(p.name for p in user_passes)])
    try:
        manager = _bounded(PassManager.from_pipeline(pipeline), limits)
    except Exception as exc:  # a malformed spec, an unknown pass or option: the user's to fix
        raise RequestError("pipeline", str(exc)) from None
    try:
        with cpu.part("passes"):
            run = record_run(manager, before, egraphs=True, source=source, file=PROGRAM_FILE)
    except SaturationLimitError as exc:
        raise RequestError("run", f"{_RULES_PATH.sub(RULES_FILE, str(exc))} (the playground bounds each saturation run: "
                           f"{limits.timeout:g} s, {limits.max_iterations} iterations, {limits.max_rows} rows)") from None
    except (ValueError, RuntimeError) as exc:
        message = " ".join(str(exc).split())
        if _RULES_PATH.search(message):
            raise _rules_error(message) from None
        raise RequestError("run", message, _line_of(message)) from None
    after = run.after
    with cpu.part("print"):
        after_text = python_print(after)
    with cpu.part("sites"):
        # each site's record once, keyed by the run's sites tuple (which only a run without sites
        # could share with another); the page builds its sites table from them
        records = {id(r.sites): [site_record(r, s, source) for s in r.sites] for r in run.inline_results}
    with cpu.part("sections"):
        # plain panes show no line origins: the shown run's provenance is not re-keyed for them
        shown = run.shown_inline(line_origins=detailed_panes(after_text, limits.max_detail_lines))
        sections = inline_sections(
            PROGRAM_FILE, source, before, after, f"after {pipeline}", shown,
            after_text=after_text, max_detail_lines=limits.max_detail_lines,
        )
        passes = []
        for pass_, done in zip(manager.passes, run.passes, strict=True):
            rules = _pass_rules(pass_, done)
            passes.append(
                {
                    "name": done.name,
                    "changed": done.changed,
                    "user": done.user,
                    "rules": rules,
                    "never_fired": done.never_fired if done.user else [],
                }
            )
    with cpu.part("egraphs"):
        egraphs = viewer_stages(run.snapshots, limits.max_egraph_nodes)
    return {
        "ok": True,
        "pipeline": manager.pass_names,
        "after": after_text,
        "seconds": run.seconds,
        "sites": [record for r in run.inline_results for record in records[id(r.sites)]],
        "shown_sites": _shown_range(run, shown),
        "site_colours": len(PALETTE),
        "passes": passes,
        "warnings": run.warnings(),
        "html": sections,
        "egraphs": egraphs,
        "legend": {op: list(note) for op, note in constructor_notes().items()},
        "timings": cpu.parts,
    }


def _shown_range(run: PipelineRun, shown: InlineResult | None) -> list[int]:
    """`[start, stop]`: the slice of the answer's `sites` that the sites table shows, the sites of
    the run the panes explain (`shown`); the page builds the table from those records."""
    start = 0
    for result in run.inline_results:
        if shown is not None and result.sites is shown.sites:
            return [start, start + len(result.sites)]
        start += len(result.sites)
    return [start, start]


def steps_request(payload: dict[str, Any], limits: PlaygroundLimits | None = None) -> dict[str, Any]:
    """POST /api/steps: InlineFunctions one call site at a time, each egglog iteration recorded,
    then each rewrite pass of the rules file, with every rule's matches (as `nanopto step`)."""
    limits = limits or PlaygroundLimits()
    program = parse(_text(payload, "program", limits))
    user_passes = load_rules(_text(payload, "rules", limits))
    saturation = SaturationLimits(limits.max_iterations, limits.max_rows, limits.timeout)
    steps: list[dict[str, Any]] = []
    budget = limits.max_steps
    truncated = False
    current = program
    try:
        for step in inline_steps(program, limits=saturation, rule_by_rule=True):
            iterations = []
            for it in step.iterations:
                iterations.append(
                    {
                        "ruleset": it.ruleset,
                        "matches": {k: v for k, v in it.matches.items() if v},
                        "updated": it.updated,
                        "function": python_print(it.function) if it.function is not None else None,
                    }
                )
            budget -= 1 + len(iterations)
            current = step.program
            steps.append(
                {
                    "number": step.number,
                    "description": step.description,
                    "site": step.site.number if step.site is not None else None,
                    "matches": {k: v for k, v in step.report.matches.items() if v},
                    "iterations": iterations,
                    "program": python_print(step.program),
                }
            )
            if budget <= 0:
                truncated = True
                break
        if not truncated:
            steps += _user_pass_steps(current, user_passes, len(steps), limits)
    except SaturationLimitError as exc:
        raise RequestError("run", _RULES_PATH.sub(RULES_FILE, str(exc))) from None
    except (ValueError, RuntimeError) as exc:
        message = " ".join(str(exc).split())
        if _RULES_PATH.search(message):
            raise _rules_error(message) from None
        raise RequestError("run", message, _line_of(message)) from None
    return {"ok": True, "before": python_print(program), "steps": steps, "truncated": truncated}


def _user_pass_steps(
    program: Program, user_passes: tuple[Pass, ...], number: int, limits: PlaygroundLimits
) -> list[dict[str, Any]]:
    """One step per pass of the rules file, each rewrite pass with every rule's matches."""
    steps = []
    current = program
    for pass_ in user_passes:
        number += 1
        if not isinstance(pass_, RewriteRules):
            current = pass_(current)
            steps.append({"number": number, "description": f"pass {pass_.name}", "site": None, "matches": {},
                          "never_fired": [], "iterations": [], "program": python_print(current)})
            continue
        bounded = _bounded(PassManager([pass_]), limits)
        with PassContext() as context:
            current = bounded.passes[0](current)
        result = context.traces[-1][1]
        counts = pass_rule_counts(pass_, result) or {}
        report = result.report if isinstance(result, RewriteResult) else None
        steps.append(
            {
                "number": number,
                "description": f"pass {pass_.name}",
                "site": None,
                "matches": counts,
                "never_fired": [rule for rule, count in counts.items() if not count],
                "iterations": [],
                "iteration_count": report.iterations if report is not None else 0,
                "program": python_print(current),
            }
        )
    return steps


def worker_answer(request: dict[str, Any]) -> dict[str, Any]:
    """One request in the worker process (`serve_worker`): `{"kind": "run"|"steps", "payload",
    "limits"}` -> the answer the page gets, errors included."""
    handler = {"run": run_request, "steps": steps_request}[request["kind"]]
    try:
        return handler(request["payload"], PlaygroundLimits(**request["limits"]))
    except RequestError as exc:
        return {"ok": False, "error": exc.as_json()}
    except MemoryError:
        message = "the run ran out of memory (the playground caps the memory of each run)"
        return {"ok": False, "error": {"where": "run", "message": message}}
    except Exception as exc:  # a bug in nanopto: still an answer the page can show
        message = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())} (a bug in nanopto; please report it)"
        return {"ok": False, "error": {"where": "internal", "message": message}, "internal": True}


def examples_listing() -> dict[str, Any]:
    return {
        "programs": [{"name": n, "summary": summary(example_source(n))} for n in example_names()],
        "rules": [{"name": n, "summary": summary(rules_example_source(n))} for n in rules_example_names()],
        "default_pipeline": DEFAULT_PIPELINE,
    }


def example_request(name: str) -> dict[str, Any]:
    try:
        if name.startswith("rules/"):
            return {"name": name, "source": rules_example_source(name[len("rules/") :])}
        return {"name": name, "source": example_source(name)}
    except KeyError as exc:
        raise RequestError("example", str(exc.args[0])) from None


# ---------------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------------


def static_file(name: str) -> tuple[bytes, str] | None:
    """A file the page loads: ours from `tools/playground/`, the viewer from egglog's wheel."""
    types = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
    if name in ("viewer.js", "viewer.css"):
        folder = resources.files("egglog")
        name = "visualizer" + name[len("viewer") :]
    else:
        folder = resources.files("nanopto.tools") / STATIC
    if not re.fullmatch(r"[a-z_]+\.(html|js|css)", name):
        return None
    file = folder / name
    if not file.is_file():
        return None
    return file.read_bytes(), types[name[name.rindex(".") :]] + "; charset=utf-8"


class PlaygroundServer(ThreadingHTTPServer):
    """The playground's HTTP server: 127.0.0.1 only, a token on every request."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog: a burst of parallel runs waits, not reset
    max_connections = 64
    """Connections open at once (module doc: the oldest one without the token makes room)."""
    read_timeout = 10.0
    """Seconds a connection may keep the server waiting for the next bytes of its request."""

    def __init__(self, port: int = 0, token: str | None = None, limits: PlaygroundLimits | None = None) -> None:
        self.token = token or secrets.token_urlsafe(24)
        self.limits = limits or PlaygroundLimits()
        self.worker: RunWorker | None = None  # a failed bind closes the server before it has one
        self._connections: dict[socket.socket, bool] = {}
        """Open connections, oldest first -> whether the request showed the token."""
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), PlaygroundHandler)
        self.worker = RunWorker(WORKER_TARGET, self.limits.request_timeout, self.limits.max_memory_bytes)
        """Every run, in one child process at a time (see the module doc)."""
        self.worker.start()  # it imports nanopto while the user opens the page

    def server_close(self) -> None:
        super().server_close()
        if self.worker is not None:
            self.worker.close()

    # -- connections: a cap, the oldest unauthenticated one making room ------------------------

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            if len(self._connections) >= self.max_connections:
                idle = next((c for c, shown in self._connections.items() if not shown), None)
                if idle is None:  # every one is a request with the token: refuse the newcomer
                    self.shutdown_request(request)
                    return
                del self._connections[idle]
                with contextlib.suppress(OSError):
                    idle.shutdown(socket.SHUT_RDWR)  # its handler reads the end and finishes
            self._connections[request] = False
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.pop(request, None)
        super().shutdown_request(request)

    def authenticated(self, request: socket.socket) -> None:
        """The request on this connection showed the token: it is never closed to make room."""
        with self._connections_lock:
            if request in self._connections:
                self._connections[request] = True

    @property
    def open_connections(self) -> int:
        with self._connections_lock:
            return len(self._connections)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke, timed out or was closed to make room ends quietly; anything
        else is one line on standard error, never a traceback per connection."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError | ValueError):
            return
        print(f"nanopto playground: a request failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def host_allowed(self, host: str | None) -> bool:
        return host in {f"127.0.0.1:{self.port}", f"localhost:{self.port}", "127.0.0.1", "localhost"}

    def origin_allowed(self, origin: str | None) -> bool:
        return origin is None or origin in {f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"}


NO_TOKEN_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>nanopto playground</title></head>
<body style="font: 15px/1.5 system-ui, sans-serif; margin: 40px; max-width: 46em">
<h1>This playground needs its token</h1>
<p>Open the address <code>nanopto serve</code> printed (it ends in <code>?token=...</code>): the server answers
only requests that carry it. To open a shared permalink, append the part of this address from <code>#</code>
on to that address.</p></body></html>
"""


class PlaygroundHandler(BaseHTTPRequestHandler):
    server: PlaygroundServer
    server_version = "nanopto-playground"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.read_timeout)  # a read that waits longer ends the connection

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal shows the URL and errors only

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # the token stays out of Referer headers
        self.end_headers()
        self.wfile.write(body)

    def _drain(self, length: int) -> None:
        """Read a refused body (up to a few times the limit) before answering, so the client,
        still sending, gets the 413 instead of a broken pipe; a larger one closes the connection."""
        if not 0 < length <= 4 * self.server.limits.max_body_bytes:
            self.close_connection = True
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 65536))
            if not chunk:
                break
            length -= len(chunk)

    def _json(self, status: int, data: dict[str, Any]) -> None:
        self._send(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def _allowed(self) -> bool:
        """Host, Origin and token checks; a refused request gets 403 and nothing else."""
        query = parse_qs(urlsplit(self.path).query)
        token = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        if not self.server.host_allowed(self.headers.get("Host")):
            self._json(HTTPStatus.FORBIDDEN, {"ok": False, "error": {"where": "http", "message": "Host must be 127.0.0.1 or localhost"}})
            return False
        if not self.server.origin_allowed(self.headers.get("Origin")):
            self._json(HTTPStatus.FORBIDDEN, {"ok": False, "error": {"where": "http", "message": "cross-origin request refused"}})
            return False
        if not secrets.compare_digest(token.encode(), self.server.token.encode()):
            if self.command == "GET" and urlsplit(self.path).path == "/":
                self._send(HTTPStatus.FORBIDDEN, NO_TOKEN_PAGE.encode(), "text/html; charset=utf-8")
            else:
                self._json(HTTPStatus.FORBIDDEN, {"ok": False, "error": {"where": "http", "message": "missing or wrong token: open the URL nanopto serve printed"}})
            return False
        self.server.authenticated(self.connection)
        return True

    def _bad_request(self, message: str) -> None:
        self.close_connection = True
        self._json(HTTPStatus.BAD_REQUEST, {"ok": False, "error": {"where": "http", "message": message}})

    def do_GET(self) -> None:
        if not self._allowed():
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/":
            found = static_file("index.html")
            assert found is not None
            page = found[0].decode().replace("__TOKEN__", escape(self.server.token, quote=True))
            self._send(HTTPStatus.OK, page.encode(), found[1])
        elif parts.path.startswith("/static/"):
            found = static_file(parts.path[len("/static/") :])
            if found is None:
                self._json(HTTPStatus.NOT_FOUND, {"ok": False, "error": {"where": "http", "message": "no such file"}})
            else:
                self._send(HTTPStatus.OK, *found)
        elif parts.path == "/api/examples":
            self._json(HTTPStatus.OK, examples_listing())
        elif parts.path == "/api/example":
            self._answer(lambda: example_request((query.get("name") or [""])[0]))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"ok": False, "error": {"where": "http", "message": "not found"}})

    def do_POST(self) -> None:
        if not self._allowed():
            return
        path = urlsplit(self.path).path
        kinds = {"/api/run": "run", "/api/steps": "steps"}
        kind = kinds.get(path)
        if kind is None:
            self._json(HTTPStatus.NOT_FOUND, {"ok": False, "error": {"where": "http", "message": "not found"}})
            return
        if self.headers.get("Transfer-Encoding"):
            self._bad_request("a chunked (Transfer-Encoding) body is not accepted: send the JSON with a Content-Length")
            return
        if self.headers.get("Content-Length") is None:
            self._bad_request("the request has no Content-Length: send the JSON body with its length")
            return
        try:
            length = int(self.headers["Content-Length"])
        except ValueError:
            self._bad_request("the Content-Length is not a number")
            return
        if not 0 <= length <= self.server.limits.max_body_bytes:
            self._drain(length)
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"ok": False, "error": {"where": "http", "message": f"the request must be at most {self.server.limits.max_body_bytes} bytes"}})
            return
        body = self.rfile.read(length)
        if len(body) < length:
            self._bad_request(f"the body ended after {len(body)} of its {length} bytes")
            return
        try:
            payload = check_payload(json.loads(body or b"{}"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._bad_request(f"the body must be JSON: {exc}")
            return
        except RecursionError:
            self._bad_request("the body's JSON is nested too deeply")
            return
        except RequestError as exc:
            self._bad_request(exc.message)
            return
        self._answer(lambda: self._in_worker(kind, payload))

    def _in_worker(self, kind: str, payload: dict[str, Any]) -> bytes:
        """The worker's answer as the JSON it wrote (`serve_worker`): forwarded, not re-encoded."""
        assert self.server.worker is not None
        try:
            answer: WorkerAnswer = self.server.worker.call(kind, payload, self.server.limits)
        except WorkerError as exc:
            raise RequestError("run", str(exc)) from None
        if answer.internal:
            raise InternalError(json.loads(answer.body)["error"]["message"])
        return answer.body

    def _answer(self, compute: Callable[[], dict[str, Any] | bytes]) -> None:
        """Answer with what `compute` gives: a dict, or JSON already encoded (the worker's)."""
        try:
            found = compute()
            if isinstance(found, bytes):
                self._send(HTTPStatus.OK, found, "application/json; charset=utf-8")
            else:
                self._json(HTTPStatus.OK, found)
        except InternalError as exc:
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"ok": False, "error": {"where": "internal", "message": str(exc)}})
        except RequestError as exc:
            self._json(HTTPStatus.OK, {"ok": False, "error": exc.as_json()})
        except Exception as exc:  # a bug in nanopto: still an answer the page can show
            message = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())} (a bug in nanopto; please report it)"
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"ok": False, "error": {"where": "internal", "message": message}})


def serve(port: int = 8765, open_browser: bool = False, out: Callable[[str], None] = print) -> None:
    """Run the playground until interrupted (Ctrl-C, SIGINT or SIGTERM); prints the URL with its
    token. The worker process goes with the server, however it is stopped."""
    server = PlaygroundServer(port)  # a port in use is an OSError the command line reports

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # unwinds serve_forever in the main thread, into the finally below

    previous = signal.signal(signal.SIGTERM, stop) if threading.current_thread() is threading.main_thread() else None
    try:
        out(f"nanopto playground: {server.url}")
        out("(listening on 127.0.0.1 only; the token in the URL is required; Ctrl-C stops)")
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
