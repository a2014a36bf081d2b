"""The README's set-up says what works: the user install first, the developer install second, no
claim that nanopto is on PyPI, and the one variable the browser tests read, NANOPTO_CHROMIUM."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_user_install_comes_before_the_developer_install() -> None:
    setup = README[README.index("## Set up") : README.index("## Command line")]
    user = setup.index("pip install -e . ")
    dev = setup.index("pip install -e '.[dev]'")
    assert user < dev
    assert "not published on PyPI" in setup


def test_no_page_claims_pip_install_nanopto_works() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"pip install nanopto\b(?!\[)", text), page.name


def test_the_browser_tests_read_nanopto_chromium_in_one_place() -> None:
    assert "NANOPTO_CHROMIUM" in README
    finds = re.compile(r"shutil\.which\(\"chromium|environ\.get\(\"NANOPTO_CHROMIUM")
    readers = [p for p in sorted((ROOT / "tests").rglob("*.py")) if finds.search(p.read_text(encoding="utf-8"))]
    assert [p.relative_to(ROOT).as_posix() for p in readers] == ["tests/conftest.py"]
