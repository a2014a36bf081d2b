"""What the parser refuses at its edges, located, and what every printed program reads back as
(docs/errors.md#whose-mistake-the-exit-code-says): a constant or extent `pl` cannot hold, an op
called with arguments its signature does not take; a UTF-8 byte-order mark is no error."""

from __future__ import annotations

import math

import pytest

from nanopto import ir
from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import ConstantNotPrintableError, python_print
from nanopto.ir_terms.types import ScalarType


def program(statement: str, params: str = "k: pl.Scalar[pl.INDEX]") -> str:
    return (
        "import nanopto.language as pl\n\n\n@pl.program\nclass P:\n    @pl.function\n"
        f"    def main(self, {params}) -> pl.Scalar[pl.INDEX]:\n        {statement}\n        return k\n"
    )


def refused(source: str, *fragments: str) -> ParserError:
    with pytest.raises(ParserError) as caught:
        parse_program(source, "edge.py")
    text = str(caught.value)
    assert text.startswith("edge.py:"), text
    for fragment in fragments:
        assert fragment in text, text
    return caught.value


@pytest.mark.parametrize(
    ("const", "message"),
    [
        ("pl.const(2.5, pl.INT32)", "pl.const(2.5, pl.INT32): a pl.INT32 constant is an integer"),
        ("pl.const(7, pl.BOOL)", "pl.const(7, pl.BOOL): a pl.BOOL constant is True or False"),
        ("pl.const(True, pl.INT32)", "pl.const(True, pl.INT32): a pl.INT32 constant is a number"),
        ("pl.const(1e999, pl.FP32)", "float constant inf is out of range"),
    ],
)
def test_a_constant_its_dtype_cannot_hold_is_refused_at_the_value(const: str, message: str) -> None:
    error = refused(program(f"m = {const}"), message)
    assert (error.line, error.col) == (8, 21)


@pytest.mark.parametrize("extent", ["2.5", "True", "-3"])
@pytest.mark.parametrize(
    "where",
    [
        "params:t: pl.Tensor[[{e}, 4], pl.FP32]",
        "params:t: pl.Tile[[4, {e}], pl.FP32]",
        "params:t: pl.Array[{e}, pl.INT32]",
        "m = pl.create_tensor([{e}], dtype=pl.FP32)",
        "m = pl.array.create({e}, pl.INT32)",
        "m = pl.tensor.full([{e}, 2], pl.FP32, 0.0)",
    ],
)
def test_an_extent_that_is_not_a_non_negative_integer_is_refused(extent: str, where: str) -> None:
    if where.startswith("params:"):
        source = program("m = k", "k: pl.Scalar[pl.INDEX], " + where[len("params:") :].format(e=extent))
    else:
        source = program(where.format(e=extent))
    refused(source, f"an extent is a non-negative integer, not {extent}")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("pl.add(k, k, k, k)", "pl.add(lhs, rhs): too many positional arguments"),
        ("pl.exp(k, k, k, foo=3)", "pl.exp(input): too many positional arguments"),
        ("pl.exp(k, foo=3)", "pl.exp(input): got an unexpected keyword argument 'foo'"),
        ("pl.read(k)", "pl.read(tensor, indices): missing a required argument: 'indices'"),
        ("pl.system.bar_v(k)", "pl.system.bar_v(): too many positional arguments"),
        ("pl.cast(k, pl.FP32, mdoe=1)", "got an unexpected keyword argument 'mdoe'"),
        ("pl.tensor.muls(k)", "pl.tensor.muls(lhs, rhs): missing a required argument: 'rhs'"),
        ("pl.tile.adds(k, 1, 2)", "pl.tile.adds(lhs, rhs): too many positional arguments"),
        ("pl.row_max(k, k, k)", "pl.row_max(input, tmp_tile=None): too many positional arguments"),
        ("pl.tensor.row_sum(k, axis=1)", "got an unexpected keyword argument 'axis'"),
    ],
)
def test_op_arguments_are_checked_when_parsed_against_the_op_signature(call: str, message: str) -> None:
    refused(program(f"m = {call}"), message)


@pytest.mark.parametrize(
    "extent", ["pl.Tensor[[4], pl.FP32]", "pl.FP32[0]", "pl.Scalar[pl.INDEX]"]
)
def test_a_type_written_where_a_value_belongs_is_refused(extent: str) -> None:
    refused(program("m = k", f"k: pl.Scalar[pl.INDEX], t: pl.Tensor[[{extent}, 4], pl.FP32]"), "is a type, not a value")


def test_every_op_the_source_calls_by_name_declares_its_signature() -> None:
    undeclared = {op.name for op in OPS if op.parameters is None}
    assert undeclared == {"subscript"}  # written `a[i]`, never pl.subscript(...)


def test_a_utf8_byte_order_mark_is_skipped_as_python_skips_it() -> None:
    source = program("m = k")
    ir.assert_structural_equal(parse_program("\ufeff" + source, "bom.py"), parse_program(source, "bom.py"))


def _reparsed(prog: n.Program) -> n.Program:
    return parse_program(python_print(prog), "printed.py")


def test_an_extent_past_pl_index_prints_as_a_typed_constant_that_reads_back() -> None:
    before = parse_program(program("m = pl.create_tensor([pl.const(2**63 + 1, pl.UINT64)], dtype=pl.FP32)"), "big.py")
    ir.assert_structural_equal(_reparsed(before), before)
    (stmt, _) = before.functions["main"].body.stmts  # type: ignore[attr-defined]
    shape = stmt.var.type.shape
    assert shape == (n.ConstInt(2**63 + 1, DataType.UINT64),)
    assert "pl.const(9223372036854775809, pl.UINT64)" in python_print(before)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("dtype", [DataType.FP32, DataType.FP16])
def test_a_float_constant_with_no_literal_is_refused_by_the_printer_located(value: float, dtype: DataType) -> None:
    k = n.Var("k", ScalarType(DataType.INDEX))
    m = n.Var("m", ScalarType(dtype))
    span = n.Span("made.py", 3, 4)
    body = n.SeqStmts((n.AssignStmt(m, n.ConstFloat(value, dtype, span=span)), n.ReturnStmt((k,))))
    fn = n.Function("main", (n.Param(k),), (ScalarType(DataType.INDEX),), body)
    with pytest.raises(ConstantNotPrintableError, match=r"^made.py:3:5: cannot print the float constant"):
        python_print(n.Program("P", (fn,)))
