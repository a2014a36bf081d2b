"""Subscripts are op calls (docs/coming-from-pypto.md#subscripts): each form parses to the program
written with the op, the checks raise PyPTO's exception classes where the subscript is, and the
interpreter runs a slice as a view."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from nanopto import ir
from nanopto.ir_terms.parse_error import ParserError, ParserTypeError, UnsupportedFeatureError
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.verify.interpreter import interpret

PARAMS = (
    "a: pl.Tensor[[8, 4], pl.FP32], c: pl.Tensor[[4, 8, 4], pl.FP32], v: pl.Tensor[[4], pl.FP32], "
    "t: pl.Tile[[16, 32], pl.FP32], s: pl.Tile[[4, 32], pl.FP32], r: pl.Scalar[pl.INDEX]"
)


def main(body: str, params: str = PARAMS) -> ir.Program:
    src = f"@pl.program\nclass P:\n    @pl.function\n    def main(self, {params}):\n"
    return parse_program("import nanopto.language as pl\n" + src + textwrap.indent(textwrap.dedent(body), " " * 8))


@pytest.mark.parametrize(
    ("sugar", "op"),
    [
        ("x = a[r, 1]", "x = pl.tensor.read(a, [r, 1])"),
        ("x = a[r]", "x = pl.tensor.slice(a, [1, 4], [r, 0], [], [0])"),
        ("x = a[2:6, :]", "x = pl.tensor.slice(a, [4, 4], [2, 0])"),
        ("x = a[r:r + 2]", "x = pl.tensor.slice(a, [2, 4], [r, 0])"),
        ("x = a[r:]", "x = pl.tensor.slice(a, [8 - r, 4], [r, 0])"),
        ("x = c[r][1]", "x = pl.tensor.slice(pl.tensor.slice(c, [1, 8, 4], [r, 0, 0], [], [0]), [1, 4], [1, 0], [], [0])"),
        ("x = c[0:4, r]", "x = pl.tensor.slice(c, [4, 1, 4], [0, r, 0], [], [1])"),
        ("x = t[r, 3]", "x = pl.tile.read(t, [r, 3])"),
        ("x = t[0:4, :]", "x = pl.tile.slice(t, [4, 32], [0, 0])"),
        ("x = t[:, :r]", "x = pl.tile.slice(t, [16, 32], [0, 0], [16, pl.min(r, 32)])"),
        ("c[r, 0:4] = a[0:4, :]", "c = pl.tensor.assemble(c, pl.tensor.reshape(a[0:4, :], [1, 4, 4]), [r, 0, 0])"),
        ("c[1] = a", "c = pl.tensor.assemble(c, pl.tensor.reshape(a, [1, 8, 4]), [1, 0, 0])"),
        ("c[0:4, r, :] = a[0:4]", "c = pl.tensor.assemble(c, pl.tensor.reshape(a[0:4], [4, 1, 4]), [0, r, 0])"),
        ("t[4:8, :] = s", "t = pl.tile.assemble(t, s, [4, 0])"),
    ],
)
def test_a_subscript_parses_to_the_op_call_it_means(sugar: str, op: str) -> None:
    """The sugar and the op written out are one program, which prints as the op and reads back."""
    sugared, written = main(sugar + "\nreturn x" if sugar.startswith("x") else sugar), main(
        op + "\nreturn x" if op.startswith("x") else op
    )
    ir.assert_structural_equal(sugared, written)
    assert op.split(" = ", 1)[1].split("(", 1)[0] in python_print(sugared)
    ir.assert_structural_equal(parse_program(python_print(sugared)), sugared)


@pytest.mark.parametrize(
    ("statement", "kind", "fragment", "column"),
    [
        ("x = a[0, 0, 0]", ParserTypeError, "3 indices but the tensor is 2D", 12),
        ("x = a[0:4:2]", UnsupportedFeatureError, "step", 12),
        ("x = t[:, r:]", UnsupportedFeatureError, "Dynamic lower bounds", 12),
        ("x = t[:, 10:5]", UnsupportedFeatureError, "positive static extent", 12),
        ("x = r[0]", ParserTypeError, "not a scalar", 12),
        ("a[0:4] = v", ParserTypeError, "must be 2D to match", 17),
        ("a[r, 1] = v", UnsupportedFeatureError, "Element-write", 8),
        ("a[0:2, 1] = v", ParserTypeError, "shape mismatch on source axis 0", 20),
        ("t[0:4] = a", ParserTypeError, "is a tile too", 17),
    ],
)
def test_a_subscript_that_does_not_fit_is_refused_where_it_is_written(
    statement: str, kind: type[ParserError], fragment: str, column: int
) -> None:
    with pytest.raises(kind, match=fragment) as info:
        main(statement + "\nreturn a")
    assert f":6:{column}:" in str(info.value) and "hint:" in str(info.value)


def test_a_subscript_write_is_refused_under_strict_ssa() -> None:
    src = "@pl.program\nclass P:\n    @pl.function(strict_ssa=True)\n    def main(self, a: pl.Tensor[[8, 4], pl.FP32], v: pl.Tensor[[2, 4], pl.FP32]):\n        a[0:2] = v\n        return a\n"
    with pytest.raises(UnsupportedFeatureError, match="before SSA conversion"):
        parse_program("import nanopto.language as pl\n" + src)


def test_a_narrowed_source_fits_a_window_of_its_valid_shape() -> None:
    """A source whose valid region `pl.set_validshape` narrowed is checked against that region,
    and a window that drops an axis restates the region for the reshaped source."""
    prog = main(
        "w = pl.set_validshape(a, 4, 2)\nc[1, 0:4, 0:2] = w\nreturn c",
        params="a: pl.Tensor[[8, 4], pl.FP32], c: pl.Tensor[[4, 8, 4], pl.FP32]",
    )
    assert "pl.tensor.reshape(w, [1, 8, 4], [1, 4, 2])" in python_print(prog)
    with pytest.raises(ParserTypeError, match="shape mismatch on source axis 1"):
        main(
            "w = pl.set_validshape(a, 4, 2)\nc[1, 0:4, 0:3] = w\nreturn c",
            params="a: pl.Tensor[[8, 4], pl.FP32], c: pl.Tensor[[4, 8, 4], pl.FP32]",
        )


def test_a_tile_view_of_rank_one_keeps_rank_two_with_a_warning() -> None:
    with pytest.warns(UserWarning, match=r"auto-promoting to 2D shape \[1, 32\]"):
        prog = main("x = t[r]\nreturn x")
    tile_type = prog.functions["main"].body.stmts[0].var.type  # type: ignore[attr-defined]
    assert [d.value for d in tile_type.shape] == [1, 32]


def test_a_tile_slice_is_a_view_of_rank_two_and_a_write_through_it_reaches_the_source() -> None:
    src = (
        "@pl.program\nclass P:\n    @pl.function\n"
        "    def main(self, t: pl.Tile[[4, 8], pl.FP32], v: pl.Tile[[1, 3], pl.FP32]) -> pl.Tile[[4, 8], pl.FP32]:\n"
        "        row = pl.tile.slice(t, [1, 8], [2, 0], [], [0])\n"
        "        row[0:1, 1:4] = v\n"
        "        return t\n"
    )
    tile = np.zeros((4, 8), dtype=np.float32)
    out = interpret(parse_program("import nanopto.language as pl\n" + src), "main", tile, np.ones((1, 3), np.float32))
    expected = np.zeros((4, 8), dtype=np.float32)
    expected[2, 1:4] = 1
    np.testing.assert_array_equal(out, expected)
