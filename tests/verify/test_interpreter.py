"""The reference interpreter is the oracle every pass is tested against, so it is tested first.

Programs are built by hand here (spans too, so error locations can be checked). The cases are
the `pl` semantics inlining can get wrong: rebinding versus writing (the seed's `twice` and
`bump` examples), writes through views and Out parameters, and every statement form a spliced
body can contain.
"""

from __future__ import annotations

import re
import time
import warnings
from typing import Any

import numpy as np
import pytest

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    BreakStmt,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ContinueStmt,
    EvalStmt,
    Expr,
    ForKind,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    Keyword,
    MakeTuple,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    SliceExpr,
    Span,
    Stmt,
    Submit,
    Symbol,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal

# ---------------------------------------------------------------------------------------------
# A few builders, so each program reads close to the `pl` source it stands for
# ---------------------------------------------------------------------------------------------


def at(line: int) -> Span:
    return Span("t.py", line, 4)


def lit(value: int | float | bool) -> Expr:
    if isinstance(value, bool):
        return ConstBool(value)
    if isinstance(value, int):
        return ConstInt(value)
    return ConstFloat(value)


def as_expr(value: Expr | int | float | bool) -> Expr:
    return value if isinstance(value, Expr) else lit(value)


def op(name: str, *args: Expr | int | float, line: int | None = None, **kwargs: Expr) -> Call:
    return Call(
        name,
        tuple(as_expr(a) for a in args),
        tuple(Keyword(k, v) for k, v in kwargs.items()),
        span=None if line is None else at(line),
    )


def call(name: str, *args: Expr | int, line: int | None = None) -> Call:
    return Call(name, tuple(as_expr(a) for a in args), function=True, span=None if line is None else at(line))


def ints(*values: Expr | int) -> MakeTuple:
    return MakeTuple(tuple(as_expr(v) for v in values), is_list=True)


def binop(kind: BinOp, lhs: Expr | int | float | bool, rhs: Expr | int | float | bool) -> BinaryExpr:
    return BinaryExpr(kind, as_expr(lhs), as_expr(rhs))


def assign(var: Var, value: Expr | int | float, line: int | None = None) -> AssignStmt:
    return AssignStmt(var, as_expr(value), span=None if line is None else at(line))


def ret(*values: Expr | int) -> ReturnStmt:
    return ReturnStmt(tuple(as_expr(v) for v in values))


def seq(*stmts: Stmt) -> SeqStmts:
    return SeqStmts(stmts)


def fn(
    name: str,
    params: list[Var | Param],
    *body: Stmt,
    func_type: FunctionType = FunctionType.Opaque,
) -> Function:
    return Function(
        name,
        tuple(p if isinstance(p, Param) else Param(p) for p in params),
        body=seq(*body),
        func_type=func_type,
    )


def program(*functions: Function) -> Program:
    return Program("P", functions)


def for_range(
    loop_var: Var,
    stop: Expr | int,
    *body: Stmt,
    start: Expr | int = 0,
    step: Expr | int = 1,
    iter_args: tuple[IterArg, ...] = (),
    return_vars: tuple[Var, ...] = (),
    kind: ForKind = ForKind.Sequential,
    line: int | None = None,
) -> ForStmt:
    return ForStmt(
        loop_var,
        as_expr(start),
        as_expr(stop),
        as_expr(step),
        iter_args,
        seq(*body),
        return_vars,
        kind=kind,
        span=None if line is None else at(line),
    )


def fresh(n: int = 4) -> np.ndarray[Any, Any]:
    return np.arange(1, n + 1, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# The seed's examples: rebinding a parameter is local, writing through it is not
# ---------------------------------------------------------------------------------------------


def _twice_program() -> Program:
    t = Var("t")
    twice = fn("twice", [t], assign(t, op("add", t, t)), ret(t), func_type=FunctionType.Inline)
    a, u, w = Var("a"), Var("u"), Var("w")
    main = fn("main", [a], assign(u, call("twice", a)), assign(w, op("add", a, u)), ret(w))
    return program(twice, main)


def test_twice_computes_3a_and_leaves_the_callers_a_unchanged() -> None:
    a = fresh()
    result = interpret(_twice_program(), "main", a)
    np.testing.assert_array_equal(result, 3 * fresh())
    np.testing.assert_array_equal(a, fresh())


def test_twice_correct_expansion_matches_and_the_wrong_one_is_caught() -> None:
    # The seed's expansion binds `t_inline0 = a` first; substituting `a` at the def-site instead
    # would rebind the caller's `a` and compute 4A. The oracle must tell the two apart.
    a, u, w, t0 = Var("a"), Var("u"), Var("w"), Var("t_inline0")
    right = fn(
        "main",
        [a],
        assign(t0, a),
        assign(t0, op("add", t0, t0)),
        assign(u, t0),
        assign(w, op("add", a, u)),
        ret(w),
    )
    wrong = fn("main", [a], assign(a, op("add", a, a)), assign(u, a), assign(w, op("add", a, u)), ret(w))
    before = interpret(_twice_program(), "main", fresh())
    assert values_equal(before, interpret(program(right), "main", fresh()))
    assert not values_equal(before, interpret(program(wrong), "main", fresh()))
    np.testing.assert_array_equal(interpret(program(wrong), "main", fresh()), 4 * fresh())


def test_bump_rebinding_a_scalar_parameter_stays_in_the_callee() -> None:
    n = Var("n")
    bump = fn("bump", [n], assign(n, binop(BinOp.Add, n, 1)), ret(n), func_type=FunctionType.Inline)
    k, m = Var("k"), Var("m")
    main = fn("main", [k], assign(m, call("bump", k)), ret(binop(BinOp.Add, k, m)))
    assert interpret(program(bump, main), "main", 5) == 11  # k + (k + 1)

    k2, m2 = Var("k"), Var("m")
    wrong = fn(
        "main", [k2], assign(k2, binop(BinOp.Add, k2, 1)), assign(m2, k2), ret(binop(BinOp.Add, k2, m2))
    )
    assert interpret(program(wrong), "main", 5) == 12  # 2k + 2: what def-site substitution computes


# ---------------------------------------------------------------------------------------------
# Aliasing: views, Out / InOut parameters, bare assignment
# ---------------------------------------------------------------------------------------------


def test_a_write_through_a_slice_view_reaches_the_source() -> None:
    a, row, ones = Var("a"), Var("row"), Var("ones")
    main = fn(
        "main",
        [a, ones],
        # row = a[1, 0:2]; row = pl.tensor.assemble(row, ones, [0])
        assign(row, op("subscript", a, 1, SliceExpr(ConstInt(0), ConstInt(2)))),
        assign(row, op("tensor.assemble", row, ones, ints(0))),
    )
    buf = np.zeros((3, 4), dtype=np.float32)
    assert interpret(program(main), "main", buf, np.ones(2, dtype=np.float32)) is None
    expected = np.zeros((3, 4), dtype=np.float32)
    expected[1, 0:2] = 1
    np.testing.assert_array_equal(buf, expected)


def test_a_parsed_subscript_is_a_slice_view_and_a_write_through_it_reaches_the_source() -> None:
    """`a[1]` parses to `pl.tensor.slice(a, ...)` (docs/coming-from-pypto.md#subscripts), a view:
    a write through it lands in `a`; `a[1, 2]` is `pl.tensor.read`, a Python scalar."""
    from nanopto.ir_terms.parser import parse_program

    source = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.InOut[pl.Tensor[[3, 4], pl.FP32]], v: pl.Tensor[[2], pl.FP32]) -> pl.Scalar[pl.FP32]:
        row = a[1]
        row[1:3] = v
        return a[1, 2]
"""
    buf = np.zeros((3, 4), dtype=np.float32)
    value = interpret(parse_program(source), "main", buf, np.array([5.0, 7.0], dtype=np.float32))
    expected = np.zeros((3, 4), dtype=np.float32)
    expected[1, 1:3] = [5.0, 7.0]
    np.testing.assert_array_equal(buf, expected)
    assert value == 7.0


def test_a_full_rank_subscript_reads_a_python_scalar() -> None:
    a = Var("a")
    value = interpret(program(fn("main", [a], ret(op("subscript", a, 1, 2)))), "main", np.eye(3))
    assert value == 0.0 and isinstance(value, float)


def test_assemble_on_an_out_parameter_mutates_the_callers_array() -> None:
    # The helper writes through its Out param; the caller's buffer is the same object throughout.
    x, out = Var("x"), Var("out")
    writeout = fn(
        "writeout",
        [x, Param(out, ParamDirection.Out)],
        assign(out, op("tensor.assemble", out, op("add", x, x), ints(0, 0))),
        ret(out),
        func_type=FunctionType.Inline,
    )
    a, dst, r = Var("a"), Var("dst"), Var("r")
    main = fn("main", [a, Param(dst, ParamDirection.Out)], assign(r, call("writeout", a, dst)), ret(r))
    src = np.ones((2, 2), dtype=np.float32)
    buf = np.zeros((4, 4), dtype=np.float32)
    result = interpret(program(writeout, main), "main", src, buf)
    assert result is buf
    np.testing.assert_array_equal(buf[:2, :2], 2 * np.ones((2, 2)))
    assert buf[2:, :].sum() == 0


def test_a_bare_assignment_to_an_out_parameter_writes_nothing() -> None:
    a, out = Var("a"), Var("out")
    main = fn("main", [a, Param(out, ParamDirection.Out)], assign(out, op("add", a, a)), ret(out))
    buf = np.zeros(4, dtype=np.float32)
    result = interpret(program(main), "main", fresh(), buf)
    np.testing.assert_array_equal(result, 2 * fresh())
    np.testing.assert_array_equal(buf, np.zeros(4))
    assert result is not buf


def test_assignment_never_copies() -> None:
    a, b = Var("a"), Var("b")
    main = fn(
        "main", [a], assign(b, a), assign(b, op("tensor.assemble", b, op("mul", b, b), ints(0))), ret(a)
    )
    arr = fresh()
    assert interpret(program(main), "main", arr) is arr
    np.testing.assert_array_equal(arr, fresh() ** 2)


def test_tile_load_and_store_round_trip_with_keyword_arguments() -> None:
    a, out, t = Var("a"), Var("out"), Var("t")
    kernel = fn(
        "kernel",
        [a, Param(out, ParamDirection.Out)],
        assign(t, op("tile.load", a, offsets=ints(1, 2), shapes=ints(2, 2))),
        assign(t, op("tile.mul", t, t)),
        assign(out, op("tile.store", t, ints(0, 0), out)),
        ret(out),
    )
    src = np.arange(16, dtype=np.float32).reshape(4, 4)
    buf = np.zeros((2, 2), dtype=np.float32)
    interpret(program(kernel), "kernel", src, buf)
    np.testing.assert_array_equal(buf, src[1:3, 2:4] ** 2)
    np.testing.assert_array_equal(src, np.arange(16).reshape(4, 4))  # the load copied


def test_array_update_element_in_a_helper_reaches_the_callers_array() -> None:
    arr, i, v = Var("arr"), Var("i"), Var("v")
    put = fn(
        "put",
        [arr, i, v],
        assign(arr, op("array.update_element", arr, i, v)),
        ret(arr),
        func_type=FunctionType.Inline,
    )
    xs, r = Var("xs"), Var("r")
    main = fn(
        "main",
        [],
        assign(xs, op("array.create", 4, Symbol("INT32"))),
        EvalStmt(call("put", xs, 1, 7)),
        assign(r, call("put", xs, 3, 9)),
        ret(xs, r),
    )
    xs_val, r_val = interpret(program(put, main), "main")
    assert xs_val is r_val
    assert xs_val.dtype == np.int32
    assert xs_val.tolist() == [0, 7, 0, 9]


def test_symbols_evaluate_to_data_types_and_other_paths_to_strings() -> None:
    t = Var("t")
    main = fn(
        "main",
        [],
        assign(t, op("create_tensor", ints(2, 3), dtype=Symbol("FP16"))),
        ret(t, Symbol("Level.CORE_GROUP")),
    )
    tensor, level = interpret(program(main), "main")
    assert tensor.dtype == DataType.FP16.numpy() and tensor.shape == (2, 3)
    assert level == "Level.CORE_GROUP"


# ---------------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "lhs", "rhs", "expected"),
    [
        (BinOp.Add, 2, 3, 5),
        (BinOp.Sub, 2, 3, -1),
        (BinOp.Mul, 4, 3, 12),
        (BinOp.FloorDiv, -7, 2, -4),
        (BinOp.FloorMod, -7, 2, 1),
        (BinOp.FloatDiv, 7, 2, 3.5),
        (BinOp.Pow, 2, 10, 1024),
        (BinOp.Eq, 3, 3, True),
        (BinOp.Ne, 3, 3, False),
        (BinOp.Lt, 2, 3, True),
        (BinOp.Ge, 2, 3, False),
        (BinOp.And, True, False, False),
        (BinOp.Or, False, True, True),
        (BinOp.Xor, 6, 3, 5),
        (BinOp.BitAnd, 6, 3, 2),
        (BinOp.BitOr, 6, 3, 7),
        (BinOp.BitShiftLeft, 1, 4, 16),
        (BinOp.BitShiftRight, 16, 2, 4),
        (BinOp.Min, 2, -3, -3),
        (BinOp.Max, 2, -3, 2),
        (BinOp.Add, 1.5, 2, 3.5),
    ],
)
def test_binary_operators_on_scalars(kind: BinOp, lhs: Any, rhs: Any, expected: Any) -> None:
    result = interpret(program(fn("main", [], ret(binop(kind, lhs, rhs)))), "main")
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize(
    ("kind", "operand", "expected"),
    [(UnOp.Neg, 3, -3), (UnOp.Not, True, False), (UnOp.BitNot, 5, -6), (UnOp.Abs, -2.5, 2.5)],
)
def test_unary_operators_on_scalars(kind: UnOp, operand: Any, expected: Any) -> None:
    assert interpret(program(fn("main", [], ret(UnaryExpr(kind, lit(operand))))), "main") == expected


def test_operators_apply_elementwise_to_arrays() -> None:
    a, b = Var("a"), Var("b")
    main = fn(
        "main",
        [a, b],
        ret(
            binop(BinOp.Max, a, b),
            binop(BinOp.FloorMod, a, 3),
            UnaryExpr(UnOp.Abs, UnaryExpr(UnOp.Neg, a)),
            binop(BinOp.And, binop(BinOp.Gt, a, 1), binop(BinOp.Lt, b, 4)),
        ),
    )
    x, y = np.array([1, 5, -4]), np.array([2, 2, 2])
    mx, mod, ab, both = interpret(program(main), "main", x, y)
    assert mx.tolist() == [2, 5, 2]
    assert mod.tolist() == [1, 2, 2]
    assert ab.tolist() == [1, 5, 4]
    assert both.tolist() == [False, True, False]


# ---------------------------------------------------------------------------------------------
# Returns, calls, tuples
# ---------------------------------------------------------------------------------------------


def test_multiple_return_values_and_tuple_items() -> None:
    x = Var("x")
    pair = fn("pair", [x], ret(x, binop(BinOp.Mul, x, 2)), func_type=FunctionType.Inline)
    k, tmp, p, q = Var("k"), Var("tmp"), Var("p"), Var("q")
    main = fn(
        "main",
        [k],
        assign(tmp, call("pair", k)),
        assign(p, TupleGetItemExpr(tmp, 0)),
        assign(q, TupleGetItemExpr(tmp, 1)),
        ret(binop(BinOp.Sub, q, p)),
    )
    assert interpret(program(pair, main), "main", 7) == 7
    assert interpret(program(pair), "pair", 3) == (3, 6)


def test_a_function_without_return_returns_none() -> None:
    assert interpret(program(fn("main", [], EvalStmt(lit(1)))), "main") is None
    assert interpret(program(fn("main", [], ReturnStmt())), "main") is None


def test_return_leaves_loops_and_branches() -> None:
    i, n = Var("i"), Var("n")
    main = fn(
        "main",
        [n],
        for_range(i, n, IfStmt(binop(BinOp.Eq, i, 3), seq(ret(binop(BinOp.Mul, i, 10))))),
        ret(-1),
    )
    assert interpret(program(main), "main", 10) == 30
    assert interpret(program(main), "main", 2) == -1


def test_submit_runs_the_callee_synchronously_and_yields_its_results_and_task_id() -> None:
    a, out = Var("a"), Var("out")
    kernel = fn(
        "kernel",
        [a, Param(out, ParamDirection.Out)],
        assign(out, op("tensor.assemble", out, op("add", a, a), ints(0))),
        ret(out),
    )
    x, buf, r1, r2 = Var("x"), Var("buf"), Var("r1"), Var("r2")
    main = fn(
        "main",
        [x, Param(buf, ParamDirection.Out)],
        assign(r1, Submit("kernel", (x, buf))),
        assign(r2, Submit("kernel", (buf, buf), (Keyword("deps", ints(TupleGetItemExpr(r1, 1))),))),
        ret(TupleGetItemExpr(r1, 1), TupleGetItemExpr(r2, 1)),
    )
    dst = np.zeros(4, dtype=np.float32)
    assert interpret(program(kernel, main), "main", fresh(), dst) == (0, 1)
    np.testing.assert_array_equal(dst, 4 * fresh())


# ---------------------------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------------------------


def test_if_with_return_vars_binds_the_taken_branchs_yield() -> None:
    c, y = Var("c"), Var("y")
    main = fn(
        "main",
        [c],
        IfStmt(c, seq(YieldStmt((lit(1),))), seq(YieldStmt((lit(2),))), (y,)),
        ret(y),
    )
    assert interpret(program(main), "main", True) == 1
    assert interpret(program(main), "main", False) == 2


def test_if_without_else_or_return_vars_just_runs() -> None:
    c, x = Var("c"), Var("x")
    main = fn("main", [c], assign(x, 0), IfStmt(c, seq(assign(x, 5))), ret(x))
    assert interpret(program(main), "main", True) == 5
    assert interpret(program(main), "main", False) == 0


def test_for_with_iter_args_carries_yields_and_binds_return_vars() -> None:
    n, i, total = Var("n"), Var("i"), Var("total")
    acc = IterArg("acc", init_value=lit(100))
    main = fn(
        "main",
        [n],
        for_range(i, n, YieldStmt((binop(BinOp.Add, acc, i),)), iter_args=(acc,), return_vars=(total,)),
        ret(total),
    )
    assert interpret(program(main), "main", 5) == 110


def test_a_zero_iteration_loop_binds_the_init_values() -> None:
    n, i, total = Var("n"), Var("i"), Var("total")
    acc = IterArg("acc", init_value=lit(100))
    main = fn(
        "main",
        [n],
        for_range(i, n, YieldStmt((binop(BinOp.Add, acc, 1),)), iter_args=(acc,), return_vars=(total,)),
        ret(total),
    )
    assert interpret(program(main), "main", 0) == 100


def test_for_start_stop_negative_step_and_parallel_kinds() -> None:
    i, out = Var("i"), Var("out")
    main = fn(
        "main",
        [Param(out, ParamDirection.Out)],
        for_range(
            i, -1, assign(out, op("array.update_element", out, i, binop(BinOp.Mul, i, i))), start=3, step=-2
        ),
        for_range(
            i, 4, assign(out, op("array.update_element", out, i, 7)), start=2, step=2, kind=ForKind.Parallel
        ),
    )
    buf = np.zeros(4, dtype=np.int64)
    interpret(program(main), "main", buf)
    assert buf.tolist() == [0, 1, 7, 9]


def test_break_and_continue_in_a_for_loop() -> None:
    # for i in pl.range(10): if i == 6: break; if i % 2 == 1: continue; acc = acc + i
    i, acc = Var("i"), Var("acc")
    main = fn(
        "main",
        [],
        assign(acc, 0),
        for_range(
            i,
            10,
            IfStmt(binop(BinOp.Eq, i, 6), seq(BreakStmt())),
            IfStmt(binop(BinOp.Eq, binop(BinOp.FloorMod, i, 2), 1), seq(ContinueStmt())),
            assign(acc, binop(BinOp.Add, acc, i)),
        ),
        ret(acc),
    )
    assert interpret(program(main), "main") == 0 + 2 + 4


def test_break_binds_return_vars_to_the_current_iter_args() -> None:
    i, result = Var("i"), Var("result")
    acc = IterArg("acc", init_value=lit(0))
    main = fn(
        "main",
        [],
        for_range(
            i,
            10,
            IfStmt(binop(BinOp.Eq, i, 3), seq(BreakStmt())),
            YieldStmt((binop(BinOp.Add, acc, 10),)),
            iter_args=(acc,),
            return_vars=(result,),
        ),
        ret(result),
    )
    assert interpret(program(main), "main") == 30


def test_natural_while_with_break_and_continue() -> None:
    # i = 0; s = 0; while i < 100: i = i + 1; if i == 3: continue; if i > 5: break; s = s + i
    i, s = Var("i"), Var("s")
    main = fn(
        "main",
        [],
        assign(i, 0),
        assign(s, 0),
        WhileStmt(
            binop(BinOp.Lt, i, 100),
            (),
            seq(
                assign(i, binop(BinOp.Add, i, 1)),
                IfStmt(binop(BinOp.Eq, i, 3), seq(ContinueStmt())),
                IfStmt(binop(BinOp.Gt, i, 5), seq(BreakStmt())),
                assign(s, binop(BinOp.Add, s, i)),
            ),
        ),
        ret(s, i),
    )
    assert interpret(program(main), "main") == (1 + 2 + 4 + 5, 6)


def test_while_with_iter_args_and_yield() -> None:
    # for (x,) in pl.while_(init_values=(0,)): pl.cond(x < n); x_next = pl.yield_(x + 3)
    n, x_next = Var("n"), Var("x_next")
    x = IterArg("x", init_value=lit(0))
    main = fn(
        "main",
        [n],
        WhileStmt(
            binop(BinOp.Lt, x, n),
            body=seq(YieldStmt((binop(BinOp.Add, x, 3),))),
            iter_args=(x,),
            return_vars=(x_next,),
            natural=False,
        ),
        ret(x_next),
    )
    assert interpret(program(main), "main", 10) == 12
    assert interpret(program(main), "main", 0) == 0  # zero iterations: the init value


def test_pre_ssa_while_without_yield_carries_the_rebound_iter_arg() -> None:
    n, done = Var("n"), Var("done")
    x = IterArg("x", init_value=lit(1))
    main = fn(
        "main",
        [n],
        WhileStmt(
            binop(BinOp.Lt, x, n),
            body=seq(assign(x, binop(BinOp.Mul, x, 2))),
            iter_args=(x,),
            return_vars=(done,),
            natural=False,
        ),
        ret(done),
    )
    assert interpret(program(main), "main", 20) == 32


# ---------------------------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------------------------


def test_spmd_runs_the_body_once_per_block_with_get_block_idx() -> None:
    out, b = Var("out"), Var("b")
    main = fn(
        "main",
        [Param(out, ParamDirection.Out)],
        ScopeStmt(
            "spmd",
            seq(
                assign(b, op("tile.get_block_idx")),
                assign(out, op("array.update_element", out, b, binop(BinOp.Mul, b, 10))),
            ),
            args=(lit(4),),
        ),
    )
    buf = np.full(5, -1, dtype=np.int64)
    interpret(program(main), "main", buf)
    assert buf.tolist() == [0, 10, 20, 30, -1]


def test_spmd_for_form_binds_the_block_index_and_core_num_keyword() -> None:
    out, i = Var("out"), Var("i")
    main = fn(
        "main",
        [Param(out, ParamDirection.Out)],
        ScopeStmt(
            "spmd",
            seq(
                assign(out, op("array.update_element", out, i, binop(BinOp.Add, i, op("tile.get_block_idx"))))
            ),
            kwargs=(Keyword("core_num", lit(3)),),
            var=i,
            for_form=True,
        ),
    )
    buf = np.zeros(3, dtype=np.int64)
    interpret(program(main), "main", buf)
    assert buf.tolist() == [0, 2, 4]


def test_scopes_run_their_body_once_and_bind_task_ids() -> None:
    x, tid1, tid2 = Var("x"), Var("tid1"), Var("tid2")
    main = fn(
        "main",
        [],
        assign(x, 1),
        ScopeStmt(
            "at",
            seq(assign(x, binop(BinOp.Add, x, 1))),
            kwargs=(
                Keyword("level", Symbol("Level.CORE_GROUP")),
                Keyword("optimizations", ints(op("split"))),
            ),
            var=tid1,
        ),
        ScopeStmt("spmd", seq(assign(x, binop(BinOp.Mul, x, 3))), args=(lit(2),), var=tid2),
        ScopeStmt("scope", seq(assign(x, binop(BinOp.Add, x, 1)))),
        ret(x, tid1, tid2),
    )
    # Launch metadata (here an unregistered `pl.split`) is not evaluated.
    assert interpret(program(main), "main") == (19, 0, 1)


# ---------------------------------------------------------------------------------------------
# Errors name the op (or construct) and the source line
# ---------------------------------------------------------------------------------------------


def _raises(prog: Program, *args: Any, match: str, **options: Any) -> InterpreterError:
    with pytest.raises(InterpreterError, match=match) as info:
        interpret(prog, "main", *args, **options)
    return info.value


def test_shape_mismatch_names_the_op_and_line() -> None:
    a, b, c = Var("a"), Var("b"), Var("c")
    main = fn("main", [a, b], assign(c, op("add", a, b, line=7)), ret(c))
    err = _raises(
        program(main), fresh(4), fresh(2), match=r"t\.py:7:5: op 'pl\.add': operands do not broadcast"
    )
    assert err.span == at(7) and err.function == "main"
    # Shapes numpy would broadcast are still a mismatch for an elementwise `pl` op.
    _raises(program(main), np.ones((4, 1)), np.ones((1, 4)), match=r"t\.py:7:5: op 'pl\.add': shape mismatch")


def test_an_out_of_bounds_write_names_the_op_and_line() -> None:
    a, out = Var("a"), Var("out")
    main = fn("main", [a, out], assign(out, op("tensor.assemble", out, a, ints(2), line=9)), ret(out))
    _raises(
        program(main), fresh(4), np.zeros(4), match=r"t\.py:9:5: op 'pl\.tensor\.assemble': .*out of bounds"
    )


def test_an_expression_without_a_span_reports_its_statement() -> None:
    a, out = Var("a"), Var("out")
    main = fn("main", [a, out], assign(out, op("array.update_element", out, 9, a), line=4))
    _raises(program(main), 1, np.zeros(4), match=r"t\.py:4:5: op 'pl\.array\.update_element'")


def test_unknown_op_and_unknown_function() -> None:
    x = Var("x")
    _raises(
        program(fn("main", [], assign(x, op("frobnicate", line=3)))),
        match=r"t\.py:3:5: unknown op 'pl\.frobnicate'",
    )
    _raises(
        program(fn("main", [], assign(x, call("nowhere", line=5)))),
        match=r"t\.py:5:5: .*unknown function 'nowhere'",
    )
    with pytest.raises(InterpreterError, match="unknown function 'absent'"):
        interpret(program(fn("main", [])), "absent")


def test_unbound_variable() -> None:
    x, y = Var("x"), Var("y")
    _raises(
        program(fn("main", [], assign(y, x, line=2))),
        match=r"t\.py:2:5: variable 'x' is used before it is bound",
    )


def test_wrong_argument_counts() -> None:
    x = Var("x")
    callee = fn("callee", [x], ret(x))
    _raises(
        program(callee, fn("main", [], ret(call("callee", 1, 2, line=6)))),
        match=r"t\.py:6:5: .*takes 1 argument",
    )
    _raises(program(callee, fn("main", [], ret(call("callee", line=6)))), match=r"missing argument\(s\) 'x'")
    with pytest.raises(InterpreterError, match="takes 1 argument"):
        interpret(program(callee), "callee", 1, 2)


def test_a_zero_step_is_an_error() -> None:
    i = Var("i")
    _raises(
        program(fn("main", [], for_range(i, 4, step=0, line=8))),
        match=r"t\.py:8:5: loop step must not be zero",
    )


def test_a_runaway_loop_exhausts_the_step_budget() -> None:
    body = WhileStmt(ConstBool(True), (), seq(), span=at(3))
    _raises(program(fn("main", [], body)), match=r"t\.py:3:5: step budget of 1000 exhausted", max_steps=1000)


def test_recursion_is_an_interpreter_error_with_the_call_chain() -> None:
    n = Var("n")
    loop = fn("loop", [n], ret(call("loop", binop(BinOp.Add, n, 1), line=11)), func_type=FunctionType.Inline)
    m = Var("m")
    main = fn("main", [m], ret(call("loop", m, line=20)))
    err = _raises(program(loop, main), 0, match=r"call depth limit of 64")
    assert err.call_stack[0] == ("main", at(20))
    assert "called from 'loop' at t.py:11:5" in str(err)


def test_recursion_through_loops_and_branches_is_an_interpreter_error() -> None:
    # Each call here costs many Python frames, so Python's own limit may come first; either way
    # the failure is an InterpreterError naming the recursive call chain.
    n, i = Var("n"), Var("i")
    body = for_range(i, 1, IfStmt(lit(True), seq(ret(call("loop", binop(BinOp.Add, n, 1), line=11)))))
    loop = fn("loop", [n], body)
    main = fn("main", [n], ret(call("loop", n)))
    err = _raises(program(loop, main), 0, match=r"call depth limit|nests too deeply")
    assert "called from 'loop' at t.py:11:5" in str(err)


def test_nesting_too_deep_for_python_is_an_interpreter_error_not_recursion_error() -> None:
    expr: Expr = lit(1)
    for _ in range(5000):
        expr = UnaryExpr(UnOp.Neg, expr)
    _raises(program(fn("main", [], ret(expr))), match="nests too deeply for Python's stack")


def test_a_while_condition_failing_after_the_body_is_reported_at_the_loop() -> None:
    # The body turns `x` into a tensor, so the second evaluation of `x < 3` is not a scalar.
    x = Var("x")
    body = seq(assign(x, op("create_tensor", ints(2), line=4), line=4))
    main = fn("main", [], assign(x, 0, line=2), WhileStmt(binop(BinOp.Lt, x, 3), (), body, span=at(3)))
    _raises(program(main), match=r"t\.py:3:5: condition is an array of shape \[2\]")


def test_a_non_scalar_condition_is_an_error() -> None:
    a = Var("a")
    main = fn("main", [a], IfStmt(a, seq(), span=at(5)))
    _raises(program(main), fresh(), match=r"t\.py:5:5: condition is an array")


def test_a_branch_that_yields_the_wrong_number_of_values() -> None:
    y = Var("y")
    main = fn("main", [], IfStmt(lit(True), seq(YieldStmt((lit(1), lit(2)))), None, (y,), span=at(4)))
    _raises(program(main), match=r"t\.py:4:5: the then branch of this if yields 2 value\(s\) for 1")


# ---------------------------------------------------------------------------------------------
# values_equal: the comparison property tests use
# ---------------------------------------------------------------------------------------------


def test_values_equal() -> None:
    f = np.array([1.0, np.nan], dtype=np.float32)
    assert values_equal(f, f.copy())
    assert values_equal(f, f + 1e-9)
    assert not values_equal(f, np.array([1.5, np.nan]))
    assert values_equal(np.array([1, 2]), np.array([1, 2], dtype=np.int32))
    assert not values_equal(np.array([1, 2]), np.array([1, 3]))
    assert not values_equal(np.zeros(2), np.zeros(3))
    assert not values_equal(np.zeros(1), 0.0)
    assert values_equal((1, (2.0, f)), (1, (2.0, f.copy())))
    assert not values_equal((1, 2), (1, 2, 3))
    assert not values_equal((1,), 1)
    assert values_equal(float("nan"), float("nan"))
    assert values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(3, 4)
    assert values_equal(np.int64(3), 3)
    assert values_equal(None, None) and not values_equal(None, 0)


def test_out_scalar_parameter_is_the_callers_variable() -> None:
    """The explicit scalar calling convention: rebinding a pl.Out scalar writes the caller's Var."""
    from nanopto.ir_terms.parser import parse_program

    program = parse_program(
        "import nanopto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function\n"
        "    def h(self, n: pl.Out[pl.Scalar[pl.INDEX]], m: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        n = n + 1\n"
        "        m = m + 1\n"
        "        return n\n"
        "    @pl.function\n"
        "    def main(self, k: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        r = self.h(k, j)\n"
        "        return k * 100 + j * 10 + r\n"
    )
    assert interpret(program, "main", 2, 5) == 3 * 100 + 5 * 10 + 3


def test_out_scalars_given_one_var_are_one_variable() -> None:
    """Two pl.Out scalars bound to the same caller Var are that Var (by reference), which is what
    InlineFunctions makes of them by substituting both; copy-in/copy-out would lose a write.
    Found by the soak profile of the semantic-equivalence property."""
    from nanopto.ir_terms.parser import parse_program
    from nanopto.passes import inline_functions

    program = parse_program(
        "import nanopto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n"
        "    def h(self, s1: pl.Out[pl.Scalar[pl.INDEX]], s2: pl.Out[pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:\n"
        "        s1 = s1 + 1\n"
        "        s2 = s2 * 10\n"
        "        return s1\n"
        "    @pl.function\n"
        "    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        r = self.h(k, k)\n"
        "        return k * 1000 + r\n"
    )
    expected = (2 + 1) * 10 * 1000 + (2 + 1) * 10  # s1 reads the value s2 just wrote: one variable
    assert interpret(program, "main", 2) == expected
    assert interpret(inline_functions()(program), "main", 2) == expected


# ---------------------------------------------------------------------------------------------
# Integer overflow, defined (SCALAR_INT_RANGE)
# ---------------------------------------------------------------------------------------------


def _pl_program(body: str, params: str) -> Program:
    from nanopto.ir_terms.parser import parse_program

    return parse_program(
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n"
        f"    def main(self, {params}):\n" + "".join(f"        {line}\n" for line in body.splitlines())
    )


def test_tensor_integers_wrap_as_the_fixed_width_type_and_floats_go_to_inf_without_warnings() -> None:
    prog = _pl_program(
        "y = pl.mul(a, a)\nz = pl.mul(f, f)\nreturn y, z",
        "a: pl.Tensor[[2], pl.INT64], f: pl.Tensor[[2], pl.FP32]",
    )
    big = np.array([1 << 62, 3], dtype=np.int64)
    floats = np.array([3e38, 2.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning must not leak
        y, z = interpret(prog, "main", big, floats)
    assert y.tolist() == [0, 9]  # (2**62)**2 mod 2**64
    assert np.isinf(z[0]) and z[1] == 4.0


def test_a_scalar_integer_past_the_ir_types_is_a_reported_error() -> None:
    prog = _pl_program("m = k * k * k\nreturn m", "k: pl.Scalar[pl.INDEX]")
    assert interpret(prog, "main", 1 << 21) == 1 << 63  # exact, still within UINT64
    err = _raises(prog, 1 << 22, match="integer overflow: the result is outside the IR's integer types")
    assert "operator '*'" in str(err)


@pytest.mark.parametrize(
    ("expr", "op", "types"),
    [("'%*d' % (1000000000, k)", "%", "str and tuple"), ("'ab' * 1000000000", "*", "str and int")],
)
def test_string_formatting_or_repetition_is_refused_before_it_is_computed(expr: str, op: str, types: str) -> None:
    """Found by the pass soak (seed 1000, input 4726): a token mutant put `'%*d' % (10**9, 1)` in
    an op's argument, and running the program formatted a gigabyte of string (the soak's 1.2 GB
    peak). Arithmetic operators take numbers, tensors or tiles only."""
    prog = _pl_program(f"m = {expr}\nreturn k", "k: pl.Scalar[pl.INDEX]")
    started = time.perf_counter()
    _raises(prog, 3, match=f"operator '{re.escape(op)}': operands must be numbers, tensors or tiles, not {types}")
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize(("body", "op"), [("m = k ** 100000000", "**"), ("m = k << 100000000", "<<")])
def test_a_scalar_power_or_shift_past_64_bits_is_refused_before_it_is_computed(body: str, op: str) -> None:
    prog = _pl_program(body + "\nreturn m", "k: pl.Scalar[pl.INDEX]")
    started = time.perf_counter()
    _raises(prog, 3, match=f"operator '{re.escape(op)}': integer overflow")
    assert time.perf_counter() - started < 1
    if op == "**":
        assert interpret(prog, "main", 1) == 1  # 1 ** n never overflows: computed, not refused
