"""Inlining keeps what a helper's tile types say about layout: views, memrefs and memory spaces
ride through the splice unchanged, except for the parameters they read, which are substituted
like any other use (docs/specification.md, "Dynamic dimensions and types")."""

from __future__ import annotations

import textwrap

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


def inline(program: ir.Program) -> ir.Program:
    return passes.inline_functions()(program)


def test_a_helper_locals_view_is_spliced_with_its_parameter_substituted() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def stage(self, t: pl.Tensor[[16, 16], pl.FP32], rows: pl.Scalar[pl.INDEX]):
                x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, 16], pad=pl.PadValue.zero)] = pl.tile.load(t, [0, 0], [16, 16])
                y: pl.Tile[[16, 16], pl.FP32, pl.MemRef("mem_mat_0", 0, 1024), pl.Mem.Mat, pl.TileView(slayout=pl.TileLayout.col_major)] = pl.add(x, x)
                return y

            @pl.function
            def main(self, a: pl.Tensor[[16, 16], pl.FP32], k: pl.Scalar[pl.INDEX]):
                z = self.stage(a, k)
                return a
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[16, 16], pl.FP32], k: pl.Scalar[pl.INDEX]):
                x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[k, 16], pad=pl.PadValue.zero)] = pl.tile.load(a, [0, 0], [16, 16])
                y: pl.Tile[[16, 16], pl.FP32, pl.MemRef("mem_mat_0", 0, 1024), pl.Mem.Mat, pl.TileView(slayout=pl.TileLayout.col_major)] = pl.add(x, x)
                z = y
                return a
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert "pl.TileView(valid_shape=[k, 16], pad=pl.PadValue.zero)" in python_print(after)


def test_a_tile_parameter_with_a_view_binds_to_the_callers_tile() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def double(self, x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major)]):
                y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.add(x, x)
                return y

            @pl.function
            def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
                t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.load(a, [0, 0], [16, 16])
                u = self.double(t)
                return a
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
                t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.load(a, [0, 0], [16, 16])
                y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.add(t, t)
                u = y
                return a
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    y = after.functions["main"].body.stmts[1].var  # type: ignore[attr-defined]
    assert y.type.tile_view == ir.TileView(blayout=ir.TileLayout.row_major)


def test_an_implicit_view_stays_implicit_after_inlining() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def load(self, t: pl.Tensor[[16, 16], pl.FP32]):
                x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView()] = pl.tile.load(t, [0, 0], [16, 16])
                return x

            @pl.function
            def main(self, a: pl.Tensor[[16, 16], pl.FP32]):
                z = self.load(a)
                return a
        """
    )
    text = python_print(inline(before))
    assert "x_inline0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = " in text
    assert "TileView" not in text
