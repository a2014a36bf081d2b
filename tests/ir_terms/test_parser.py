"""The parser: each statement form and type, the pre-SSA scoping rules, and the seed examples."""

from __future__ import annotations

import textwrap

import pytest

import nanopto.language as pl
from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    BreakStmt,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ConstStr,
    ContinueStmt,
    EvalStmt,
    ForKind,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    Keyword,
    MakeTuple,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeKind,
    ScopeStmt,
    SeqStmts,
    SliceExpr,
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
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, TupleType, UnknownType

FP32 = DataType.FP32
INDEX = DataType.INDEX


def program(body: str, header: str = "") -> Program:
    """Parse `body` (methods, indented as in a class) inside `@pl.program class P`."""
    source = "import nanopto.language as pl\n" + textwrap.dedent(header) + "\n@pl.program\nclass P:\n"
    source += textwrap.indent(textwrap.dedent(body), "    ")
    return parse_program(source)


def main_body(body: str, params: str = "", header: str = "", func_type: str = "") -> Function:
    deco = f"@pl.function(type=pl.FunctionType.{func_type})" if func_type else "@pl.function"
    src = f"{deco}\ndef main(self{', ' if params else ''}{params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return program(src, header).functions["main"]


def stmts(fn: Function) -> tuple[Stmt, ...]:
    assert isinstance(fn.body, SeqStmts)
    return fn.body.stmts


# ---------------------------------------------------------------------------------------------
# Program and function structure
# ---------------------------------------------------------------------------------------------


def test_program_name_functions_and_decorators() -> None:
    prog = program(
        """
        @pl.function(type=pl.FunctionType.Inline, auto_scope=False)
        def helper(self, x):
            return x

        @pl.function
        def main(self, a):
            return self.helper(a)
        """
    )
    assert prog.name == "P"
    assert list(prog.functions) == ["helper", "main"]
    helper = prog.functions["helper"]
    assert helper.func_type is FunctionType.Inline
    assert helper.attr_items == (Keyword("auto_scope", ConstBool(False)),)
    assert prog.functions["main"].func_type is FunctionType.Opaque
    ret = stmts(prog.functions["main"])[0]
    assert isinstance(ret, ReturnStmt)
    call = ret.values[0]
    assert isinstance(call, Call) and call.function and call.op == "helper"


def test_pypto_import_and_docstrings_accepted() -> None:
    prog = parse_program(
        '"""doc"""\nimport pypto.language as pl\n\n@pl.program\nclass Q:\n    """doc"""\n'
        "    @pl.function\n    def f(self):\n        \"\"\"doc\"\"\"\n        return\n"
    )
    assert prog.name == "Q"
    assert stmts(prog.functions["f"]) == (ReturnStmt(()),)


def test_param_types_and_directions() -> None:
    fn = program(
        """
        @pl.function
        def f(self, n: pl.Scalar[pl.INDEX], a: pl.Tensor[[4, n], pl.FP32], t: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec],
              u: pl.Tile[[16, 16], pl.FP16], s: pl.INT64, arr: pl.Array[8, pl.INT32],
              o: pl.Out[pl.Tensor[[4], pl.FP32]], io: pl.InOut[pl.Tensor[[4], pl.FP32]], w, e: pl.Out[...]):
            return
        """
    ).functions["f"]
    types = {p.var.name: p.var.type for p in fn.param_list}
    n_var = fn.param_list[0].var
    assert types["n"] == ScalarType(INDEX)
    assert types["a"] == TensorType((ConstInt(4), n_var), FP32)
    assert isinstance(types["a"], TensorType) and types["a"].shape[1] is n_var
    assert types["t"] == TileType((ConstInt(16), ConstInt(16)), DataType.FP16, MemorySpace.Vec)
    assert types["u"] == TileType((ConstInt(16), ConstInt(16)), DataType.FP16, None)
    assert types["s"] == ScalarType(DataType.INT64)
    assert types["arr"] == ArrayType(DataType.INT32, ConstInt(8))
    assert types["w"] == UnknownType()
    assert types["e"] == UnknownType()
    directions = {p.var.name: p.direction for p in fn.param_list}
    assert directions["o"] is ParamDirection.Out
    assert directions["io"] is ParamDirection.InOut
    assert directions["e"] is ParamDirection.Out
    assert directions["a"] is ParamDirection.In


def test_return_types() -> None:
    prog = program(
        """
        @pl.function
        def one(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            return x

        @pl.function
        def two(self, x: pl.INDEX) -> tuple[pl.INDEX, pl.Scalar[pl.FP32]]:
            return x, x

        @pl.function
        def none(self) -> None:
            return
        """
    )
    assert prog.functions["one"].return_types == (TensorType((ConstInt(4),), FP32),)
    assert prog.functions["two"].return_types == (ScalarType(INDEX), ScalarType(FP32))
    assert prog.functions["none"].return_types == ()
    ret = stmts(prog.functions["two"])[0]
    assert isinstance(ret, ReturnStmt) and len(ret.values) == 2


def test_module_dynamic_dim_is_shared_var() -> None:
    prog = program(
        """
        @pl.function
        def f(self, a: pl.Tensor[[N, 4], pl.FP32]):
            return

        @pl.function
        def g(self, b: pl.Tensor[[N * 2], pl.FP32]):
            return
        """,
        header='N = pl.dynamic("N")\n',
    )
    a_type = prog.functions["f"].param_list[0].var.type
    b_type = prog.functions["g"].param_list[0].var.type
    assert isinstance(a_type, TensorType) and isinstance(b_type, TensorType)
    n_var = a_type.shape[0]
    assert isinstance(n_var, Var) and n_var.name == "N" and n_var.type == ScalarType(INDEX)
    assert isinstance(b_type.shape[0], BinaryExpr) and b_type.shape[0].lhs is n_var


def test_closure_constants_are_substituted() -> None:
    fn = main_body(
        """
        t = pl.tile.load(a, OFFSET, TILE)
        return t
        """,
        params="a: pl.Tensor[[128, 128], pl.FP32]",
        header="OFFSET = [0, 0]\nTILE = [64, 2 * 32]\n",
    )
    assign = stmts(fn)[0]
    assert isinstance(assign, AssignStmt) and isinstance(assign.value, Call)
    assert assign.value.args[1] == MakeTuple((ConstInt(0), ConstInt(0)), is_list=True)
    assert assign.value.args[2] == MakeTuple((ConstInt(64), ConstInt(64)), is_list=True)
    assert assign.var.type == TileType((ConstInt(64), ConstInt(64)), FP32, MemorySpace.Vec)


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


def _value(body: str, params: str = "a, b, c", header: str = "") -> object:
    fn = main_body(f"x = {body}\nreturn x\n", params, header)
    first = stmts(fn)[0]
    assert isinstance(first, AssignStmt)
    return first.value


def test_literals() -> None:
    assert _value("42") == ConstInt(42, INDEX)
    assert _value("-3") == ConstInt(-3, INDEX)
    assert _value("2.5") == ConstFloat(2.5)
    assert _value("True") == ConstBool(True)
    assert _value("'s'") == ConstStr("s")
    assert _value("pl.const(42, pl.INT64)") == ConstInt(42, DataType.INT64)
    assert _value("pl.const(1.5, pl.FP16)") == ConstFloat(1.5, DataType.FP16)


def test_symbols() -> None:
    assert _value("pl.FP32") == Symbol("FP32")
    assert _value("pl.Mem.Vec") == Symbol("Mem.Vec")
    assert _value("pl.Level.CORE_GROUP") == Symbol("Level.CORE_GROUP")
    assert _value("pl.SplitMode.UP_DOWN") == Symbol("SplitMode.UP_DOWN")


def test_operators() -> None:
    value = _value("a + b * c")
    assert isinstance(value, BinaryExpr) and value.op is BinOp.Add
    assert isinstance(value.rhs, BinaryExpr) and value.rhs.op is BinOp.Mul
    value = _value("a and b and c")
    assert isinstance(value, BinaryExpr) and value.op is BinOp.And
    assert isinstance(value.lhs, BinaryExpr) and value.lhs.op is BinOp.And
    value = _value("a < b < c")
    assert isinstance(value, BinaryExpr) and value.op is BinOp.And
    assert isinstance(value.lhs, BinaryExpr) and value.lhs.op is BinOp.Lt
    assert isinstance(value.rhs, BinaryExpr) and value.rhs.op is BinOp.Lt
    assert _value("min(a, b)") == BinaryExpr(BinOp.Min, *_params("a", "b"))  # type: ignore[arg-type]
    assert isinstance(_value("max(a, b)"), BinaryExpr)
    assert isinstance(_value("abs(a)"), UnaryExpr)
    neg = _value("-a")
    assert isinstance(neg, UnaryExpr) and neg.op is UnOp.Neg
    assert isinstance(_value("not a"), UnaryExpr)
    inv = _value("~a")
    assert isinstance(inv, UnaryExpr) and inv.op is UnOp.BitNot
    for text, op in [("a // b", BinOp.FloorDiv), ("a % b", BinOp.FloorMod), ("a / b", BinOp.FloatDiv),
                     ("a ** b", BinOp.Pow), ("a ^ b", BinOp.Xor), ("a & b", BinOp.BitAnd),
                     ("a | b", BinOp.BitOr), ("a << b", BinOp.BitShiftLeft), ("a >> b", BinOp.BitShiftRight),
                     ("a or b", BinOp.Or), ("a != b", BinOp.Ne), ("a >= b", BinOp.Ge)]:
        value = _value(text)
        assert isinstance(value, BinaryExpr) and value.op is op, text


def _params(*names: str) -> tuple[Var, ...]:
    # Var equality is by id, so compare shapes only through names in the helper below.
    return tuple(_NamedVar(n) for n in names)  # type: ignore[misc]


class _NamedVar(Var):
    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Var) and other.name == self.name

    __hash__ = Var.__hash__


def test_lists_tuples_and_subscripts() -> None:
    assert _value("[a, 1]") == MakeTuple((_NamedVar("a"), ConstInt(1)), is_list=True)
    assert _value("(a, 1)") == MakeTuple((_NamedVar("a"), ConstInt(1)))
    sub = _value("a[0:4, b]")
    assert isinstance(sub, Call) and sub.op == "subscript"
    assert sub.args[1] == SliceExpr(ConstInt(0), ConstInt(4))
    sub = _value("a[b, :]")
    assert isinstance(sub, Call) and sub.args[2] == SliceExpr(None, None)


def test_calls_ops_functions_and_submit() -> None:
    prog = program(
        """
        @pl.function
        def k(self, x):
            return x

        @pl.function
        def main(self, a, b):
            c = pl.add(a, b)
            d = pl.tensor.add(a, b)
            e = pl.create_tensor([64], dtype=pl.FP32)
            f = self.k(a)
            g = pl.submit(self.k, a, deps=[b], dumps=[a])
            return c
        """
    )
    body = stmts(prog.functions["main"])
    values = [s.value for s in body if isinstance(s, AssignStmt)]
    assert isinstance(values[0], Call) and values[0].op == "add" and not values[0].function
    assert isinstance(values[1], Call) and values[1].op == "tensor.add"
    assert isinstance(values[2], Call) and values[2].kwargs == (Keyword("dtype", Symbol("FP32")),)
    assert isinstance(body[2], AssignStmt) and body[2].var.type == TensorType((ConstInt(64),), FP32)
    assert isinstance(values[3], Call) and values[3].function and values[3].op == "k"
    submit = values[4]
    assert isinstance(submit, Submit) and submit.callee == "k"
    assert [k.name for k in submit.kwargs] == ["deps"]
    assert [d.name for d in submit.dumps] == ["a"]


def test_tuple_typed_subscript_is_tuple_get_item() -> None:
    prog = program(
        """
        @pl.function
        def pair(self, x: pl.INDEX) -> tuple[pl.INDEX, pl.INDEX]:
            return x, x

        @pl.function
        def main(self, a: pl.INDEX):
            t = self.pair(a)
            u = t[1]
            return u
        """
    )
    body = stmts(prog.functions["main"])
    assert isinstance(body[0], AssignStmt) and body[0].var.type == TupleType((ScalarType(INDEX),) * 2)
    assert isinstance(body[1], AssignStmt) and body[1].value == TupleGetItemExpr(body[0].var, 1)
    assert body[1].var.type == ScalarType(INDEX)


# ---------------------------------------------------------------------------------------------
# Assignments and name binding
# ---------------------------------------------------------------------------------------------


def test_rebinding_reuses_the_param_var() -> None:
    fn = main_body("t = pl.add(t, t)\nreturn t\n", params="t: pl.Tensor[[4], pl.FP32]")
    assign = stmts(fn)[0]
    assert isinstance(assign, AssignStmt)
    assert assign.var is fn.param_list[0].var
    assert isinstance(assign.value, Call) and assign.value.args[0] is fn.param_list[0].var


def test_annotated_assignment_and_inference() -> None:
    fn = main_body(
        """
        x: pl.INT64 = 1
        y: pl.Tensor[[4], pl.FP32] = pl.exp(a)
        z = pl.exp(a)
        w = y
        v = x + 1
        return w
        """,
        params="a: pl.Tensor[[4], pl.FP32]",
    )
    x, y, z, w, v = (s for s in stmts(fn) if isinstance(s, AssignStmt))
    assert x.annotated and x.var.type == ScalarType(DataType.INT64)
    assert y.annotated and y.var.type == TensorType((ConstInt(4),), FP32)
    assert not z.annotated and z.var.type == TensorType((ConstInt(4),), FP32)
    assert w.var.type == y.var.type
    assert v.var.type == ScalarType(DataType.INT64)


def test_name_bound_in_body_stays_visible() -> None:
    fn = main_body(
        """
        for i in pl.range(4):
            inner = pl.exp(a)
        if a:
            other = inner
        return other
        """,
        params="a",
    )
    loop, branch, ret = stmts(fn)
    assert isinstance(loop, ForStmt) and isinstance(branch, IfStmt) and isinstance(ret, ReturnStmt)
    assert isinstance(branch.then_body, SeqStmts)
    other = branch.then_body.stmts[0]
    assert isinstance(other, AssignStmt) and ret.values[0] is other.var


def test_subscript_write_desugars_to_assemble() -> None:
    fn = main_body("c[0:4, j] = v\nc[:, 2] = v\nreturn c\n", params="c: pl.Tensor[[8, 8], pl.FP32], v, j: pl.INDEX")
    first, second, _ = stmts(fn)
    c, v, j = (p.var for p in fn.param_list)
    assert isinstance(first, AssignStmt) and first.var is c
    assert first.value == Call("tensor.assemble", (c, v, MakeTuple((ConstInt(0), j), is_list=True)))
    assert isinstance(second, AssignStmt)
    assert second.value == Call("tensor.assemble", (c, v, MakeTuple((ConstInt(0), ConstInt(2)), is_list=True)))


def test_array_element_write_desugars_to_update_element() -> None:
    fn = main_body("arr[i] = v\nreturn arr\n", params="arr: pl.Array[8, pl.INT32], i: pl.INDEX, v: pl.INT32")
    arr, i, v = (p.var for p in fn.param_list)
    assign = stmts(fn)[0]
    assert isinstance(assign, AssignStmt) and assign.var is arr
    assert assign.value == Call("array.update_element", (arr, i, v))


def test_tuple_unpack_uses_a_tmp() -> None:
    prog = program(
        """
        @pl.function
        def pair(self, x: pl.INDEX) -> tuple[pl.INDEX, pl.FP32]:
            return x, x

        @pl.function
        def main(self, a: pl.INDEX):
            p, q = self.pair(a)
            r, s = self.pair(a)
            return p
        """
    )
    body = stmts(prog.functions["main"])
    tmp = body[0]
    assert isinstance(tmp, AssignStmt) and tmp.var.name == "ret__tmp_v0"
    assert tmp.var.type == TupleType((ScalarType(INDEX), ScalarType(FP32)))
    p, q = body[1], body[2]
    assert isinstance(p, AssignStmt) and p.value == TupleGetItemExpr(tmp.var, 0) and p.var.name == "p"
    assert isinstance(q, AssignStmt) and q.value == TupleGetItemExpr(tmp.var, 1)
    assert q.var.type == ScalarType(FP32)
    tmp2 = body[3]
    assert isinstance(tmp2, AssignStmt) and tmp2.var.name == "ret__tmp_v1"


def test_expression_statement_and_returns() -> None:
    fn = main_body("pl.tile.store(t, [0, 0], out)\nreturn a, b\n", params="t, out, a, b")
    ev, ret = stmts(fn)
    assert isinstance(ev, EvalStmt) and isinstance(ev.expr, Call) and ev.expr.op == "tile.store"
    assert isinstance(ret, ReturnStmt) and len(ret.values) == 2


# ---------------------------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------------------------


def test_if_with_yield_defines_return_vars() -> None:
    fn = main_body(
        """
        if c:
            y1, y2 = pl.yield_(a, b)
        else:
            y1, y2 = pl.yield_(b, a)
        return y1
        """,
        params="c, a: pl.INDEX, b: pl.INDEX",
    )
    branch, ret = stmts(fn)
    assert isinstance(branch, IfStmt) and [v.name for v in branch.return_vars] == ["y1", "y2"]
    assert branch.return_vars[0].type == ScalarType(INDEX)
    assert isinstance(branch.then_body, SeqStmts) and isinstance(branch.then_body.stmts[-1], YieldStmt)
    assert isinstance(branch.else_body, SeqStmts)
    assert isinstance(ret, ReturnStmt) and ret.values[0] is branch.return_vars[0]


def test_if_without_else_and_elif() -> None:
    fn = main_body("if a:\n    x = 1\nelif b:\n    x = 2\nreturn x\n", params="a, b")
    branch = stmts(fn)[0]
    assert isinstance(branch, IfStmt) and isinstance(branch.else_body, SeqStmts)
    assert isinstance(branch.else_body.stmts[0], IfStmt)
    assert branch.else_body.stmts[0].else_body is None


def test_for_forms() -> None:
    fn = main_body(
        """
        for i in pl.range(n):
            pass
        for i in pl.range(1, n):
            pass
        for i in pl.range(1, n, 2):
            pass
        for i in pl.parallel(n):
            pass
        for i in pl.unroll(4):
            pass
        return
        """,
        params="n: pl.INDEX",
    )
    loops = [s for s in stmts(fn) if isinstance(s, ForStmt)]
    n = fn.param_list[0].var
    assert (loops[0].start, loops[0].stop, loops[0].step) == (ConstInt(0), n, ConstInt(1))
    assert (loops[1].start, loops[1].step) == (ConstInt(1), ConstInt(1))
    assert loops[2].step == ConstInt(2)
    assert [lp.kind for lp in loops] == [ForKind.Sequential] * 3 + [ForKind.Parallel, ForKind.Unroll]
    assert loops[0].loop_var.type == ScalarType(INDEX)
    assert loops[0].loop_var is not loops[1].loop_var


def test_for_with_iter_args() -> None:
    fn = main_body(
        """
        sum_init: pl.INT64 = 0
        for i, (sum,) in pl.range(n, init_values=(sum_init,)):
            sum = pl.yield_(sum + i)
        sum_final = sum
        return sum_final
        """,
        params="n: pl.INDEX",
    )
    init, loop, final, _ = stmts(fn)
    assert isinstance(init, AssignStmt) and isinstance(loop, ForStmt) and isinstance(final, AssignStmt)
    (arg,) = loop.iter_args
    assert isinstance(arg, IterArg) and arg.name == "sum" and arg.init_value is init.var
    assert arg.type == ScalarType(DataType.INT64)
    (rv,) = loop.return_vars
    assert rv.name == "sum" and rv is not arg and not isinstance(rv, IterArg)
    assert rv.type == ScalarType(DataType.INT64)
    assert final.value is rv
    body = loop.body
    assert isinstance(body, SeqStmts) and isinstance(body.stmts[0], YieldStmt)
    value = body.stmts[0].values[0]
    assert isinstance(value, BinaryExpr) and value.lhs is arg and value.rhs is loop.loop_var


def test_yield_lhs_reuses_an_existing_var() -> None:
    fn = main_body(
        """
        acc = pl.exp(a)
        for i, (x,) in pl.range(4, init_values=(acc,)):
            acc = pl.yield_(pl.add(x, x))
        return acc
        """,
        params="a: pl.Tensor[[4], pl.FP32]",
    )
    first, loop, ret = stmts(fn)
    assert isinstance(first, AssignStmt) and isinstance(loop, ForStmt) and isinstance(ret, ReturnStmt)
    assert loop.return_vars == (first.var,)
    assert ret.values[0] is first.var


def test_loop_header_names_are_scoped() -> None:
    fn = main_body(
        """
        i = 7
        for i in pl.range(3):
            pass
        return i
        """,
    )
    first, loop, ret = stmts(fn)
    assert isinstance(first, AssignStmt) and isinstance(loop, ForStmt) and isinstance(ret, ReturnStmt)
    assert loop.loop_var is not first.var
    assert ret.values[0] is first.var


def test_while_forms() -> None:
    fn = main_body(
        """
        i: pl.Scalar[pl.INT64] = 0
        while i < n:
            i = i + 1
        x_init: pl.Scalar[pl.INT64] = 0
        for (x,) in pl.while_(init_values=(x_init,)):
            pl.cond(x < n)
            x_next = pl.yield_(x + 1)
        for (x,) in pl.while_(init_values=(x_init,)):
            pl.cond(x < n)
            x = x + 1
        return x_next
        """,
        params="n: pl.INT64",
    )
    body = stmts(fn)
    natural = body[1]
    assert isinstance(natural, WhileStmt) and natural.natural and natural.iter_args == ()
    ssa = body[3]
    assert isinstance(ssa, WhileStmt) and not ssa.natural
    (arg,) = ssa.iter_args
    assert isinstance(ssa.cond, BinaryExpr) and ssa.cond.lhs is arg
    assert [v.name for v in ssa.return_vars] == ["x_next"]
    assert isinstance(ssa.body, SeqStmts) and isinstance(ssa.body.stmts[0], YieldStmt)
    pre_ssa = body[4]
    assert isinstance(pre_ssa, WhileStmt) and pre_ssa.return_vars == ()
    assert isinstance(pre_ssa.body, SeqStmts)
    rebind = pre_ssa.body.stmts[0]
    assert isinstance(rebind, AssignStmt) and rebind.var is pre_ssa.iter_args[0]
    ret = body[5]
    assert isinstance(ret, ReturnStmt) and ret.values[0] is ssa.return_vars[0]


def test_break_continue() -> None:
    fn = main_body(
        """
        for i in pl.parallel(4):
            for j in pl.range(4):
                if j > 2:
                    break
                continue
        return
        """,
    )
    outer = stmts(fn)[0]
    assert isinstance(outer, ForStmt) and isinstance(outer.body, SeqStmts)
    inner = outer.body.stmts[0]
    assert isinstance(inner, ForStmt) and isinstance(inner.body, SeqStmts)
    branch, cont = inner.body.stmts
    assert isinstance(cont, ContinueStmt)
    assert isinstance(branch, IfStmt) and isinstance(branch.then_body, SeqStmts)
    assert isinstance(branch.then_body.stmts[0], BreakStmt)


def test_python_yield_statement() -> None:
    fn = main_body("if a:\n    yield\nelse:\n    yield a, a\nreturn\n", params="a")
    branch = stmts(fn)[0]
    assert isinstance(branch, IfStmt) and isinstance(branch.then_body, SeqStmts)
    assert branch.then_body.stmts == (YieldStmt(()),)
    assert isinstance(branch.else_body, SeqStmts)
    yield_stmt = branch.else_body.stmts[0]
    assert isinstance(yield_stmt, YieldStmt) and len(yield_stmt.values) == 2


# ---------------------------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------------------------


def test_with_scopes() -> None:
    prog = program(
        """
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a):
            return a

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a, b):
            with pl.at(level=pl.Level.CORE_GROUP):
                c = pl.exp(a)
            with pl.at(level=pl.Level.HOST) as tid:
                pass
            with pl.cluster():
                pass
            with pl.graph("g", dumps=[a, b]):
                pass
            with pl.spmd(8):
                self.kernel(a)
            with pl.scope(mode=pl.ScopeMode.MANUAL):
                pass
            with pl.manual_scope():
                pass
            for i in pl.spmd(4):
                x = pl.tile.get_block_idx()
            for _ in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                pass
            return tid
        """
    )
    scopes = [s for s in stmts(prog.functions["main"]) if isinstance(s, ScopeStmt)]
    assert [s.constructor for s in scopes] == [
        "at", "at", "cluster", "graph", "spmd", "scope", "manual_scope", "spmd", "at"
    ]
    assert [s.kind for s in scopes] == [
        ScopeKind.InCore, ScopeKind.Hierarchy, ScopeKind.Cluster, ScopeKind.Graph, ScopeKind.Spmd,
        ScopeKind.Runtime, ScopeKind.Runtime, ScopeKind.Spmd, ScopeKind.InCore,
    ]
    assert scopes[0].kwargs == (Keyword("level", Symbol("Level.CORE_GROUP")),)
    assert scopes[1].var is not None and scopes[1].var.type == ScalarType(DataType.TASK_ID)
    assert scopes[3].args == (ConstStr("g"),) and [d.name for d in scopes[3].dumps] == ["a", "b"]
    assert scopes[3].kwargs == ()
    # the for-form is a pl.spmd scope around the InCore scope the parser adds, which binds i first
    assert not scopes[7].for_form and scopes[7].var is None
    incore = scopes[7].body.stmts[0]
    assert isinstance(incore, ScopeStmt) and incore.kind is ScopeKind.InCore
    bind = incore.body.stmts[0]
    assert isinstance(bind, AssignStmt) and bind.var.name == "i" and bind.value == Call("tile.get_block_idx", ())
    # a pl.split_aiv region outside a core context is inside the InCore scope the parser adds, and
    # binds its lane first
    region = scopes[8].body.stmts[0]
    assert isinstance(region, ScopeStmt) and region.kind is ScopeKind.SplitAiv and region.var is None
    lane = region.body.stmts[0]
    assert isinstance(lane, AssignStmt) and lane.var.name == "_" and lane.value == Call("tile.get_subblock_idx", ())
    ret = stmts(prog.functions["main"])[-1]
    assert isinstance(ret, ReturnStmt) and ret.values[0] is scopes[1].var


# ---------------------------------------------------------------------------------------------
# Compile-time constructs
# ---------------------------------------------------------------------------------------------


def test_static_print_and_assert(capsys: pytest.CaptureFixture[str]) -> None:
    fn = main_body(
        """
        pl.static_print("input:", x)
        pl.static_print(f"input: {x}")
        pl.static_assert(True)
        pl.static_assert(N > 32, "N too small")
        return x
        """,
        params="x: pl.Tensor[[128, 64], pl.FP16]",
        header="N = 64\n",
    )
    assert stmts(fn) == (ReturnStmt((fn.param_list[0].var,)),)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "static_print [<string>:9]: input: x: pl.Tensor[[128, 64], pl.FP16]",
        "static_print [<string>:10]: input: x: pl.Tensor[[128, 64], pl.FP16]",
    ]


def test_dump_tag_in_orchestration_leaves_no_statement() -> None:
    fn = main_body("pl.dump_tag(a)\nreturn a\n", params="a", func_type="Orchestration")
    assert stmts(fn) == (ReturnStmt((fn.param_list[0].var,)),)


# ---------------------------------------------------------------------------------------------
# The seed examples
# ---------------------------------------------------------------------------------------------

SEED_000 = {
    "single_before": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def helper(self, x):
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a):
                z = self.helper(a)
                return z
        """,
    "single_after": """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                y_inline0 = pl.mul(a, a)
                z = y_inline0
                return z
        """,
    "multiple_before": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def square(self, x):
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a, b):
                a2 = self.square(a)
                b2 = self.square(b)
                return pl.add(a2, b2)
        """,
    "multiple_after": """
        @pl.program
        class P:
            @pl.function
            def main(self, a, b):
                y_inline0 = pl.mul(a, a)
                a2 = y_inline0
                y_inline1 = pl.mul(b, b)
                b2 = y_inline1
                return pl.add(a2, b2)
        """,
    "rebind_tensor_after": """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                t_inline0 = a
                t_inline0 = pl.add(t_inline0, t_inline0)
                u = t_inline0
                w = pl.add(a, u)
                return w
        """,
    "bump_before": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def bump(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                n = n + 1
                return n

            @pl.function
            def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                m: pl.Scalar[pl.INDEX] = self.bump(k)
                return k + m
        """,
    "bump_after": """
        @pl.program
        class P:
            @pl.function
            def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                n_inline0: pl.Scalar[pl.INDEX] = k
                n_inline0 = n_inline0 + 1
                m: pl.Scalar[pl.INDEX] = n_inline0
                s: pl.Scalar[pl.INDEX] = k + m
                return s
        """,
    "discard_before": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def writeout(self, t, out: pl.Out[...]):
                return pl.tile.store(t, [0, 0], out)

            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a, out: pl.Out[...]):
                t = pl.tile.load(a, [0, 0], [64, 64])
                self.writeout(t, out)
                return out
        """,
    "discard_after": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a, out: pl.Out[...]):
                t = pl.tile.load(a, [0, 0], [64, 64])
                pl.tile.store(t, [0, 0], out)
                return out
        """,
    "nested_hoist": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def half(self, n):
                return n // 2

            @pl.function
            def before(self, n):
                k = self.half(n) + 1
                return k

            @pl.function
            def after(self, n):
                t__inline_arg_v0 = self.half(n)
                k = t__inline_arg_v0 + 1
                return k
        """,
    "array_update": """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def f(self, x):
                return x

            @pl.function
            def before(self, arr: pl.Array[8, pl.INT32], i: pl.INDEX, x):
                arr[i] = self.f(x)
                return arr

            @pl.function
            def after(self, arr: pl.Array[8, pl.INT32], i: pl.INDEX, x):
                arr = pl.array.update_element(arr, i, self.f(x))
                return arr
        """,
    "computed_args": """
        @pl.program
        class P:
            @pl.function
            def main(self, a, c, r, v, j):
                x_inline0 = a[r]
                c_inline1 = c[r]
                c_inline1 = pl.tensor.assemble(c_inline1, v, [0, j])
                return c
        """,
}


@pytest.mark.parametrize("name", sorted(SEED_000))
def test_seed_000_examples_parse(name: str) -> None:
    prog = parse_program(textwrap.dedent(SEED_000[name]))
    assert prog.name == "P"
    for fn in prog.function_list:
        for param in fn.param_list:
            if param.var.name in ("a", "b", "x", "t"):
                assert param.var.type == UnknownType()


def test_seed_000_array_update_desugars_like_the_explicit_form() -> None:
    prog = parse_program(textwrap.dedent(SEED_000["array_update"]))
    before, after = stmts(prog.functions["before"])[0], stmts(prog.functions["after"])[0]
    assert isinstance(before, AssignStmt) and isinstance(after, AssignStmt)
    assert isinstance(before.value, Call) and isinstance(after.value, Call)
    assert before.value.op == after.value.op == "array.update_element"
    assert before.var is prog.functions["before"].param_list[0].var


SEED_004_BODY = """
@pl.function(type=pl.FunctionType.InCore)
def kernel(self, a):
    return a

@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)  # it hand-places pl.scope()
def main(self, a: pl.Tensor[[4], pl.FP32], n: pl.INT64, condition: pl.BOOL, value1, value2, value3, value4):
    x: pl.INT64 = n + 1
    y: pl.Tensor[[4], pl.FP32] = pl.exp(a)
    if condition:
        y1 = pl.yield_(value1)
    else:
        y1 = pl.yield_(value2)
    if condition:
        y1, y2 = pl.yield_(value1, value2)
    else:
        y1, y2 = pl.yield_(value3, value4)
    for i in pl.range(n):
        pass
    for i in pl.range(1, n):
        pass
    for i in pl.range(1, n, 2):
        pass
    sum_init: pl.INT64 = 0
    for i, (sum,) in pl.range(n, init_values=(sum_init,)):
        sum = pl.yield_(sum + i)
    sum_final = sum
    for i in pl.parallel(n):
        pass
    for i in pl.parallel(0, n, 2):
        pass
    i: pl.Scalar[pl.INT64] = 0
    while i < n:
        i = i + 1
    x_init: pl.Scalar[pl.INT64] = 0
    for (x,) in pl.while_(init_values=(x_init,)):
        pl.cond(x < n)
        x_next = pl.yield_(x + 1)
    for (x,) in pl.while_(init_values=(x_init,)):
        pl.cond(x < n)
        x = x + 1
    with pl.at(level=pl.Level.CORE_GROUP):
        pass
    with pl.at(level=pl.Level.HOST):
        pass
    with pl.cluster():
        pass
    with pl.graph("name"):
        pass
    with pl.spmd(8):
        self.kernel(a)
    for b in pl.spmd(8):
        pass
    ready = pl.system.task_invalid()
    with pl.spmd(8, deps=[ready]) as tid:
        self.kernel(a)
    with pl.scope(mode=pl.ScopeMode.MANUAL):
        pass
    with pl.manual_scope():
        pass
    with pl.scope():
        pass
    for j in pl.range(4):
        if j > 1:
            break
        continue
    pl.static_assert(True)
    pl.dump_tag(a)
    return sum_final
"""


def test_seed_004_statement_forms_parse() -> None:
    prog = program(SEED_004_BODY)
    body = stmts(prog.functions["main"])
    assert sum(isinstance(s, ForStmt) for s in body) == 7
    assert sum(isinstance(s, WhileStmt) for s in body) == 3
    assert sum(isinstance(s, ScopeStmt) for s in body) == 10


# ---------------------------------------------------------------------------------------------
# The @pl.program decorator
# ---------------------------------------------------------------------------------------------

WIDTH = 8
M = pl.dynamic("M")


def test_program_decorator_on_a_real_class() -> None:
    local_scale = 3

    @pl.program
    class Decorated:
        @pl.function(type=pl.FunctionType.Inline)
        def helper(self, x: pl.Tensor[[M, WIDTH], pl.FP32]) -> pl.Tensor[[M, WIDTH], pl.FP32]:
            y = pl.mul(x, x)
            return y

        @pl.function
        def main(self, a: pl.Tensor[[M, WIDTH], pl.FP32], out: pl.Out[pl.Tensor[[M, WIDTH], pl.FP32]]):
            z = self.helper(a)
            for i in pl.range(local_scale):
                out[:, i : i + 1] = z[:, 0:1]
            return out

    assert isinstance(Decorated, Program)
    prog: Program = Decorated
    assert prog.name == "Decorated"
    helper = prog.functions["helper"]
    assert helper.func_type is FunctionType.Inline
    x_type = helper.param_list[0].var.type
    assert isinstance(x_type, TensorType) and x_type.shape[1] == ConstInt(WIDTH)
    assert isinstance(x_type.shape[0], Var) and x_type.shape[0].name == "M"
    loop = stmts(prog.functions["main"])[1]
    assert isinstance(loop, ForStmt) and loop.stop == ConstInt(3)
    assert loop.span is not None and loop.span.file.endswith("test_parser.py")


def test_program_decorator_reports_real_line_numbers() -> None:
    with pytest.raises(ParserError) as info:

        @pl.program
        class Bad:
            @pl.function
            def main(self, a):
                b = pl.nonexistent_op(a)
                return b

    assert "Unknown operation 'pl.nonexistent_op'" in str(info.value)
    assert info.value.file.endswith("test_parser.py")
    with open(info.value.file) as handle:
        reported = handle.read().splitlines()[info.value.line - 1]
    assert "b = pl.nonexistent_op(a)" in reported


def test_a_program_starts_at_its_decorator_line() -> None:
    source = "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n    def main(self, x):\n        return x\n"
    program = parse_program(source, "p.py")
    assert program.span is not None and (program.span.file, program.span.line, program.span.col) == ("p.py", 3, 0)
    assert str(program.span) == "p.py:3:1"
    shifted = parse_program(source, "p.py", line_offset=10)
    assert shifted.span is not None and shifted.span.line == 13


_MOVE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]):
        y = pl.move(x, target_memory=pl.{space}.Acc)
        return y
"""


def test_memory_space_and_mem_are_one_enum_in_a_keyword() -> None:
    """`pl.MemorySpace` and `pl.Mem` name one enum, so a keyword value written either way is the
    same IR (PyPTO stores the member), and prints as PyPTO prints it, `pl.Mem.Acc`."""
    from nanopto.ir_terms.printer import python_print
    from nanopto.ir_terms.structural import assert_structural_equal

    long, short = (parse_program(_MOVE.format(space=space), "p.py") for space in ("MemorySpace", "Mem"))
    assert_structural_equal(long, short)
    printed = python_print(long)
    assert "target_memory=pl.Mem.Acc" in printed and "MemorySpace" not in printed
    (main,) = long.functions.values()
    (keyword,) = main.body.stmts[0].value.kwargs  # type: ignore[attr-defined]
    assert keyword.value == Symbol("Mem.Acc")


def test_a_parse_leaves_no_cyclic_garbage_whether_it_succeeds_or_fails() -> None:
    """Every object of a parse is freed by reference counting: a cycle (a parser holding its own
    bound method, a nested function that calls itself) would keep the parser, its tree and all it
    built until a full collection (nanopto/gc_pause.py)."""
    import contextlib
    import gc

    good = _MOVE.format(space="Mem")
    bad = good.replace("return y", "return y +")
    gc.collect()
    parse_program(good, "good.py")
    assert gc.collect() == 0
    with contextlib.suppress(ParserError):
        parse_program(bad, "bad.py")
    assert gc.collect() == 0
