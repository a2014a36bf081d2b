"""Soak inlining under aliasing: many drawn aliasing-heavy programs through the default pipeline,
each run before and after by the reference interpreter, on every core.

    python bench/aliasing_soak.py                       20,000 programs, seed 0, every core
    python bench/aliasing_soak.py --programs 300 --seed 5 --workers 1

A thin use of `nanopto soak` (nanopto.tools.soak; docs/property-testing.md#soaking-a-pipeline):
programs come from `verify.strategies.programs(aliasing=True)` (the shapes of
docs/08-aliasing-traps.md: one variable passed to several parameters, pl.Out scalars, in-place
writes, nested calls after an operand, tuple results read late, never or twice, tuple temporaries,
loop-carried values), with inputs from `inputs_for`, drawn in chunks from `--seed`. Each program
is run through the default pipeline (hoist-nested-calls, then inline-functions, with its rebinding
checker), its printed result parsed again, and the interpreter compares the result and every
argument buffer. Prints the counts: programs, equal, refused by hazard (`InlineError.hazard`),
refused for another reason, mismatches, checker failures (`RebindingCheckError`), results that do
not parse, other errors, seconds; then each finding's signature once with its minimised
reproducer. Exits 1 on any finding (anything but equal or a hazard refusal). `--out DIR` keeps
the campaign (report.json, findings/*.py) and resumes it when run again.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from nanopto.tools.soak import ProgressBar, SoakConfig, SoakReport, pipeline_of, run_campaign, slug
from nanopto.tools.soak_executors import LocalProcesses

SHOWN = 5
"""Findings printed in full (all are counted and written to the output directory)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--programs", type=int, default=20_000, help="programs to draw (default 20,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every core)")
    parser.add_argument("--out", default=None, help="the campaign's directory (default: a fresh temporary one)")
    args = parser.parse_args(argv)
    config = SoakConfig(seed=args.seed, aliasing=True)
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="aliasing-soak-"))
    executor = LocalProcesses(args.workers)
    try:
        report = run_campaign(folder, config, pipeline_of(config, []), args.programs, executor, ProgressBar(sys.stderr))
    finally:
        executor.close()
    return show(report, folder, args.seed)


def show(report: SoakReport, folder: Path, seed_value: int) -> int:
    """Print the figures; 1 when there is any finding."""
    total, tally = report.programs, report.counts
    rate = report.programs_this_run / report.seconds if report.seconds else 0.0
    refused = sum(n for kind, n in tally.items() if kind.startswith("refused: "))
    print(
        f"aliasing soak: {total:,} programs ({report.programs_this_run:,} in {report.seconds:.0f} s, {rate:.1f} per s, "
        f"{report.where}), seed {seed_value}"
    )
    print(f"  {'equal':<56} {tally['equal']:>7,}")
    print(f"  {'refused by a hazard':<56} {refused:>7,}  ({100 * refused / max(total, 1):.1f} %)")
    for kind, n in sorted(tally.items()):
        if kind.startswith("refused: "):
            print(f"    {kind[len('refused: '):]:<54} {n:>7,}")
    for kind in ("refused, not a hazard", "mismatch", "checker failure", "reparse", "input does not run", "drawn program does not parse"):
        print(f"  {kind:<56} {tally[kind]:>7,}")
    for kind, n in sorted(tally.items()):
        if kind.startswith("error: "):
            print(f"  {kind:<56} {n:>7,}")
    print(f"  {report.cpu_per_program:.3f} CPU-s per program (workers' CPU time, whatever the load)")
    print(f"  {report.different_programs:,} different programs (hypothesis draws some again, with other inputs)")
    print(f"  peak worker RSS {report.peak_rss_mb:,.0f} MB; report and reproducers in {folder}")
    for signature in sorted(report.signatures.values(), key=lambda s: s.first_program)[:SHOWN]:
        found = signature.smallest
        print(f"\nFINDING ({signature.signature}): {signature.count:,} program(s), first program {signature.first_program}")
        print(f"  reproducer: {folder / 'findings' / (slug(signature.signature) + '.py')}")
        print(f"  inputs: {found.inputs}\n  {found.detail.split(chr(10) + 'result:')[0]}\n{found.minimised}")
    return 1 if report.signatures else 0


if __name__ == "__main__":
    sys.exit(main())
