"""Exit 0 means valid `pl`; every other exit says whose mistake it was (docs/errors.md#whose-mistake-the-exit-code-says).

The command line at its edges: what a user can get wrong (options, rules files, Ctrl-C) is exit 2
with a located message, or 130 for Ctrl-C, never a traceback, never a half-written file."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "nanopto" / "examples"
FOLD_RULES = EXAMPLES / "rules" / "fold_mul_one.py"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nanopto", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def assert_user_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("nanopto: error: "), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------------------
# Ctrl-C and output files
# ---------------------------------------------------------------------------------------------


def test_ctrl_c_exits_130_quietly_and_leaves_no_output_file(tmp_path: Path) -> None:
    started = tmp_path / "started"
    slow = tmp_path / "slow_rules.py"
    slow.write_text(f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('')\ntime.sleep(60)\n")
    out = tmp_path / "out.py"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanopto", "inline", str(EXAMPLES / "twice.py"), "--rules", str(slow), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert set(tmp_path.iterdir()) == {slow, started}  # no out.py, no temporary file beside it


def test_emit_egglog_is_not_written_when_the_command_fails(tmp_path: Path) -> None:
    egg = tmp_path / "run.egg"
    egg.write_text("kept\n")
    unwritable = tmp_path / "no such directory" / "e.dot"  # the run inlines, then fails writing the picture
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--emit-egglog", str(egg), "--egraph", str(unwritable))
    assert_user_error(proc, "cannot write")
    assert egg.read_text() == "kept\n"


def test_a_program_left_with_no_function_is_a_located_user_error_and_writes_nothing(tmp_path: Path) -> None:
    """Every function Inline: the pass removes them all, as the specification says, and an empty
    @pl.program class is not valid pl (the parser rejects one), so exit 0 would break its promise."""
    source = tmp_path / "only_inline.py"
    source.write_text(
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n"
        "    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        return k\n"
    )
    out = tmp_path / "out.py"
    proc = run_cli("inline", str(source), "-o", str(out))
    assert_user_error(proc, f"{source}:3:1: ", "holds no function", "every function was Inline")  # the @pl.program line, where the program's span starts
    assert not out.exists()


def test_emit_egglog_says_how_to_replay_it(tmp_path: Path) -> None:
    egg = tmp_path / "run.egg"
    assert run_cli("inline", str(EXAMPLES / "twice.py"), "--emit-egglog", str(egg)).returncode == 0
    header = egg.read_text().splitlines()[1]
    page, _, anchor = header.split("(")[1].split(" ")[0].partition("#")
    doc = (Path(__file__).resolve().parent.parent / page).read_text()
    assert "## Replaying a run in egglog" in doc and anchor == "replaying-a-run-in-egglog"


def test_max_input_bytes_beyond_any_read_is_a_user_error() -> None:
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--max-input-bytes", str(10**30))
    assert_user_error(proc, "--max-input-bytes must be between 1 and")


# ---------------------------------------------------------------------------------------------
# Rules files: the user's code, contained
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("sys.exit(0)", "tried to end nanopto (sys.exit(0))"),
        ("raise SystemExit('bye')", "tried to end nanopto (sys.exit('bye'))"),
        ("os._exit(7)", "tried to end nanopto (os._exit(7))"),
        ("raise KeyboardInterrupt", "the rules file raised KeyboardInterrupt"),
    ],
)
def test_a_rules_file_that_exits_or_interrupts_is_a_located_user_error(tmp_path: Path, statement: str, message: str) -> None:
    rules = tmp_path / "my_rules.py"
    rules.write_text(f"import os, sys\n\n{statement}\n")
    proc = run("inline", str(EXAMPLES / "twice.py"), "--rules", str(rules))
    assert_user_error(proc, f"{rules}:3: ", message)
    assert proc.stdout == ""


USER_PASS = """import os, sys
from dataclasses import dataclass
from typing import ClassVar

from nanopto.passes import Pass


@dataclass(frozen=True)
class Boom(Pass):
    \"\"\"A Python pass of the user's that fails while it runs.\"\"\"

    name: ClassVar[str] = "boom"

    def run(self, program):
        {statement}
        return program


PASSES = [Boom()]
"""


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("sys.exit(0)", "pass 'boom' tried to end nanopto (sys.exit(0)) while it ran"),
        ("os._exit(7)", "pass 'boom' tried to end nanopto (os._exit(7)) while it ran"),
        ("raise KeyboardInterrupt", "pass 'boom' raised KeyboardInterrupt"),
        ("raise ValueError('no')", "pass 'boom' raised ValueError: no"),
    ],
)
def test_a_user_pass_that_exits_or_fails_while_it_runs_is_a_located_user_error(
    tmp_path: Path, statement: str, message: str
) -> None:
    rules = tmp_path / "my_pass.py"
    rules.write_text(USER_PASS.format(statement=statement))
    out, egg = tmp_path / "out.py", tmp_path / "run.egg"
    proc = run("inline", str(EXAMPLES / "twice.py"), "--rules", str(rules), "-o", str(out), "--emit-egglog", str(egg))
    assert_user_error(proc, f"{rules}:15: {message}")
    assert proc.stdout == ""
    assert set(tmp_path.iterdir()) == {rules}  # nothing half-written


# ---------------------------------------------------------------------------------------------
# Options and help, run by `cli.main` in this process (`conftest.run_cli`): a command's --rules
# passes are unregistered when it ends (`rules_loaded_for_one_command`), as in a fresh process
# ---------------------------------------------------------------------------------------------


def test_help_names_the_default_pipeline() -> None:
    from nanopto.cli import default_pipeline

    for args in (("--help",), ("inline", "--help"), ("check", "--help")):  # argparse wraps at a '-'
        assert f"(default:{default_pipeline()}" in "".join(run_cli(*args).stdout.split()), args


def test_an_unknown_option_names_the_options_and_the_closest() -> None:
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--pipeline", "inline-functions{max_iteration=5}")
    assert_user_error(proc, "has no option 'max_iteration' (did you mean 'max_iterations'?)", "its options: max_iterations,")
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--rules", str(FOLD_RULES), "--pipeline", "fold-mul-one{max_iteration=5}")
    assert_user_error(proc, "'fold-mul-one'", "(did you mean 'max_iterations'?)")


def test_a_bad_option_value_says_the_option_as_written_in_the_options_list() -> None:
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--pipeline", "inline-functions{max_iterations=abc}")
    assert_user_error(proc, "max_iterations must be a positive integer, got 'abc'")
    assert "max_iterations=" in run_cli("passes").stdout


def test_a_pass_of_a_shipped_rules_file_without_rules_hints_the_file() -> None:
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--pipeline", "fold-mul-one")
    assert_user_error(proc, "no pass named 'fold-mul-one'", "hint: the shipped rules file", "fold_mul_one.py defines it: add --rules")
    proc = run_cli("inline", str(EXAMPLES / "twice.py"), "--pipeline", "my-own-pass")
    assert_user_error(proc, "hint: if 'my-own-pass' is a pass of your own rules file, add --rules")


def test_passes_describes_a_user_pass_in_words_not_a_signature() -> None:
    listing = run_cli("passes", "--rules", str(FOLD_RULES)).stdout
    line = next(line for line in listing.splitlines() if line.startswith("fold-mul-one:"))
    assert "FoldMulOne(" not in line and "'bool'" not in line
    assert "rewrite rules (2 rules) from ruleset fold-mul-one: Multiplying by the integer constant 1" in line
