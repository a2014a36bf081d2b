"""Hypothesis profiles for the property tests, a test's own `@settings` overriding them.

* `ci`   — fixed and derandomized, so CI runs the same examples every time: 40 per property test,
           a budget that keeps the suite within a few minutes on a small machine.
* `dev`  — the local default: the same budget, randomized, so every local run draws programs no run
           drew before (a failure prints the blob that replays it).
* `soak` — thousands of programs, for a long local run before a release or after a rule change:
           `HYPOTHESIS_PROFILE=soak pytest tests/verify/test_properties.py`.

The profile is chosen by the `HYPOTHESIS_PROFILE` environment variable; without it, `ci` when the
`CI` variable is set and `dev` otherwise.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# ---------------------------------------------------------------------------------------------
# Bytecode for the processes the tests start
# ---------------------------------------------------------------------------------------------

BYTECODE_CACHE = Path(tempfile.gettempdir()) / f"nanopto-tests-pycache-{os.getuid() if hasattr(os, 'getuid') else 0}"
"""Where every process a test starts (the command line, playground workers, soak workers, fresh
imports) caches bytecode. A shell or CI image that sets `PYTHONDONTWRITEBYTECODE` would otherwise
make each of those hundreds of processes compile nanopto again (0.7 of its 1.4 CPU-seconds for
`nanopto inline`); the cache lives outside the source tree, so the setting's intent holds."""

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(BYTECODE_CACHE))
# The same for this process: the modules it imports from here on, and the test modules pytest
# rewrites (their asserts), about 4 CPU-seconds per xdist worker that a later run then skips.
# Hypothesis too, imported only below: pytest rewrites the asserts of every module of a package
# that ships a pytest plugin, about 2 CPU-seconds per pytest process for hypothesis' 100 modules.
sys.dont_write_bytecode = False
sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]

from hypothesis import HealthCheck, settings  # noqa: E402

EXAMPLES_PER_PROPERTY = 40
"""The examples a property test draws under `ci` and `dev` (hypothesis's own default is 100)."""

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=EXAMPLES_PER_PROPERTY,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "dev",
    max_examples=EXAMPLES_PER_PROPERTY,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "soak", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _rules_files_passes_do_not_outlive_their_test() -> Iterator[None]:
    """A pass a test registers from a rules file (`load_rules_file`, `run_pipeline(rules=...)`) is
    unregistered after it, so what a later test on the same pytest-xdist worker sees registered
    (docs/errors.md prints the list) does not depend on which tests ran there first."""
    from nanopto.tools.rules_file import rules_loaded_for_one_command

    with rules_loaded_for_one_command():
        yield


# ---------------------------------------------------------------------------------------------
# The command line in the test's own process
# ---------------------------------------------------------------------------------------------


def run_cli(*args: str, cwd: Path | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`nanopto ARGS` run by `cli.main` in this process, which is all `python -m nanopto` does
    (`sys.exit(main())`): its exit code (argparse's own exits included) and what it wrote to
    standard output and error; `stdin` is what it reads from standard input. A new interpreter per
    command costs about a second of imports; tests whose point is a real process start one."""
    from nanopto import cli

    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(cwd or Path.cwd()):
            try:
                code = cli.main(list(args))
            except SystemExit as exit_:  # argparse: a usage error, --help
                code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["nanopto", *args], code, out.getvalue(), err.getvalue())


# ---------------------------------------------------------------------------------------------
# A real headless browser for the page, viewer and playground tests
# ---------------------------------------------------------------------------------------------

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """The system Chromium (Debian's `chromium`; `.ci/run` installs it), or None."""
    for path in (os.environ.get("NANOPTO_CHROMIUM"), *CHROMIUM_PATHS, shutil.which("chromium")):
        if path and os.path.exists(path):
            return path
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright, launched from the system's binary (Playwright's
    own browser download is never used). Skips, saying why, when either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium at /usr/bin/chromium (.ci/run installs it; or set NANOPTO_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except Exception as exc:  # a browser that cannot start is an environment problem, not a failure
            pytest.skip(f"Chromium at {executable} did not start under Playwright: {exc}")
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (1400x1000) whose console errors and uncaught exceptions are collected in
    `page.errors` (tests assert it stays empty)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.errors = errors
    yield tab
    context.close()


STILL = """([root, last]) => {
    const viewport = document.querySelector(root + ' .react-flow__viewport');
    const boxes = [...document.querySelectorAll(root + ' .react-flow__node')].map(node => {
        const box = node.getBoundingClientRect();
        return [box.x, box.y, box.width, box.height].join(',');
    });
    const now = (viewport ? getComputedStyle(viewport).transform : '') + ' ' + boxes.join(' ');
    const same = window.__nanoptoStill === now && boxes.length > 0;
    window.__nanoptoStill = now;
    window.__nanoptoStillFor = same ? (window.__nanoptoStillFor || 0) + 1 : 0;
    return window.__nanoptoStillFor >= last;
}"""


def wait_until_still(page: Any, root: str) -> None:
    """Wait until the e-graph viewer under `root` has stopped moving: its view (fitted with an
    animation of about a second) and every node's box the same on three looks 100 ms apart. A
    fixed wait of 1.5 s used to stand here, with the test's core idle for most of it."""
    page.evaluate("() => { window.__nanoptoStill = null; window.__nanoptoStillFor = 0; }")
    page.wait_for_function(STILL, arg=[root, 2], polling=100, timeout=60_000)
