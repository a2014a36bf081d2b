"""A call of a program function has the callee's return type, its dynamic dimensions bound to the
call's argument shapes (docs/coming-from-pypto.md, "Calls of program functions")."""

from __future__ import annotations

from nanopto import ir, passes
from nanopto.ir_terms.infer import call_result_type
from nanopto.ir_terms.schema import walk

HEAD = 'import nanopto.language as pl\nM = pl.dynamic("M")\nN = pl.dynamic("N")\n'
FP32 = ir.DataType.FP32


def tensor(*dims: int) -> ir.TensorType:
    return ir.TensorType(list(dims), FP32)


def calls_in(program: ir.Program, function: str) -> list[ir.Call]:
    fn = program.get_function(function)
    assert fn is not None
    return [node for node in walk(fn.body) if isinstance(node, ir.Call) and node.function and node.op != "twice"]


DYNAMIC = HEAD + """
@pl.program
class Dynamic:
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, x: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:
        y = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
        r: pl.Tensor[[M, N], pl.FP32] = pl.add(a, a)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 32], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32]) -> pl.Tensor[[128, 32], pl.FP32]:
        c = self.add_kernel(a, b)
        d = self.twice(b)
        return c
"""


def test_a_call_has_the_callees_return_type_with_its_dimensions_bound() -> None:
    program = ir.parse_program(DYNAMIC)
    (call,) = calls_in(program, "main")
    ir.assert_structural_equal(call.type, tensor(128, 32))
    main = program.get_function("main")
    assert main is not None and isinstance(main.body, ir.SeqStmts)
    kernel, helper = main.body.stmts[0], main.body.stmts[1]
    assert isinstance(kernel, ir.AssignStmt) and isinstance(helper, ir.AssignStmt)
    ir.assert_structural_equal(kernel.var.type, tensor(128, 32))  # an unannotated receiver takes it
    ir.assert_structural_equal(helper.value.type, tensor(128, 64))  # an Inline callee's call too


def test_the_call_type_is_metadata_the_printer_and_the_pass_leave_alone() -> None:
    program = ir.parse_program(DYNAMIC)
    text = ir.python_print(program)
    assert "c = self.add_kernel(a, b)" in text
    again = ir.parse_program(text)
    ir.assert_structural_equal(again, program)
    ir.assert_structural_equal(calls_in(again, "main")[0].type, tensor(128, 32))
    after = passes.inline_functions()(program)  # the Inline site is spliced, the InCore call stays
    assert "d = y_inline0" in ir.python_print(after)
    (kept,) = calls_in(after, "main")
    ir.assert_structural_equal(kept.type, tensor(128, 32))
    restored = ir.deserialize(ir.serialize(program))
    ir.assert_structural_equal(calls_in(restored, "main")[0].type, tensor(128, 32))
    untyped = ir.Call(kept.op, kept.args, function=True)  # compared without its type
    ir.assert_structural_equal(untyped, kept)


def test_a_constant_binds_a_dimension_where_another_argument_passes_a_symbol() -> None:
    m = ir.Var("M", ir.ScalarType(ir.DataType.INDEX))
    symbolic = ir.TensorType([m], FP32)
    assert ir.structural_equal(call_result_type([symbolic, symbolic], [symbolic], [symbolic, tensor(8)]), tensor(8))
    # two constants that disagree (an Inline callee resolves them per operation): M stays
    assert call_result_type([symbolic, symbolic], [symbolic], [tensor(8), tensor(4)]) is not None
    kept = call_result_type([symbolic, symbolic], [symbolic], [tensor(8), tensor(4)])
    assert isinstance(kept, ir.TensorType) and kept.shape[0] is m
    pair = call_result_type([symbolic], [symbolic, ir.ScalarType(ir.DataType.INT32)], [tensor(2)])
    assert isinstance(pair, ir.TupleType) and ir.structural_equal(pair.types[0], tensor(2))
    assert isinstance(call_result_type([symbolic], [], [tensor(2)]), ir.UnknownType)


UNANNOTATED = HEAD + """
@pl.program
class Unannotated:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, 16], pl.FP32], c: pl.Out[pl.Tensor[[N, 16], pl.FP32]]):
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[32, 16], pl.FP32], c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]):
        c = self.kernel(a, c)
        d = self.later(a)
        return d

    @pl.function(type=pl.FunctionType.InCore)
    def later(self, a: pl.Tensor[[32, 16], pl.FP32]):
        return a
"""


def test_a_callee_without_a_return_annotation_is_typed_by_its_return_when_defined_above() -> None:
    program = ir.parse_program(UNANNOTATED)
    above, below = calls_in(program, "orch")
    ir.assert_structural_equal(above.type, tensor(32, 16))
    assert isinstance(below.type, ir.UnknownType)  # its body is parsed after the caller's
    ir.assert_structural_equal(ir.parse_program(ir.python_print(program)), program)


def test_pyptos_call_constructor_keeps_the_type_it_is_given() -> None:
    a = ir.Var("a", tensor(4))
    call = ir.Call(ir.GlobalVar("k"), [a], tensor(4), ir.Span.unknown())
    ir.assert_structural_equal(call.type, tensor(4))
    assert isinstance(ir.Call(ir.GlobalVar("k"), [a], ir.Span.unknown()).type, ir.UnknownType)
