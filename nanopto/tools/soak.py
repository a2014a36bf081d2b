"""`nanopto soak`: a differential campaign for a pipeline, from one core to a cluster.

Programs are drawn by `nanopto.verify.strategies` (its knobs: helpers, ops, constants, shapes,
aliasing on or off) in *chunks*: chunk `c` is drawn by hypothesis from the seed `(seed, c)`, so
program `c * chunk + i` is the same on every machine and in every run. Each program is judged
(`soak_case.judge`): before and after the pipeline in the reference interpreter, the printed result
parsed again. Findings are grouped by signature; the first program of each signature in a chunk is
minimised (`minimise`), and the campaign keeps the smallest reproducer of each.

Everything a campaign knows lives in its output directory, so a stopped campaign resumes where it
stopped (docs/property-testing.md#soaking-a-pipeline):

    campaign.json    what is drawn and run (the seed, the knobs, the pipeline, the rules files' text)
    chunks.jsonl     one line per finished chunk: its counts and findings
    report.json      the totals, the rate, and each signature once with its reproducer
    findings/*.py    one minimised reproducer per signature, a `pl` program with a comment header
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import resource
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from nanopto.tools.soak_executors import Executor

CHUNK = 25
"""Programs per chunk: a few seconds of work, so progress is smooth and little is lost on a stop."""


@dataclass(frozen=True)
class RulesFile:
    """A user's rules file, carried by its text so that a worker on another machine can load it."""

    name: str
    text: str


@dataclass(frozen=True)
class SoakConfig:
    """What a campaign draws and runs. Two runs with the same config draw the same programs."""

    seed: int = 0
    pipeline: str | None = None
    """A pipeline spec; None: the default pipeline, then the passes of the rules files."""
    rules: tuple[RulesFile, ...] = ()
    aliasing: bool = False
    max_helpers: int = 3
    ops: tuple[str, ...] | None = None
    constants: tuple[int, ...] | None = None
    shapes: tuple[tuple[int, ...], ...] | None = None
    chunk: int = CHUNK

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SoakConfig:
        fields = dict(data)
        fields["rules"] = tuple(RulesFile(**r) for r in fields.get("rules", ()))
        for name in ("ops", "constants"):
            if fields.get(name) is not None:
                fields[name] = tuple(fields[name])
        if fields.get("shapes") is not None:
            fields["shapes"] = tuple(tuple(s) for s in fields["shapes"])
        return cls(**fields)


@dataclass(frozen=True)
class ChunkTask:
    config: SoakConfig
    index: int
    size: int
    run: str = ""
    """Which run of a campaign the chunk belongs to (a worker minimises a signature once per run)."""


@dataclass
class Finding:
    """One signature's first program in a chunk: where it was drawn, the verdict, the program and
    its inputs, and the minimised program."""

    signature: str
    kind: str
    program: int
    detail: str
    source: str
    inputs: str
    minimised: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ChunkResult:
    index: int
    programs: int
    counts: dict[str, int]
    """Programs per verdict kind."""
    signatures: dict[str, int]
    """Findings per signature."""
    findings: list[Finding]
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float = 0.0
    """The worker's CPU time for the chunk (0 in a chunk recorded before it was measured)."""
    digests: list[str] = field(default_factory=list)
    """A digest of each different program of the chunk: hypothesis draws some programs again
    (mutating the ones it drew; its simplest program first in every chunk), with other inputs."""

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "findings": [f.to_json() for f in self.findings]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunkResult:
        return cls(**{**data, "findings": [Finding(**f) for f in data["findings"]]})


# ---------------------------------------------------------------------------------------------
# In a worker
# ---------------------------------------------------------------------------------------------


class _Prepared:
    """A worker's pass manager and strategy for one config: the rules files loaded (from their
    text) and the pipeline built once, however many chunks of the campaign the worker runs."""

    def __init__(self, config: SoakConfig) -> None:
        from nanopto.passes import PassManager
        from nanopto.tools.rules_file import load_rules_files
        from nanopto.verify.strategies import program_descs

        folder = Path(tempfile.mkdtemp(prefix="nanopto-soak-rules-"))
        paths = []
        for i, rules in enumerate(config.rules):
            path = folder / f"{i}_{Path(rules.name).name}"
            path.write_text(rules.text, encoding="utf-8")
            paths.append(str(path))
        user_passes = load_rules_files(paths)
        self.manager = PassManager.from_pipeline(pipeline_of(config, [p.name for p in user_passes]))
        self.descs = program_descs(
            max_helpers=config.max_helpers,
            aliasing=config.aliasing,
            ops=config.ops,
            constants=config.constants,
            shapes=config.shapes,
        )


_PREPARED: dict[SoakConfig, _Prepared] = {}

_MINIMISED: set[tuple[str, str]] = set()
"""The signatures this worker has minimised a program of already: later ones are reported as
drawn (minimising costs tens of runs; the campaign keeps the smallest reproducer it is sent)."""


def pipeline_of(config: SoakConfig, user_pass_names: Sequence[str]) -> str:
    """The pipeline the campaign runs: the config's, or the default one then the rules' passes."""
    if config.pipeline is not None:
        return config.pipeline
    from nanopto.passes import STRATEGY_PIPELINES, OptimizationStrategy

    return ",".join([*STRATEGY_PIPELINES[OptimizationStrategy.Default], *user_pass_names])


def run_chunk(task: ChunkTask) -> ChunkResult:
    """Draw and judge the programs of one chunk; minimise the first program of each signature."""
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis import strategies as st

    from nanopto.ir_terms.nodes import Program
    from nanopto.ir_terms.parser import ParserError, parse_program
    from nanopto.tools.check import show
    from nanopto.tools.minimise import minimise
    from nanopto.tools.soak_case import PipelineRun, Verdict, judge, message_shape, run_pipeline
    from nanopto.verify.strategies import ENTRY, inputs_for

    started, cpu_started = time.perf_counter(), time.process_time()
    prepared = _PREPARED.get(task.config)
    if prepared is None:
        _PREPARED.clear()
        prepared = _PREPARED[task.config] = _Prepared(task.config)
    manager = prepared.manager
    counts: Counter[str] = Counter()
    signatures: Counter[str] = Counter()
    findings: dict[str, Finding] = {}
    drawn = 0
    parsed: dict[str, Program] = {}
    runs: dict[str, PipelineRun | Verdict] = {}
    """Each different program of the chunk, by its source: parsed and run through the pipeline once."""

    @seed(task.config.seed * 1_000_003 + task.index)
    @settings(
        max_examples=task.size,
        derandomize=False,  # drawn from the chunk's seed, whatever hypothesis profile is loaded
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data: st.DataObject) -> None:
        nonlocal drawn
        desc = data.draw(prepared.descs)
        source = desc.source
        if source not in parsed:
            try:
                parsed[source] = desc.program()
            except ParserError as err:  # the generator's bug: a finding, and the campaign goes on
                number = task.index * task.config.chunk + drawn
                drawn += 1
                kind = "drawn program does not parse"
                signature = f"{kind}: {message_shape(err.message)}"
                counts[kind] += 1
                signatures[signature] += 1
                findings.setdefault(signature, Finding(signature, kind, number, str(err), source, "", source))
                return
        program = parsed[source]
        args = data.draw(inputs_for(program))
        number = task.index * task.config.chunk + drawn  # counted once drawn: a draw may be abandoned
        drawn += 1
        if source not in runs:
            runs[source] = run_pipeline(program, manager)
        verdict = judge(program, args, manager, runs[source])
        counts[verdict.kind] += 1
        if not verdict.finding:
            return
        signatures[verdict.signature] += 1
        if verdict.signature in findings:
            return

        def still_fails(text: str) -> bool:
            try:
                program = parse_program(text)
            except Exception:
                return False
            return judge(program, args, manager).signature == verdict.signature

        if (task.run, verdict.signature) in _MINIMISED:
            minimised = source
        else:
            minimised = minimise(source, still_fails)
            _MINIMISED.add((task.run, verdict.signature))
        findings[verdict.signature] = Finding(
            verdict.signature,
            verdict.kind,
            number,
            verdict.detail,
            source,
            ", ".join(f"{p.var.name} = {show(a)}" for p, a in zip(program.functions[ENTRY].param_list, args, strict=True)),
            minimised,
        )

    one()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return ChunkResult(
        task.index,
        drawn,
        dict(counts),
        dict(signatures),
        list(findings.values()),
        time.perf_counter() - started,
        peak,
        time.process_time() - cpu_started,
        sorted(hashlib.sha1(source.encode()).hexdigest()[:16] for source in runs),
    )


# ---------------------------------------------------------------------------------------------
# The campaign
# ---------------------------------------------------------------------------------------------


class CampaignError(ValueError):
    """The output directory holds another campaign (another seed, pipeline, rules or knobs)."""


@dataclass
class Signature:
    """Every program of one signature so far, and the smallest reproducer found for it."""

    signature: str
    kind: str
    count: int
    first_program: int
    smallest: Finding

    def to_json(self, folder: Path) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "kind": self.kind,
            "count": self.count,
            "first_program": self.first_program,
            "reproducer": str(folder / "findings" / f"{slug(self.signature)}.py"),
            "inputs": self.smallest.inputs,
            "detail": self.smallest.detail,
            "minimised": self.smallest.minimised,
        }


@dataclass
class SoakReport:
    """A campaign's totals so far (this run and the runs it resumed)."""

    config: SoakConfig
    pipeline: str
    programs: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    signatures: dict[str, Signature] = field(default_factory=dict)
    chunks_done: dict[int, ChunkResult] = field(default_factory=dict)
    """Each finished chunk by its index (a chunk cut short by a smaller `--programs` runs again
    in full when a later run asks for more)."""
    seconds: float = 0.0
    """Wall time of this run (not the resumed ones)."""
    programs_this_run: int = 0
    cpu_seconds: float = 0.0
    """Workers' CPU time over the chunks counted (this run and the resumed ones)."""
    cpu_programs: int = 0
    """The programs of the chunks whose CPU time was measured."""

    @property
    def different_programs(self) -> int:
        """Programs judged that differ from every other (by source; inputs aside), over the chunks
        that recorded their digests."""
        return len(set().union(*(chunk.digests for chunk in self.chunks_done.values())))
    peak_rss_mb: float = 0.0
    where: str = ""

    @property
    def cpu_per_program(self) -> float:
        """Workers' CPU seconds per program judged: what a program costs whatever else the
        machine runs (programs per second depend on the load)."""
        return self.cpu_seconds / self.cpu_programs if self.cpu_programs else 0.0

    @property
    def findings(self) -> int:
        return sum(s.count for s in self.signatures.values())

    def add(self, chunk: ChunkResult) -> bool:
        """Count a finished chunk; True when it brought a new signature or a smaller reproducer."""
        earlier = self.chunks_done.get(chunk.index)
        if earlier is not None:  # the same programs again, and more: count them once
            self.programs -= earlier.programs
            self.counts.subtract(earlier.counts)
            self.cpu_seconds -= earlier.cpu_seconds
            self.cpu_programs -= earlier.programs if earlier.cpu_seconds else 0
            for signature, count in earlier.signatures.items():
                self.signatures[signature].count -= count
        self.chunks_done[chunk.index] = dataclasses.replace(chunk, findings=[])  # the reproducers are kept below
        self.programs += chunk.programs
        self.counts.update(chunk.counts)
        self.cpu_seconds += chunk.cpu_seconds
        self.cpu_programs += chunk.programs if chunk.cpu_seconds else 0
        self.peak_rss_mb = max(self.peak_rss_mb, chunk.peak_rss_mb)
        changed = False
        for finding in chunk.findings:
            known = self.signatures.get(finding.signature)
            if known is None:
                self.signatures[finding.signature] = Signature(finding.signature, finding.kind, 0, finding.program, finding)
                changed = True
                known = self.signatures[finding.signature]
            elif len(finding.minimised) < len(known.smallest.minimised):
                known.smallest = finding
                changed = True
            known.first_program = min(known.first_program, finding.program)
        for signature, count in chunk.signatures.items():
            self.signatures[signature].count += count
        return changed

    def to_json(self, folder: Path) -> dict[str, Any]:
        rate = self.programs_this_run / self.seconds if self.seconds else 0.0
        return {
            "config": self.config.to_json(),
            "pipeline": self.pipeline,
            "programs": self.programs,
            "counts": {kind: n for kind, n in sorted(self.counts.items()) if n},
            "findings": self.findings,
            "signatures": [s.to_json(folder) for s in sorted(self.signatures.values(), key=lambda s: s.first_program)],
            "seconds_this_run": round(self.seconds, 3),
            "programs_this_run": self.programs_this_run,
            "programs_per_second": round(rate, 2),
            "cpu_seconds": round(self.cpu_seconds, 1),
            "cpu_seconds_per_program": round(self.cpu_per_program, 4),
            "different_programs": self.different_programs,
            "peak_worker_rss_mb": round(self.peak_rss_mb, 1),
            "where": self.where,
        }


def slug(signature: str) -> str:
    """A file name for a signature: its words, and a hash that keeps two signatures apart."""
    words = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:60]
    return f"{words}-{hashlib.sha1(signature.encode()).hexdigest()[:8]}"


def reproducer_text(signature: Signature, pipeline: str, rules: Sequence[RulesFile]) -> str:
    """The minimised program with a header saying what it shows and how to run it again."""
    found = signature.smallest
    rules_flags = "".join(f" --rules {r.name}" for r in rules)
    header = [
        f"# nanopto soak finding: {signature.signature}",
        f"# {signature.count} program(s) so far; first: program {signature.first_program}",
        f"# pipeline: {pipeline}",
        f"# inputs of main: {found.inputs}",
        *(f"#   {line}" for line in found.detail.split("\nresult:")[0].splitlines()[:8]),
        f"# run it: nanopto check THIS_FILE --pipeline {pipeline}{rules_flags}",
        "",
    ]
    return "\n".join(header) + found.minimised


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Campaign:
    """A campaign in its output directory: started fresh, or resumed from what is there."""

    def __init__(self, folder: Path, config: SoakConfig, pipeline: str) -> None:
        self.folder = folder
        self.config = config
        self.report = SoakReport(config, pipeline)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "findings").mkdir(exist_ok=True)
        saved = folder / "campaign.json"
        if saved.exists():
            previous = SoakConfig.from_json(json.loads(saved.read_text(encoding="utf-8")))
            if previous != config:
                raise CampaignError(
                    f"{folder}: holds a campaign with another seed, pipeline, rules or generator knobs; "
                    "resume it with the same options, or pass another --out"
                )
        else:
            _write_atomically(saved, json.dumps(config.to_json(), indent=2) + "\n")
        self._chunks = folder / "chunks.jsonl"
        if self._chunks.exists():
            for line in self._chunks.read_text(encoding="utf-8").splitlines():
                if line.strip():  # a line cut short by a kill is the chunk that did not finish
                    try:
                        self.report.add(ChunkResult.from_json(json.loads(line)))
                    except (json.JSONDecodeError, TypeError, KeyError):
                        continue

    def tasks(self, programs: int) -> list[ChunkTask]:
        """The chunks of the first `programs` programs that have not run yet."""
        size = self.config.chunk
        run = uuid.uuid4().hex
        tasks = [
            ChunkTask(self.config, index, min(size, programs - index * size), run)
            for index in range((programs + size - 1) // size)
        ]
        done = self.report.chunks_done
        return [task for task in tasks if task.index not in done or done[task.index].programs < task.size]

    def record(self, chunk: ChunkResult) -> None:
        with self._chunks.open("a", encoding="utf-8") as out:
            out.write(json.dumps(chunk.to_json()) + "\n")
        if self.report.add(chunk) or chunk.findings:
            for signature in self.report.signatures.values():
                _write_atomically(
                    self.folder / "findings" / f"{slug(signature.signature)}.py",
                    reproducer_text(signature, self.report.pipeline, self.config.rules),
                )

    def write_report(self) -> Path:
        path = self.folder / "report.json"
        _write_atomically(path, json.dumps(self.report.to_json(self.folder), indent=2) + "\n")
        return path


def run_campaign(
    folder: Path,
    config: SoakConfig,
    pipeline: str,
    programs: int,
    executor: Executor,
    progress: Callable[[SoakReport, int], None] | None = None,
) -> SoakReport:
    """Run (or resume) the campaign in `folder` until its first `programs` programs are judged."""
    campaign = Campaign(folder, config, pipeline)
    report = campaign.report
    report.where = executor.where
    started = time.perf_counter()
    try:
        for chunk in executor.run(run_chunk, campaign.tasks(programs)):
            campaign.record(chunk)
            report.programs_this_run += chunk.programs
            report.seconds = time.perf_counter() - started
            campaign.write_report()
            if progress is not None:
                progress(report, programs)
    finally:
        report.seconds = time.perf_counter() - started
        campaign.write_report()
    return report


class ProgressBar:
    """`[#####-----] 1,200/2,000 programs  41.3/s  ETA 0:19  2 signature(s)` on a terminal,
    redrawn in place; elsewhere (a log, CI) the same line every `every` seconds."""

    def __init__(self, stream: TextIO, every: float = 10.0) -> None:
        self.stream = stream
        self.every = every
        self._tty = stream.isatty()
        self._last = 0.0

    def __call__(self, report: SoakReport, total: int) -> None:
        now = time.monotonic()
        done = min(report.programs, total)
        if not self._tty and now - self._last < self.every and done < total:
            return
        self._last = now
        rate = report.programs_this_run / report.seconds if report.seconds else 0.0
        left = (total - done) / rate if rate else 0.0
        width = 24
        filled = int(width * done / total) if total else width
        line = (
            f"[{'#' * filled}{'-' * (width - filled)}] {done:,}/{total:,} programs  {rate:.1f}/s  "
            f"ETA {int(left) // 60}:{int(left) % 60:02d}  {len(report.signatures)} signature(s)"
        )
        self.stream.write(("\r" + line) if self._tty else line + "\n")
        if self._tty and done >= total:
            self.stream.write("\n")
        self.stream.flush()
