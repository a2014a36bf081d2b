"""The playground's worker: each run of a user's rules and pipeline happens in a child process.

A rules file is Python the user wrote, and the server imports (runs) it; an endless loop in it, or
a pipeline that never ends, must not stop the playground. So `/api/run` and `/api/steps` are
handed to a child process (`python -m nanopto.tools.serve_worker nanopto.tools.serve:worker_answer`),
one request at a time, with a
time limit on each: a run that overruns is killed, the page is told so, a fresh child is started
at once and the server keeps serving. The child's address space is capped too
(`PlaygroundLimits.max_memory_bytes`), so a rule that grows the e-graph without end fails with an
error instead of taking the machine's memory.

The protocol is one JSON line each way over the child's standard input and a private duplicate of
its standard output (the child's own standard output goes to its standard error, so a `print` in a
rules file cannot garble an answer). The child first says `{"ready": true}` once it has imported
nanopto, so the time limit counts the run, not Python's start-up.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO

READY = {"ready": True}
STARTUP_TIMEOUT = 120.0
"""Seconds a new child may take to import nanopto before the request fails (a loaded machine)."""


class WorkerError(Exception):
    """A request the worker could not answer: the run overran its time, or the child died."""


class RunWorker:
    """One child process running playground requests one at a time (thread-safe)."""

    def __init__(self, target: str, timeout: float, max_memory_bytes: int | None) -> None:
        self.target = target
        """`module:function` the child answers requests with."""
        self.timeout = timeout
        self.max_memory_bytes = max_memory_bytes
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._buffer = b""
        self.restarts = 0
        """Children killed or lost so far (the tests read it)."""

    # -- the child's life ------------------------------------------------------------------------

    def start(self) -> None:
        """Start a child now (it imports nanopto in the background) unless one is running."""
        if self._child is not None and self._child.poll() is None:
            return
        command = [sys.executable, "-m", "nanopto.tools.serve_worker", self.target]
        if self.max_memory_bytes is not None:
            command.append(str(self.max_memory_bytes))
        self._child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._ready = False
        self._buffer = b""

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            child.kill()
        child.wait()
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    # -- one request -----------------------------------------------------------------------------

    def _read_line(self, deadline: float) -> dict[str, Any] | None:
        """The child's next answer, or None when the deadline passed; WorkerError if it died."""
        assert self._child is not None and self._child.stdout is not None
        fd = self._child.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self._child.wait()
                raise WorkerError(_death(code, self.max_memory_bytes))
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, kind: str, payload: dict[str, Any], limits: Any) -> dict[str, Any]:
        """Run `kind` ("run" or "steps") in the child: its answer (`{"ok": ...}`), or WorkerError."""
        with self._lock:
            try:
                return self._call(kind, payload, limits)
            except WorkerError:
                self._stop()
                self.restarts += 1
                self.start()  # the next request finds a child already importing
                raise

    def _call(self, kind: str, payload: dict[str, Any], limits: Any) -> dict[str, Any]:
        self.start()
        if not self._ready:
            if self._read_line(time.monotonic() + STARTUP_TIMEOUT) is None:
                raise WorkerError(f"the playground's worker did not start within {STARTUP_TIMEOUT:g} s")
            self._ready = True
        assert self._child is not None and self._child.stdin is not None
        request = {"kind": kind, "payload": payload, "limits": dataclasses.asdict(limits)}
        try:
            self._child.stdin.write(json.dumps(request).encode() + b"\n")
        except BrokenPipeError:
            raise WorkerError(_death(self._child.wait(), self.max_memory_bytes)) from None
        answer = self._read_line(time.monotonic() + self.timeout)
        if answer is None:
            raise WorkerError(
                f"the run did not finish within {self.timeout:g} s and was stopped: is there an endless loop "
                "in the rules file, or a rule that keeps growing the program? The playground keeps serving; "
                "fix the rules and run again"
            )
        return answer


def _death(code: int, max_memory_bytes: int | None) -> str:
    cap = f"; each run may use at most {max_memory_bytes // 2**20} MB" if max_memory_bytes else ""
    return f"the run stopped the playground's worker (exit code {code}: out of memory?{cap}); a new one is started"


# ---------------------------------------------------------------------------------------------
# The child
# ---------------------------------------------------------------------------------------------


def _cap_memory(max_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform: the time limit still holds
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main(argv: list[str] | None = None) -> None:
    """`python -m nanopto.tools.serve_worker MODULE:FUNCTION [MAX_MEMORY_BYTES]`: answer each
    request line with FUNCTION(request) (for the playground, `nanopto.tools.serve:worker_answer`)."""
    args = sys.argv[1:] if argv is None else argv
    answers: BinaryIO = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a rules file's print() goes to standard error, never into an answer
    sys.stdout = sys.stderr
    module, _, function = args[0].partition(":")
    handler = getattr(importlib.import_module(module), function)  # imports nanopto before "ready"
    if len(args) > 1:
        _cap_memory(int(args[1]))
    answers.write(json.dumps(READY).encode() + b"\n")
    answers.flush()
    for line in sys.stdin.buffer:
        answer = handler(json.loads(line))
        answers.write(json.dumps(answer).encode() + b"\n")
        answers.flush()


if __name__ == "__main__":
    main()
