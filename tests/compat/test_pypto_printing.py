"""PyPTO's printing surface: `str()` of any node, verbose annotations on built IR, and the
keyword-named ops (`pl.and_`, `pl.tile.or_`, `pl.tensor.not_`)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms.parser import parse_program
from nanopto.verify.interpreter import InterpreterError, interpret

SPAN = ir.Span.unknown()


def test_a_hand_built_assignment_prints_its_type_and_a_parsed_one_its_source() -> None:
    x = ir.Var("x", ir.ScalarType(ir.DataType.INT32), SPAN)
    built = ir.AssignStmt(x, ir.ConstInt(7, ir.DataType.INT32, SPAN), SPAN)
    assert built.as_python() == "x: pl.Scalar[pl.INT32] = pl.const(7, pl.INT32)"
    assert built.as_python(concise=True) == "x = pl.const(7, pl.INT32)"
    parsed = parse_program(
        textwrap.dedent("""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def main(self, k: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
                y = k + 1
                z: pl.Scalar[pl.INT32] = y * 2
                return z
        """)
    )
    body = parsed.functions["main"].body
    assert [str(s) for s in body.stmts[:2]] == ["y = k + 1", "z: pl.Scalar[pl.INT32] = y * 2"]


def test_str_of_any_node_is_its_pl_text_and_repr_its_fields() -> None:
    k = ir.Var("k", ir.ScalarType(ir.DataType.INDEX), SPAN)
    total = ir.Add(k, ir.ConstInt(1, ir.DataType.INDEX, SPAN), ir.DataType.INDEX, SPAN)
    assert str(total) == "k + 1"
    assert str(ir.ReturnStmt([total], SPAN)) == "return k + 1"
    assert repr(k).startswith("Var('k'")


KEYWORD_OPS = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, x: pl.Tensor[[4], pl.INT16], m: pl.Tensor[[4], pl.INT16]) -> pl.Tensor[[4], pl.INT16]:
        a: pl.Tensor[[4], pl.INT16] = pl.tensor.and_(x, m)
        b: pl.Tensor[[4], pl.INT16] = pl.or_(a, m)
        c: pl.Tensor[[4], pl.INT16] = pl.tile.not_(b)
        return c
"""


def test_keyword_named_ops_store_the_bare_name_and_print_the_underscore() -> None:
    program = parse_program(textwrap.dedent(KEYWORD_OPS))
    ops = [s.value.op.name for s in program.functions["main"].body.stmts[:3]]
    assert ops == ["tensor.and", "or", "tile.not"]
    printed = ir.python_print(program)
    assert "pl.tensor.and_(x, m)" in printed and "pl.or_(a, m)" in printed and "pl.tile.not_(b)" in printed
    ir.assert_structural_equal(parse_program(printed), program)


def test_keyword_named_ops_are_bitwise_on_integers() -> None:
    program = parse_program(textwrap.dedent(KEYWORD_OPS))
    x = np.array([0b1100, 0b1010, 0, -1], dtype=np.int16)
    m = np.array([0b1010, 0b0110, 5, 3], dtype=np.int16)
    result = interpret(program, "main", x, m)
    np.testing.assert_array_equal(result, ~((x & m) | m))


def test_keyword_named_ops_refuse_floats_at_run_time() -> None:
    source = textwrap.dedent(KEYWORD_OPS).replace("pl.INT16", "pl.FP32")
    program = parse_program(source)
    x = np.ones(4, dtype=np.float32)
    with pytest.raises(InterpreterError, match="integers or booleans"):
        interpret(program, "main", x, x)


def test_an_unknown_underscored_op_is_still_unknown() -> None:
    with pytest.raises(ir.InvalidOperationError, match=r"unknown op 'pl\.xor_'"):
        parse_program(textwrap.dedent(KEYWORD_OPS).replace("pl.or_", "pl.xor_"))


STANDALONE = """
@pl.function
def fill(out: pl.Tensor[[4], pl.INT64]):
    for i in pl.range(0, 4):
        pl.tensor.write(out, [i], pl.const(7, pl.INT64))
"""


def test_a_function_printed_alone_has_no_self_and_parses_back() -> None:
    fn = pl.parse(textwrap.dedent(STANDALONE))
    printed = ir.python_print(fn)
    assert printed.startswith("@pl.function\ndef fill(out: pl.Tensor[[4], pl.INT64]):")
    ir.assert_structural_equal(pl.parse(printed), fn)
    assert ir.python_print(pl.parse(printed)) == printed


def test_tensor_write_stores_one_element_in_place() -> None:
    program = pl.parse(
        textwrap.dedent("""
        @pl.program
        class P:
            @pl.function
            def main(self, out: pl.InOut[pl.Tensor[[4], pl.INT64]], k: pl.Scalar[pl.INDEX]):
                pl.tensor.write(out, [k], pl.const(7, pl.INT64))
        """)
    )
    out = np.zeros(4, dtype=np.int64)
    interpret(program, "main", out, 2)
    np.testing.assert_array_equal(out, [0, 0, 7, 0])
    with pytest.raises(InterpreterError, match="out of bounds"):
        interpret(program, "main", out, 9)


def test_a_built_op_call_keeps_the_spelling_it_was_given() -> None:
    tile = ir.TileType([ir.ConstInt(16, ir.DataType.INDEX, SPAN)], ir.DataType.INT16)
    a, b = ir.Var("a", tile, SPAN), ir.Var("b", tile, SPAN)
    assert ir.create_op_call("tile.and", [a, b], {}, SPAN).as_python() == "pl.tile.and_(a, b)"
    assert ir.create_op_call("add", [a, b], SPAN).as_python() == "pl.add(a, b)"
    assert ir.op.tile.or_(a, b).op.name == "tile.or"
