"""PyPTO's module names over nanopto's modules, so PyPTO's own tests can run against nanopto.

Nothing here is implemented: every PyPTO module name in `MODULES` *is* the nanopto module it maps
to (the same object in `sys.modules`), and this package's own names are nanopto's; the same
mapping, seen from the printer, makes printed programs import `pypto.language`. A PyPTO name
that needs behaviour nanopto lacks belongs in nanopto under that name, never here. A PyPTO module
that is not listed does not import, and the tests that need it fail (docs/coming-from-pypto.md,
"Running PyPTO's own tests", gives the reason for each).
"""

from __future__ import annotations

import importlib
import sys

from nanopto import ir, language, passes
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import IRInvariantError as InternalError
from nanopto.ir_terms.printer import set_language_module

PYPTO_COMMIT = "e2d0f78ae6d709c0d6ee345a48db2c3d621a4b09"
"""The hw-native-sys/pypto commit whose tests this mapping is measured on."""

MODULES: dict[str, str] = {
    "pypto.pypto_core": "pypto",
    "pypto.pypto_core.ir": "nanopto.ir",
    "pypto.pypto_core.passes": "nanopto.passes",
    "pypto.ir": "nanopto.ir",
    "pypto.ir.op": "nanopto.ir_terms.op_builders",
    "pypto.ir.printer": "nanopto.ir_terms.printer",
    "pypto.ir.pass_manager": "nanopto.passes.pass_manager",
    "pypto.ir.instruments": "nanopto.passes.context",
    "pypto.passes": "nanopto.passes",
    "pypto.language": "nanopto.language",
    "pypto.language.typing": "nanopto.language",
    "pypto.language.arg_direction": "nanopto.ir_terms.dtypes",
    "pypto.language.distributed": "nanopto.language.distributed",
    "pypto.language.parser": "nanopto.ir_terms",
    "pypto.language.parser.ast_parser": "nanopto.ir_terms.parser",
    "pypto.language.parser.comment_extractor": "nanopto.ir_terms.parser",
    "pypto.language.parser.source_lookup": "nanopto.ir_terms.source_lookup",
    "pypto.language.parser.text_parser": "nanopto.language",
    "pypto.language.parser.diagnostics": "nanopto.ir_terms.parse_error",
    "pypto.language.parser.diagnostics.exceptions": "nanopto.ir_terms.parse_error",
    "pypto.language.parser.diagnostics.renderer": "nanopto.ir_terms.parse_error",
}
"""PyPTO module name -> the nanopto module that answers to it."""

__all__ = ["MODULES", "PYPTO_COMMIT", "DataType", "InternalError", "ir", "language", "passes"]

for _name, _target in MODULES.items():
    sys.modules[_name] = sys.modules[__name__] if _target == __name__ else importlib.import_module(_target)

# Part of the mapping: under this shim, nanopto's `pl` module is named `pypto.language`, so printed
# programs import it by that name (docs/coming-from-pypto.md, "The printed header").
set_language_module("pypto.language")
