"""How long the playground and `nanopto inline --html` take on large programs, each size in a fresh process.

    python bench/playground_bench.py                  1k, 2k, 4k, 10k sites
    python bench/playground_bench.py --sites 1000     one size
    python bench/playground_bench.py --no-html        the playground only
    python bench/playground_bench.py --browser        also the page itself, in headless Chromium

The program is the flat shape of `inline_bench.py` (`main` with N chained call sites of a
5-statement helper), written compactly so that 10,000 sites fit the playground's 200,000-character
limit. Per size:

- playground: `POST /api/run` to a real `PlaygroundServer` on 127.0.0.1 (a worker process, the
  token, JSON both ways), wall time as the page sees it, of the second run (the first also starts
  the worker), the time the passes took, and the answer's size;
- CPU seconds of that run, which a loaded machine disturbs less than wall times: the worker
  process's (all its threads, from /proc), each part of it (the answer's `timings`: parse,
  passes, print, sites, sections, egraphs), and this process's (the server and the client);
- `--browser`: the playground page in headless Chromium (Playwright, the system's binary:
  NANOPTO_CHROMIUM or /usr/bin/chromium), from the click on Run to the first frame painted after
  the page showed the result, the second run of the program;
- `--html`: `python -m nanopto inline FILE --html OUT`, wall time of the whole command.

Prints a table and the load average (the machine is shared: compare figures within one run).
The target: a 10,000-site program answered by the playground within 5 s on a quiet machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SIZES = [1000, 2000, 4000, 10000]


def compact_source(n: int) -> str:
    """`main` with `n` chained call sites of a 5-statement helper, about 19 characters a site."""
    lines = [
        "import nanopto.language as pl\n\n\n@pl.program\nclass P:\n",
        " @pl.function(type=pl.FunctionType.Inline)\n",
        " def h(self, x):\n",
        "  a = pl.add(x, x)\n  b = pl.mul(a, x)\n  c = pl.sub(b, a)\n  d = pl.add(c, b)\n  return d\n\n",
        " @pl.function\n",
        " def main(self, y):\n",
    ]
    lines += ["  y = self.h(y)\n"] * n
    lines.append("  return y\n")
    return "".join(lines)


def process_cpu(pid: int | None) -> float:
    """CPU seconds process `pid` has used so far, all its threads (Linux's /proc; else 0)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def playground_case(n: int) -> dict[str, Any]:
    """One size against a real server, in this (fresh) process."""
    sys.path.insert(0, str(REPO))
    from nanopto.tools.serve import PlaygroundServer

    server = PlaygroundServer(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = json.dumps({"program": compact_source(n)}).encode()
    headers = {"X-Nanopto-Token": server.token, "Content-Type": "application/json"}
    try:
        times = []
        for _ in range(2):
            assert server.worker is not None
            worker_cpu = process_cpu(server.worker.pid)
            own_cpu = time.process_time()
            started = time.perf_counter()
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
            connection.request("POST", "/api/run", body=body, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            times.append(time.perf_counter() - started)
            own_cpu = time.process_time() - own_cpu
            worker_cpu = process_cpu(server.worker.pid) - worker_cpu
        got = json.loads(raw)
        if not got.get("ok"):
            return {"error": got.get("error")}
        return {
            "seconds": times[-1],
            "first_seconds": times[0],
            "passes_seconds": got["seconds"],
            "answer_bytes": len(raw),
            "egraph_nodes": [s["counts"][0] for s in got["egraphs"]],
            "cpu": got.get("timings", {}),
            "worker_cpu": worker_cpu,
            "server_cpu": own_cpu,
        }
    finally:
        server.shutdown()
        server.server_close()


def browser_case(n: int) -> dict[str, Any]:
    """The page itself: the program pasted into the editor, Run clicked, until the result shows."""
    sys.path.insert(0, str(REPO))
    from playwright.sync_api import sync_playwright

    from nanopto.tools.serve import PlaygroundServer

    chromium = next((p for p in (os.environ.get("NANOPTO_CHROMIUM"), "/usr/bin/chromium") if p and os.path.exists(p)), None)
    if chromium is None:
        return {"error": "no Chromium (set NANOPTO_CHROMIUM)"}
    server = PlaygroundServer(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready]", timeout=120_000)
            page.evaluate("(text) => { window.nanoptoEditors.program.text = text; }", compact_source(n))
            times = []
            for run in range(2):
                started = time.perf_counter()
                page.click("#run")
                page.wait_for_function(f"Number(document.body.dataset.runs || 0) > {run}", timeout=600_000)
                page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")
                times.append(time.perf_counter() - started)
            state = page.evaluate("document.body.dataset.state")
            browser.close()
        return {"seconds": times[-1]} if state == "done" else {"error": f"the page ended in state {state}"}
    finally:
        server.shutdown()
        server.server_close()


def html_case(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="nanopto-bench-") as folder:
        program = Path(folder) / "flat.py"
        program.write_text(compact_source(n))
        page = Path(folder) / "flat.html"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "nanopto", "inline", str(program), "--html", str(page), "-o", os.devnull],
            capture_output=True, text=True, env=env, timeout=1800,
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            return {"error": proc.stderr[-500:]}
        return {"seconds": seconds, "page_bytes": page.stat().st_size}


def in_fresh_process(kind: str, n: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--run-case", kind, str(n)], capture_output=True, text=True, timeout=1800
    )
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, action="append", help="a size (repeatable); default 1k, 2k, 4k, 10k")
    parser.add_argument("--no-html", action="store_true", help="measure the playground only")
    parser.add_argument("--browser", action="store_true", help="also time the page in headless Chromium")
    parser.add_argument("--run-case", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_case:
        kind, n = args.run_case[0], int(args.run_case[1])
        cases = {"playground": playground_case, "browser": browser_case, "html": html_case}
        print(json.dumps(cases[kind](n)))
        return 0
    sizes = args.sites or SIZES
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'sites':>6} {'source chars':>12} {'playground s':>13} {'(passes s)':>10} {'answer MB':>9} "
        f"{'page s':>7} {'--html s':>9} {'page MB':>8}"
    )
    rows = []
    for n in sizes:
        play = in_fresh_process("playground", n)
        page = in_fresh_process("browser", n) if args.browser else {}
        html = {} if args.no_html else in_fresh_process("html", n)
        rows.append({"sites": n, "playground": play, "browser": page, "html": html})
        if "error" in play or "error" in html or "error" in page:
            print(f"{n:>6} error: {play.get('error') or page.get('error') or html.get('error')}")
            continue
        page_s = f"{page['seconds']:7.2f}" if page else f"{'-':>7}"
        html_s = f"{html['seconds']:9.2f}" if html else f"{'-':>9}"
        page_mb = f"{html['page_bytes'] / 1e6:8.1f}" if html else f"{'-':>8}"
        print(
            f"{n:>6} {len(compact_source(n)):>12} {play['seconds']:13.2f} {play['passes_seconds']:10.2f} "
            f"{play['answer_bytes'] / 1e6:9.1f} {page_s} {html_s} {page_mb}"
        )
        parts = "".join(f", {part} {seconds:.2f}" for part, seconds in play["cpu"].items())
        print(f"{'':>6} CPU s: worker {play['worker_cpu']:.2f}{parts}; server and client {play['server_cpu']:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
