"""egglog's compiled core, `egglog.bindings`, loaded without the Python front end around it.

nanopto speaks to egglog only through its low-level bindings (programs of commands, term DAGs).
`import egglog.bindings` runs `egglog/__init__.py` first, which imports egglog's whole Python front
end (its expression builder, `black` for pretty-printing, IPython magic): about 0.4 s of the 0.8 s
a `nanopto inline` may take (docs/architecture.md#latency). Loading the extension module from its
file takes a few milliseconds. It is registered in `sys.modules` under its own name, so a later
`import egglog` (the notebook's e-graph widget, a user's own egglog code) uses this very module.

Modules of nanopto write `from nanopto.egglog_bindings import bindings as eb`.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

NAME = "egglog.bindings"


def _load() -> ModuleType:
    """The extension module from egglog's package directory; the ordinary import when egglog is
    already imported or its layout is not the one expected (a zipped or vendored install)."""
    if NAME in sys.modules or "egglog" in sys.modules:
        return importlib.import_module(NAME)
    package = importlib.util.find_spec("egglog")
    folders = package.submodule_search_locations if package is not None else None
    for folder in folders or ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "bindings" + suffix)
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location(NAME, path)
                if spec is None or spec.loader is None:
                    continue
                module = importlib.util.module_from_spec(spec)
                sys.modules[NAME] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[NAME]
                    raise
                return module
    return importlib.import_module(NAME)


if TYPE_CHECKING:
    import egglog.bindings as bindings
else:
    bindings = _load()

__all__ = ["bindings"]
