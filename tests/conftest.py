"""Hypothesis profiles for the property tests (tests/verify/test_properties.py).

* `ci`   — fixed and derandomized, so CI runs the same examples every time, within a budget that
           keeps the whole property file under two minutes on a small machine.
* `dev`  — the local default: randomized, a moderate number of examples.
* `soak` — thousands of programs, for a long local run before a release or after a rule change:
           `HYPOTHESIS_PROFILE=soak pytest tests/verify/test_properties.py`.

The profile is chosen by the `HYPOTHESIS_PROFILE` environment variable; without it, `ci` when the
`CI` variable is set and `dev` otherwise.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "soak", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


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
