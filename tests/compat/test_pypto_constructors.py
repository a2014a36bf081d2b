"""Building IR by hand as PyPTO does: positional constructors ending in a span, PyPTO's field and
class names, and structural comparison with and without auto-mapping."""

from __future__ import annotations

import dataclasses

import pytest

from nanopto import ir

SPAN = ir.Span("built.py", 3, 4, 3, 20)
I64 = ir.ScalarType(ir.DataType.INT64)


def test_leaf_and_statement_constructors_take_the_span_last() -> None:
    a, b = ir.Var("a", I64, SPAN), ir.Var("b", I64, SPAN)
    assign = ir.AssignStmt(a, b, SPAN)
    assert assign.span == SPAN and assign.annotated is False
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
    assert text.startswith("for _ in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):")
    source = (
        "import nanopto.language as pl\n"
        "@pl.program\nclass P:\n    @pl.function\n    def main(self) -> pl.Scalar[pl.INT64]:\n"
        "        x: pl.Scalar[pl.INDEX] = 0\n"
        + "".join("        " + line + "\n" for line in text.splitlines())
        + "        return x\n"
    )
    parsed = ir.parse_program(source).get_function("main")
    assert parsed is not None
    ir.assert_structural_equal(parsed.body.stmts[1], region)
    with pytest.raises(ValueError, match="2 lanes"):
        ir.SplitAivScopeStmt(split=ir.SplitMode.NONE, count=4, body=region.body)


def test_auto_mapping_off_renames_only_what_is_defined() -> None:
    a1, b1, a2, b2 = (ir.Var(name, I64) for name in "abab")
    first = ir.AssignStmt(a1, ir.Add(b1, b1, None))
    second = ir.AssignStmt(a2, ir.Add(b2, b2, None))
    same_free = ir.AssignStmt(a2, ir.Add(b1, b1, None))
    assert ir.structural_equal(first, second)  # nanopto's default: every Var is renamed
    assert not ir.structural_equal(first, second, enable_auto_mapping=False)  # b1 and b2 are free
    assert ir.structural_equal(first, same_free, enable_auto_mapping=False)  # a1 -> a2 is a definition
    assert ir.structural_hash(first, enable_auto_mapping=False) == ir.structural_hash(same_free, enable_auto_mapping=False)
    assert ir.structural_hash(first, enable_auto_mapping=False) != ir.structural_hash(second, enable_auto_mapping=False)
    assert ir.structural_hash(first) == ir.structural_hash(second)
    with pytest.raises(AssertionError, match="free Vars differ"):
        ir.assert_structural_equal(first, second, enable_auto_mapping=False)
