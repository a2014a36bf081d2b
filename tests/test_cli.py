"""The `nanopto` command line. Most tests call `cli.main` in this process, which is all that
`python -m nanopto` runs (`sys.exit(main())`), with standard input, output and error swapped for
buffers: a new interpreter per command cost about a second of imports each. The tests whose point
is a real process (a program piped to `-` on standard input, a FIFO that must not block, the exit
status of `python -m nanopto`) start one."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli as run

from nanopto import cli
from nanopto.cli import EXAMPLE_ORDER, JIT_EXAMPLE_ORDER, example_names, jit_example_names
from nanopto.rules import INLINE_RULESETS

EXAMPLES = Path(__file__).resolve().parent.parent / "nanopto" / "examples"

HELPER_PROGRAM = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, a):
        z = self.helper(a)
        return z
"""

NO_INLINE_PROGRAM = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function
    def main(self, a):
        z = pl.mul(a, a)
        return z
"""


def run_process(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m nanopto ARGS` in a new process, for what only a real process shows."""
    return subprocess.run(
        [sys.executable, "-m", "nanopto", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


def write(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def assert_user_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("nanopto: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------


def test_every_seed_example_ships() -> None:
    assert example_names() == list(EXAMPLE_ORDER)
    assert jit_example_names() == list(JIT_EXAMPLE_ORDER)


def test_demo_default_runs_both_traps_in_the_interpreter() -> None:
    proc = run("demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert len(out.splitlines()) < 120
    assert "=== demo twice" in out and "=== demo bump" in out
    # twice, a = [1, 2, 3, 4]: 3A before and after, 4A for the wrong def-site substitution
    assert "before inlining:  [3, 6, 9, 12]" in out
    assert "after inlining:   [3, 6, 9, 12]" in out
    assert "4A: [4, 8, 12, 16]" in out
    # bump, k = 5: k + (k + 1) = 11 before and after; the wrong rule gives 2k + 2 = 12
    assert "before inlining:  11" in out
    assert "after inlining:   11" in out
    assert "2k + 2: 12" in out
    assert out.count("before == after:  same") == 2
    assert "n_inline0: pl.Scalar[pl.INDEX] = k" in out
    assert "bound to local n_inline0 = k" in out


def test_demo_of_a_jit_example_specializes_lowers_and_runs_it() -> None:
    proc = run("demo", "jit_twice")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "main.compile(...).program" in out and "main.lower(...)" in out
    assert "x__jit_v1 = pl.add(x, x)" in out  # the JIT's rename of a straight-line rebinding
    assert "x_inline1: pl.Tensor[[4], pl.FP32] = a" in out  # the table's fresh local, for the loop
    assert "result:             [7, 14, 21, 28]   (7A)" in out
    assert "arguments after:    unchanged" in out


def test_a_jit_example_is_imported_by_its_shipped_name_only() -> None:
    from nanopto.tools.examples import load_jit_example

    assert load_jit_example("jit_twice").ENTRY.__name__ == "main"
    for name in ("twice", "jit_../twice", "jit_nowhere"):
        with pytest.raises(KeyError):
            load_jit_example(name)


def test_demo_list_names_every_example() -> None:
    proc = run("demo", "--list")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines()]
    assert listed == [*EXAMPLE_ORDER, *JIT_EXAMPLE_ORDER]


@pytest.mark.parametrize("name", EXAMPLE_ORDER)
def test_demo_each_example(name: str) -> None:
    proc = run("demo", name)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "--- before" in out and "--- after inline-functions" in out
    after = out.split("--- after inline-functions", 1)[1].split("--- call sites", 1)[0]
    assert "FunctionType.Inline" not in after
    assert "site 0:" in out
    assert ("reference interpreter" in out) == (name in ("twice", "bump"))


def test_demo_shows_the_line_the_user_wrote_for_a_tuple_site() -> None:
    proc = run("demo", "multi_return")
    assert "`q, ready = self.helper(x, q)`" in proc.stdout


def test_demo_unknown_example() -> None:
    assert_user_error(run("demo", "no_such_example"), "no example named 'no_such_example'", "twice")


# ---------------------------------------------------------------------------------------------
# inline
# ---------------------------------------------------------------------------------------------


def test_inline_prints_the_program_after_the_pass(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)))
    assert proc.returncode == 0, proc.stderr
    assert "y_inline0 = pl.mul(a, a)\n        z = y_inline0\n        return z" in proc.stdout
    assert "def helper" not in proc.stdout
    assert proc.stderr == ""


def test_inline_output_parses_again(tmp_path: Path) -> None:
    first = run("inline", str(EXAMPLES / "nested.py"))
    again = run("inline", str(write(tmp_path, first.stdout, "after.py")))
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout


def test_inline_diff(tmp_path: Path) -> None:
    path = write(tmp_path, HELPER_PROGRAM)
    proc = run("inline", str(path), "--diff")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"--- {path} (parsed)"
    assert lines[1] == f"+++ {path} (after inline-functions)"
    assert "-        z = self.helper(a)" in lines
    assert "+        y_inline0 = pl.mul(a, a)" in lines
    assert "+        z = y_inline0" in lines


def test_inline_diff_without_change(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, NO_INLINE_PROGRAM)), "--diff")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "# no change\n"


def test_inline_trace() -> None:
    proc = run("inline", str(EXAMPLES / "bump.py"), "--trace")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run("inline", str(EXAMPLES / "bump.py")).stdout  # stdout stays the program
    trace = proc.stderr.split("# ===== trace: inline-functions =====", 1)[1]
    assert "site 0: main line 20: `m: pl.Scalar[pl.INDEX] = self.bump(k)` splices helper 'bump'" in trace
    assert 'n: row "plain scalar that is rebound: a fresh local"; bound to local n_inline0 = k' in trace
    assert "splice-assign" in trace and "subst-formal" in trace and "subst-AssignStmt" in trace
    assert "rulesets run to saturation: splice, subst, project, discard, writeback" in trace
    phases = trace.split("phase times: ", 1)[1].splitlines()[0]
    assert [p.split()[0] for p in phases.split(", ")] == [
        "classify", "templates", "encode", "load", "saturate", "extract", "decode", "types", "rebinding-check"
    ]


HOIST_PAST_OPERAND = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def inc(self, m: pl.Out[pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
        m = m + 1
        return m

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        z = k * 10 + self.inc(k)
        return z
"""
OPERAND_REASON = "hoisted: `self.inc(k)` writes `k`, which this operand reads"


def test_trace_json_and_html_give_the_reason_for_each_hoisted_binding(tmp_path: Path) -> None:
    """An operand hoisted with a nested call (docs/08-aliasing-traps.md) is explained like every
    other binding the principle adds, as is the hoisted call itself."""
    path = tmp_path / "hoist.py"
    path.write_text(HOIST_PAST_OPERAND)
    proc = run("inline", str(path), "--trace")
    assert proc.returncode == 0, proc.stderr
    trace = proc.stderr.split("# ===== trace: hoist-nested-calls =====", 1)[1].split("# =====", 1)[0]
    assert f"main line 13: t__inline_arg_v1 = k * 10  ({OPERAND_REASON})" in trace
    assert "main line 13: t__inline_arg_v0 = self.inc(k)  (nested call of Inline 'inc'" in trace
    html = tmp_path / "hoist.html"
    proc = run("inline", str(path), "--json", "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    hoisted = json.loads(proc.stdout)["hoisted"]
    assert hoisted[0] == {
        "function": "main",
        "file": str(path),
        "line": 13,
        "col": 13,
        "binding": "t__inline_arg_v1 = k * 10",
        "reason": OPERAND_REASON,
    }
    assert [h["binding"] for h in hoisted] == ["t__inline_arg_v1 = k * 10", "t__inline_arg_v0 = self.inc(k)"]
    page = html.read_text()
    assert "Nested calls hoisted" in page and "<code>t__inline_arg_v1 = k * 10</code>" in page
    assert OPERAND_REASON in page


def test_inline_json() -> None:
    proc = run("inline", str(EXAMPLES / "twice.py"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {"sites", "rules", "program", "iterations", "times", "pipeline"} <= data.keys()
    assert data["pipeline"] == ["inline-functions"]
    assert data["rulesets"] == ["splice", "subst", "project", "discard", "writeback"]
    (site,) = data["sites"]
    assert (site["caller"], site["helper"], site["line"], site["form"]) == ("main", "twice", 20, "ASSIGN")
    (binding,) = site["bindings"]
    assert binding == {
        "param": "t",
        "actual": "a",
        "row": "REBOUND_SHAPED",
        "row_text": "Tensor/Tile with another definition: a fresh local",
        "bind_local": True,
        "local": "t_inline0",
        "reason": "the callee rebinds this parameter: its rebinding stays on a local",
    }
    assert data["rules"]["splice-assign"] == 1
    assert all(isinstance(v, int) and v > 0 for v in data["rules"].values())
    assert "t_inline0 = pl.add(t_inline0, t_inline0)" in data["program"]


def test_inline_json_with_diff_and_print_after_all() -> None:
    proc = run("inline", str(EXAMPLES / "nested.py"), "--json", "--diff", "--print-after-all")
    data = json.loads(proc.stdout)
    assert data["diff"].startswith("---")
    assert [p["pass"] for p in data["after_each_pass"]] == ["inline-functions"]  # no nested call to hoist
    assert [p["changed"] for p in data["after_each_pass"]] == [True]
    assert len(data["sites"]) == 3


def test_inline_print_after_all_and_changed_only() -> None:
    path = str(EXAMPLES / "single_site.py")
    spec = "inline-functions,inline-functions"
    every = run("inline", path, "--print-after-all", "--pipeline", spec)
    assert every.returncode == 0, every.stderr
    assert every.stdout.count("# ----- IR after inline-functions") == 2
    assert "# ----- IR after inline-functions (unchanged) -----" in every.stdout
    assert every.stdout.count("y_inline0 = pl.mul(a, a)") == 2

    changed = run("inline", path, "--print-after-all", "--changed-only", "--pipeline", spec)
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.count("y_inline0 = pl.mul(a, a)") == 1
    assert "# ----- inline-functions: no change (hidden by --changed-only) -----" in changed.stdout


def test_inline_changed_only_needs_print_after_all() -> None:
    assert_user_error(run("inline", str(EXAMPLES / "bump.py"), "--changed-only"), "--print-after-all")


def test_inline_empty_pipeline_leaves_the_program(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)), "--pipeline", "")
    assert proc.returncode == 0, proc.stderr
    assert "z = self.helper(a)" in proc.stdout


# ---------------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------------


def test_rules_lists_every_rule() -> None:
    proc = run("rules")
    assert proc.returncode == 0, proc.stderr
    for ruleset in INLINE_RULESETS:
        assert f"\n{ruleset.name}: {ruleset.doc}\n" in proc.stdout
        for rule in ruleset.rules:
            assert f"    {rule.name} " in proc.stdout
    splice = INLINE_RULESETS[0].rules[0]
    assert f"{splice.before}  =>  {splice.after}" in proc.stdout  # printed from the declaration
    assert "schedule: (run-schedule (saturate (seq (run splice) (saturate (run subst))" in proc.stdout


def test_user_passes_are_in_the_trace_and_json_and_an_unmatched_rule_is_a_warning(tmp_path: Path) -> None:
    rules = str(EXAMPLES / "rules" / "fold_mul_one.py")
    # The product is not returned, so sharing its buffer is unobservable and the guarded fold fires.
    program = write(
        tmp_path,
        HELPER_PROGRAM.replace("z = self.helper(a)", "v = pl.mul(self.helper(a), 1)\n        z = pl.add(v, a)"),
    )
    traced = run("inline", str(program), "--rules", rules, "--trace")
    assert traced.returncode == 0, traced.stderr
    trace = traced.stderr.split("# ===== trace: fold-mul-one =====", 1)[1]
    assert re.search(r"mul-x-one  [1-9]\d*\n", trace) and "mul-one-x  0   (never matched)" in trace
    assert "nanopto: warning: rule 'mul-one-x' of pass 'fold-mul-one' never matched" in traced.stderr
    payload = json.loads(run("inline", str(program), "--rules", rules, "--json").stdout)
    assert [p["pass"] for p in payload["passes"]] == ["inline-functions", "fold-mul-one"]
    fold = payload["passes"][1]
    assert fold["pass"] == "fold-mul-one" and fold["never_fired"] == ["mul-one-x"]
    assert list(fold["rules"]) == ["mul-x-one", "mul-one-x"] and fold["rules"]["mul-x-one"] >= 1
    assert payload["rules"]["mul-x-one"] == fold["rules"]["mul-x-one"] and payload["rules"]["splice-assign"] >= 1


def test_a_commands_rules_files_do_not_outlive_it(tmp_path: Path) -> None:
    """A pass `--rules` registered is gone when the command ends, in the same process (a notebook
    or a test calling `cli.main`): naming it again without `--rules` is the same error as in a
    fresh process, and `nanopto passes` no longer lists it."""
    rules = str(EXAMPLES / "rules" / "fold_mul_one.py")
    program = write(tmp_path, HELPER_PROGRAM)
    with_rules = run("inline", str(program), "--rules", rules, "--pipeline", "inline-functions,fold-mul-one")
    assert with_rules.returncode == 0, with_rules.stderr
    without = run("inline", str(program), "--pipeline", "inline-functions,fold-mul-one")
    assert without.returncode == 2 and "no pass named 'fold-mul-one'" in without.stderr
    assert "fold-mul-one" not in run("passes").stdout
    assert "fold-mul-one:" in run("passes", "--rules", rules).stdout
    again = run("inline", str(program), "--rules", rules, "--pipeline", "inline-functions,fold-mul-one")
    assert again.returncode == 0 and again.stdout == with_rules.stdout


@pytest.mark.parametrize("distribution", ["egglog", "numpy", "hypothesis", "pytest", "nanopto"])
def test_installed_version_agrees_with_importlib_metadata(distribution: str) -> None:
    """`--version` reads dist-info METADATA itself (docs/architecture.md#latency); it must say
    what importlib.metadata says, and an unknown distribution is still metadata's error."""
    from importlib import metadata

    assert cli.installed_version(distribution) == metadata.version(distribution)
    with pytest.raises(metadata.PackageNotFoundError):
        cli.installed_version("no-such-distribution-nanopto")


def test_version_and_passes() -> None:
    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("nanopto 0.") and "egglog 13.2.0" in version.stdout
    listing = run("passes", "--rules", str(EXAMPLES / "rules" / "fold_mul_one.py"))
    assert listing.returncode == 0, listing.stderr
    out = listing.stdout
    assert "hoist-nested-calls: " in out and "    produces: NestedCallsHoisted" in out
    # it requires nothing: no "requires:" line between its name and what it produces
    assert "drop the Inline functions.\n    produces: InlineFunctionsEliminated\n" in out
    assert "max_iterations=10000" in out and "fold-mul-one: " in out
    assert out.endswith("default pipeline: inline-functions\n")


@pytest.mark.parametrize("example", ["twice", "multiple_sites", "nested", "multi_return"])
def test_the_default_run_copies_bodies_by_rules_and_json_shows_that_run(example: str) -> None:
    """The program --json reports is the one `inline` prints, and the rules that made it copied
    every statement: at least one subst-AssignStmt, subst-AssignCall or subst-AssignOp<k> (`x = op(...)`) match
    per call site."""
    path = str(EXAMPLES / f"{example}.py")
    traced = run("inline", path, "--json")
    plain = run("inline", path)
    assert traced.returncode == 0 and plain.returncode == 0, traced.stderr + plain.stderr
    payload = json.loads(traced.stdout)
    assert payload["program"] == plain.stdout
    assert payload["pipeline"] == ["inline-functions"]
    copied = sum(
        count for rule, count in payload["rules"].items() if rule in ("subst-AssignStmt", "subst-AssignCall") or rule.startswith("subst-AssignOp")
    )
    assert copied >= len(payload["sites"]) > 0


# ---------------------------------------------------------------------------------------------
# Errors: one message, exit code 2, never a traceback
# ---------------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    assert_user_error(run("inline", str(tmp_path / "nope.py")), "nope.py: no such file")


def test_parse_error_shows_location_and_caret(tmp_path: Path) -> None:
    bad = HELPER_PROGRAM.replace("z = self.helper(a)", "z += self.helper(a)")
    path = write(tmp_path, bad)
    proc = run("inline", str(path))
    assert_user_error(proc, f"{path}:13:")
    assert "    z += self.helper(a)" in proc.stderr
    assert "            ^\n" in proc.stderr  # the caret under column 8


def test_unknown_pass(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)), "--pipeline", "inline-functionz")
    assert_user_error(proc, "no pass named 'inline-functionz'", "inline-functions")
    assert len(proc.stderr.splitlines()) == 1


def test_bad_pipeline_spec(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)), "--pipeline", "inline-functions{")
    assert_user_error(proc, "bad pipeline spec at column 18")


def test_unknown_pass_option(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)), "--pipeline", "inline-functions{depth=2}")
    assert_user_error(proc, "pass 'inline-functions' has no option 'depth'; its options: max_iterations")


def test_inline_cycle(tmp_path: Path) -> None:
    source = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def a(self, x):
        y = self.b(x)
        return y

    @pl.function(type=pl.FunctionType.Inline)
    def b(self, x):
        y = self.a(x)
        return y

    @pl.function
    def main(self, x):
        z = self.a(x)
        return z
"""
    proc = run("inline", str(write(tmp_path, source)))
    assert_user_error(proc, "Cycle detected among Inline functions: a -> b -> a")
    assert len(proc.stderr.splitlines()) == 1


def test_inline_error_names_the_site(tmp_path: Path) -> None:
    path = write(tmp_path, HELPER_PROGRAM.replace("self.helper(a)", "self.helper(x=a)"))
    proc = run("inline", str(path))
    assert_user_error(proc, f"{path}:13:", "uses keyword arguments")
    assert len(proc.stderr.splitlines()) == 1


def test_verification_error_names_the_surviving_call(tmp_path: Path) -> None:
    # Seed 000, "Edge cases": a call in a WhileStmt condition is never hoisted, so the
    # InlineFunctionsEliminated verifier reports it at its own line.
    source = """\
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def limit(self, x):
        return 3

    @pl.function
    def main(self, a):
        while self.limit(a) < 3:
            a = pl.add(a, a)
        return a
"""
    path = write(tmp_path, source)
    proc = run("inline", str(path))
    assert_user_error(
        proc,
        "pass 'inline-functions' cannot process this program as written",
        f"{path}:12:",
        "'limit' in a `while` condition cannot be spliced",
        "Bind it to a variable before the loop",
    )
    assert len(proc.stderr.splitlines()) == 1


def test_usage_error_exit_code() -> None:
    proc = run("inline")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_input_file_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "EXECUTED"
    source = (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        + HELPER_PROGRAM
        + f"\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    )
    path = write(tmp_path, source)
    for args in (
        ["inline", str(path)],
        ["inline", str(path), "--trace", "--diff"],
        ["inline", str(path), "--json", "--print-after-all"],
    ):
        run(*args, cwd=tmp_path)
        assert not marker.exists(), f"nanopto {' '.join(args)} executed the input file"


def test_emit_egglog_writes_a_program_egglog_replays_without_nanopto(tmp_path: Path) -> None:
    import egglog.bindings as eb

    from nanopto.terms.term_rows import run_text

    target = tmp_path / "run.egg"
    proc = run(
        "inline", str(EXAMPLES / "nested.py"), "--emit-egglog", str(target),
        "--rules", str(EXAMPLES / "rules" / "fold_mul_one.py"),
    )
    assert proc.returncode == 0, proc.stderr
    text = target.read_text()
    assert text.count("(push)") == 3  # two inlining stages, one user pass
    outputs = run_text(eb.EGraph(), text)
    extracted = [o for o in outputs if isinstance(o, eb.ExtractBest)]
    assert len(extracted) == text.count("(extract (Root")
    spliced = extracted[1].termdag.to_string(extracted[1].term)
    assert '(RVar "y_inline0"' in spliced and "(At " not in spliced  # the rules, replayed, spliced the sites


# ---------------------------------------------------------------------------------------------
# Special and huge input files
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["inline", "step"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "prog.py"
    os.mkfifo(fifo)
    # a real process: a regression that opens the FIFO blocks there until the timeout, not the test run
    assert_user_error(run_process(command, str(fifo)), "is not a regular file (a FIFO)")


def test_a_device_is_refused_without_reading_it() -> None:
    assert_user_error(run("inline", "/dev/zero"), "/dev/zero: is not a regular file (a character device)")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    assert_user_error(run("inline", str(tmp_path)), "is a directory")


def test_the_input_size_is_capped_and_the_cap_can_be_raised(tmp_path: Path) -> None:
    path = write(tmp_path, HELPER_PROGRAM)
    proc = run("inline", str(path), "--max-input-bytes", "100")
    assert_user_error(proc, "larger than the input limit of 100 bytes", "--max-input-bytes")
    assert run("inline", str(path), "--max-input-bytes", str(len(HELPER_PROGRAM))).returncode == 0


def test_an_error_on_a_huge_line_quotes_only_a_window_of_it(tmp_path: Path) -> None:
    line = "x = " + "a + " * 250_000 + "$"  # a 1 MB line: 500 times the window the message may quote
    path = write(tmp_path, line + "\n")
    proc = run("inline", str(path), "--max-input-bytes", str(len(line) + 10))
    assert_user_error(proc, f"{path}:1:")
    assert len(proc.stderr) < 2_000, len(proc.stderr)
    quoted, caret = proc.stderr.splitlines()[1:3]
    assert quoted.startswith("    x = a + a") and quoted.endswith("...") and caret.strip() == "^"


def test_undecodable_bytes_are_a_user_error_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_bytes(b"x = 1\n\xff\xfe\n")
    assert_user_error(run("inline", str(path)), "not UTF-8 text: byte 6 cannot be decoded (invalid start byte)")


# ---------------------------------------------------------------------------------------------
# Exit codes and docs/errors.md
# ---------------------------------------------------------------------------------------------

ERRORS_DOC = Path(__file__).resolve().parent.parent / "docs" / "errors.md"

NEVER_REACHES_THE_TOP = {
    "NotStatic": "the parser turns it into a ParserError at the offending node",
    "UnsupportedParameter": "nanopto check reports it as a UserError naming the parameter",
    "_Differs": "nanopto check's way out of hypothesis with the counterexample it prints",
    "RunawayInput": "nanopto check reports it as a UserError located at the statement that ran away",
    "_Runaway": "nanopto check's way out of hypothesis with a RunawayInput, unshrunk",
    "_OutOfTime": "nanopto check's way out of hypothesis when its time per function is spent",
    "Interrupted": "Ctrl-C: the command line exits 130 quietly (tests/test_exit_contract.py)",
    "_ExitCalled": "a rules file's os._exit while it loads: a RulesFileError naming the line",
    "RequestError": "the playground shows it in the page, at its line",
    "WorkerError": "the playground shows it in the page as a RequestError (a run killed at its time limit)",
    "InternalError": "the playground answers 500 with the worker's message for a bug in nanopto",
    "_ChunksDisagree": "parse_program catches it and parses the module whole",
}


def _nanopto_exception_classes() -> dict[str, type[BaseException]]:
    import nanopto

    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(nanopto.__path__, "nanopto."):
        if module.name.startswith("nanopto.examples") or module.name == "nanopto.__main__":
            continue
        for name, value in vars(importlib.import_module(module.name)).items():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.name:
                found[name] = value
    return found


def _documented_exit_codes() -> dict[str, int]:
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\d) \|$", ERRORS_DOC.read_text(encoding="utf-8"), re.MULTILINE)
    return {name: int(code) for name, code in rows}


def test_docs_errors_lists_every_error_with_the_exit_code_the_cli_gives() -> None:
    from nanopto.cli import EXIT_INTERNAL, exit_code_for

    documented = _documented_exit_codes()
    defined = _nanopto_exception_classes()
    assert set(documented) == set(defined) - set(NEVER_REACHES_THE_TOP)
    for name, code in documented.items():
        assert exit_code_for(defined[name]) == code, name
    assert exit_code_for(ValueError) == exit_code_for(TypeError) == EXIT_INTERNAL == 3
    assert "exits with 3" in ERRORS_DOC.read_text(encoding="utf-8")


def test_an_internal_error_exits_3_with_a_bug_report_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain ValueError from inside nanopto is a bug, not a user error (it hid huge literals)."""

    def broken(source: str, path: str) -> None:
        raise ValueError("Exceeds the limit (4300 digits)")

    monkeypatch.setattr(cli, "parse_program", broken)
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("nanopto: internal error: ValueError: Exceeds the limit")
    assert "this is a bug in nanopto; please report it" in proc.stderr


def test_an_internal_parser_error_exits_3_located_with_a_bug_report_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser bug (an exception the parser did not mean to raise) is not the user's error: it
    exited 2 as a ParserError "internal parser error" before."""
    from nanopto.ir_terms import parser

    def broken(self: object, node: object, *args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(parser._ProgramParser, "_stmt", broken)
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("nanopto: internal error: InternalParserError: "), proc.stderr
    assert "prog.py:" in proc.stderr and "internal parser error (KeyError): 'a bug'" in proc.stderr
    assert "this is a bug in nanopto; please report it" in proc.stderr


@pytest.mark.parametrize(
    ("pipeline_option", "flag", "message"),
    [
        ("max-iterations=abc", None, "max_iterations must be a positive integer, got 'abc'"),
        ("max_iterations=0", ("--max-iterations", "0"), "max_iterations must be a positive integer, got 0"),
        ("timeout=-1", ("--timeout", "-1"), "timeout must be a positive number of seconds, got -1"),
        ("max-rows=-5", ("--max-rows", "-5"), "max_rows must be a positive integer, got -5"),
        ("trace=3", None, "trace must be true or false, got 3"),
    ],
)
def test_option_values_are_checked_once_with_the_same_rule_on_every_route(
    tmp_path: Path, pipeline_option: str, flag: tuple[str, str] | None, message: str
) -> None:
    path = str(write(tmp_path, HELPER_PROGRAM))
    by_pipeline = run("inline", path, "--pipeline", f"inline-functions{{{pipeline_option}}}")
    assert_user_error(by_pipeline, "bad option for pass 'inline-functions'", message)
    if flag is not None:
        by_flag = run("inline", path, *flag)
        assert_user_error(by_flag, "bad option for pass 'inline-functions'", message)


def test_a_flag_value_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    proc = run("inline", str(write(tmp_path, HELPER_PROGRAM)), "--max-iterations", "abc")
    assert proc.returncode == 2 and "invalid int value: 'abc'" in proc.stderr


def test_dash_reads_standard_input_and_o_writes_a_file(tmp_path: Path) -> None:
    """Through `python -m nanopto` with a real pipe: the entry point's exit status, standard input
    read as bytes, nothing on standard output or error (egglog's own log lines included)."""
    source = (EXAMPLES / "bump.py").read_text()
    target = tmp_path / "out.py"
    proc = run_process("inline", "-", "-o", str(target), stdin=source)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr
    assert target.read_text() == run("inline", str(EXAMPLES / "bump.py")).stdout
    bad = run_process("inline", "-", "-o", str(tmp_path / "never.py"), stdin="def")
    assert bad.returncode == 2 and bad.stderr.startswith("nanopto: error: <stdin>:")
    assert not (tmp_path / "never.py").exists()  # nothing is half-written


@pytest.mark.parametrize("command", ["step", "check"])
def test_every_command_reading_a_program_takes_dash_and_o(command: str, tmp_path: Path) -> None:
    """`-` and `-o FILE` behave as on `inline`: the same output as from the file, only in FILE."""
    path = EXAMPLES / "bump.py"
    extra = ["--examples", "5"] if command == "check" else []
    from_file = run(command, str(path), *extra)
    assert from_file.returncode == 0, from_file.stderr
    target = tmp_path / "out.txt"
    piped = run(command, "-", "-o", str(target), *extra, stdin=path.read_text())
    assert piped.returncode == 0 and piped.stdout == "", piped.stderr
    assert target.read_text() == from_file.stdout.replace(str(path), "-")
    broken = run(command, "-", "-o", str(tmp_path / "never.txt"), stdin="def")
    assert broken.returncode == 2 and broken.stderr.startswith("nanopto: error: <stdin>:")
    assert not (tmp_path / "never.txt").exists()


@pytest.mark.parametrize("command", [["demo", "bump"], ["demo", "--list"], ["rules"], ["passes"]])
def test_every_command_that_prints_takes_o(command: list[str], tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    written = run(*command, "-o", str(target))
    assert written.returncode == 0 and written.stdout == "", written.stderr
    assert target.read_text() == run(*command).stdout
    unwritable = run(*command, "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert unwritable.returncode == 2 and "cannot write the output" in unwritable.stderr


def test_check_writes_a_counterexample_to_o_and_still_exits_1(tmp_path: Path) -> None:
    rules = write(
        tmp_path,
        "from nanopto import passes\nfrom nanopto.rules import Ruleset, binary, rewrite_rule, var\n\n"
        "x = var('x')\nWRONG = Ruleset('square-is-x', 'wrong on purpose', "
        "(rewrite_rule('mul-x-x', binary('*', x, x), x),))\nPASSES = [passes.rewrite(WRONG)]\n",
        "wrong_rules.py",
    )
    program = "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n" \
        "    def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n        b = a * a\n        return b\n"
    target = tmp_path / "verdict.txt"
    proc = run("check", "-", "--rules", str(rules), "-o", str(target), stdin=program)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert "NOT equivalent" in target.read_text()


def test_step_pause_needs_the_terminal(tmp_path: Path) -> None:
    for args in (["-", "--pause"], [str(EXAMPLES / "bump.py"), "--pause", "-o", str(tmp_path / "x.txt")]):
        proc = run("step", *args, stdin=(EXAMPLES / "bump.py").read_text())
        assert proc.returncode == 2 and "--pause" in proc.stderr, proc.stderr


NESTED_CALL = '''import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def half(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        return n + n

    @pl.function
    def main(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        k = self.half(n) + 1
        return k
'''


def test_the_default_pipeline_shows_hoisting_as_a_step_of_inline_functions(tmp_path: Path) -> None:
    """`inline-functions` requires nothing; the hoisting it runs first is shown as a step of it."""
    path = write(tmp_path, NESTED_CALL)
    proc = run("inline", str(path), "--json", "--print-after-all")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["pipeline"] == ["inline-functions"]
    steps = [(p["pass"], p["part_of"], p["changed"]) for p in data["after_each_pass"]]
    assert steps == [("hoist-nested-calls", "inline-functions", True), ("inline-functions", None, True)]
    assert "t__inline_arg_v0 = self.half(n)" in data["after_each_pass"][0]["program"]
    assert [h["binding"] for h in data["hoisted"]] == ["t__inline_arg_v0 = self.half(n)"]
    text = run("inline", str(path), "--print-after-all").stdout
    assert "# ----- IR after hoist-nested-calls (a step of inline-functions) -----" in text
    traced = run("inline", str(path), "--trace")
    assert "# ===== trace: hoist-nested-calls =====" in traced.stderr
    assert traced.stderr.index("trace: hoist-nested-calls") < traced.stderr.index("trace: inline-functions")
