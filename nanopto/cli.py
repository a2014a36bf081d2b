"""The `nanopto` command line: run the shipped examples, inline a file, list the rules.

    nanopto demo [NAME] [--list]     the worked examples of docs/specification.md, explained
    nanopto inline FILE.py [...]     run a pipeline (default: the Default strategy) on a `pl` file
    nanopto step FILE.py [...]       inline one call site at a time, showing the rules each fired
    nanopto check FILE.py [...]      run a program before and after a pipeline on drawn inputs
    nanopto rules | passes           every ruleset and rule / every registered pass
    nanopto serve                    the playground in a browser

Every command that reads a program takes `-` for standard input, and every command that prints
takes `-o FILE` (written only once the command succeeded), as compiler drivers do.

`--rules my_rules.py` (inline, step, check, rules, passes) adds the user's own passes. A rules
file is Python the user wrote and is imported (run); a program file is `pl` source and is only
parsed.

Input files are parsed with `ast`, never imported or executed. Every error a user can cause (a
missing file, a parse error, an unknown pass, a recursive helper, a site the pass cannot splice, a
verifier failure: one of the errors docs/errors.md lists) is one message on stderr,
`nanopto: error: <where>: <what>`, and exit code 2. Anything else is a bug in nanopto:
`nanopto: internal error: ...` and exit code 3.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import io
import json
import os
import re
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from nanopto import __version__
from nanopto.tools import examples
from nanopto.tools.examples import (  # noqa: F401 (EXAMPLE_ORDER, JIT_EXAMPLE_ORDER: re-exported)
    EXAMPLE_ORDER,
    JIT_EXAMPLE_ORDER,
    example_names,
    jit_example_names,
    summary,
)
from nanopto.tools.files import Interrupted, write_whole_file

if TYPE_CHECKING:
    from nanopto.ir_terms.nodes import Program
    from nanopto.passes import PassManager
    from nanopto.passes.pass_base import Pass
    from nanopto.rules import Ruleset
    from nanopto.tools.pipeline_run import PipelineRun

# Each command imports what it uses inside its handler, so `nanopto --version` and `nanopto --help`
# load neither egglog nor the passes, and `nanopto inline` no hypothesis (docs/architecture.md#latency).

EXIT_OK = 0
EXIT_DIFFERS = 1
"""`nanopto check` found an input on which the pipeline changed what the program computes."""
EXIT_USAGE = 2
"""Anything the user can fix: one of nanopto's documented errors (argparse uses 2 for usage too)."""
EXIT_INTERNAL = 3
"""Anything else reaching the top: a bug in nanopto (docs/errors.md)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT): 128 + the signal's number, as shells report a command the signal ended."""


@functools.cache
def default_pipeline() -> str:
    """The Default strategy's pipeline as a spec (`hoist-nested-calls,inline-functions`)."""
    from nanopto.passes import STRATEGY_PIPELINES, OptimizationStrategy

    return ",".join(STRATEGY_PIPELINES[OptimizationStrategy.Default])


class UserError(Exception):
    """A problem with the command's input, reported as one `nanopto: error:` message."""


# ---------------------------------------------------------------------------------------------
# Shipped examples
# ---------------------------------------------------------------------------------------------

DEFAULT_DEMOS = ("twice", "bump")
"""What `nanopto demo` with no name runs in full: the two rebinding traps."""


def _float32_array(values: list[float]) -> Any:
    import numpy as np

    return np.array(values, dtype=np.float32)


@dataclass(frozen=True)
class Oracle:
    """Concrete inputs for the reference interpreter, and the program the wrong rule would make."""

    args: Callable[[], tuple[Any, ...]]
    inputs: str
    wrong_rule: str
    wrong_source: str
    right_result: str
    wrong_result: str


_ORACLES: dict[str, Oracle] = {
    "twice": Oracle(
        args=lambda: (_float32_array([1.0, 2.0, 3.0, 4.0]),),
        inputs="a = [1, 2, 3, 4]",
        wrong_rule="substituting the caller's `a` at the def-site splices `a = pl.add(a, a)` into main",
        wrong_source="""\
import nanopto.language as pl


@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        a = pl.add(a, a)
        u = a
        w = pl.add(a, u)
        return w
""",
        right_result="3A",
        wrong_result="4A",
    ),
    "bump": Oracle(
        args=lambda: (5,),
        inputs="k = 5",
        wrong_rule="substituting the caller's `k` at the def-site splices `k = k + 1` into main",
        wrong_source="""\
import nanopto.language as pl


@pl.program
class P:
    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = k + 1
        m: pl.Scalar[pl.INDEX] = k
        return k + m
""",
        right_result="2k + 1",
        wrong_result="2k + 2",
    ),
}
"""The `twice` (3A) and `bump` (k + m) traps, run before and after in the reference interpreter."""


def example_source(name: str) -> str:
    """The text of a shipped example (`nanopto.tools.examples`); an unknown name is a UserError."""
    try:
        if name in jit_example_names():
            return examples.jit_example_source(name)
        return examples.example_source(name)
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None


def demo_names() -> list[str]:
    """What `nanopto demo` can show: the `pl` examples, then the `@pl.jit` ones."""
    return example_names() + jit_example_names()


# ---------------------------------------------------------------------------------------------
# Reading input
# ---------------------------------------------------------------------------------------------


DEFAULT_MAX_INPUT_BYTES = 16 * 1024 * 1024
"""The largest program file read unless --max-input-bytes says otherwise: a 5 MB program of 143
functions parses and inlines in seconds; far larger ones take gigabytes of memory."""


def parse_program(source: str, path: str) -> Program:
    """`nanopto.ir_terms.parser.parse_program`, imported when a command first reads a program."""
    from nanopto.ir_terms.parser import parse_program as parse

    return parse(source, path)


MAX_INPUT_BYTES_LIMIT = sys.maxsize - 1
"""The largest --max-input-bytes: one byte more is read than the limit, and a read takes at most
`sys.maxsize` bytes."""


def read_program(path: str, max_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> tuple[str, Program]:
    """Read and parse `path` (never executing it); what cannot be read becomes a UserError.

    Only a regular file is read, and at most `max_bytes` of it: a FIFO would block forever and
    /dev/zero never ends, so both are refused before they are opened.
    """
    if not 1 <= max_bytes <= MAX_INPUT_BYTES_LIMIT:
        raise UserError(f"--max-input-bytes must be between 1 and {MAX_INPUT_BYTES_LIMIT:,}, got {max_bytes:,}")
    if path == "-":  # standard input, as compiler drivers read it; bounded like a file
        source = _source_text("<stdin>", "input", sys.stdin.buffer.read(max_bytes + 1), max_bytes)
        return source, parse_program(source, "<stdin>")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"{path}: is a directory, not a pl source file")
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{path}: is not a regular file ({_file_kind(info.st_mode)}); pass a pl source file")
    if info.st_size > max_bytes:
        raise UserError(_too_large(path, "file", max_bytes))
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)  # the file may have grown since stat
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    source = _source_text(path, "file", data, max_bytes)
    return source, parse_program(source, path)


def _too_large(name: str, kind: str, max_bytes: int) -> str:
    return (
        f"{name}: larger than the input limit of {max_bytes:,} bytes; "
        f"raise it with --max-input-bytes N if the {kind} is meant to be this large"
    )


def _source_text(name: str, kind: str, data: bytes, max_bytes: int) -> str:
    """Bytes read (at most `max_bytes + 1` of them) as the source text, newlines as text mode
    reads them; bytes that are not UTF-8, or too many bytes, are a UserError."""
    try:
        source = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise UserError(f"{name}: not UTF-8 text: byte {exc.start} cannot be decoded ({exc.reason})") from None
    if len(data) > max_bytes:
        raise UserError(_too_large(name, kind, max_bytes))
    return source


def write_text(path: str, text: str, what: str) -> None:
    """Write an output file; a path that cannot be written is a UserError naming `what` it was for.

    The text goes to a temporary file beside `path`, renamed over it once complete: a Ctrl-C or a
    full disk halfway leaves the old file (or none), never a partial one."""
    try:
        write_whole_file(path, text)
    except OSError as exc:
        raise UserError(f"{path}: cannot write {what}: {exc.strerror or exc}") from None


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


# ---------------------------------------------------------------------------------------------
# nanopto demo
# ---------------------------------------------------------------------------------------------


def _rule(out: TextIO, title: str) -> None:
    out.write(f"\n--- {title} " + "-" * max(3, 70 - len(title)) + "\n")


def _show_value(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        return "[" + ", ".join(f"{x:g}" for x in value.tolist()) + "]"
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def run_oracle(name: str, before: Program, after: Program, out: TextIO) -> None:
    from nanopto.verify.interpreter import interpret, values_equal

    oracle = _ORACLES[name]
    wrong = parse_program(oracle.wrong_source, f"<wrong splice of {name}>")
    got_before = interpret(before, "main", *oracle.args())
    got_after = interpret(after, "main", *oracle.args())
    got_wrong = interpret(wrong, "main", *oracle.args())
    _rule(out, f"reference interpreter, main({oracle.inputs})")
    out.write(f"before inlining:  {_show_value(got_before)}   ({oracle.right_result})\n")
    out.write(f"after inlining:   {_show_value(got_after)}\n")
    same = "same" if values_equal(got_before, got_after) else "DIFFERENT (a bug in the pass)"
    out.write(f"before == after:  {same}\n")
    out.write(
        f"the WRONG rule ({oracle.wrong_rule}) would compute {oracle.wrong_result}: "
        f"{_show_value(got_wrong)}\n"
    )


def demo_jit(name: str, out: TextIO) -> None:
    """A `@pl.jit` example: the specialized program, what inlining made of it, each call site, and
    the call's result on the reference interpreter."""
    import numpy as np

    from nanopto.ir_terms.printer import python_print
    from nanopto.passes.hoist_nested_calls import hoist_program
    from nanopto.passes.inlining import inline_program
    from nanopto.tools.inline_report import explain_sites
    from nanopto.verify.interpreter import values_equal

    source = example_source(name)
    out.write(f"=== demo {name}: {summary(source)}\n")
    module = examples.load_jit_example(name)
    entry = module.ENTRY
    args = module.demo_args()
    spec = entry.compile(*args)
    call = f"{entry.__name__}({module.INPUTS})"
    _rule(out, f"before: {entry.__name__}.compile(...).program, specialized for {call}")
    out.write(python_print(spec.program).rstrip("\n") + "\n")
    result = inline_program(hoist_program(spec.program))
    _rule(out, f"after inline-functions: {entry.__name__}.lower(...)")
    out.write(python_print(spec.lowered).rstrip("\n") + "\n")
    _rule(out, "call sites")
    explain_sites(result, out, source)
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    got = entry(*args)
    _rule(out, f"reference interpreter, {call}")
    out.write(f"result:             {_show_value(got)}   ({module.RIGHT_RESULT})\n")
    same = all(values_equal(b, a) for b, a in zip(before, args, strict=True))
    out.write(f"arguments after:    {'unchanged' if same else 'CHANGED (a bug in the pass)'}\n")
    out.write("\n")


def demo_one(name: str, out: TextIO) -> None:
    from nanopto.ir_terms.printer import python_print
    from nanopto.passes.hoist_nested_calls import hoist_program
    from nanopto.passes.inlining import inline_program
    from nanopto.tools.inline_report import explain_sites

    if name in jit_example_names():
        demo_jit(name, out)
        return
    source = example_source(name)
    out.write(f"=== demo {name}: {summary(source)}\n")
    before = parse_program(source, f"examples/{name}.py")
    result = inline_program(hoist_program(before))
    _rule(out, "before")
    out.write(python_print(before).rstrip("\n") + "\n")
    _rule(out, "after inline-functions")
    out.write(python_print(result.program).rstrip("\n") + "\n")
    _rule(out, "call sites")
    explain_sites(result, out, source)
    if name in _ORACLES:
        run_oracle(name, before, result.program, out)
    out.write("\n")


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    names = demo_names()
    if args.list:
        width = max(len(n) for n in names)
        for name in names:
            out.write(f"{name:<{width}}  {summary(example_source(name))}\n")
        return EXIT_OK
    if args.name is not None:
        demo_one(args.name, out)
        return EXIT_OK
    for name in DEFAULT_DEMOS:
        demo_one(name, out)
    out.write("More examples (nanopto demo NAME; nanopto demo --list):\n")
    for name in names:
        if name not in DEFAULT_DEMOS:
            out.write(f"    {name}\n")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# nanopto inline
# ---------------------------------------------------------------------------------------------


_LIMIT_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("--max-iterations", int, "ruleset iterations per saturation run"),
    ("--max-rows", int, "e-graph rows"),
    ("--timeout", float, "wall-clock seconds per saturation run"),
)


def _with_options(manager: PassManager, args: argparse.Namespace, trace: bool) -> PassManager:
    """Apply `--max-iterations` / `--max-rows` / `--timeout` to every inline-functions pass, and
    `trace=True` when a view needs the run's details (the pass records them as it runs).

    The pass checks the values (PassOptionError), as it does for `{max-iterations=...}` options."""
    from nanopto.passes import PassManager
    from nanopto.passes.hoist_nested_calls import HoistNestedCalls
    from nanopto.passes.inlining import InlineFunctions
    from nanopto.passes.rewrite import RewriteRules

    given: dict[str, Any] = {
        flag[2:].replace("-", "_"): getattr(args, flag[2:].replace("-", "_")) for flag, _, _ in _LIMIT_FLAGS
    }
    given = {name: value for name, value in given.items() if value is not None}
    inline_options = {**given, "trace": True} if trace else given

    def configure(pass_: Pass) -> Pass:
        if isinstance(pass_, InlineFunctions):
            return replace(pass_, **inline_options) if inline_options else pass_
        if isinstance(pass_, RewriteRules):  # always traced: an unmatched rule is worth a warning
            return replace(pass_, **given, trace=True)
        if isinstance(pass_, HoistNestedCalls) and trace:
            return replace(pass_, trace=True)
        return pass_

    return PassManager(configure(p) for p in manager.passes)


def _warn(warning: str) -> None:
    sys.stderr.write(f"nanopto: warning: {warning}\n")


def _warn_unfired(run: PipelineRun) -> None:
    """A rule of the user's that never matched is usually a pattern that does not say what was meant."""
    for warning in run.warnings():
        _warn(warning)


def cmd_inline(args: argparse.Namespace, out: TextIO) -> int:
    """`nanopto inline`; the traces and warnings go to stderr, so what it prints stays `pl`."""
    from nanopto.ir_terms.printer import python_print
    from nanopto.passes import PassManager
    from nanopto.passes.hoist_nested_calls import HoistResult
    from nanopto.passes.inlining import InlineResult
    from nanopto.tools.inline_report import (
        explain_hoisted,
        explain_rules,
        explain_sites,
        hoisted_record,
        site_record,
    )
    from nanopto.tools.pipeline_run import record_run
    from nanopto.tools.rules_file import load_rules_files

    if args.changed_only and not args.print_after_all:
        raise UserError("--changed-only only applies together with --print-after-all")
    user_passes = load_rules_files(args.rules)
    if args.pipeline is None:  # the default pipeline, then the rules files' passes in their order
        args.pipeline = ",".join([default_pipeline(), *(p.name for p in user_passes)])
    views = _views(args)
    wanted = bool(args.trace or args.json or views is not None)
    manager = _with_options(PassManager.from_pipeline(args.pipeline), args, trace=wanted)
    source, before = read_program(args.file, args.max_input_bytes)
    # One run: the passes record their own results (trace=True) and show their e-graphs to the
    # run's collector; every view below reads the recorded run.
    run = record_run(
        manager,
        before,
        egraphs=views is not None,
        transcript=args.emit_egglog is not None,
        source=source,
        file=args.file,
    )
    after = run.after
    if not after.function_list:  # exit 0 means valid pl, and an empty @pl.program class is not
        where = f"{after.span}: " if after.span is not None and after.span.is_valid() else f"{args.file}: "
        raise UserError(
            f"{where}after {args.pipeline} the program '{after.name}' holds no function: every function was "
            "Inline, so the pass removed them all, and an empty @pl.program class is not valid pl; "
            "add the function that calls the helpers"
        )
    traces = run.inline_results
    per_pass = run.traced
    after_text = python_print(after)
    diff = _diff(args.file, before, after_text, args.pipeline) if args.diff else None
    # The files the options asked for, once the program has printed: a failing command writes none.
    if views is not None:
        views.write(args, run)
    if args.emit_egglog is not None:
        _write_egglog(args.emit_egglog, run.transcript or [])
    _warn_unfired(run)

    if args.json:
        sites = [site_record(r, s, source) for r in traces for s in r.sites]
        rules: dict[str, int] = {}
        times: dict[str, float] = {}
        for t in per_pass:
            for name, count in (t.rules or {}).items():
                if count:
                    rules[name] = rules.get(name, 0) + count
        for r in traces:
            for phase, seconds in r.report.times.items():
                times[phase] = times.get(phase, 0.0) + seconds
        payload: dict[str, Any] = {
            "file": args.file,
            "pipeline": manager.pass_names,
            "sites": sites,
            "hoisted": [hoisted_record(h) for h in run.hoisted],
            "rules": rules,
            "rulesets": list(traces[0].rulesets) if traces else [],
            "iterations": sum(r.report.iterations for r in traces),
            "passes": [
                {
                    "pass": t.name,
                    "user": t.user,
                    "rules": t.rules,
                    "iterations": t.iterations,
                    "never_fired": t.never_fired,
                }
                for t in per_pass
            ],
            "times": times,
            "seconds": run.seconds,
            "program": after_text,
        }
        if diff is not None:
            payload["diff"] = diff
        if args.print_after_all:
            payload["after_each_pass"] = [
                {"pass": p.name, "part_of": p.part_of, "changed": p.changed, "program": python_print(p.program)}
                for p in run.passes
                if p.changed or not args.changed_only
            ]
        out.write(json.dumps(payload, indent=2) + "\n")
        return EXIT_OK

    if args.print_after_all:
        for p in run.passes:
            if not p.changed and args.changed_only:
                out.write(f"# ----- {p.name}: no change (hidden by --changed-only) -----\n")
                continue
            step = f" (a step of {p.part_of})" if p.part_of else ""
            out.write(f"# ----- IR after {p.name}{step}{'' if p.changed else ' (unchanged)'} -----\n")
            out.write(python_print(p.program).rstrip("\n") + "\n")
    if diff is not None:
        out.write(diff if diff else "# no change\n")
    if not args.print_after_all and diff is None:
        out.write(after_text)
    if args.trace:  # on stderr, so that stdout stays a `pl` program
        inline_results = iter(traces)
        for t in run.passes:
            if isinstance(t.trace, HoistResult):
                sys.stderr.write(f"\n# ===== trace: {t.name} =====\n")
                explain_hoisted(t.trace, sys.stderr)
                continue
            if t.rules is None:
                continue
            sys.stderr.write(f"\n# ===== trace: {t.name} =====\n")
            if isinstance(t.trace, InlineResult):
                result = next(inline_results)
                explain_sites(result, sys.stderr, source)
                explain_rules(result, sys.stderr)
                continue
            fired = {rule: count for rule, count in (t.rules or {}).items() if count}
            sys.stderr.write(f"rules fired ({sum(fired.values())} matches, {t.iterations} iterations):\n")
            width = max((len(rule) for rule in t.rules or ()), default=0)
            for rule, count in (t.rules or {}).items():
                sys.stderr.write(f"    {rule:<{width}}  {count}{'   (never matched)' if not count else ''}\n")
    return EXIT_OK


@dataclass
class _Views:
    """`--egraph` / `--html`: written from the recorded run."""

    def write(self, args: argparse.Namespace, run: PipelineRun) -> None:
        from nanopto.tools.egraph_dot import EGraphOutputError
        from nanopto.tools.inline_views import write_inline_views  # the page: only when asked for

        try:
            write_inline_views(
                run,
                egraph_path=args.egraph,
                html_path=args.html,
                max_nodes=args.egraph_max_nodes,
                pipeline=args.pipeline,
            )
        except EGraphOutputError as exc:
            raise UserError(str(exc)) from None


def _views(args: argparse.Namespace) -> _Views | None:
    """Check the `--egraph`/`--html` options before anything is written, and start collecting."""
    from nanopto.tools.egraph_dot import EGraphOutputError, check_egraph_path

    if args.egraph is None and args.html is None:
        return None
    if args.egraph_max_nodes < 1:
        raise UserError(f"--egraph-max-nodes must be at least 1, got {args.egraph_max_nodes}")
    if args.egraph is not None:
        try:
            check_egraph_path(args.egraph)
        except EGraphOutputError as exc:
            raise UserError(str(exc)) from None
    return _Views()


def _write_egglog(path: str, programs: Sequence[str]) -> None:
    """Every e-graph run of the pipeline as one egglog program; each run between `(push)` and
    `(pop)`, so the file replays run after run in one e-graph (`egglog FILE.egg`)."""
    header = (
        ";; Written by `nanopto inline --emit-egglog`: every e-graph run of the pipeline, replayable by egglog\n"
        ";; without nanopto (docs/reading-an-egraph.md#replaying-a-run-in-egglog says how).\n"
        if programs
        else ";; Written by `nanopto inline --emit-egglog`: the pipeline ran no e-graph (nothing to inline or rewrite).\n"
    )
    body = "".join(f"(push)\n{text}(pop)\n" for text in programs)
    write_text(path, header + body, "the egglog program")


def _diff(path: str, before: Program, after_text: str, pipeline: str) -> str:
    from nanopto.ir_terms.printer import python_print

    lines = difflib.unified_diff(
        python_print(before).splitlines(keepends=True),
        after_text.splitlines(keepends=True),
        fromfile=f"{path} (parsed)",
        tofile=f"{path} (after {pipeline or 'empty pipeline'})",
    )
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# nanopto rules
# ---------------------------------------------------------------------------------------------


def _squash(text: str) -> str:
    return re.sub(r"\s{2,}", "  ", text.strip())


def _describe_ruleset(rs: Ruleset, out: TextIO) -> None:
    out.write(f"\n{rs.name}: {rs.doc}\n")
    width = max((len(r.name) for r in rs.rules), default=0)
    for rule in rs.rules:
        out.write(f"    {rule.name:<{width}}  {_squash(rule.before)}  =>  {_squash(rule.after)}\n")


def cmd_rules(args: argparse.Namespace, out: TextIO) -> int:
    from nanopto.egraph import schedule
    from nanopto.rules import INLINE_RULESETS
    from nanopto.tools.rules_file import describe_user_passes, load_rules_file

    total = sum(len(rs.rules) for rs in INLINE_RULESETS)
    out.write(f"{len(INLINE_RULESETS)} rulesets, {total} rules, in schedule order\n")
    out.write(f"schedule: {schedule(INLINE_RULESETS)}\n")
    for rs in INLINE_RULESETS:
        _describe_ruleset(rs, out)
    for path in args.rules or ():
        describe_user_passes(path, load_rules_file(path), out)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# nanopto check
# ---------------------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from nanopto.ir_terms.printer import python_print
    from nanopto.ir_terms.types import UnknownType
    from nanopto.passes import PassManager
    from nanopto.tools.check import MAX_STEPS, RunawayInput, check_equivalence, default_entries, show
    from nanopto.tools.rules_file import load_rules_files
    from nanopto.verify.inputs import UNANNOTATED, UnsupportedParameter
    from nanopto.verify.interpreter import values_equal

    if args.examples < 1:
        raise UserError(f"--examples must be at least 1, got {args.examples}")
    max_steps = MAX_STEPS if args.max_steps is None else args.max_steps
    if max_steps < 1:
        raise UserError(f"--max-steps must be at least 1, got {max_steps}")
    user_passes = load_rules_files(args.rules)
    pipeline = args.pipeline if args.pipeline is not None else ",".join([default_pipeline(), *(p.name for p in user_passes)])
    manager = PassManager.from_pipeline(pipeline)
    _, before = read_program(args.file, args.max_input_bytes)
    after = manager.run(before)
    file = "<stdin>" if args.file == "-" else args.file
    entries = args.entry or default_entries(before, after)
    if not entries:
        raise UserError(
            f"{file}: nothing to check: every function is Inline, and inlining removes them all; "
            "add a function that is not Inline and calls them"
        )
    for entry in entries:
        if entry not in before.functions or entry not in after.functions:
            raise UserError(f"{file}: no function '{entry}' before and after the pipeline to run")
        fn = before.functions[entry]
        for param in fn.param_list:
            if isinstance(param.var.type, UnknownType):
                span = param.var.span if param.var.span is not None and param.var.span.is_valid() else fn.span
                where = f"{file}:{span.line}:{span.col + 1}: " if span is not None and span.is_valid() else f"{file}: "
                _warn(
                    f"{where}parameter '{param.var.name}' of '{entry}' has no annotated "
                    f"type: drawn as {python_print(UNANNOTATED)}; annotate it to check another type"
                )
    try:
        report = check_equivalence(before, after, entries, args.examples, max_steps)
    except (UnsupportedParameter, RunawayInput) as exc:
        raise UserError(str(exc)) from None
    found = report.counterexample
    if found is None:
        for entry, runs in report.runs.items():
            note = f" ({report.notes[entry]})" if entry in report.notes else ""
            out.write(f"{entry}: equivalent on {runs} inputs{note} before and after {pipeline}\n")
        return EXIT_OK
    out.write(f"{found.entry}: NOT equivalent after {pipeline}\n")
    out.write("  inputs:\n")
    for name, value in zip(found.params, found.args, strict=True):
        out.write(f"    {name} = {show(value)}\n")
    out.write(f"  before: {show(found.before)}\n  after:  {show(found.after)}\n")
    for name, was, now in zip(found.params, found.buffers_before, found.buffers_after, strict=True):
        if not values_equal(was, now):
            out.write(f"  argument {name} afterwards: before {show(was)}, after {show(now)}\n")
    return EXIT_DIFFERS


# ---------------------------------------------------------------------------------------------
# nanopto passes
# ---------------------------------------------------------------------------------------------


def cmd_passes(args: argparse.Namespace, out: TextIO) -> int:
    from nanopto.passes import get_pass, list_passes
    from nanopto.tools.rules_file import load_rules_files, pass_summary

    load_rules_files(args.rules)  # registers the files' passes, listed with the built-in ones
    for name in list_passes():
        pass_ = get_pass(name)
        out.write(f"{name}: {pass_summary(pass_)}\n")
        if pass_.required:
            out.write(f"    requires: {', '.join(sorted(p.name for p in pass_.required))}\n")
        if pass_.produced:
            out.write(f"    produces: {', '.join(sorted(p.name for p in pass_.produced))}\n")
        options = [f for f in dataclasses.fields(pass_) if f.init]
        if options:
            shown = ", ".join(f"{f.name}={getattr(pass_, f.name)!r}" for f in options)
            out.write(f"    options: {shown}\n")
    out.write(f"\ndefault pipeline: {default_pipeline()}\n")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# nanopto step
# ---------------------------------------------------------------------------------------------


def cmd_step(args: argparse.Namespace, out: TextIO) -> int:
    from nanopto.tools.rules_file import load_rules_files
    from nanopto.tools.stepper import run_steps

    if args.pause and args.file == "-":
        raise UserError("--pause reads Enter from standard input, which - already reads the program from; pass a file")
    if args.pause and args.output is not None:
        raise UserError("--pause shows each step and waits for Enter: it writes to the terminal, not to -o FILE")
    user_passes = load_rules_files(args.rules)
    source, before = read_program(args.file, args.max_input_bytes)
    run_steps(
        source,
        before,
        user_passes,
        out,
        rule_by_rule=args.rule_by_rule,
        stdin=sys.stdin if args.pause else None,
        warn=_warn,
    )
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# nanopto soak
# ---------------------------------------------------------------------------------------------


def _list_of(kind: Callable[[str], Any], flag: str) -> Callable[[str], tuple[Any, ...]]:
    """An argparse type: a comma-separated list (`--ops mul,add`, `--shapes 4,2x3`)."""

    def parse(text: str) -> tuple[Any, ...]:
        try:
            return tuple(kind(item.strip()) for item in text.split(",") if item.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag}: cannot read {text!r}") from None

    return parse


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.split("x"))


def cmd_soak(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from nanopto.passes import PassManager
    from nanopto.tools import soak
    from nanopto.tools.rules_file import load_rules_files
    from nanopto.tools.soak_executors import DaskCluster, Executor, LocalProcesses
    from nanopto.verify.strategies import program_descs

    if args.programs < 1:
        raise UserError(f"--programs must be at least 1, got {args.programs}")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    if args.chunk < 1:
        raise UserError(f"--chunk must be at least 1, got {args.chunk}")
    user_passes = load_rules_files(args.rules)  # a broken rules file fails here, not in every worker
    rules = tuple(soak.RulesFile(path, Path(path).read_text(encoding="utf-8")) for path in args.rules or ())
    config = soak.SoakConfig(
        seed=args.seed,
        pipeline=args.pipeline,
        rules=rules,
        aliasing=args.aliasing,
        max_helpers=args.max_helpers,
        ops=args.ops,
        constants=args.constants,
        shapes=args.shapes,
        chunk=args.chunk,
    )
    pipeline = soak.pipeline_of(config, [p.name for p in user_passes])
    PassManager.from_pipeline(pipeline)  # an unknown pass or option is one error, here
    try:
        program_descs(max_helpers=args.max_helpers, ops=args.ops, constants=args.constants, shapes=args.shapes)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    executor: Executor
    if args.scheduler is not None:
        try:
            executor = DaskCluster(args.scheduler)
        except ImportError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:
            raise UserError(f"--scheduler {args.scheduler}: cannot connect: {_one_line(exc)}") from None
    else:
        executor = LocalProcesses(args.workers)
    folder = Path(args.out)
    sys.stderr.write(f"nanopto soak: {args.programs:,} programs through {pipeline} on {executor.where}; output in {folder}\n")
    try:
        report = soak.run_campaign(folder, config, pipeline, args.programs, executor, soak.ProgressBar(sys.stderr))
    except soak.CampaignError as exc:
        raise UserError(str(exc)) from None
    finally:
        executor.close()
    rate = report.programs_this_run / report.seconds if report.seconds else 0.0
    out.write(
        f"{report.programs:,} programs ({report.programs_this_run:,} in this run, {report.seconds:.1f} s, "
        f"{rate:.1f} per s, {report.cpu_per_program * 1000:.0f} CPU-ms per program in the workers): "
        f"{report.counts.get('equal', 0):,} equal, "
        f"{sum(n for k, n in report.counts.items() if k.startswith('refused: ')):,} refused for a documented hazard, "
        f"{report.findings:,} finding(s) in {len(report.signatures)} signature(s)\n"
    )
    for signature in sorted(report.signatures.values(), key=lambda s: s.first_program):
        reproducer = folder / "findings" / f"{soak.slug(signature.signature)}.py"
        out.write(f"  {signature.signature}: {signature.count:,} program(s), first program {signature.first_program}; {reproducer}\n")
    out.write(f"report: {folder / 'report.json'}\n")
    return EXIT_DIFFERS if report.signatures else EXIT_OK


# ---------------------------------------------------------------------------------------------
# nanopto serve
# ---------------------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from nanopto.tools.serve import serve  # the playground: only when asked for

    def say(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be between 0 and 65535, got {args.port}")
    try:
        serve(args.port, open_browser=args.open, out=say)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; `nanopto serve --port 0` picks a free port") from None
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------


_RULES_HELP = (
    "a Python file of your own rules whose PASSES list is added (repeatable); unlike FILE.py it is "
    "imported, i.e. run, so only pass a file you trust"
)


class _CommandParser(argparse.ArgumentParser):
    """A command's parser whose arguments are added only when that command is parsed or its help
    shown: their help texts name defaults of the passes and the engine (the default pipeline, the
    saturation limits), which `nanopto --version` and `nanopto --help` must not import."""

    def __init__(self, *args: Any, arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arguments = arguments

    def _add_arguments(self) -> None:
        if self._arguments is not None:
            arguments, self._arguments = self._arguments, None
            arguments(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._add_arguments()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_arguments()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_arguments()
        return super().format_help()


def installed_version(distribution: str) -> str:
    """The version of an installed distribution, read from the first `NAME-*.dist-info/METADATA`
    on `sys.path` (the copy `import` would load), without importing `importlib.metadata`: its
    imports (email parsing among them) cost about 30 ms, a fifth of `--version`'s budget
    (docs/architecture.md#latency). Any other layout falls back to `importlib.metadata`."""
    prefix = f"{distribution}-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".dist-info"):
                try:
                    with open(os.path.join(entry or ".", name, "METADATA"), encoding="utf-8") as metadata_file:
                        for line in metadata_file:
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                            if not line.strip():
                                break  # the headers end at the first blank line
                except OSError:
                    continue
    from importlib import metadata

    return metadata.version(distribution)


class _VersionAction(argparse.Action):
    """`--version`: egglog's version read from its installed metadata, so egglog is not imported."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        sys.stdout.write(f"nanopto {__version__} (egglog {installed_version('egglog')})\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nanopto",
        description="Inlining for the pl IR by egglog rewrite rules. Program files are parsed, never run; "
        "a --rules file is your own Python and is imported.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show nanopto's and egglog's versions and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser)
    for name, help_text, arguments in _COMMANDS:
        sub.add_parser(name, help=help_text, arguments=arguments)
    return parser


def _demo_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument(
        "name", nargs="?", metavar="NAME", help="example to run (default: the twice and bump traps)"
    )
    demo.add_argument("--list", action="store_true", help="list the shipped examples")
    _add_output(demo, "the demo")
    demo.set_defaults(handler=cmd_demo)


def _inline_arguments(inline: argparse.ArgumentParser) -> None:
    from nanopto.egraph import SaturationLimits

    _add_file(inline)
    _add_output(inline, "the result")
    inline.add_argument(
        "--pipeline",
        default=None,
        metavar="SPEC",
        help="comma-separated kebab-case pass names with {key=value} options "
        f"(default: {default_pipeline()}, then the passes of any --rules file)",
    )
    inline.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP)
    inline.add_argument(
        "--diff", action="store_true", help="print a unified diff before/after instead of the program"
    )
    inline.add_argument(
        "--trace", action="store_true", help="explain each call site, the rules fired and the phase times"
    )
    inline.add_argument("--json", action="store_true", help="print the result and trace as JSON")
    inline.add_argument("--print-after-all", action="store_true", help="print the IR after every pass")
    inline.add_argument(
        "--changed-only", action="store_true", help="with --print-after-all: hide passes that changed nothing"
    )
    inline.add_argument(
        "--egraph",
        metavar="FILE.html|FILE.svg|FILE.dot",
        help="write the e-graph at saturation: .html is egglog's interactive viewer (no extra tools), "
        ".svg needs Graphviz dot",
    )
    inline.add_argument(
        "--egraph-max-nodes",
        type=int,
        default=300,
        metavar="N",
        help="draw at most N e-nodes per stage; a cut picture says so (default: 300)",
    )
    inline.add_argument(
        "--emit-egglog",
        metavar="FILE.egg",
        help="write every e-graph run (declarations, rules, terms, schedule, extract) as an egglog program "
        "(docs/reading-an-egraph.md says how to replay it); written only once the command succeeded",
    )
    inline.add_argument(
        "--html", metavar="FILE.html", help="write one self-contained page: before/after, sites, rules, e-graph"
    )
    for flag, kind, what in _LIMIT_FLAGS:
        inline.add_argument(flag, type=kind, metavar="N", help=f"saturation limit: {what} (default: {getattr(SaturationLimits, flag[2:].replace('-', '_')):g})")
    _add_max_input_bytes(inline)
    inline.set_defaults(handler=cmd_inline)


def _rules_arguments(rules: argparse.ArgumentParser) -> None:
    rules.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP)
    _add_output(rules, "the listing")
    rules.set_defaults(handler=cmd_rules)


def _check_arguments(check: argparse.ArgumentParser) -> None:
    _add_file(check)
    _add_output(check, "the verdict")
    check.add_argument(
        "--pipeline", default=None, metavar="SPEC", help=f"the pipeline to check (default: {default_pipeline()})"
    )
    check.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP)
    check.add_argument("--examples", type=int, default=100, metavar="N", help="inputs per function (default: 100)")
    check.add_argument(
        "--entry", action="append", metavar="NAME", help="function to run (repeatable; default: every non-Inline one)"
    )
    check.add_argument(
        "--max-steps",
        type=int,
        default=None,
        metavar="N",
        help="interpreter steps per run before an input counts as running away (default: 1,000,000, about 3 s)",
    )
    _add_max_input_bytes(check)
    check.set_defaults(handler=cmd_check)


def _passes_arguments(passes_cmd: argparse.ArgumentParser) -> None:
    passes_cmd.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP)
    _add_output(passes_cmd, "the listing")
    passes_cmd.set_defaults(handler=cmd_passes)


def _step_arguments(step: argparse.ArgumentParser) -> None:
    _add_file(step)
    _add_output(step, "the steps")
    step.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP + "; one step each")
    step.add_argument(
        "--rule-by-rule", action="store_true", help="also list every egglog iteration inside each splice"
    )
    step.add_argument("--pause", action="store_true", help="wait for Enter after each step (q stops)")
    _add_max_input_bytes(step)
    step.set_defaults(handler=cmd_step)


def _soak_arguments(soak: argparse.ArgumentParser) -> None:
    soak.add_argument("--programs", type=int, default=10_000, metavar="N", help="programs to draw and judge (default: 10,000)")
    soak.add_argument("--seed", type=int, default=0, metavar="S", help="the campaign's seed (default: 0)")
    soak.add_argument(
        "--pipeline", default=None, metavar="SPEC", help=f"the pipeline to soak (default: {default_pipeline()}, then the passes of any --rules file)"
    )
    soak.add_argument("--rules", action="append", metavar="RULES.py", help=_RULES_HELP)
    soak.add_argument("--aliasing", action="store_true", help="draw the aliasing-heavy programs (docs/08-aliasing-traps.md)")
    soak.add_argument("--max-helpers", type=int, default=3, metavar="N", help="Inline helpers per program, at most (default: 3)")
    soak.add_argument("--ops", type=_list_of(str, "--ops"), default=None, metavar="OPS", help="tensor ops drawn, e.g. mul,add (default: add,sub,maximum,minimum)")
    soak.add_argument("--constants", type=_list_of(int, "--constants"), default=None, metavar="INTS", help="integer constants drawn, 0..9, e.g. 1,2")
    soak.add_argument("--shapes", type=_list_of(_shape, "--shapes"), default=None, metavar="SHAPES", help="tensor shapes drawn, e.g. 4,2x3 (default: 4)")
    soak.add_argument("--workers", type=int, default=None, metavar="N", help="local worker processes (default: every core)")
    soak.add_argument("--scheduler", default=None, metavar="ADDRESS", help="run on the Dask distributed scheduler at ADDRESS (pip install 'nanopto[dask]')")
    soak.add_argument("--out", default="soak-out", metavar="DIR", help="the campaign's directory: report, reproducers; a second run resumes it (default: soak-out)")
    soak.add_argument("--chunk", type=int, default=25, metavar="N", help="programs per task handed to a worker (default: 25)")
    _add_output(soak, "the summary")
    soak.set_defaults(handler=cmd_soak)


def _serve_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--port", type=int, default=8765, metavar="N", help="port on 127.0.0.1 (default: 8765; 0 picks a free one)")
    serve.add_argument("--open", action="store_true", help="open the page in your default browser")
    serve.set_defaults(handler=cmd_serve)


_COMMANDS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("demo", "run a shipped worked example (before, after, explanation)", _demo_arguments),
    ("inline", "run a pass pipeline (default: inline-functions) on a pl file", _inline_arguments),
    ("rules", "list every ruleset and rule with its before/after shape", _rules_arguments),
    ("check", "run a program before and after a pipeline on drawn inputs: is it the same?", _check_arguments),
    ("passes", "list the registered passes with their options and properties", _passes_arguments),
    ("step", "inline one call site at a time, printing the rules fired and the program", _step_arguments),
    ("soak", "a differential campaign: drawn programs before and after a pipeline, on every core or a Dask cluster", _soak_arguments),
    ("serve", "a local playground in your browser: edit a program and rules, run, see every view", _serve_arguments),
)
"""Every command: its name, its one-line help, and what adds its arguments (when it is used)."""


def _add_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE.py", help="a pl source file (parsed, never executed); - reads standard input"
    )


def _add_output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"write {what} to FILE instead of standard output, only once the command succeeded",
    )


def _run_command(args: argparse.Namespace, stdout: TextIO) -> int:
    """Run the command; with `-o FILE`, what it would print goes to FILE instead (warnings and
    traces stay on stderr), written only once the command finished (an error writes nothing)."""
    output: str | None = getattr(args, "output", None)
    if output is None:
        code: int = args.handler(args, stdout)
        return code
    buffer = io.StringIO()
    code = args.handler(args, buffer)
    write_text(output, buffer.getvalue(), "the output")
    return code


def _add_max_input_bytes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-input-bytes",
        type=int,
        default=DEFAULT_MAX_INPUT_BYTES,
        metavar="N",
        help=f"refuse a FILE.py larger than N bytes (default: {DEFAULT_MAX_INPUT_BYTES:,})",
    )


_ONE_LINE_LIMIT = 4000


def _one_line(exc: BaseException) -> str:
    """The error on one line, never empty, never longer than `_ONE_LINE_LIMIT` characters."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if not text:
        text = f"{type(exc).__name__} (no message)"
    return text if len(text) <= _ONE_LINE_LIMIT else text[:_ONE_LINE_LIMIT] + " [...]"


def _error_message(exc: BaseException) -> str:
    """How a user error reads: the location first where the error carries one."""
    from nanopto.ir_terms.parser import ParserError
    from nanopto.passes import PipelineSpecError, VerificationError

    if isinstance(exc, ParserError | PipelineSpecError):
        return str(exc)  # the caret display under the offending line / spec is the point
    if isinstance(exc, VerificationError):
        details = "; ".join(str(d) for d in exc.diagnostics)
        if exc.in_the_input:  # a call the specification leaves in place: the source must change
            return f"pass '{exc.pass_name}' cannot process this program as written: {details}"
        return f"pass '{exc.pass_name}' produced invalid IR: {details}"
    return _one_line(exc)


@functools.cache
def user_errors() -> tuple[type[Exception], ...]:
    """nanopto's documented errors about the user's input, files or machine (docs/errors.md): exit 2.
    Anything else, a ValueError included, is a bug in nanopto: exit 3. Imported only once an error
    reaches the top, so a command that succeeds never loads the modules defining them."""
    from nanopto.egraph import SaturationLimitError
    from nanopto.ir_terms.parser import ParserError
    from nanopto.ir_terms.printer import ConstantNotPrintableError, NestingTooDeepToPrintError
    from nanopto.passes import (
        PassOptionError,
        PipelineSpecError,
        PropertyRequirementError,
        UnknownPassError,
        VerificationError,
    )
    from nanopto.passes.inlining.call_graph import InlineCycleError
    from nanopto.passes.inlining.call_sites import InlineError
    from nanopto.passes.inlining.expansion_size import ExpansionTooLargeError
    from nanopto.rules.user_rules import UserRuleError
    from nanopto.terms.encoding import ConstantRangeError
    from nanopto.terms.term_rows import RowsWriteError
    from nanopto.tools.egraph_dot import EGraphOutputError
    from nanopto.tools.rules_file import RulesFileError
    from nanopto.tools.soak import CampaignError

    return (
        UserError,
        ParserError,
        PipelineSpecError,
        UnknownPassError,
        PassOptionError,
        PropertyRequirementError,
        InlineCycleError,
        InlineError,
        ExpansionTooLargeError,
        VerificationError,
        SaturationLimitError,
        RowsWriteError,
        RulesFileError,
        UserRuleError,
        ConstantRangeError,
        EGraphOutputError,
        NestingTooDeepToPrintError,
        ConstantNotPrintableError,
        CampaignError,
    )


def exit_code_for(error: type[BaseException]) -> int:
    """The exit code the command line gives for an error of this type reaching the top."""
    return EXIT_USAGE if issubclass(error, user_errors()) else EXIT_INTERNAL


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    stdout = out if out is not None else sys.stdout
    args = build_parser().parse_args(argv)
    previous = _catch_sigint()
    try:
        if not getattr(args, "rules", None):  # --version and --help import no passes
            return _run_command(args, stdout)
        from nanopto.tools.rules_file import rules_loaded_for_one_command

        with rules_loaded_for_one_command():
            return _run_command(args, stdout)
    except Interrupted:  # Ctrl-C: no traceback, and -o/--emit-egglog files untouched
        return EXIT_INTERRUPTED
    except user_errors() as exc:  # evaluated only once an exception reaches here
        sys.stderr.write(f"nanopto: error: {_error_message(exc)}{_rules_hint(exc, args)}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # `nanopto rules | head`
        return EXIT_OK
    except Exception as exc:  # a bug in nanopto, not in the input: still no traceback
        sys.stderr.write(
            f"nanopto: internal error: {type(exc).__name__}: {_one_line(exc)} "
            "(this is a bug in nanopto; please report it with the input file)\n"
        )
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupted


def _catch_sigint() -> Any:
    """Make Ctrl-C raise `Interrupted` (a rules file's own `raise KeyboardInterrupt` stays a
    failure of the user's code); the previous handler, or None off the main thread."""
    try:
        return signal.signal(signal.SIGINT, _interrupt)
    except ValueError:  # signal handlers can only be set from the main thread
        return None


def _rules_hint(exc: BaseException, args: argparse.Namespace) -> str:
    """`--pipeline fold-mul-one` without `--rules`: which shipped rules file defines the pass, or
    where a user's own pass comes from."""
    from nanopto.passes import UnknownPassError
    from nanopto.tools.rules_file import shipped_rules_defining

    name = exc.pass_name if isinstance(exc, UnknownPassError) else None
    if name is None or getattr(args, "rules", None):
        return ""
    shipped = shipped_rules_defining(name)
    if shipped is not None:
        return f"; hint: the shipped rules file {shipped} defines it: add --rules {shipped}"
    return f"; hint: if {name!r} is a pass of your own rules file, add --rules YOUR_RULES.py"


if __name__ == "__main__":
    sys.exit(main())
