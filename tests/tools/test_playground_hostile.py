"""The playground attacked as another local user or a hostile page would, and the guarantees that
must keep holding (docs/playground.md#what-runs-and-who-can-reach-it).

Each probe is driven over a real socket (or through `nanopto serve` in a subprocess), and after
each the server must still answer a normal run.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import nanopto.passes  # noqa: F401  (registers the passes)
from nanopto.tools import serve as serve_module
from nanopto.tools.examples import example_source
from nanopto.tools.serve import PlaygroundLimits, PlaygroundServer
from nanopto.tools.serve_worker import descendants

TWICE = example_source("twice")
SINGLE = example_source("single_site")
REPO = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux's /proc and prctl")


def _start(limits: PlaygroundLimits) -> PlaygroundServer:
    running = PlaygroundServer(0, limits=limits)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    return running


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    running = _start(PlaygroundLimits(request_timeout=8.0, max_memory_bytes=2**30))
    yield running
    running.shutdown()
    running.server_close()


def request(
    server: PlaygroundServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    connection.request(method, path, body=data, headers=headers or {})
    response = connection.getresponse()
    raw = response.read()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw


def token(server: PlaygroundServer) -> dict[str, str]:
    return {"X-Nanopto-Token": server.token, "Content-Type": "application/json"}


def still_serving(server: PlaygroundServer) -> None:
    """A normal run after the probe: answered, and with its own answer."""
    status, got = request(server, "POST", "/api/run", {"program": TWICE}, token(server))
    assert status == 200 and got["ok"] and "t_inline0 = pl.add(t_inline0, t_inline0)" in got["after"], got


def raw_request(server: PlaygroundServer, data: bytes) -> tuple[int, dict[str, Any]]:
    """Send bytes as they are (a chunked body, a body without its length) and read the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


# ---------------------------------------------------------------------------------------------
# `nanopto serve` on the command line: a busy port, --port 0, SIGTERM and SIGINT
# ---------------------------------------------------------------------------------------------


def _nanopto(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "nanopto", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
    )


def test_a_busy_port_says_so_and_suggests_port_0() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _nanopto("serve", "--port", str(port))
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert "--port 0" in err and "internal error" not in err and "Traceback" not in err


@linux_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_port_0_prints_the_url_and_a_signal_takes_the_worker_along(signum: int) -> None:
    proc = _nanopto("serve", "--port", "0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("nanopto playground: http://127.0.0.1:"), line
        url = line.split(": ", 1)[1].strip()
        port = int(url.split(":")[2].split("/")[0])
        assert port != 0
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/api/examples?token=" + url.split("token=")[1])
        assert connection.getresponse().status == 200
        workers = descendants(proc.pid)
        assert workers, "the worker process was not started"
        proc.send_signal(signum)
        proc.wait(timeout=60)
        time.sleep(0.2)
        for pid in workers:
            assert not _alive(pid), f"worker {pid} outlived the server"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Malformed bodies: 400 with the reason, and the server keeps serving
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"pipeline": [1]}', "'pipeline' must be a string, not list"),
        (b'{"program": {"a": 1}}', "'program' must be a string, not dict"),
        (b"[1, 2]", "must be a JSON object"),
        (b"[" * 499_999 + b"]" * 499_999, "nested too deeply"),
        (b"not json", "must be JSON"),
    ],
    ids=["pipeline-list", "program-object", "array", "nesting-bomb", "not-json"],
)
def test_a_malformed_body_is_400_with_the_reason(server: PlaygroundServer, body: bytes, reason: str) -> None:
    status, got = request(server, "POST", "/api/run", body, token(server))
    assert status == 400 and reason in got["error"]["message"], got
    still_serving(server)


def test_a_chunked_body_or_one_without_its_length_is_400(server: PlaygroundServer) -> None:
    head = f"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Nanopto-Token: {server.token}\r\n"
    body = json.dumps({"program": TWICE}).encode()
    chunked = head.encode() + b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    status, got = raw_request(server, chunked)
    assert status == 400 and "chunked" in got["error"]["message"]
    status, got = raw_request(server, head.encode() + b"Connection: close\r\n\r\n" + body)
    assert status == 400 and "Content-Length" in got["error"]["message"]
    still_serving(server)


# ---------------------------------------------------------------------------------------------
# The rules file against its own containment
# ---------------------------------------------------------------------------------------------

STRAY = """
import os
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        os.write(fd, b'{"ok": true, "after": "forged"}\\n{"id": 2, "answer": {"ok": true}}\\n{"half": ')
    except OSError:
        pass
PASSES = []
"""


@linux_only
def test_stray_lines_from_a_rules_file_never_shift_answers(server: PlaygroundServer) -> None:
    status, got = request(server, "POST", "/api/run", {"program": TWICE, "rules": STRAY}, token(server))
    assert status == 200 and got["ok"] and "t_inline0" in got["after"], got
    for program, expected in ((SINGLE, "def main"), (TWICE, "t_inline0 = pl.add(t_inline0, t_inline0)")):
        status, got = request(server, "POST", "/api/run", {"program": program}, token(server))
        assert status == 200 and got["ok"] and expected in got["after"] and "forged" not in got["after"]
        assert (program is TWICE) == ("t_inline0 = pl.add" in got["after"])


RAISE_LIMIT = """
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
try:
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    raised = "raised"
except (ValueError, OSError):
    raised = "refused"
BIG = bytearray({size})
"""


@linux_only
def test_the_memory_cap_is_a_hard_limit_the_rules_file_cannot_lift(server: PlaygroundServer) -> None:
    cap = server.limits.max_memory_bytes
    assert cap is not None
    status, got = request(server, "POST", "/api/run", {"program": TWICE, "rules": RAISE_LIMIT.format(size=2 * cap)}, token(server))
    assert status == 200 and not got["ok"] and "MemoryError" in got["error"]["message"], got
    report = RAISE_LIMIT.format(size=0) + "raise RuntimeError(f'{raised} {resource.getrlimit(resource.RLIMIT_AS)}')\n"
    status, got = request(server, "POST", "/api/run", {"program": TWICE, "rules": report}, token(server))
    assert f"refused ({cap}, {cap})" in got["error"]["message"], got
    still_serving(server)


DETACH = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open({path!r}, "w") as out:
            out.write(str(os.getpid()))
        time.sleep(600)
    os.kill(os.getpid(), 9)  # the middle child ends itself (os._exit in a rules file is contained)
while True:  # never ends; sleeps, so the time limit does not cost the suite a core
    time.sleep(0.05)
"""


@linux_only
def test_a_detached_child_of_the_rules_file_is_killed_with_the_run(tmp_path: Path) -> None:
    """The run's limit is 2 s (the time this test waits with its core idle; the rules file forks
    at once); the run after it gets a limit no loaded machine reaches."""
    running = _start(PlaygroundLimits(request_timeout=2.0, max_memory_bytes=2**30))
    try:
        pid_file = tmp_path / "pid"
        status, got = request(running, "POST", "/api/run", {"program": TWICE, "rules": DETACH.format(path=str(pid_file))}, token(running))
        assert status == 200 and "did not finish within 2 s" in got["error"]["message"], got
        pid = int(pid_file.read_text())
        time.sleep(0.2)
        assert not _alive(pid), "the detached grandchild outlived the run"
        assert running.worker is not None
        running.worker.timeout = 60.0
        still_serving(running)
    finally:
        running.shutdown()
        running.server_close()


# ---------------------------------------------------------------------------------------------
# Connections: idle ones, dropped ones, and the cap
# ---------------------------------------------------------------------------------------------


def test_idle_and_dropped_connections_do_not_starve_the_user(server: PlaygroundServer, capfd: pytest.CaptureFixture[str]) -> None:
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(3 * server.max_connections)]
    try:
        for sock in idle[::2]:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a request that never ends
        time.sleep(0.5)
        assert server.open_connections <= server.max_connections
        started = time.monotonic()
        still_serving(server)  # the oldest connections without the token made room
        assert time.monotonic() - started < 30
    finally:
        for sock in idle:
            sock.close()
    for _ in range(50):  # connections dropped halfway through a request
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(f"POST /api/run HTTP/1.1\r\nX-Nanopto-Token: {server.token}\r\nContent-Length: 500\r\n\r\n{{".encode())
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset
    time.sleep(0.5)
    still_serving(server)
    assert "Traceback" not in capfd.readouterr().err


def test_an_idle_connection_is_closed_after_the_read_timeout(server: PlaygroundServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "read_timeout", 0.5)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        started = time.monotonic()
        assert sock.recv(100) == b""  # closed by the server, not by us
        assert time.monotonic() - started < 10


# ---------------------------------------------------------------------------------------------
# What already held, and keeps holding
# ---------------------------------------------------------------------------------------------


def test_it_binds_127_0_0_1_only(server: PlaygroundServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    addresses = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1", "127.0.1.1"}
    for address in addresses:
        with socket.socket() as sock, pytest.raises(OSError):
            sock.settimeout(2)
            sock.connect((address, server.port))


def test_the_token_is_compared_in_constant_time(server: PlaygroundServer, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bytes, bytes]] = []
    real = serve_module.secrets.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(serve_module.secrets, "compare_digest", spy)
    status, _ = request(server, "GET", "/api/examples?token=wrong")
    assert status == 403 and seen == [(b"wrong", server.token.encode())]


def test_host_and_origin_are_checked(server: PlaygroundServer) -> None:
    status, _ = request(server, "GET", "/api/examples", headers={**token(server), "Host": f"rebind.example:{server.port}"})
    assert status == 403
    status, _ = request(server, "POST", "/api/run", {"program": TWICE}, {**token(server), "Origin": "http://evil.example"})
    assert status == 403
    still_serving(server)


def test_no_path_traversal_and_413_on_a_large_body(server: PlaygroundServer) -> None:
    for name in ("../serve.py", "..%2Fserve.py", "%2e%2e/serve.py", "../../../etc/passwd"):
        status, _ = request(server, "GET", f"/static/{name}?token={server.token}")
        assert status == 404, name
    status, _ = request(server, "POST", "/api/run", b"x" * (server.limits.max_body_bytes + 1), token(server))
    assert status == 413
    still_serving(server)


def test_html_in_a_program_is_escaped(server: PlaygroundServer) -> None:
    program = TWICE.replace("return w", "return w  # <script>alert(1)</script> & <img src=x onerror=alert(1)>")
    status, got = request(server, "POST", "/api/run", {"program": program}, token(server))
    assert status == 200 and got["ok"]
    panes = got["html"]["panes"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panes and "<script>" not in panes and "<img" not in panes


def test_fifty_parallel_runs_are_served(server: PlaygroundServer) -> None:
    def one(i: int) -> tuple[int, Any]:
        return request(server, "POST", "/api/run", {"program": SINGLE.replace("class P", f"class P{i}")}, token(server))

    started = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(one, range(50)))
    elapsed = time.monotonic() - started
    assert all(status == 200 and got["ok"] for status, got in answers)
    assert [f"class P{i}" in got["after"] for i, (_, got) in enumerate(answers)] == [True] * 50  # each its own
    assert elapsed < 120  # served, not timed out (the speed itself is measured in bench/)
