"""PyPTO's op builders (`ir.op.tile.*`, `ir.get_op`, `ir.create_op_call`), `GlobalVar`, the
`Submit` and `Program` constructors in PyPTO's order, and the `IRVisitor`/`IRMutator` traversals."""

from __future__ import annotations

import pytest

from nanopto import ir

HEAD = "import nanopto.language as pl\n"
SPAN = ir.Span.unknown()
INDEX = ir.ScalarType(ir.DataType.INDEX)
TASK = ir.ScalarType(ir.DataType.TASK_ID)

PROGRAM = HEAD + """
@pl.program
class Copy:
    @pl.function
    def main(self, src: pl.Tensor[[8, 8], pl.FP16], dst: pl.Out[pl.Tensor[[8, 8], pl.FP16]]) -> pl.Tensor[[8, 8], pl.FP16]:
        t: pl.Tile[[8, 8], pl.FP16] = pl.tile.load(src, [0, 0], [8, 8])
        dst = pl.tile.store(t, [0, 0], dst)
        return dst
"""


def test_an_op_builder_makes_the_call_the_parser_makes() -> None:
    parsed = ir.parse_program(PROGRAM).get_function("main")
    assert parsed is not None
    load_stmt, store_stmt = parsed.body.stmts[0], parsed.body.stmts[1]
    assert isinstance(load_stmt, ir.AssignStmt) and isinstance(store_stmt, ir.AssignStmt)
    src, dst = parsed.param_list[0].var, parsed.param_list[1].var
    built_load = ir.op.tile.load(src, [0, 0], [8, 8])
    assert ir.structural_equal(built_load, load_stmt.value)
    assert ir.op.tile.load(src, offsets=[0, 0], shapes=[8, 8]) == built_load  # by keyword, as PyPTO's builders
    built_store = ir.op.tile.store(load_stmt.var, offsets=[0, 0], output_tensor=dst)
    assert ir.structural_equal(built_store, store_stmt.value)
    assert built_load.type == ir.TileType([8, 8], ir.DataType.FP16, ir.MemorySpace.Vec)  # the type rule
    assert built_load.as_python() == "pl.tile.load(src, [0, 0], [8, 8])"


def test_get_op_resolves_any_spelling_to_the_registry_name() -> None:
    assert ir.get_op("tile.load").name == "tile.load"
    assert ir.get_op("tensor.add").name == ir.get_op("add").name
    with pytest.raises(ValueError, match="unknown op"):
        ir.get_op("tile.no_such_op")
    with pytest.raises(AttributeError):
        _ = ir.op.tile.no_such_op
    call = ir.create_op_call("tile.load", [ir.Var("a", ir.TensorType([4], ir.DataType.FP32)), [0], [4]], {}, SPAN)
    assert call.op.name == "tile.load" and call.span == SPAN


def test_call_takes_pypto_positional_forms() -> None:
    a, b = ir.Var("a", INDEX), ir.Var("b", INDEX)
    with_kwargs = ir.Call(ir.Op("tile.store"), [a, b], {"stage": 1, "name": "x"}, SPAN)
    assert [k.name for k in with_kwargs.kwargs] == ["stage", "name"] and with_kwargs.span == SPAN
    assert with_kwargs.kwargs[0].value == ir.ConstInt(1)
    to_function = ir.Call(ir.GlobalVar("kernel"), [a], INDEX, SPAN)
    assert to_function.function and to_function.op.name == "kernel" and to_function.span == SPAN


def _kernel() -> ir.Function:
    x = ir.Var("x", INDEX)
    return ir.Function("kernel", [x], [INDEX], ir.YieldStmt([x], SPAN), SPAN)


def test_submit_and_program_in_pypto_order_print_the_pl_form() -> None:
    a, t1, t2 = ir.Var("a", INDEX), ir.Var("t1", TASK), ir.Var("t2", TASK)
    result = ir.TupleType([INDEX, TASK])
    submit = ir.Submit(ir.GlobalVar("kernel"), [a], [t1, t2], result, SPAN)
    assert submit.callee == "kernel" and submit.span == SPAN and [k.name for k in submit.kwargs] == ["deps"]
    res = ir.Var("res", result)
    body = ir.SeqStmts([ir.AssignStmt(res, submit, SPAN), ir.YieldStmt([res], SPAN)], SPAN)
    caller = ir.Function("caller", [a, t1, t2], [result], body, SPAN)
    program = ir.Program([_kernel(), caller], "with_submit", SPAN)
    assert program.name == "with_submit" and list(program.functions) == ["kernel", "caller"]
    assert "pl.submit(self.kernel, a, deps=[t1, t2])" in program.as_python()
    assert ir.Program("named_first", [caller]).function_list == (caller,)  # nanopto's order still works
    no_deps = ir.Submit(ir.GlobalVar("kernel"), [a], [], result, SPAN)
    assert no_deps.kwargs == () and not ir.structural_equal(no_deps, ir.Call(ir.GlobalVar("kernel"), [a], INDEX, SPAN))


def test_visitor_and_mutator_dispatch_on_snake_case_names() -> None:
    program = ir.parse_program(PROGRAM)
    seen: list[str] = []

    class Calls(ir.IRVisitor):
        def visit_call(self, op: ir.Call) -> None:
            seen.append(op.op.name)
            super().visit_call(op)

    Calls().visit_program(program)
    assert seen == ["tile.load", "tile.store"]

    class Rename(ir.IRMutator):
        def visit_function(self, op: ir.Function) -> ir.Function:
            rebuilt = super().visit_function(op)
            return ir.Function("renamed", rebuilt.param_list, rebuilt.return_types, rebuilt.body, rebuilt.span)

    renamed = Rename().visit_program(program)
    assert list(renamed.functions) == ["renamed"]
    assert ir.IRMutator().visit_program(program) is program  # nothing changed: the same object


def test_print_options_and_pl_parse() -> None:
    import nanopto.language as pl

    program = pl.parse(PROGRAM)
    assert isinstance(program, ir.Program) and program.name == "Copy"
    text = ir.python_print(program, format=False)
    assert "t: pl.Tile[[8, 8], pl.FP16] = pl.tile.load" in text  # annotated as written
    concise = ir.python_print(program, concise=True)
    assert "t = pl.tile.load(src, [0, 0], [8, 8])" in concise and "src: pl.Tensor[[8, 8], pl.FP16]" in concise
    assert program.as_python(concise=True) == concise
    with pytest.raises(ValueError, match="prefix"):
        ir.python_print(program, "pypto.language")
    standalone = pl.parse(HEAD + "@pl.function\ndef f(x: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:\n    return x\n")
    assert isinstance(standalone, ir.Function) and standalone.name == "f"
