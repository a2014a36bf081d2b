"""Building IR by hand as PyPTO does: positional constructors ending in a span, PyPTO's field and
class names, and structural comparison with and without auto-mapping."""

from __future__ import annotations

import dataclasses

import pytest

from nanopto import ir
from nanopto.ir_terms.schema import walk

SPAN = ir.Span("built.py", 3, 4, 3, 20)
I64 = ir.ScalarType(ir.DataType.INT64)


def test_leaf_and_statement_constructors_take_the_span_last() -> None:
    a, b = ir.Var("a", I64, SPAN), ir.Var("b", I64, SPAN)
    assign = ir.AssignStmt(a, b, SPAN)
    assert assign.span == SPAN and assign.annotated is True  # built by hand: printed with its type
    assert ir.AssignStmt(a, b, annotated=True).annotated  # nanopto's keyword still works
    ret = ir.ReturnStmt([a, b], SPAN)
    assert ret.values == (a, b) and ret.value == (a, b) and ret.span == SPAN
    yielded = ir.YieldStmt([b], SPAN)
    assert yielded.values == (b,) and yielded.span == SPAN
    branch = ir.IfStmt(ir.Lt(a, b, ir.DataType.BOOL, SPAN), assign, None, [], SPAN)
    assert branch.return_vars == () and branch.span == SPAN
    assert branch.condition is branch.cond
    assert ir.SeqStmts([assign, ret], SPAN).stmts == (assign, ret)


def test_lists_become_tuples_so_nodes_stay_hashable() -> None:
    a = ir.Var("a", I64)
    nodes = [ir.SeqStmts([ir.ReturnStmt([a])]), ir.YieldStmt([a]), ir.IfStmt(a, ir.YieldStmt([a]), None, [a])]
    for node in nodes:
        hash(node)
        with pytest.raises(dataclasses.FrozenInstanceError):
            node.span = SPAN  # type: ignore[misc]


def test_loops_take_pypto_positional_order() -> None:
    i, n = ir.Var("i", I64), ir.Var("n", I64)
    acc = ir.IterArg("acc", I64, ir.ConstInt(0, ir.DataType.INDEX, SPAN), SPAN)
    total = ir.Var("total", I64)
    body = ir.YieldStmt([ir.Add(acc, i, ir.DataType.INT64, SPAN)], SPAN)
    zero, one = ir.ConstInt(0), ir.ConstInt(1)
    loop = ir.ForStmt(i, zero, n, one, [acc], body, [total], SPAN, ir.ForKind.Parallel)
    assert loop.iter_args == (acc,) and loop.body is body and loop.return_vars == (total,)
    assert loop.kind is ir.ForKind.Parallel and loop.span == SPAN
    assert acc.init_value == ir.ConstInt(0) and acc.span == SPAN
    assert acc.name_hint == "acc"
    text = ir.python_print(loop)
    assert text.startswith("for i, (acc,) in pl.parallel(n, init_values=(0,)):")
    assert ir.python_print(ir.ForStmt(i, zero, n, one, (), body=ir.BreakStmt(SPAN), span=SPAN)).startswith(
        "for i in pl.range(n):"
    )
    spin = ir.WhileStmt(ir.Lt(i, n, None, SPAN), [], ir.BreakStmt(SPAN), [], SPAN)
    assert spin.condition is spin.cond and spin.iter_args == () and isinstance(spin.body, ir.BreakStmt)
    assert ir.python_print(spin).startswith("while i < n:")


def test_operator_classes_are_views_of_the_expression_nodes() -> None:
    a, b = ir.Var("a", I64), ir.Var("b", I64)
    eq = ir.Eq(a, b, ir.DataType.BOOL, SPAN)
    assert type(eq) is ir.BinaryExpr and eq.op is ir.BinOp.Eq and eq.span == SPAN
    assert isinstance(eq, ir.Eq) and not isinstance(eq, ir.Lt) and isinstance(eq, ir.Expr)
    assert (eq.left, eq.right) == (a, b)
    neg = ir.Neg(a, ir.DataType.INT64, SPAN)
    assert type(neg) is ir.UnaryExpr and isinstance(neg, ir.Neg) and not isinstance(neg, ir.Not)
    assert ir.python_print(ir.BitShiftLeft(a, ir.FloorMod(b, a), None)) == "a << b % a"
    assert isinstance(eq, ir.IRNode)


@pytest.mark.parametrize(
    ("builder", "view"),
    [("add", "Add"), ("truediv", "FloatDiv"), ("mod", "FloorMod"), ("min_", "Min"), ("bit_shift_left", "BitShiftLeft"), ("ge", "Ge")],
)
def test_expression_builder_functions_build_what_their_view_class_builds(builder: str, view: str) -> None:
    a, b = ir.Var("a", I64), ir.Var("b", I64)
    built = getattr(ir, builder)(a, b, SPAN)
    ir.assert_structural_equal(built, getattr(ir, view)(a, b, None, SPAN))
    assert built.span == SPAN and isinstance(built, getattr(ir, view))


def test_unary_builder_functions() -> None:
    a = ir.Var("a", I64)
    assert ir.python_print(ir.neg(a)) == "-a" and isinstance(ir.not_(a), ir.Not) and isinstance(ir.bit_not(a), ir.BitNot)


def test_hierarchy_and_split_fields_of_scopes() -> None:
    body = ir.AssignStmt(ir.Var("x", I64), ir.ConstInt(1), SPAN)
    host = ir.HierarchyScopeStmt(level=ir.Level.HOST, role=ir.Role.SubWorker, body=body, span=SPAN)
    assert host.scope_kind is ir.ScopeKind.Hierarchy
    assert (host.level, host.role, host.split) == (ir.Level.HOST, ir.Role.SubWorker, ir.SplitMode.NONE)
    assert ir.python_print(host).startswith("with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker):")
    assert ir.HierarchyScopeStmt(level=ir.Level.GLOBAL, body=body).role is None
    incore = ir.InCoreScopeStmt(split=ir.SplitMode.LEFT_RIGHT, body=body)
    assert incore.level is ir.Level.CORE_GROUP and incore.split is ir.SplitMode.LEFT_RIGHT
    assert not ir.structural_equal(incore, ir.InCoreScopeStmt(split=ir.SplitMode.UP_DOWN, body=body))


def test_split_aiv_regions_build_print_and_parse_back() -> None:
    x = ir.Var("x", ir.ScalarType(ir.DataType.INDEX))
    body = ir.SeqStmts([ir.AssignStmt(x, ir.ConstInt(1))])
    region = ir.SplitAivScopeStmt(split=ir.SplitMode.UP_DOWN, body=body, span=SPAN)
    assert isinstance(region, ir.SplitAivScopeStmt) and region.scope_kind is ir.ScopeKind.SplitAiv
    assert (region.split, region.count) == (ir.SplitMode.UP_DOWN, 2)
    text = ir.python_print(region)
    assert text.startswith("for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):")  # the lane, named as PyPTO names it
    source = (
        "import nanopto.language as pl\n"
        "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def main(self) -> pl.Scalar[pl.INT64]:\n"
        "        x: pl.Scalar[pl.INDEX] = 0\n"
        + "".join("        " + line + "\n" for line in text.splitlines())
        + "        return x\n"
    )
    parsed = ir.parse_program(source).get_function("main")
    assert parsed is not None
    reparsed = parsed.body.stmts[1]
    assert isinstance(reparsed, ir.ScopeStmt)  # the parser binds the lane first, as PyPTO's does
    ir.assert_structural_equal(ir.SeqStmts(reparsed.body.stmts[1:]), region.body)
    with pytest.raises(ir.IRInvariantError, match="2 lanes"):
        ir.SplitAivScopeStmt(split=ir.SplitMode.NONE, count=4, body=region.body)


def test_without_auto_mapping_only_defined_vars_are_renamed() -> None:
    a1, b1, a2, b2 = (ir.Var(name, I64) for name in "abab")
    first = ir.AssignStmt(a1, ir.Add(b1, b1, None))
    second = ir.AssignStmt(a2, ir.Add(b2, b2, None))
    same_free = ir.AssignStmt(a2, ir.Add(b1, b1, None))
    assert not ir.structural_equal(first, second)  # PyPTO's default: b1 and b2 are free
    assert ir.structural_equal(first, second, enable_auto_mapping=True)  # every Var is renamed
    assert ir.structural_equal(first, same_free)  # a1 -> a2 is a definition
    assert ir.structural_hash(first) == ir.structural_hash(same_free)
    assert ir.structural_hash(first) != ir.structural_hash(second)
    assert ir.structural_hash(first, enable_auto_mapping=True) == ir.structural_hash(second, enable_auto_mapping=True)
    with pytest.raises(AssertionError, match="free Vars differ"):
        ir.assert_structural_equal(first, second)


def test_pypto_spellings_of_fields_and_overloads() -> None:
    span = ir.Span("s.py", 7, 2, 7, 9)
    assert (span.begin_line, span.begin_column, span.end_line, span.end_column) == (7, 3, 7, 10)  # col and end_col are 0-based; PyPTO's names read 1-based
    empty = ir.YieldStmt(span)  # PyPTO's YieldStmt(span): no values
    assert empty.values == () and empty.span == span
    assert ir.ReturnStmt(span).values == ()
    acc = ir.IterArg("acc", I64, ir.ConstInt(3), span)
    assert acc.initValue == ir.ConstInt(3)
    assert ir.SpmdScopeStmt(core_num=8, body=ir.BreakStmt()).core_num == ir.ConstInt(8)
    array = ir.ArrayType(ir.DataType.INT32, 4)  # PyPTO's order: dtype, then size
    assert (array.dtype, array.size) == (ir.DataType.INT32, ir.ConstInt(4))
    assert ir.python_print_type(array) == "pl.Array[4, pl.INT32]"
    assert ir.TensorType([64, 8], ir.DataType.FP32).shape == (ir.ConstInt(64), ir.ConstInt(8))


def test_a_structural_mismatch_is_both_an_assertion_and_a_value_error() -> None:
    a = ir.Var("a", I64)
    with pytest.raises(ValueError, match="ForKind"):
        ir.assert_structural_equal(
            ir.ForStmt(a, ir.ConstInt(0), a, ir.ConstInt(1), [], ir.BreakStmt(), kind=ir.ForKind.Parallel),
            ir.ForStmt(a, ir.ConstInt(0), a, ir.ConstInt(1), [], ir.BreakStmt()),
        )
    assert issubclass(ir.StructuralMismatchError, AssertionError)


def test_serialize_round_trips_with_fresh_vars_and_spans() -> None:
    source = (
        "import nanopto.language as pl\n"
        "@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n"
        "    def f(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n"
        "        for i, (acc,) in pl.range(3, init_values=(x,)):\n"
        "            y: pl.Tensor[[4], pl.FP32] = pl.add(acc, acc)\n"
        "            acc_next = pl.yield_(y)\n"
        "        with pl.at(level=pl.Level.CORE_GROUP, name_hint='k'):\n"
        "            z: pl.Tensor[[4], pl.FP32] = pl.mul(acc_next, x)\n"
        "        return z\n"
    )
    program = ir.parse_program(source)
    data = ir.serialize(program)
    restored = ir.deserialize(data)
    ir.assert_structural_equal(restored, program)
    assert ir.python_print(restored) == ir.python_print(program)
    assert ir.serialize(restored) == data  # Vars are named by occurrence, not by id
    old_ids = {v.id for v in walk(program) if isinstance(v, ir.Var)}
    assert not old_ids & {v.id for v in walk(restored) if isinstance(v, ir.Var)}
    f = restored.get_function("f")
    assert f is not None and f.span == program.functions["f"].span
    assert ir.structural_equal(restored, program, enable_auto_mapping=False)  # a program defines all its Vars
    with pytest.raises(ValueError, match="not a serialized"):
        ir.deserialize(b'{"format": "other"}')


def test_functions_take_pypto_positional_order_and_bare_vars() -> None:
    x, y = ir.Var("x", I64), ir.Var("y", I64)
    body = ir.SeqStmts([ir.AssignStmt(y, ir.Mul(x, x, None)), ir.ReturnStmt([y])])
    fn = ir.Function("sq", [x, (y, ir.ParamDirection.Out)], [I64], body, SPAN, type=ir.FunctionType.Inline)
    assert fn.params == (x, y) and fn.params[0] is x
    assert fn.param_directions == (ir.ParamDirection.In, ir.ParamDirection.Out)
    assert [(p.var, p.direction) for p in fn.param_list] == list(zip(fn.params, fn.param_directions, strict=True))
    rebuilt = ir.Function("sq", fn.params, [I64], body, SPAN, param_directions=fn.param_directions)
    assert rebuilt.param_list == fn.param_list
    assert fn.return_types == (I64,) and fn.body is body and fn.span == SPAN
    assert fn.type is fn.func_type is ir.FunctionType.Inline
    assert ir.Function("f", (), body=body, func_type=ir.FunctionType.InCore).func_type is ir.FunctionType.InCore
    assert dataclasses.replace(fn, name="cube").param_list == fn.param_list
    with pytest.raises(TypeError, match="needs a body"):
        ir.Function("empty", [x], [I64])


def test_calls_take_a_pypto_op_and_a_trailing_span() -> None:
    x = ir.Var("x", I64)
    call = ir.Call(ir.Op("add"), [x, x], SPAN)
    assert call.op == "add" and call.op.name == "add" and isinstance(call.op, ir.Op)
    assert call.args == (x, x) and call.kwargs == () and call.span == SPAN
    assert ir.python_print(call) == "pl.add(x, x)"
    hash(call)


def test_a_built_hierarchy_scope_is_the_parsed_one() -> None:
    source = (
        "import nanopto.language as pl\n"
        "@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n"
        "        with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):\n"
        "            b: pl.Tensor[[4], pl.FP32] = pl.add(a, a)\n"
        "        return b\n"
    )
    main = ir.parse_program(source).get_function("main")
    assert main is not None
    parsed = main.body.stmts[0]
    assert isinstance(parsed, ir.HierarchyScopeStmt)
    assert (parsed.level, parsed.role, parsed.split, parsed.count) == (ir.Level.HOST, ir.Role.Orchestrator, ir.SplitMode.NONE, None)
    built = ir.HierarchyScopeStmt(level=ir.Level.HOST, role=ir.Role.Orchestrator, body=parsed.body)
    ir.assert_structural_equal(built, parsed)
