"""The shipped example programs and rules files (`nanopto/examples/`), read from the package.

The playground's menu lists them; `nanopto demo` has the same order (the order in which
docs/specification.md introduces the worked examples).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

EXAMPLE_ORDER = (
    "single_site",
    "multiple_sites",
    "twice",
    "bump",
    "multi_return",
    "discard",
    "scope",
    "nested",
    "computed_args",
)
"""The specification's worked examples, in the order docs/specification.md introduces them."""


def _examples_dir() -> Any:
    return resources.files("nanopto") / "examples"


def example_names() -> list[str]:
    """Every shipped example program, in `EXAMPLE_ORDER` first, then any others alphabetically."""
    found = {p.name[:-3] for p in _examples_dir().iterdir() if p.name.endswith(".py")}
    return [n for n in EXAMPLE_ORDER if n in found] + sorted(found - set(EXAMPLE_ORDER))


def example_source(name: str) -> str:
    """The text of example `name`; a KeyError names the available ones."""
    if name not in example_names():
        raise KeyError(f"no example named {name!r} (available: {', '.join(example_names())})")
    text: str = (_examples_dir() / f"{name}.py").read_text(encoding="utf-8")
    return text


def rules_example_names() -> list[str]:
    """The shipped rules files (`examples/rules/*.py`), alphabetically."""
    return sorted(p.name[:-3] for p in (_examples_dir() / "rules").iterdir() if p.name.endswith(".py"))


def rules_example_source(name: str) -> str:
    if name not in rules_example_names():
        raise KeyError(f"no rules example named {name!r} (available: {', '.join(rules_example_names())})")
    text: str = (_examples_dir() / "rules" / f"{name}.py").read_text(encoding="utf-8")
    return text


def summary(source: str) -> str:
    """The first line of a file's docstring."""
    match = re.match(r'\s*"""(.*)', source)
    return match.group(1).strip().rstrip('"') if match else ""
