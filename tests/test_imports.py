"""Every module of nanopto can be the first one a program imports (no import cycle bites)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SHARDS = 2
"""The modules are split into this many shards, each its own test, so that pytest-xdist spreads
the work (a fresh import of a module costs about a third of a second)."""

SCRIPT = """
import importlib, pkgutil, sys
import nanopto
shard, shards = int(sys.argv[1]), int(sys.argv[2])
names = sorted(m.name for m in pkgutil.walk_packages(nanopto.__path__, "nanopto.") if not m.name.endswith("__main__"))
mine = names[shard::shards]
first = {}
failed = []
fresh = 0

def imported_first(name):
    # The nanopto modules loaded once `name` is imported into a process that had none.
    if name in first:
        return first[name]
    parent = name.rpartition(".")[0]
    if parent and name in imported_first(parent):
        first[name] = first[parent]
        return first[name]
    global fresh
    fresh += 1
    for loaded in [m for m in sys.modules if m == "nanopto" or m.startswith("nanopto.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
    first[name] = frozenset(m for m in sys.modules if m == "nanopto" or m.startswith("nanopto."))
    return first[name]

for name in mine:
    imported_first(name)
print(len(mine), fresh)
print("\\n".join(failed))
"""


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_module_imports_first(shard: int) -> None:
    """Each module, imported into a process that has no nanopto module loaded, imports without error
    (an import cycle that bites only in one order, or a module that uses another it never imports).

    Python imports a module's package before the module itself, and looks the module up again once
    the package is loaded: so importing `pkg.mod` first does exactly what importing `pkg` first does
    whenever `pkg`'s own import loads `pkg.mod`. Such a module is not imported afresh again (its
    package's fresh import already ran it in the same order); every other module is, from the
    bytecode the tests' processes cache (`conftest.BYTECODE_CACHE`)."""
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(shard), str(SHARDS)], capture_output=True, text=True, timeout=300, check=True
    )
    counts, *failures = proc.stdout.strip().splitlines()
    count, fresh = map(int, counts.split())
    assert count > 50 // SHARDS
    assert fresh > 0
    assert failures == []


PROBE = """
import sys
from nanopto.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\nLOADED", " ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("egglog", "hypothesis", "nanopto"))))
"""


def _loaded_by(*argv: str) -> set[str]:
    """The egglog, hypothesis and nanopto modules a command of the CLI imported."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=300, check=True)
    return set(proc.stdout.rsplit("LOADED", 1)[1].split())


def test_version_and_help_import_neither_egglog_nor_the_passes() -> None:
    """docs/architecture.md#latency: a command imports only what it uses."""
    for argv in (["--version"], ["--help"]):
        loaded = _loaded_by(*argv)
        assert not {m for m in loaded if m.startswith(("egglog", "hypothesis", "nanopto.passes", "nanopto.egraph"))}, argv


def test_inline_loads_egglogs_core_without_its_python_front_end_or_hypothesis() -> None:
    loaded = _loaded_by("inline", str(Path(__file__).parent.parent / "nanopto" / "examples" / "bump.py"))
    assert "nanopto.passes.inlining" in loaded and "egglog.bindings" in loaded
    assert "egglog" not in loaded and "egglog.egraph" not in loaded  # nanopto.egglog_bindings
    assert not {m for m in loaded if m.startswith("hypothesis")}
