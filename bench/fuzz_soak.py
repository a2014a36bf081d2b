"""Soak the hostile-input fuzzer (`nanopto.tools.fuzz`): many inputs, time and memory per input.

    python bench/fuzz_soak.py                      100,000 front-end and 10,000 pass inputs, seed 0
    python bench/fuzz_soak.py --front 2000 --pass 200 --seed 5

Every input is held to the fuzzer's rule; on top, no input may take more than 10 s (an input still
running then is stopped and counted) and the process's peak RSS must stay under 1.5 GB. Prints the
figures (inputs by kind and result, findings with their input numbers, the slowest input, peak
RSS) and exits 1 when anything is over. Input `i` of a run is reproduced with
`fuzz.draw(random.Random(seed), generators)` called `i + 1` times.
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

TIME_LIMIT = 10
RSS_LIMIT_KIB = 1_500_000


class _TooSlow(BaseException):
    """Raised by the alarm inside an input that runs past TIME_LIMIT (a BaseException, so the
    fuzzer's own `except Exception` does not take it for a finding of another kind)."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TooSlow


def _bounded(run: Callable[[str], fuzz.Outcome]) -> Callable[[str], fuzz.Outcome]:
    def bounded(source: str) -> fuzz.Outcome:
        signal.alarm(TIME_LIMIT)
        try:
            return run(source)
        except _TooSlow:
            return fuzz.Outcome(f"over {TIME_LIMIT} s", False)
        finally:
            signal.alarm(0)

    return bounded


def _show(name: str, tally: fuzz.Tally, seconds: float) -> None:
    print(f"\n{name}: {tally.total:,} inputs in {seconds:.0f} s, {len(tally.findings)} finding(s)")
    for (kind, result), count in sorted(tally.counts.items()):
        print(f"  {kind:<10} {result:<24} {count:>7,}")
    slowest, index, kind = tally.slowest
    print(f"  slowest input: #{index} ({kind}), {slowest:.2f} s")
    for index, kind, outcome, source in tally.findings[:20]:
        print(f"  FINDING #{index} ({kind}): {outcome.result}: {outcome.detail[:200]}")
        print("    " + source[:300].replace("\n", "\n    "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--front", type=int, default=100_000, help="front-end inputs (default 100,000)")
    parser.add_argument("--pass", dest="pass_", type=int, default=10_000, help="pass inputs (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    over = 0
    for name, count, generators, run, seed in (
        ("front end", args.front, fuzz.GENERATORS, fuzz.front_end_outcome, args.seed),
        ("pass", args.pass_, fuzz.PASS_GENERATORS, fuzz.run_pass, args.seed + 1),
    ):
        if count <= 0:
            continue
        started = time.perf_counter()
        tally = fuzz.fuzz(seed, count, generators, _bounded(run), time.perf_counter)
        _show(name, tally, time.perf_counter() - started)
        over += len(tally.findings)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\npeak RSS: {peak / 1024:,.0f} MB (limit {RSS_LIMIT_KIB / 1024:,.0f} MB)")
    return 1 if over or peak > RSS_LIMIT_KIB else 0


if __name__ == "__main__":
    sys.exit(main())
