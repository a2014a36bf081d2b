"""Tile types: memory space, memref and view; canonical views, printing, parsing and equality."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanopto import ir
from nanopto.egraph import roundtrip_program
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print

FP32, FP16 = ir.DataType.FP32, ir.DataType.FP16
Mem, Layout = ir.MemorySpace, ir.TileLayout


def tile(shape: list[int], space: ir.MemorySpace | None, view: ir.TileView | None = None) -> ir.TileType:
    return ir.TileType(shape, FP32, None, view, space)


def program(annotation: str) -> ir.Program:
    """A program whose one local is annotated `annotation` (a Tile of [16, 16] FP32)."""
    source = f"""
    import nanopto.language as pl

    @pl.program
    class P:
        @pl.function
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX]):
            t: {annotation} = pl.tile.load(a, [0, 0], [16, 16])
            return a
    """
    return parse_program(textwrap.dedent(source))


def local_type(p: ir.Program) -> ir.TileType:
    stmt = p.functions["main"].body.stmts[0]  # type: ignore[attr-defined]
    ty = stmt.var.type
    assert isinstance(ty, ir.TileType)
    return ty


# -- construction and canonical views --------------------------------------------------------


def test_the_memory_space_may_stand_in_the_memrefs_place() -> None:
    assert ir.TileType([4], FP32, Mem.Vec) == ir.TileType([4], FP32, None, None, Mem.Vec)
    assert ir.TileType([4], FP32, Mem.Vec).memory is Mem.Vec


@pytest.mark.parametrize(
    ("space", "layout"),
    [
        (Mem.Vec, (Layout.row_major, Layout.none_box, 512)),
        (Mem.Mat, (Layout.col_major, Layout.row_major, 512)),
        (Mem.Left, (Layout.col_major, Layout.row_major, 512)),
        (Mem.Right, (Layout.row_major, Layout.col_major, 512)),
        (Mem.Acc, (Layout.col_major, Layout.row_major, 1024)),
        (None, (Layout.row_major, Layout.none_box, 512)),
    ],
)
def test_a_view_its_memory_space_implies_is_stored_as_none(
    space: ir.MemorySpace | None, layout: tuple[ir.TileLayout, ir.TileLayout, int]
) -> None:
    implied = ir.TileView(blayout=layout[0], slayout=layout[1], fractal=layout[2])
    assert tile([32, 32], space).effective_tile_view == implied
    assert tile([32, 32], space, implied).tile_view is None
    assert tile([32, 32], space, implied) == tile([32, 32], space)


def test_a_static_column_is_column_major_in_a_flat_space() -> None:
    assert tile([16, 1], Mem.Vec).effective_tile_view.blayout is Layout.col_major
    assert tile([1, 16], Mem.Vec).effective_tile_view.blayout is Layout.row_major
    assert tile([16, 1], Mem.Vec, ir.TileView()).tile_view == ir.TileView()  # row-major: not implied


def test_a_valid_shape_equal_to_the_shape_is_dropped() -> None:
    view = ir.TileView(valid_shape=[16, 16], pad=ir.PadValue.zero)
    assert tile([16, 16], Mem.Vec, view).tile_view == ir.TileView(pad=ir.PadValue.zero)
    assert tile([16, 16], Mem.Vec, ir.TileView(valid_shape=[16, 16])).tile_view is None
    assert tile([16, 16], Mem.Vec, ir.TileView(valid_shape=[8, 16])).tile_view == ir.TileView(valid_shape=[8, 16])


def test_a_memref_needs_a_memory_space() -> None:
    memref = ir.MemRef("mem_vec_0", 0, 512)
    with pytest.raises(ValueError, match="needs its memory space"):
        ir.TileType([4], FP32, memref)
    assert ir.MemRef(Mem.Vec, ir.ConstInt(0), 512, 3) == ir.MemRef("mem_vec_3", 0, 512)


# -- printing ---------------------------------------------------------------------------------


def test_a_canonical_tile_prints_as_before() -> None:
    assert python_print(tile([16, 16], Mem.Acc)) == "pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]"
    assert python_print(tile([16, 16], None)) == "pl.Tile[[16, 16], pl.FP32]"


def test_a_view_prints_the_fields_that_differ_from_the_defaults() -> None:
    view = ir.TileView(valid_shape=[8, 16], blayout=Layout.col_major, pad=ir.PadValue.min)
    assert python_print(tile([16, 16], Mem.Vec, view)) == (
        "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, "
        "pl.TileView(valid_shape=[8, 16], blayout=pl.TileLayout.col_major, pad=pl.PadValue.min)]"
    )


def test_a_default_view_where_the_space_implies_another_prints_its_layout() -> None:
    # `pl.TileView()` would read back as the Acc layout, which this view is not.
    assert python_print(tile([16, 16], Mem.Acc, ir.TileView())) == (
        "pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(blayout=pl.TileLayout.row_major, "
        "slayout=pl.TileLayout.none_box, fractal=512)]"
    )


def test_explicit_layout_prints_the_effective_view_in_full() -> None:
    assert python_print(tile([16, 16], Mem.Right), explicit_layout=True) == (
        "pl.Tile[[16, 16], pl.FP32, pl.Mem.Right, pl.TileView(blayout=pl.TileLayout.row_major, "
        "slayout=pl.TileLayout.col_major, fractal=512)]"
    )
    padded = tile([16, 16], Mem.Vec, ir.TileView(pad=ir.PadValue.zero))
    assert ir.python_print_type(padded, explicit_layout=True) == (
        "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.row_major, "
        "slayout=pl.TileLayout.none_box, fractal=512, pad=pl.PadValue.zero)]"
    )
    assert python_print(tile([16, 16], None), explicit_layout=True) == "pl.Tile[[16, 16], pl.FP32]"


def test_a_memref_prints_before_the_memory_space() -> None:
    ty = ir.TileType([16, 16], FP16, ir.MemRef(Mem.Vec, ir.ConstInt(0), 512, 0), None, Mem.Vec)
    assert python_print(ty) == 'pl.Tile[[16, 16], pl.FP16, pl.MemRef("mem_vec_0", 0, 512), pl.Mem.Vec]'
    assert python_print(ty.memref) == 'pl.MemRef("mem_vec_0", 0, 512)'  # type: ignore[arg-type]


# -- parsing ----------------------------------------------------------------------------------

ANNOTATIONS = [
    "pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]",
    "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 16], pad=pl.PadValue.zero)]",
    "pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat, pl.TileView(slayout=pl.TileLayout.col_major, compact=pl.CompactMode.normal)]",
    "pl.Tile[[16, 16], pl.FP32, pl.Mem.Left, pl.TileView(stride=[1, 16], start_offset=n * 16)]",
    'pl.Tile[[16, 16], pl.FP32, pl.MemRef("mem_acc_1", 256, 1024), pl.Mem.Acc, pl.TileView(fractal=1024)]',
    "pl.Tile[[16, 16], pl.FP32, pl.TileView(blayout=pl.TileLayout.col_major)]",
]


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_a_tile_annotation_round_trips(annotation: str) -> None:
    parsed = program(annotation)
    text = python_print(parsed)
    assert f"t: {annotation} =" in text
    reparsed = parse_program(text)
    ir.assert_structural_equal(reparsed, parsed)
    assert python_print(reparsed) == text


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_an_explicit_layout_print_reads_back_as_the_same_program(annotation: str) -> None:
    parsed = program(annotation)
    ir.assert_structural_equal(parse_program(python_print(parsed, explicit_layout=True)), parsed)


def test_a_bare_tile_view_is_the_implicit_one() -> None:
    bare = local_type(program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView()]"))
    assert bare == tile([16, 16], Mem.Acc)


def test_the_older_memref_forms_name_the_allocation_by_space_and_id() -> None:
    for annotation in ("pl.MemRef(0, 512, 2), pl.Mem.Vec", "pl.Mem.Vec, pl.MemRef(pl.Mem.Vec, 0, 512, 2)"):
        ty = local_type(program(f"pl.Tile[[16, 16], pl.FP32, {annotation}]"))
        assert ty.memref == ir.MemRef("mem_vec_2", 0, 512)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(blayout=1)]", "blayout takes a pl.TileLayout member"),
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(pad=pl.TileLayout.row_major)]", "pad takes a pl.PadValue member"),
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(fractal=n)]", "fractal is a size in bytes"),
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(layout=pl.TileLayout.row_major)]", "no field 'layout'"),
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(pl.TileLayout.row_major)]", "keywords only"),
        ('pl.Tile[[16, 16], pl.FP32, pl.MemRef("mem_vec_0", 0, 512)]', "also names its memory space"),
        ("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.Mem.Vec]", "pl.Mem is given twice"),
        ("pl.Tile[[16, 16], pl.FP32, pl.TileView(), pl.TileView()]", "pl.TileView is given twice"),
        ("pl.Tile[[16, 16], pl.FP32, pl.NZ]", "optionally a pl.MemRef"),
    ],
)
def test_a_malformed_tile_annotation_is_a_located_type_error(annotation: str, message: str) -> None:
    with pytest.raises(ir.ParserTypeError, match=message) as info:
        program(annotation)
    assert info.value.line == 8  # type: ignore[attr-defined]


# -- equality, hashing, serialization, the term codec ---------------------------------------------


def test_structural_equality_and_hash_see_the_view_and_the_memref() -> None:
    plain = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]")
    viewed = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(pad=pl.PadValue.zero)]")
    other = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(pad=pl.PadValue.max)]")
    placed = program('pl.Tile[[16, 16], pl.FP32, pl.MemRef("mem_vec_0", 0, 512), pl.Mem.Vec]')
    again = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(pad=pl.PadValue.zero)]")
    assert ir.structural_equal(viewed, again)
    assert ir.structural_hash(viewed) == ir.structural_hash(again)
    for a, b in [(plain, viewed), (viewed, other), (plain, placed)]:
        assert not ir.structural_equal(a, b)
        assert ir.structural_hash(a) != ir.structural_hash(b)


def test_a_view_reading_a_parameter_follows_the_renaming() -> None:
    # The view's `n` is the function's own parameter on each side: equal under the Var bijection.
    a = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 16])]")
    b = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[n, 16])]")
    c = program("pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 16])]")
    assert ir.structural_equal(a, b) and not ir.structural_equal(a, c)


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_serialize_and_the_term_codec_keep_the_tile_type(annotation: str) -> None:
    parsed = program(annotation)
    ir.assert_structural_equal(ir.deserialize(ir.serialize(parsed)), parsed, enable_auto_mapping=True)
    ir.assert_structural_equal(roundtrip_program(parsed), parsed)
    assert python_print(roundtrip_program(parsed)) == python_print(parsed)


def test_view_dimensions_compare_by_value_as_shape_dimensions_do() -> None:
    # A view prints its dimensions as a shape prints them, without a dtype.
    typed = ir.TileView(valid_shape=[ir.ConstInt(8, ir.DataType.INT32), ir.ConstInt(16, ir.DataType.INT64)])
    a, b = tile([16, 16], Mem.Vec, typed), tile([16, 16], Mem.Vec, ir.TileView(valid_shape=[8, 16]))
    assert python_print(a) == python_print(b)
    assert ir.structural_equal(a, b) and ir.structural_hash(a) == ir.structural_hash(b)


N = ir.Var("n", ir.ScalarType(ir.DataType.INDEX))
"""Printed as `n`, which the parsed program reads as its parameter."""


@st.composite
def tile_views(draw: st.DrawFn) -> ir.TileView | None:
    """Any view of a [16, 16] tile (None: the implied one), its dimensions constants or `n`."""
    if draw(st.booleans()):
        return None
    dims = st.lists(st.sampled_from([N, 1, 8, 16]), min_size=2, max_size=2)
    return ir.TileView(
        valid_shape=draw(st.sampled_from([[]]) | dims),
        stride=draw(st.sampled_from([[]]) | dims),
        start_offset=draw(st.sampled_from([None, 0, 32])),
        blayout=draw(st.sampled_from(list(ir.TileLayout))),
        slayout=draw(st.sampled_from(list(ir.TileLayout))),
        fractal=draw(st.sampled_from([32, 512, 1024])),
        pad=draw(st.sampled_from(list(ir.PadValue))),
        compact=draw(st.sampled_from(list(ir.CompactMode))),
    )


def _annotation(view: ir.TileView | None, space: ir.MemorySpace | None, memref: bool) -> str:
    """The `pl` annotation of a [16, 16] FP32 tile with these parts."""
    ty = ir.TileType([16, 16], FP32, ir.MemRef("mem_0", 64, 1024) if memref and space else None, None, space)
    text = python_print(ty)
    if view is None:
        return text
    return text[:-1] + ", " + python_print(view) + "]"


@given(
    view=tile_views(),
    space=st.sampled_from([None, *ir.MemorySpace]),
    memref=st.booleans(),
    explicit=st.booleans(),
)
def test_any_tile_annotation_round_trips_through_print_and_the_codec(
    view: ir.TileView | None, space: ir.MemorySpace | None, memref: bool, explicit: bool
) -> None:
    parsed = program(_annotation(view, space, memref))
    text = python_print(parsed, explicit_layout=explicit)
    ir.assert_structural_equal(parse_program(text), parsed)
    ir.assert_structural_equal(roundtrip_program(parsed), parsed)
