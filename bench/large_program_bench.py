"""Time and memory of `nanopto inline` on a large valid program (5 MB, 143 functions by default).

    python bench/large_program_bench.py                 the 5 MB program
    python bench/large_program_bench.py --functions 30  a smaller one (about 1 MB)
    python bench/large_program_bench.py --tracemalloc   also: what holds Python memory after each phase

The program is generated deterministically: one Inline helper of five statements and `functions - 1`
functions of `statements` scalar statements each, a call to the helper every `site_every`-th. Two
fresh processes measure it:

- phases: read, parse, the default pipeline (inline-functions, hoisting first), print, each
  timed, with the process's peak RSS after each (a running peak: it only grows);
- end to end: `python -m nanopto inline FILE -o OUT`, wall time and the child's peak RSS.

The target (issue 15): at most 60 bytes of peak RSS per byte of source, and parse + inline + print
in at most 15 s on a quiet machine. Exits 1 when the end-to-end run is over either.

One huge function (`--functions 2 --statements 100000`: the helper and a 3.7 MB `f1`) is the case
the parser's method-at-a-time cut cannot help; its body is parsed in pieces
(`parser.BODY_PIECE_LINES`), and its target is 100 bytes per source byte.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BYTES_PER_BYTE_TARGET = 60
SECONDS_TARGET = 15.0

HELPER = """    @pl.function(type=pl.FunctionType.Inline)
    def h(self, x: pl.Scalar[pl.INDEX], k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        a = x + k
        b = a * 3
        c = b - x
        d = c // 2
        return d

"""


def large_source(functions: int = 143, statements: int = 1_000, site_every: int = 100) -> str:
    """One Inline helper and `functions - 1` functions of `statements` statements (about 36
    bytes each), every `site_every`-th a call of the helper: 5.1 MB with the defaults."""
    parts = ["import nanopto.language as pl\n\n\n@pl.program\nclass P:\n", HELPER]
    for f in range(functions - 1):
        lines = [
            "    @pl.function\n",
            f"    def f{f}(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n",
            "        x = k\n",
        ]
        for i in range(statements):
            if i % site_every == site_every - 1:
                lines.append("        x = self.h(x, k)\n")
            else:
                lines.append(f"        x = x + {i} * k - (x // {i % 7 + 2})\n")
        lines.append("        return x\n\n")
        parts.append("".join(lines))
    return "".join(parts)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_phases(path: str, trace_memory: bool) -> dict[str, Any]:
    """Measure each phase in this process (a fresh one); as `nanopto inline` does them."""
    if trace_memory:
        import tracemalloc

        tracemalloc.start(6)
    from nanopto.ir_terms.parser import parse_program
    from nanopto.ir_terms.printer import python_print
    from nanopto.passes import PassManager

    phases: list[dict[str, Any]] = []
    holders: dict[str, list[str]] = {}

    def lap(name: str, started: float, keep: object) -> float:
        now = time.perf_counter()
        phases.append({"phase": name, "seconds": now - started, "peak_rss_mb": _peak_mb()})
        if trace_memory:
            import tracemalloc

            snapshot = tracemalloc.take_snapshot()
            top = snapshot.statistics("lineno")[:8]
            holders[name] = [f"{stat.size / 2**20:8.1f} MB  {stat.traceback[0]}" for stat in top]
            holders[name].insert(0, f"traced now {tracemalloc.get_traced_memory()[0] / 2**20:.0f} MB")
        del keep
        return time.perf_counter()

    started = time.perf_counter()
    source = Path(path).read_text(encoding="utf-8")
    started = lap("read", started, None)
    program = parse_program(source, path)
    started = lap("parse", started, program)
    after = PassManager.default().run(program)
    started = lap("inline", started, after)
    text = python_print(after)
    lap("print", started, text)
    return {"phases": phases, "holders": holders, "output_bytes": len(text.encode())}


def run_cli(path: str) -> dict[str, Any]:
    """`nanopto inline FILE -o OUT` in a child process: wall time and its peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.py")
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "nanopto", "inline", path, "-o", out],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        return {"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "exit": proc.returncode, "stderr": stderr[-500:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--functions", type=int, default=143)
    parser.add_argument("--statements", type=int, default=1_000, help="statements per function")
    parser.add_argument("--site-every", type=int, default=100, help="a call of the helper every N statements")
    parser.add_argument("--tracemalloc", action="store_true", help="list what holds Python memory after each phase")
    parser.add_argument("--phases-only", action="store_true", help="skip the end-to-end run")
    parser.add_argument("--run-phases", nargs=2, metavar=("FILE", "TRACE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_phases:  # the child: one fresh process per measurement
        print(json.dumps(run_phases(args.run_phases[0], args.run_phases[1] == "1")))
        return 0

    source = large_source(args.functions, args.statements, args.site_every)
    size = len(source.encode())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "large.py")
        Path(path).write_text(source, encoding="utf-8")
        print(f"source: {size / 1e6:.2f} MB, {args.functions} functions, {source.count(chr(10)):,} lines, "
              f"{source.count('self.h('):,} call sites")
        child = subprocess.run(
            [sys.executable, __file__, "--run-phases", path, "1" if args.tracemalloc else "0"],
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            print(child.stderr[-2000:])
            return 1
        measured = json.loads(child.stdout)
        total = 0.0
        print("\nphases (one process):")
        for phase in measured["phases"]:
            total += phase["seconds"]
            print(f"  {phase['phase']:<8} {phase['seconds']:7.2f} s   peak RSS so far {phase['peak_rss_mb']:7.0f} MB")
        peak = measured["phases"][-1]["peak_rss_mb"]
        print(f"  {'total':<8} {total:7.2f} s   peak RSS {peak:.0f} MB = {peak * 2**20 / size:.0f} bytes per source byte")
        for phase, lines in measured["holders"].items():
            print(f"\n  Python memory after {phase}: " + "\n    ".join(["", *lines]))
        if args.phases_only:
            return 0
        cli = run_cli(path)
    per_byte = cli["peak_rss_mb"] * 2**20 / size
    print(f"\nnanopto inline end to end: exit {cli['exit']}, {cli['seconds']:.2f} s wall, "
          f"peak RSS {cli['peak_rss_mb']:.0f} MB = {per_byte:.0f} bytes per source byte "
          f"(targets: {SECONDS_TARGET:g} s, {BYTES_PER_BYTE_TARGET} bytes per byte)")
    if cli["exit"] != 0:
        print(cli["stderr"])
    over = cli["exit"] != 0 or per_byte > BYTES_PER_BYTE_TARGET or cli["seconds"] > SECONDS_TARGET
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
