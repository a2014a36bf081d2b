"""Latency where users feel it: the command line and the playground, as the median of 5 runs.

    python bench/latency_bench.py            5 runs of each (the targets of docs/architecture.md#latency)
    python bench/latency_bench.py --runs 9

Cases, each timed as a whole process from start to exit (wall clock), except the playground:
- `python -c pass`:                        the interpreter alone, for reference (site imports included);
- `nanopto --version`:                     target <= 0.15 s;
- `nanopto inline nanopto/examples/bump.py`: target <= 0.8 s (imports, the prepared e-graph, the pass);
- in-process phases of that inline run:    imports, parse, first pipeline (compiles the prepared
                                           e-graph), a second pipeline (reuses it);
- playground, warm worker:                 POST /api/run of the shipped `twice` example to a running
                                           `nanopto serve` whose worker has already run once (what a
                                           user waits for after the first click); target <= 0.3 s.

Every process runs as a user's does: Python caches bytecode (`PYTHONDONTWRITEBYTECODE` is removed
from the children's environment, which some shells and CI images set: with it, every run compiles
every changed module again), and one run of each case before the timed ones warms that cache.

Prints the figures, the targets, and the load average before and after (the machine is shared:
compare figures taken under the same load). Exits 0; the figures are for reading, not asserting.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUMP = ROOT / "nanopto" / "examples" / "bump.py"

PHASES = """
import time
started = time.perf_counter()
from nanopto.ir_terms.parser import parse_program
from nanopto.passes import PassManager
imported = time.perf_counter()
program = parse_program(open({path!r}).read(), "bump.py")
parsed = time.perf_counter()
PassManager.default().run(program)
first = time.perf_counter()
PassManager.default().run(program)
second = time.perf_counter()
print(imported - started, parsed - imported, first - parsed, second - first)
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment: bytecode is cached, as on a user's machine (module doc)."""

CPU: dict[str, list[float]] = {}
"""CPU seconds (user + system) of each whole-process run, by case: on a shared machine the wall
clock measures the neighbours too, the CPU time much less so."""


def whole_process(argv: list[str], runs: int) -> list[float]:
    times, cpu = [], []
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENV)  # warms the bytecode cache
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=ENV)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    CPU[" ".join(argv[1:])] = cpu
    return times


def phases(runs: int) -> list[list[float]]:
    runs_out = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PHASES.format(path=str(BUMP))], check=True, capture_output=True, text=True, cwd=ROOT, env=ENV
        ).stdout
        runs_out.append([float(x) for x in out.split()])
    return runs_out


def playground(runs: int) -> list[float]:
    """POST /api/run of the `twice` example to a served playground, after one warming run."""
    from nanopto.tools.examples import example_source
    from nanopto.tools.serve import PlaygroundServer

    server = PlaygroundServer(0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    body = json.dumps({"program": example_source("twice"), "rules": ""}).encode()
    headers = {"X-Nanopto-Token": server.token, "Content-Type": "application/json"}

    def post() -> float:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
        started = time.perf_counter()
        connection.request("POST", "/api/run", body=body, headers=headers)
        response = connection.getresponse()
        answer = json.loads(response.read())
        seconds = time.perf_counter() - started
        if response.status != 200 or not answer.get("ok"):
            raise RuntimeError(f"the playground answered {response.status}: {str(answer)[:300]}")
        return seconds

    try:
        post()  # the worker imports nanopto and compiles the prepared e-graph: not what is measured
        return [post() for _ in range(runs)]
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs per case; the median is shown (default 5)")
    args = parser.parse_args(argv)
    runs = args.runs
    print(f"load average before: {load()}   ({os.cpu_count()} cores)")
    nanopto = [sys.executable, "-m", "nanopto"]
    rows: list[tuple[str, list[float], float | None]] = [
        ("python -c pass", whole_process([sys.executable, "-c", "pass"], runs), None),
        ("nanopto --version", whole_process([*nanopto, "--version"], runs), 0.15),
        ("nanopto --help", whole_process([*nanopto, "--help"], runs), None),
        ("nanopto inline nanopto/examples/bump.py", whole_process([*nanopto, "inline", str(BUMP)], runs), 0.8),
    ]
    split = phases(runs)
    rows.append(("playground run of `twice`, warm worker", playground(runs), 0.3))
    cpu = list(CPU.values())
    print(f"{'case':<44} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>6}  target (wall, median)")
    for i, (name, times, target) in enumerate(rows):
        verdict = "" if target is None else f"<= {target:g} s: {'met' if statistics.median(times) <= target else 'NOT met'}"
        used = f"{statistics.median(cpu[i]):>6.3f}" if i < len(cpu) else f"{'':>6}"
        print(f"{name:<44} {statistics.median(times):>9.3f} {min(times):>7.3f} {max(times):>7.3f} {used}  {verdict}")
    names = ("imports", "parse", "first pipeline (compiles the prepared e-graph)", "second pipeline (reuses it)")
    print("inline bump.py in one process, median of each phase:")
    for i, name in enumerate(names):
        print(f"  {name:<48} {statistics.median(run[i] for run in split):.3f} s")
    print(f"load average after:  {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
