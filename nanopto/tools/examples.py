"""The shipped example programs and rules files (`nanopto/examples/`), read from the package.

The playground's menu lists them; `nanopto demo` has the same order (the order in which
docs/specification.md introduces the worked examples).
"""

from __future__ import annotations

import importlib
import re
from importlib import resources
from types import ModuleType
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


JIT_EXAMPLE_ORDER = ("jit_twice",)
"""The `@pl.jit` examples: `jit_<name>` is `examples/jit/<name>.py`, Python that defines jit
functions rather than a `pl` source, so `example_names()` (the sources other tools parse) leaves
them out and `nanopto demo` imports them with `load_jit_example`."""

JIT_PREFIX = "jit_"


def jit_example_names() -> list[str]:
    """Every shipped `@pl.jit` example, in `JIT_EXAMPLE_ORDER` first."""
    found = {JIT_PREFIX + p.name[:-3] for p in (_examples_dir() / "jit").iterdir() if p.name.endswith(".py")}
    return [n for n in JIT_EXAMPLE_ORDER if n in found] + sorted(found - set(JIT_EXAMPLE_ORDER))


def jit_example_source(name: str) -> str:
    """The text of `@pl.jit` example `name`; a KeyError names the available ones."""
    if name not in jit_example_names():
        raise KeyError(f"no JIT example named {name!r} (available: {', '.join(jit_example_names())})")
    text: str = (_examples_dir() / "jit" / f"{name[len(JIT_PREFIX):]}.py").read_text(encoding="utf-8")
    return text


def load_jit_example(name: str) -> ModuleType:
    """A shipped `@pl.jit` example, imported as the module `nanopto.examples.jit.<name>`.

    A JIT example is Python that defines jit functions, so it is imported, unlike a `pl` source,
    which is only parsed. That is safe because it is nanopto's own file: the name must be one of
    the shipped examples (never a path a user gives), and importing it only decorates functions,
    whose bodies `@pl.jit` parses and never runs.
    """
    if name not in jit_example_names():
        raise KeyError(f"no JIT example named {name!r} (available: {', '.join(jit_example_names())})")
    return importlib.import_module(f"nanopto.examples.jit.{name[len(JIT_PREFIX):]}")


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
