"""Run PyPTO's own parser, statement and printer tests against nanopto, through the `pypto` shim.

    python3 bench/pypto_compat/run_pypto_tests.py CHECKOUT [--json OUT] [--only NAME ...] [--extra PATH ...]

CHECKOUT is a PyPTO checkout (the commit `pypto.PYPTO_COMMIT` names); nothing is fetched. Each
test file runs in its own pytest subprocess, with this directory (the shim package `pypto`) first
on `sys.path` and nanopto after it, PyPTO's conftest files left out (they configure PyPTO's C++
backend). A file that does not import counts every test it defines as failing: its tests are
counted from its source (test functions, times the cases of their literal `parametrize` lists).
Prints a per-file table (passed / collected) and the totals, overall and without the files that
test PyPTO's parser internals (docs/coming-from-pypto.md#running-pyptos-own-tests).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

SHIM_DIR = Path(__file__).resolve().parent
REPO_ROOT = SHIM_DIR.parent.parent

DIRECTORIES = (
    "tests/ut/language/parser",
    "tests/ut/ir/statements",
    "tests/ut/ir/parser",
    "tests/ut/ir/printing",
)
EXTRA_FILES = ("tests/ut/ir/transforms/test_inline_functions.py",)

NOT_APPLICABLE = frozenset(
    {
        "test_scope_manager",
        "test_span_tracker",
        "test_diagnostics_renderer",
        "test_expr_evaluator",
        "test_type_resolver",
        "test_error_wrapping",
    }
)
"""Files that test PyPTO's parser internals, which nanopto does not have."""


@dataclass
class FileResult:
    """One test file's outcome: which tests passed, which failed and why (first line)."""

    path: str
    collected: int
    passed: int
    imported: bool
    seconds: float
    note: str = ""
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        return Path(self.path).stem


def test_files(checkout: Path, extra: Sequence[str] = ()) -> list[Path]:
    """The measured files, then `extra` (paths inside the checkout, such as another pass's tests,
    run for a figure of their own)."""
    files: list[Path] = []
    for directory in DIRECTORIES:
        files.extend(sorted((checkout / directory).glob("test_*.py")))
    files.extend(checkout / path for path in (*EXTRA_FILES, *extra) if checkout / path not in files)
    return files


def _cases(decorators: list[ast.expr], constants: dict[str, int]) -> int:
    """How many cases the `pytest.mark.parametrize` decorators in `decorators` make (1 if none)."""
    total = 1
    for decorator in decorators:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize")):
            continue
        values = decorator.args[1] if len(decorator.args) > 1 else None
        if values is None:
            values = next((k.value for k in decorator.keywords if k.arg == "argvalues"), None)
        if isinstance(values, (ast.List, ast.Tuple, ast.Set)):
            total *= len(values.elts)
        elif isinstance(values, ast.Name) and values.id in constants:
            total *= constants[values.id]
    return total


def count_tests(path: Path) -> int:
    """The tests `path` defines, counted from its source: what pytest would collect from a file
    that imports (module-level and `Test*` class test functions, times their parametrize cases)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        target.id: len(node.value.elts)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple))
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    total = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            total += _cases(node.decorator_list, constants)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            per_class = _cases(node.decorator_list, constants)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    total += per_class * _cases(item.decorator_list, constants)
    return total


def _first_line(element: ET.Element) -> str:
    """What went wrong: the first `E   ` lines of the report (the exception), else its message."""
    details = [line[4:].strip() for line in (element.text or "").splitlines() if line.startswith("E   ")]
    message = " | ".join(details[:3]) if details else (element.get("message") or "").strip()
    return message.splitlines()[0][:400] if message else element.tag


def run_file(path: Path, checkout: Path, timeout: float) -> FileResult:
    """Run one test file in a pytest subprocess and read its JUnit report."""
    relative = str(path.relative_to(checkout))
    with tempfile.TemporaryDirectory(prefix="pypto-compat-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        report = Path(scratch) / "report.xml"
        command = [
            sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider", "--noconftest",
            "-c", str(ini), "--rootdir", scratch, f"--junitxml={report}", "-o", "junit_family=xunit2",
        ]  # fmt: skip
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), str(REPO_ROOT)])
        env.setdefault("HYPOTHESIS_PROFILE", "default")
        start = time.perf_counter()
        try:
            subprocess.run(command, cwd=scratch, env=env, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            total = count_tests(path)
            return FileResult(relative, total, 0, True, time.perf_counter() - start, f"timed out after {timeout:.0f} s")
        seconds = time.perf_counter() - start
        if not report.exists():
            total = count_tests(path)
            return FileResult(relative, total, 0, False, seconds, "pytest wrote no report")
        root = ET.parse(report).getroot()
    passed = 0
    collected = 0
    failures: dict[str, str] = {}
    import_error = ""
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if not name or (outcome is not None and outcome.tag == "error" and "collection" in outcome.get("message", "")):
            import_error = _first_line(outcome) if outcome is not None else "collection failed"
            continue
        collected += 1
        if outcome is None:
            passed += 1
        else:
            test_id = f"{classname.rpartition('.')[2]}::{name}" if classname else name
            failures[test_id] = f"{outcome.tag}: {_first_line(outcome)}"
    if import_error:
        total = count_tests(path)
        return FileResult(relative, total, 0, False, seconds, import_error)
    return FileResult(relative, collected, passed, True, seconds, failures=failures)


def _row(name: str, passed: int, collected: int, note: str = "") -> str:
    share = f"{100 * passed / collected:5.1f}%" if collected else "   -  "
    return f"{name:<64} {passed:>5} / {collected:<5} {share}  {note}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a PyPTO checkout (its tests/ut directory is read)")
    parser.add_argument("--json", type=Path, help="also write every file's results (and failures) here")
    parser.add_argument("--only", nargs="*", default=[], help="run only the files with these stems")
    parser.add_argument(
        "--extra", nargs="*", default=[], help="also run these test files (paths inside the checkout)"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file (default 600)")
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    if not (checkout / DIRECTORIES[0]).is_dir():
        print(f"error: {checkout} has no {DIRECTORIES[0]}: give the path of a PyPTO checkout", file=sys.stderr)
        return 2
    missing = [path for path in args.extra if not (checkout / path).is_file()]
    if missing:
        print(f"error: {checkout} has no {', '.join(missing)}", file=sys.stderr)
        return 2
    files = [f for f in test_files(checkout, args.extra) if not args.only or f.stem in args.only]
    results: list[FileResult] = []
    for path in files:
        result = run_file(path, checkout, args.timeout)
        results.append(result)
        note = "does not import: " + result.note if not result.imported else result.note
        print(_row(result.path, result.passed, result.collected, note[:100]), flush=True)
    passed = sum(r.passed for r in results)
    collected = sum(r.collected for r in results)
    applicable = [r for r in results if r.stem not in NOT_APPLICABLE]
    print()
    print(_row("all files", passed, collected))
    print(_row(f"without the {len(NOT_APPLICABLE)} not applicable", sum(r.passed for r in applicable),
               sum(r.collected for r in applicable)))  # fmt: skip
    print(f"files that do not import: {sum(not r.imported for r in results)} of {len(results)}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
