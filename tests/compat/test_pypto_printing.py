"""PyPTO's printing surface: `str()` of any node, verbose annotations on built IR, and the
keyword-named ops (`pl.and_`, `pl.tile.or_`, `pl.tensor.not_`)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.structural import first_difference
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


def test_a_prefix_renames_the_module_and_nothing_inside_strings_or_comments() -> None:
    program = parse_program(
        textwrap.dedent("""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def main(self, t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                # pl.add doubles t
                u = pl.add(t, t)
                v = pl.tensor.add(u, t, attrs={"note": "pl.x"})
                return v
        """)
    )
    default = ir.python_print(program)
    renamed = ir.python_print(program, "myir")
    assert renamed.startswith("# nanopto.program: P\nfrom nanopto import language as myir\n")
    assert "u = myir.add(t, t)" in renamed and "t: myir.Tensor[[4], myir.FP32]" in renamed
    assert "# pl.add doubles t" in renamed and '"note": "pl.x"' in renamed  # only names are renamed
    assert renamed.split("\n", 2)[2].replace("myir", "pl") == default.split("\n", 2)[2]
    assert program.as_python("myir") == renamed
    x = ir.Var("x", ir.ScalarType(ir.DataType.INT64), SPAN)
    assert ir.python_print(ir.AssignStmt(x, ir.ConstInt(42, ir.DataType.INT64, SPAN), SPAN), "ir") == (
        "x: ir.Scalar[ir.INT64] = ir.const(42, ir.INT64)"
    )
    assert ir.python_print_type(ir.ScalarType(ir.DataType.FP16), "ir") == "ir.Scalar[ir.FP16]"
    for bad in ("1x", "class", "pld", "a.b", "u"):  # `u` is a variable of the program
        with pytest.raises(ValueError, match="prefix"):
            ir.python_print(program, bad)


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
    with pytest.raises(ir.InvalidOperationError, match=r"Unknown operation 'pl\.xor_'"):
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


def test_a_constant_shape_dimension_prints_bare_and_compares_by_value() -> None:
    int32_dims = ir.TensorType([ir.ConstInt(64, ir.DataType.INT32, SPAN), ir.ConstInt(8, ir.DataType.INT64, SPAN)], ir.DataType.FP32)
    assert ir.python_print_type(int32_dims) == "pl.Tensor[[64, 8], pl.FP32]"
    index_dims = ir.TensorType([64, 8], ir.DataType.FP32)
    assert ir.structural_equal(int32_dims, index_dims)
    assert ir.structural_hash(int32_dims) == ir.structural_hash(index_dims)
    other = ir.TensorType([64, 16], ir.DataType.FP32)
    assert not ir.structural_equal(int32_dims, other)
    mismatch = first_difference(int32_dims, other)
    assert mismatch is not None and mismatch.reason == "field shape[1]: 8 != 16"


CONSTANT_ARITHMETIC = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[n + 1, 32 + 32], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        a = n + 2 * 3
        b = a * (4 - 1)
        return b
"""


def test_constant_arithmetic_prints_typed_constants_so_no_parser_folds_it() -> None:
    program = parse_program(CONSTANT_ARITHMETIC)
    printed = ir.python_print(program)
    assert "x: pl.Tensor[[n + pl.const(1, pl.INDEX), pl.const(32, pl.INDEX) + pl.const(32, pl.INDEX)], pl.FP32]" in printed
    assert "a = n + pl.const(2, pl.INDEX) * pl.const(3, pl.INDEX)" in printed
    assert "b = a * (pl.const(4, pl.INDEX) - pl.const(1, pl.INDEX))" in printed
    reparsed = parse_program(printed)
    ir.assert_structural_equal(program, reparsed)
    assert ir.python_print(reparsed) == printed
    assert interpret(reparsed, "main", 5, np.zeros((6, 64), np.float32)) == 33


def test_a_tuple_built_in_pypto_order_is_spelled_as_a_list() -> None:
    zero = ir.ConstInt(0, ir.DataType.INDEX, SPAN)
    built = ir.MakeTuple([zero, zero], SPAN)
    assert built.is_list and built.span == SPAN and built.elements == (zero, zero)
    assert str(built) == "[0, 0]"
    assert str(ir.MakeTuple((zero, zero))) == "(0, 0)"


def test_a_memory_space_given_as_an_enum_prints_as_annotations_spell_it() -> None:
    t = ir.Var("t", ir.TensorType([4], ir.DataType.FP32), SPAN)
    window = [ir.MakeTuple([ir.ConstInt(n, ir.DataType.INDEX, SPAN)], SPAN) for n in (0, 4)]
    call = ir.Call(ir.Op("tile.load"), [t, *window], {"target_memory": ir.MemorySpace.Vec}, SPAN)
    assert str(call) == "pl.tile.load(t, [0], [4], target_memory=pl.Mem.Vec)"


def test_a_function_call_names_its_callee_with_a_global_var() -> None:
    program = parse_program(
        textwrap.dedent("""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def helper(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                return pl.exp(x)

            @pl.function
            def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y = self.helper(x)
                return pl.add(y, y)
        """)
    )
    main = program.get_function("main")
    assert main is not None
    call, op_call = main.body.stmts[0].value, main.body.stmts[1].values[0]
    assert isinstance(call.op, ir.GlobalVar) and call.op.name == "helper"
    assert not isinstance(op_call.op, ir.GlobalVar) and op_call.op.name == "add"


TASKS = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self) -> pl.Scalar[pl.TASK_ID]:
        none = pl.system.task_invalid()
        barrier = pl.system.task_dummy(deps=[none], attrs={"marker": 7})
        return barrier
"""


def test_task_invalid_is_no_task_and_task_dummy_answers_pyptos_attrs() -> None:
    program = parse_program(TASKS)
    main = program.get_function("main")
    assert main is not None
    none = main.body.stmts[0].var
    assert none.type == ir.ScalarType(ir.DataType.TASK_ID)
    dummy = main.body.stmts[1].value
    assert dummy.attrs == {"marker": 7, "dummy_task": True, "manual_dep_edges": [none]}
    assert 'pl.system.task_dummy(deps=[none], attrs={"marker": 7})' in ir.python_print(program)
    assert interpret(program, "main") == 0  # the first task a run launches; task_invalid launches none


def test_tensor_full_is_a_new_filled_tensor() -> None:
    program = parse_program(
        textwrap.dedent("""
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function
            def main(self) -> pl.Tensor[[2, 3], pl.FP32]:
                t = pl.tensor.full([2, 3], dtype=pl.FP32, value=1.5)
                return t
        """)
    )
    main = program.get_function("main")
    assert main is not None
    assert main.body.stmts[0].var.type == ir.TensorType([2, 3], ir.DataType.FP32)
    np.testing.assert_array_equal(interpret(program, "main"), np.full((2, 3), 1.5, np.float32))


MEMORY_MOVES = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[4, 4], pl.FP32], out: pl.Out[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:
        a_mat = pl.load(a, [0, 0], [4, 4], target_memory=pl.MemorySpace.Mat)
        a_left = pl.move(a_mat, target_memory=pl.Mem.Left)
        zero = pl.tile.create([4, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        total = pl.add(pl.move(a_left, target_memory=pl.Mem.Vec), zero)
        out = pl.store(total, [0, 0], out)
        return out
"""


def test_load_move_and_create_put_a_tile_in_the_memory_space_they_name() -> None:
    program = parse_program(MEMORY_MOVES)
    main = program.get_function("main")
    assert main is not None
    spaces = [s.var.type.memory_space for s in main.body.stmts[:3]]
    assert spaces == [ir.MemorySpace.Mat, ir.MemorySpace.Left, ir.MemorySpace.Vec]
    assert ir.python_print_type(main.body.stmts[1].var.type) == "pl.Tile[[4, 4], pl.FP32, pl.Mem.Left]"
    reparsed = parse_program(ir.python_print(program))
    ir.assert_structural_equal(program, reparsed)
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    out = np.zeros((4, 4), np.float32)
    np.testing.assert_array_equal(interpret(reparsed, "main", a, out), a)
    np.testing.assert_array_equal(out, a)


def test_create_tile_is_the_tile_create_op_and_keeps_its_spelling() -> None:
    program = parse_program(MEMORY_MOVES.replace("pl.tile.create(", "pl.create_tile("))
    main = program.get_function("main")
    assert main is not None
    zero = main.body.stmts[2].value
    assert zero.op == "create_tile" and zero.type == ir.TileType([4, 4], ir.DataType.FP32, memory_space=ir.MemorySpace.Vec)
    assert "zero = pl.create_tile([4, 4], dtype=pl.FP32, target_memory=pl.Mem.Vec)" in ir.python_print(program)
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(interpret(program, "main", a, np.zeros((4, 4), np.float32)), a)
