"""The playground's worker: each run of a user's rules and pipeline happens in a child process.

A rules file is Python the user wrote, and the server imports (runs) it; an endless loop in it, or
a pipeline that never ends, must not stop the playground. So `/api/run` and `/api/steps` are
handed to a child process (`python -m nanopto.tools.serve_worker nanopto.tools.serve:worker_answer`),
one request at a time, with a
time limit on each: a run that overruns is killed, the page is told so, a fresh child is started
at once and the server keeps serving. The child's address space is capped too
(`PlaygroundLimits.max_memory_bytes`), so a rule that grows the e-graph without end fails with an
error instead of taking the machine's memory.

The protocol goes over the child's standard input and a private duplicate of its standard output
(the child's own standard output goes to its standard error, so a `print` in a rules file cannot
garble an answer). A request is one JSON line with an id. The answer is a header line repeating
that id, with the length and CRC-32 of the answer's JSON and whether it reports a nanopto bug,
then that JSON on a line of its own: the server hands the JSON to the page as it is, without
decoding and encoding again what can be 20 MB. A line the rules file wrote itself (or a half line)
is no header for this request, and an answer whose bytes do not match its header's length and
checksum (a write interleaved with it) is no answer: both are skipped, so they can never be taken
for the answer to this request or shift the later ones. The child first says `{"ready": true}`
once it has imported nanopto, so the time limit counts the run, not Python's start-up.

Containment holds against the rules file itself. The memory cap is both the soft and the hard
limit, set before any user code runs (and the child gives up the capability that would let root
raise a hard limit), so the rules file cannot lift it. The child starts a session of its own and
makes itself the reaper of its orphans, so a process the rules file forks, even one that detaches
with `os.setsid()`, stays its descendant; killing the child freezes it and kills its process group
and every descendant first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

READY = {"ready": True}
STARTUP_TIMEOUT = 120.0
"""Seconds a new child may take to import nanopto before the request fails (a loaded machine)."""


class WorkerError(Exception):
    """A request the worker could not answer: the run overran its time, or the child died."""


@dataclass(frozen=True)
class WorkerAnswer:
    """The child's answer to one request: its JSON as the child encoded it (module doc)."""

    body: bytes
    internal: bool
    """The answer reports a bug in nanopto (the server answers it with a 500)."""


def answer_frame(request_id: Any, answer: dict[str, Any]) -> bytes:
    """The bytes the child writes for one answer: a leading newline that ends any half line the
    rules file left on the pipe, the header line, and the answer's JSON on a line of its own."""
    internal = bool(answer.pop("internal", False))
    body = json.dumps(answer).encode()
    header = {"id": request_id, "bytes": len(body), "crc32": zlib.crc32(body), "internal": internal}
    return b"\n" + json.dumps(header).encode() + b"\n" + body + b"\n"


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
        self._buffer = bytearray()
        self._next_id = 0
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
        self._child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, start_new_session=True
        )
        self._ready = False
        self._buffer = bytearray()

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            kill_tree(child.pid)
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

    def _fill(self, size: int, deadline: float) -> bool:
        """Read from the child until the buffer holds `size` bytes (False: the deadline passed);
        WorkerError if it died. The buffer grows in place: a pipe hands over 64 KB at a time, so a
        20 MB answer comes in ~300 reads, and copying the whole buffer at each one took seconds."""
        assert self._child is not None and self._child.stdout is not None
        fd = self._child.stdout.fileno()
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self._child.wait()
                raise WorkerError(_death(code, self.max_memory_bytes))
            self._buffer += chunk
        return True

    def _line(self, deadline: float) -> bytes | None:
        """The child's next line, taken from the buffer (None: the deadline passed). Only the
        bytes read since the last look are searched for its end."""
        scanned = 0
        end = self._buffer.find(b"\n")
        while end < 0:
            scanned = len(self._buffer)
            if not self._fill(scanned + 1, deadline):
                return None
            end = self._buffer.find(b"\n", scanned)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def _read_ready(self, deadline: float) -> bool:
        """Whether the child said it is ready before the deadline; other lines are skipped."""
        while True:
            line = self._line(deadline)
            if line is None:
                return False
            with contextlib.suppress(ValueError):
                if json.loads(line) == READY:
                    return True

    def _read_answer(self, deadline: float, request_id: int) -> WorkerAnswer | None:
        """The child's answer to `request_id`, or None when the deadline passed; WorkerError if it
        died. Lines that are not its header, and a body that does not match the header, are
        skipped (module doc)."""
        while True:
            line = self._line(deadline)
            if line is None:
                return None
            if len(line) > 512 or not line.startswith(b'{"id": '):
                continue  # an answer's header is short; anything else is not one
            try:
                header = json.loads(line)
            except ValueError:  # a stray or half line: not an answer
                continue
            if not isinstance(header, dict) or header.get("id") != request_id:
                continue
            size, crc = header.get("bytes"), header.get("crc32")
            if type(size) is not int or type(crc) is not int or size < 0:
                continue
            if not self._fill(size + 1, deadline):
                return None
            body = bytes(self._buffer[:size])
            if self._buffer[size] != ord("\n") or zlib.crc32(body) != crc:
                continue  # not the bytes the header describes: its lines are scanned as any other
            del self._buffer[: size + 1]
            return WorkerAnswer(body, header.get("internal") is True)

    def call(self, kind: str, payload: dict[str, Any], limits: Any) -> WorkerAnswer:
        """Run `kind` ("run" or "steps") in the child: its answer (`{"ok": ...}` as JSON), or WorkerError."""
        with self._lock:
            try:
                return self._call(kind, payload, limits)
            except WorkerError:
                self._stop()
                self.restarts += 1
                self.start()  # the next request finds a child already importing
                raise

    def _call(self, kind: str, payload: dict[str, Any], limits: Any) -> WorkerAnswer:
        self.start()
        if not self._ready:
            if not self._read_ready(time.monotonic() + STARTUP_TIMEOUT):
                raise WorkerError(f"the playground's worker did not start within {STARTUP_TIMEOUT:g} s")
            self._ready = True
        assert self._child is not None and self._child.stdin is not None
        self._next_id += 1
        request = {"id": self._next_id, "kind": kind, "payload": payload, "limits": dataclasses.asdict(limits)}
        try:
            self._child.stdin.write(json.dumps(request).encode() + b"\n")
        except BrokenPipeError:
            raise WorkerError(_death(self._child.wait(), self.max_memory_bytes)) from None
        answer = self._read_answer(time.monotonic() + self.timeout, self._next_id)
        if answer is None:
            raise WorkerError(
                f"the run did not finish within {self.timeout:g} s and was stopped: is there an endless loop "
                "in the rules file, or a rule that keeps growing the program? The playground keeps serving; "
                "fix the rules and run again"
            )
        return answer


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (Linux's /proc; elsewhere none are found)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def kill_tree(pid: int) -> None:
    """Kill the worker `pid`, its process group and every descendant, even one that started a
    session of its own: each is stopped before it is killed, so none forks out of reach."""
    _signal(pid, signal.SIGSTOP)
    for _ in range(20):
        found = descendants(pid)
        if not found:
            break
        for child in found:
            _signal(child, signal.SIGSTOP)
        for child in found:
            _signal(child, signal.SIGKILL)
        time.sleep(0.01)  # let the killed ones go, so their own children show up under the worker
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _signal(pid, signal.SIGKILL)


def _death(code: int, max_memory_bytes: int | None) -> str:
    cap = f"; each run may use at most {max_memory_bytes // 2**20} MB" if max_memory_bytes else ""
    return f"the run stopped the playground's worker (exit code {code}: out of memory?{cap}); a new one is started"


# ---------------------------------------------------------------------------------------------
# The child
# ---------------------------------------------------------------------------------------------


CAP_SYS_RESOURCE = 24
"""The Linux capability that lets a process raise its hard resource limits (root has it)."""


def _drop_resource_capability() -> None:
    """Give up CAP_SYS_RESOURCE (effective, permitted, inheritable), so even a child running as
    root cannot raise the hard memory limit again. Best effort: only on Linux with libc."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or name is None:
        return
    libc = ctypes.CDLL(name, use_errno=True)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    data = (Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return
    keep = ~(1 << CAP_SYS_RESOURCE) & 0xFFFFFFFF
    data[0].effective &= keep
    data[0].permitted &= keep
    data[0].inheritable &= keep
    libc.capset(ctypes.byref(header), data)
    libc.prctl(24, CAP_SYS_RESOURCE, 0, 0, 0)  # PR_CAPBSET_DROP: not for its children either


def _cap_memory(max_bytes: int) -> None:
    """The address-space cap as both soft and hard limit: the rules file cannot lift it."""
    try:
        import resource
    except ImportError:  # not on this platform: the time limit still holds
        return
    _drop_resource_capability()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _reap_orphans() -> None:
    """Become the reaper of orphaned descendants (Linux), so a process the rules file forks and
    detaches stays below this child, where `kill_tree` finds it."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if sys.platform.startswith("linux") and name is not None:
        ctypes.CDLL(name).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def main(argv: list[str] | None = None) -> None:
    """`python -m nanopto.tools.serve_worker MODULE:FUNCTION [MAX_MEMORY_BYTES]`: answer each
    request line with FUNCTION(request) (for the playground, `nanopto.tools.serve:worker_answer`)."""
    args = sys.argv[1:] if argv is None else argv
    answers: BinaryIO = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a rules file's print() goes to standard error, never into an answer
    sys.stdout = sys.stderr
    module, _, function = args[0].partition(":")
    handler = getattr(importlib.import_module(module), function)  # imports nanopto before "ready"
    _reap_orphans()
    if len(args) > 1:
        _cap_memory(int(args[1]))
    answers.write(json.dumps(READY).encode() + b"\n")
    answers.flush()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        answers.write(answer_frame(request.get("id"), handler(request)))
        answers.flush()


if __name__ == "__main__":
    main()
