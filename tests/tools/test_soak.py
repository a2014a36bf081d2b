"""`nanopto soak` (docs/property-testing.md#soaking-a-pipeline): a planted wrong rule is found,
listed once with a minimised reproducer; a campaign resumes from its directory; it runs on a Dask
cluster as on local processes."""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.tools import soak_case
from nanopto.tools.minimise import minimise
from nanopto.tools.soak import (
    ChunkResult,
    ChunkTask,
    RulesFile,
    SoakConfig,
    SoakReport,
    pipeline_of,
    run_campaign,
    run_chunk,
)
from nanopto.tools.soak_case import EQUAL, Verdict
from nanopto.tools.soak_executors import MEMORY_TEMP, DaskCluster, InThisProcess, LocalProcesses
from nanopto.verify.strategies import ProgramDesc

SQUARE_RULES = '''\
"""A wrong rule, planted: `x * x -> x`."""

from nanopto import passes
from nanopto.rules import Ruleset, binary, rewrite_rule, var

x = var("x")

SQUARE = Ruleset("square-is-x", "x * x is x (wrong)", (rewrite_rule("square", binary("*", x, x), x),))

PASSES = [passes.rewrite(SQUARE, name="square-is-x")]
'''

PLANTED = SoakConfig(seed=0, rules=(RulesFile("square.py", SQUARE_RULES),), aliasing=True, ops=("mul",))
"""Programs whose values flow to what `main` returns or writes (aliasing=True observes them) and
that multiply (ops=mul), so a wrong `x * x` changes a result the interpreter compares."""


def _run(folder: Path, config: SoakConfig, programs: int, executor: Any) -> Any:
    return run_campaign(folder, config, pipeline_of(config, ["square-is-x"] if config.rules else []), programs, executor)


def test_minimise_keeps_only_the_lines_the_failure_needs() -> None:
    source = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def unused(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return n

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        a = k + 1
        if k > 2:
            b = a * a
            c = b + 1
        d = k * k
        return d
"""

    def still_fails(text: str) -> bool:  # "the program still parses and returns k * k"
        try:
            parse_program(text)
        except Exception:
            return False
        return "d = k * k" in text and "return d" in text

    small = minimise(source, still_fails)
    assert "def unused" not in small and "if k > 2" not in small and "a = k + 1" not in small and "b = " not in small
    assert "d = k * k" in small and "return d" in small
    parse_program(small)


@pytest.mark.parametrize(("seed", "programs"), [(13, 8), pytest.param(0, 200, marks=pytest.mark.soak)])
def test_a_planted_x_times_x_rule_is_found_and_listed_once_with_a_minimised_reproducer(
    tmp_path: Path, seed: int, programs: int
) -> None:
    """Within the first 200 programs of seed 0 (the soak tier). CI runs the first 8 programs of
    seed 13, where two programs hit the rule (the 4th and the 8th): each counted, listed once. Seed 0
    first hits it at its 24th program, and each program costs a tenth of a CPU-second or more;
    minimising a finding costs tens of runs, so CI's seed is one whose first finding is small."""
    report = _run(tmp_path, dataclasses.replace(PLANTED, seed=seed), programs, InThisProcess())
    planted = [s for s in report.signatures.values() if "square-is-x" in s.signature]
    assert len(planted) == 1, list(report.signatures)
    (found,) = planted
    assert found.signature == "mismatch after square-is-x (rules square)"
    assert found.first_program < programs and found.count >= (2 if programs == 8 else 1)
    reproducer = tmp_path / "findings"
    files = [f for f in reproducer.iterdir() if "square" in f.name]
    assert len(files) == 1
    text = files[0].read_text(encoding="utf-8")
    assert text.startswith("# nanopto soak finding: mismatch after square-is-x (rules square)")
    minimised = parse_program(text)  # the reproducer is a `pl` program, smaller than what was drawn
    assert len(found.smallest.minimised) < len(found.smallest.source)
    assert "main" in minimised.functions
    saved = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [s["signature"] for s in saved["signatures"]].count(found.signature) == 1
    assert saved["programs"] == programs
    assert saved["cpu_seconds_per_program"] > 0
    assert 0 < saved["different_programs"] <= programs


def test_a_program_drawn_again_in_a_chunk_runs_through_the_pipeline_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis draws some programs again (with other inputs): the chunk judges every draw, runs
    each different program through the pipeline once, and records how many differ."""
    sources: list[str] = []

    def run_pipeline(program: Program, manager: Any) -> Verdict:
        sources.append(python_print(program))
        return Verdict(EQUAL)

    monkeypatch.setattr(soak_case, "run_pipeline", run_pipeline)
    chunk = run_chunk(ChunkTask(SoakConfig(seed=0, aliasing=True), 1, 25))
    assert chunk.programs == 25 and chunk.counts == {EQUAL: 25}
    assert len(sources) == len(set(sources)) == len(chunk.digests) < 25


def test_cpu_seconds_per_program_count_only_the_chunks_that_measured_them() -> None:
    """A chunk recorded before workers measured their CPU time (a resumed campaign) is counted in
    the programs but not in the CPU seconds per program; a chunk run again replaces its figures."""
    report = SoakReport(SoakConfig(), "inline-functions")
    old = {"index": 0, "programs": 25, "counts": {"equal": 25}, "signatures": {}, "findings": [], "seconds": 9.0, "peak_rss_mb": 90.0}
    report.add(ChunkResult.from_json(old))
    report.add(ChunkResult(1, 25, {"equal": 25}, {}, [], 9.0, 90.0, cpu_seconds=2.5))
    assert report.programs == 50 and report.cpu_per_program == pytest.approx(0.1)
    report.add(ChunkResult(1, 25, {"equal": 25}, {}, [], 9.0, 90.0, cpu_seconds=5.0))
    assert report.programs == 50 and report.cpu_per_program == pytest.approx(0.2)


def test_a_drawn_program_that_does_not_parse_is_a_finding_and_the_chunk_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def program(desc: ProgramDesc) -> Program:
        raise ParserError("Undefined variable 'm8'", line=31, col=19)

    monkeypatch.setattr(ProgramDesc, "program", program)
    chunk = run_chunk(ChunkTask(SoakConfig(seed=0, aliasing=True), 1, 3))
    assert chunk.counts == {"drawn program does not parse": 3}
    assert chunk.signatures == {"drawn program does not parse: Undefined variable '_'": 3}
    (finding,) = chunk.findings
    assert finding.source.startswith("import nanopto.language as pl")


@pytest.mark.skipif(not os.path.isdir(MEMORY_TEMP) or "TMPDIR" in os.environ, reason="no tmpfs at /dev/shm, or TMPDIR set")
def test_local_workers_keep_their_temporary_files_in_memory() -> None:
    executor = LocalProcesses(1)
    try:
        assert list(executor.run(_temporary_directory, [None])) == [MEMORY_TEMP]
    finally:
        executor.close()


def _temporary_directory(_: None) -> str:
    return tempfile.gettempdir()


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (pip install 'nanopto[dask]')")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        yield client


def test_a_campaign_runs_on_a_local_dask_cluster_and_resumes_where_it_stopped(tmp_path: Path, dask_client: Any) -> None:
    """Four chunks of 2, then two more: the first four are not run again. (Small chunks: what is
    tested is the chunks' round trip through the cluster, and each program costs the workers.)"""
    config = SoakConfig(seed=3, chunk=2)
    first = _run(tmp_path, config, 8, DaskCluster(client=dask_client))
    assert first.programs == first.programs_this_run == 8
    assert sum(first.counts.values()) == 8 and first.signatures == {}
    again = _run(tmp_path, config, 12, DaskCluster(client=dask_client))
    assert again.programs == 12 and again.programs_this_run == 4  # the first 8 are not run again
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["programs"] == 12


def test_the_dask_executor_runs_every_task_when_there_are_more_than_it_keeps_in_flight(dask_client: Any) -> None:
    """Its first window of tasks used to be taken with `zip(tasks, range(window))`, which draws one
    task more than it keeps: a campaign of more chunks than the window lost one (1,975 of 2,000)."""
    executor = DaskCluster(client=dask_client)
    tasks = range(-(4 * executor.workers * 3 + 1), 0)
    assert sorted(executor.run(abs, tasks)) == sorted(abs(t) for t in tasks)


@pytest.mark.soak
def test_2000_programs_on_a_local_dask_cluster_list_the_planted_finding_once(tmp_path: Path, dask_client: Any) -> None:
    report = _run(tmp_path, PLANTED, 2000, DaskCluster(client=dask_client))
    assert report.programs == 2000
    planted = [s for s in report.signatures.values() if "square-is-x" in s.signature]
    assert len(planted) == 1 and planted[0].count > 1
    assert len(list((tmp_path / "findings").glob("mismatch-after-square-is-x*.py"))) == 1


def test_the_command_line_soaks_resumes_and_refuses_another_campaigns_directory(tmp_path: Path) -> None:
    """The first campaign is a real `python -m nanopto soak` process; the resumed one and the two
    refusals are the same command run by `cli.main` in this process (`conftest.run_cli`), which
    saves an interpreter and its imports for each."""
    out = tmp_path / "campaign"
    options = ["soak", "--out", str(out), "--workers", "1", "--chunk", "3"]

    def soak(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*options, *args)

    done = subprocess.run([sys.executable, "-m", "nanopto", *options, "--programs", "3"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("3 programs (3 in this run")
    assert "0 finding(s)" in done.stdout
    cpu_ms = re.search(r"per s, (\d+) CPU-ms per program in the workers\)", done.stdout)
    assert cpu_ms is not None and int(cpu_ms.group(1)) > 0, done.stdout
    resumed = soak("--programs", "6")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("6 programs (3 in this run")
    other = soak("--programs", "6", "--seed", "1")
    assert other.returncode == 2
    error = other.stderr.splitlines()[-1]
    assert error.startswith("nanopto: error: ") and "another seed, pipeline, rules or generator knobs" in error
    bad = soak("--programs", "0")
    assert bad.returncode == 2 and "--programs must be at least 1" in bad.stderr


def test_local_workers_are_recycled_without_stalling() -> None:
    """One worker, replaced after every 2 tasks: all 5 tasks run (Python 3.11's own recycling,
    `max_tasks_per_child`, never ran the 5th)."""
    executor = LocalProcesses(1, tasks_per_worker=2)
    try:
        assert sorted(executor.run(operator.neg, range(5))) == [-4, -3, -2, -1, 0]
    finally:
        executor.close()
