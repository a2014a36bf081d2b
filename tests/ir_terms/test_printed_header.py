"""A printed program's first lines: `# <package>.program: NAME` and the import of the language
module it is read with, nanopto's by default and `pypto.language` where the module goes by
PyPTO's name; either reads back (docs/coming-from-pypto.md, "The printed header")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms import printer

SOURCE = """
import nanopto.language as pl

@pl.program
class Tiny:
    @pl.function
    def main(self, a: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        b: pl.Scalar[pl.INT64] = a + 1
        return b
"""

DISTRIBUTED = """
import nanopto.language as pl
import nanopto.language.distributed as pld

@pl.program
class Remote:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, data: pld.DistributedTensor[[4, 8], pl.FP32]) -> pl.Scalar[pl.INT32]:
        ctx = pld.get_comm_ctx(data)
        return pld.rank(ctx)
"""


@pytest.fixture
def as_pypto() -> Iterator[None]:
    """Print under PyPTO's module name for one test, as the PyPTO shim does for a whole run."""
    printer.set_language_module("pypto.language")
    try:
        yield
    finally:
        printer.set_language_module("nanopto.language")


def _program(source: str) -> ir.Program:
    program = pl.parse_program(source)
    assert isinstance(program, ir.Program)
    return program


def test_a_program_prints_under_a_header_naming_it_and_nanoptos_import() -> None:
    program = _program(SOURCE)
    text = ir.python_print(program)
    assert text.startswith("# nanopto.program: Tiny\nimport nanopto.language as pl\n\n\n@pl.program\nclass Tiny:\n")
    ir.assert_structural_equal(_program(text), program)
    assert ir.python_print(_program(text)) == text


def test_under_pyptos_module_name_a_program_prints_pyptos_header_and_reads_back(as_pypto: None) -> None:
    program = _program(SOURCE)
    text = ir.python_print(program)
    assert printer.language_module() == "pypto.language"
    assert text.startswith("# pypto.program: Tiny\nimport pypto.language as pl\n\n\n@pl.program\n")
    ir.assert_structural_equal(_program(text), program)
    distributed = ir.python_print(_program(DISTRIBUTED))
    assert distributed.startswith("# pypto.program: Remote\nimport pypto.language as pl\nimport pypto.language.distributed as pld\n")
    assert ir.python_print(_program(distributed)) == distributed


def test_another_prefix_imports_the_module_from_its_package() -> None:
    program = _program(SOURCE)
    assert ir.python_print(program, "custom").startswith("# nanopto.program: Tiny\nfrom nanopto import language as custom\n\n\n@custom.program\n")
    assert ir.python_print(program, "language").startswith("# nanopto.program: Tiny\nfrom nanopto import language\n\n\n@language.program\n")


def test_only_a_module_the_parser_reads_can_be_printed() -> None:
    with pytest.raises(ValueError, match=r"nanopto\.language, pypto\.language"):
        printer.set_language_module("mypto.language")
    assert printer.language_module() == "nanopto.language"


def test_a_repr_shows_the_program_without_its_header() -> None:
    shown = repr(_program(SOURCE))
    assert shown.startswith("<Program Tiny:\n    @pl.program\n") and "program:" not in shown
