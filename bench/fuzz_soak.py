"""Soak the hostile-input fuzzer (`nanopto.tools.fuzz`): many inputs, time and memory per input.

    python bench/fuzz_soak.py                      100,000 front-end and 10,000 pass inputs, seed 0
    python bench/fuzz_soak.py --front 2000 --pass 200 --seed 5 --workers 1

Every input is held to the fuzzer's rule; on top, no input may take more than 10 s (an input still
running after 10 s of CPU time is stopped and counted) and the process's peak RSS must stay under 1.5 GB. Prints the
figures (inputs by kind and result, findings with their input numbers, the slowest input, peak
RSS) and exits 1 when anything is over. Inputs are drawn in chunks of 5,000, chunk `c` from
`random.Random(seed + c)` (the pass inputs from `seed + 1000 + c`); input `i` of a chunk is
`fuzz.draw(rng, generators)` called `i + 1` times.

The chunks run on every core (`--workers N` to choose), in the worker processes `nanopto soak`
uses (nanopto.tools.soak_executors: spawned, recycled after a few chunks, so memory stays bounded);
the RSS limit holds for each worker, and the figures are the same whatever the number of workers.
"""

from __future__ import annotations

import argparse
import resource
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

from nanopto.tools import fuzz
from nanopto.tools.soak_executors import LocalProcesses

TIME_LIMIT = 10
CHUNK = 5_000
RSS_LIMIT_KIB = 1_500_000


class _TooSlow(BaseException):
    """Raised by the CPU-time alarm inside an input that runs past TIME_LIMIT (a BaseException, so
    the fuzzer's own `except Exception` does not take it for a finding of another kind)."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow


def _bounded(run: Callable[[str], fuzz.Outcome]) -> Callable[[str], fuzz.Outcome]:
    """`run` stopped after TIME_LIMIT seconds of this process's CPU time (ITIMER_PROF): on a
    shared machine wall-clock time measures the neighbours, not the input."""

    def bounded(source: str) -> fuzz.Outcome:
        try:
            signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT)
            try:
                return run(source)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
        except _TooSlow:
            return fuzz.Outcome(f"over {TIME_LIMIT} s", False)

    return bounded


def _show(name: str, tally: fuzz.Tally, seconds: float) -> None:
    print(f"\n{name}: {tally.total:,} inputs in {seconds:.0f} s, {len(tally.findings)} finding(s)")
    for (kind, result), count in sorted(tally.counts.items()):
        print(f"  {kind:<10} {result:<24} {count:>7,}")
    slowest, index, kind = tally.slowest
    print(f"  slowest input: #{index} ({kind}), {slowest:.2f} s of CPU")
    for index, kind, outcome, source in tally.findings[:20]:
        print(f"  FINDING #{index} ({kind}): {outcome.result}: {outcome.detail[:200]}")
        print("    " + source[:300].replace("\n", "\n    "))


KINDS = {
    "front end": (fuzz.GENERATORS, fuzz.front_end_outcome, 0),
    "pass": (fuzz.PASS_GENERATORS, fuzz.run_pass, 1_000),
}
"""Each kind of input: its generators, the rule it is held to, and the offset of its seeds."""


def run_chunk(task: tuple[str, int, int, int]) -> tuple[int, fuzz.Tally, float]:
    """In a worker: chunk `start // CHUNK` of one kind, `count` inputs; with the worker's peak RSS (KiB)."""
    name, seed, start, count = task
    generators, run, offset = KINDS[name]
    signal.signal(signal.SIGPROF, _alarm)
    tally = fuzz.fuzz(seed + offset + start // CHUNK, count, generators, _bounded(run), time.process_time)
    return start, tally, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--front", type=int, default=100_000, help="front-end inputs (default 100,000)")
    parser.add_argument("--pass", dest="pass_", type=int, default=10_000, help="pass inputs (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every core)")
    args = parser.parse_args(argv)
    over = 0
    peak = 0.0
    executor = LocalProcesses(args.workers, tasks_per_worker=2)
    try:
        for name, count in (("front end", args.front), ("pass", args.pass_)):
            started = time.perf_counter()
            total = fuzz.Tally({}, [])
            done = 0
            tasks = [(name, args.seed, start, min(CHUNK, count - start)) for start in range(0, count, CHUNK)]
            for start, tally, rss in executor.run(run_chunk, tasks):  # chunk c draws from seed + c
                for key, n in tally.counts.items():
                    total.counts[key] = total.counts.get(key, 0) + n
                total.findings += [(start + i, kind, outcome, source) for i, kind, outcome, source in tally.findings]
                if tally.slowest[0] > total.slowest[0]:
                    total.slowest = (tally.slowest[0], start + tally.slowest[1], tally.slowest[2])
                done += sum(tally.counts.values())
                peak = max(peak, rss)
                print(f"{name}: {done:,} inputs, {len(total.findings)} finding(s), peak worker RSS {peak / 1024:,.0f} MB", flush=True)
            total.findings.sort()
            if count > 0:
                _show(name, total, time.perf_counter() - started)
            over += len(total.findings)
    finally:
        executor.close()
    print(f"\npeak worker RSS: {peak / 1024:,.0f} MB (limit {RSS_LIMIT_KIB / 1024:,.0f} MB), {executor.where}")
    return 1 if over or peak > RSS_LIMIT_KIB else 0


if __name__ == "__main__":
    sys.exit(main())
