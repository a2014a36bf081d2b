"""Every module of nanopto can be the first one a program imports (no import cycle bites)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import importlib, pkgutil, sys
import nanopto
names = sorted(m.name for m in pkgutil.walk_packages(nanopto.__path__, "nanopto.") if not m.name.endswith("__main__"))
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m == "nanopto" or m.startswith("nanopto.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print(len(names))
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True)
    count, *failures = proc.stdout.strip().splitlines()
    assert int(count) > 50
    assert failures == []
