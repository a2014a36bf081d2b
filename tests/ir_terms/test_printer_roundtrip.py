"""The printer: its output style, and `parse(print(p))` == `p` for every statement form and type."""

from __future__ import annotations

import textwrap

import pytest
from test_parser import SEED_000, SEED_004_BODY

from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    Call,
    ConstFloat,
    ConstInt,
    Expr,
    Function,
    IterArg,
    Param,
    Program,
    ReturnStmt,
    SeqStmts,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.parser import parse_function, parse_program
from nanopto.ir_terms.printer import print_expr, python_print
from nanopto.ir_terms.structural import assert_structural_equal
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, TileType, TupleType, UnknownType


def roundtrip(source: str) -> Program:
    """Parse, print, re-parse: the text is a fixpoint and the IR is structurally unchanged."""
    prog = parse_program(textwrap.dedent(source))
    text = python_print(prog)
    again = parse_program(text)
    assert python_print(again) == text
    assert_structural_equal(again, prog)
    return prog


def wrap(body: str) -> str:
    return "import nanopto.language as pl\n\n@pl.program\nclass P:\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_program_layout() -> None:
    prog = parse_program(
        wrap(
            """
            @pl.function(type=pl.FunctionType.Inline)
            def helper(self, x: pl.Tensor[[4], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4], pl.FP32]:
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a, o: pl.Out[pl.Tensor[[4], pl.FP32]]) -> tuple[pl.INDEX, pl.INDEX]:
                z: pl.Tensor[[4], pl.FP32] = self.helper(a, 1)
                return 1, 2
            """
        )
    )
    assert python_print(prog) == textwrap.dedent(
        """\
        # nanopto.program: P
        import nanopto.language as pl


        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def helper(self, x: pl.Tensor[[4], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4], pl.FP32]:
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a, o: pl.Out[pl.Tensor[[4], pl.FP32]]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]:
                z: pl.Tensor[[4], pl.FP32] = self.helper(a, 1)
                return 1, 2
        """
    )


def test_dynamic_dims_are_declared() -> None:
    prog = roundtrip(
        """
        import nanopto.language as pl
        N = pl.dynamic("N")

        @pl.program
        class P:
            @pl.function
            def f(self, a: pl.Tensor[[N, 4], pl.FP32]):
                b = N + 1
                return b
        """
    )
    assert 'N = pl.dynamic("N")\n' in python_print(prog)


def test_dynamic_dims_are_declared_once_in_the_order_the_functions_first_use_them() -> None:
    """Each function's own dimensions in the order it first uses them, function after function;
    one declared in two functions once, and a function's bound scalar of that name is none."""
    prog = parse_program(
        textwrap.dedent(
            """
        import nanopto.language as pl
        M = pl.dynamic("M")
        N = pl.dynamic("N")
        K = pl.dynamic("K")

        @pl.program
        class P:
            @pl.function
            def f(self, a: pl.Tensor[[N, 4], pl.FP32]):
                b = M + N
                return b

            @pl.function
            def g(self, a: pl.Tensor[[K, M], pl.FP32], N: pl.Scalar[pl.INDEX]):
                c = N + 1
                return c
        """
        )
    )
    printed = python_print(prog)
    assert 'N = pl.dynamic("N")\nM = pl.dynamic("M")\nK = pl.dynamic("K")\n' in printed
    assert printed.count("pl.dynamic") == 3
    assert python_print(parse_program(printed)) == printed


def test_print_types() -> None:
    shape = (ConstInt(16), Var("n", ScalarType(DataType.INDEX)))
    assert python_print(ScalarType(DataType.INDEX)) == "pl.Scalar[pl.INDEX]"
    assert python_print(TensorType(shape, DataType.FP32)) == "pl.Tensor[[16, n], pl.FP32]"
    assert python_print(TileType(shape, DataType.FP16, MemorySpace.Vec)) == "pl.Tile[[16, n], pl.FP16, pl.Mem.Vec]"
    assert python_print(ArrayType(DataType.INT32, ConstInt(8))) == "pl.Array[8, pl.INT32]"
    assert python_print(TupleType((ScalarType(DataType.BOOL),))) == "tuple[pl.Scalar[pl.BOOL]]"
    assert python_print(UnknownType()) == "..."


def _v(name: str) -> Var:
    return Var(name)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (BinaryExpr(BinOp.Mul, BinaryExpr(BinOp.Add, _v("a"), _v("b")), _v("c")), "(a + b) * c"),
        (BinaryExpr(BinOp.Add, _v("a"), BinaryExpr(BinOp.Mul, _v("b"), _v("c"))), "a + b * c"),
        (BinaryExpr(BinOp.Sub, _v("a"), BinaryExpr(BinOp.Sub, _v("b"), _v("c"))), "a - (b - c)"),
        (BinaryExpr(BinOp.Sub, BinaryExpr(BinOp.Sub, _v("a"), _v("b")), _v("c")), "a - b - c"),
        (BinaryExpr(BinOp.Pow, _v("a"), BinaryExpr(BinOp.Pow, _v("b"), _v("c"))), "a ** b ** c"),
        (BinaryExpr(BinOp.Pow, BinaryExpr(BinOp.Pow, _v("a"), _v("b")), _v("c")), "(a ** b) ** c"),
        (BinaryExpr(BinOp.Lt, BinaryExpr(BinOp.Lt, _v("a"), _v("b")), _v("c")), "(a < b) < c"),
        (BinaryExpr(BinOp.And, BinaryExpr(BinOp.Or, _v("a"), _v("b")), _v("c")), "(a or b) and c"),
        (UnaryExpr(UnOp.Not, BinaryExpr(BinOp.Eq, _v("a"), _v("b"))), "not a == b"),
        (UnaryExpr(UnOp.Neg, BinaryExpr(BinOp.Add, _v("a"), _v("b"))), "-(a + b)"),
        (UnaryExpr(UnOp.Neg, ConstInt(3)), "-pl.const(3, pl.INDEX)"),
        (BinaryExpr(BinOp.Pow, ConstInt(-3), ConstInt(2)), "pl.const(-3, pl.INDEX) ** pl.const(2, pl.INDEX)"),
        (BinaryExpr(BinOp.Min, _v("a"), _v("b")), "pl.min(a, b)"),
        (UnaryExpr(UnOp.Abs, _v("a")), "abs(a)"),
        (ConstInt(42, DataType.INT64), "pl.const(42, pl.INT64)"),
        (ConstFloat(1.5, DataType.FP16), "pl.const(1.5, pl.FP16)"),
        (TupleGetItemExpr(_v("t"), 1), "t[1]"),
    ],
)
def test_expression_precedence(expr: Expr, text: str) -> None:
    assert print_expr(expr) == text


def _expr_roundtrip(expr: Expr, names: tuple[str, ...] = ("a", "b", "c")) -> None:
    params = tuple(Param(Var(n, ScalarType(DataType.INDEX))) for n in names)
    by_name = {p.var.name: p.var for p in params}

    def bind(e: Expr) -> Expr:
        from nanopto.ir_terms.schema import map_children

        if isinstance(e, Var):
            return by_name[e.name]
        return map_children(e, bind)

    bound = bind(expr)
    x = Var("x", ScalarType(DataType.INDEX))
    body = SeqStmts((AssignStmt(x, bound, annotated=True), ReturnStmt((x,))))
    prog = Program("P", (Function("main", params, body=body),))
    again = parse_program(python_print(prog))
    assert_structural_equal(again, prog)


@pytest.mark.parametrize(
    "expr",
    [
        BinaryExpr(BinOp.Mul, BinaryExpr(BinOp.Add, _v("a"), _v("b")), _v("c")),
        BinaryExpr(BinOp.Sub, _v("a"), BinaryExpr(BinOp.Sub, _v("b"), _v("c"))),
        BinaryExpr(BinOp.Pow, BinaryExpr(BinOp.Pow, _v("a"), _v("b")), _v("c")),
        BinaryExpr(BinOp.Pow, UnaryExpr(UnOp.Neg, _v("a")), _v("b")),
        BinaryExpr(BinOp.Lt, BinaryExpr(BinOp.Lt, _v("a"), _v("b")), _v("c")),
        BinaryExpr(BinOp.And, _v("a"), BinaryExpr(BinOp.And, _v("b"), _v("c"))),
        UnaryExpr(UnOp.Neg, ConstInt(3)),
        UnaryExpr(UnOp.Neg, UnaryExpr(UnOp.Neg, _v("a"))),
        UnaryExpr(UnOp.Not, UnaryExpr(UnOp.Not, _v("a"))),
        BinaryExpr(BinOp.Pow, ConstInt(-3), ConstInt(2)),
        BinaryExpr(BinOp.Sub, _v("a"), ConstInt(-3)),
        BinaryExpr(BinOp.BitOr, BinaryExpr(BinOp.Xor, _v("a"), _v("b")), BinaryExpr(BinOp.BitAnd, _v("b"), _v("c"))),
        BinaryExpr(BinOp.BitShiftLeft, BinaryExpr(BinOp.Add, _v("a"), _v("b")), _v("c")),
        UnaryExpr(UnOp.BitNot, BinaryExpr(BinOp.FloorMod, _v("a"), _v("b"))),
        BinaryExpr(BinOp.Max, BinaryExpr(BinOp.FloatDiv, _v("a"), _v("b")), UnaryExpr(UnOp.Abs, _v("c"))),
        ConstFloat(-2.5),
        ConstInt(-7, DataType.INT32),
    ],
)
def test_expression_roundtrip(expr: Expr) -> None:
    _expr_roundtrip(expr)


STATEMENT_FORMS = {
    "assign_and_types": """
        @pl.function
        def main(self, a: pl.Tensor[[4, 8], pl.FP32], n: pl.INDEX, t: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec],
                 arr: pl.Array[8, pl.INT32], io: pl.InOut[pl.Tensor[[4, 8], pl.FP32]], u):
            x: pl.INT64 = pl.const(3, pl.INT64)
            y = pl.exp(a)
            z: pl.Tile[[16, 16], pl.FP16] = pl.add(t, t)
            w = a[0:2, n]
            v = a[n, :]
            s = a[1:, :n]
            q = [1, 2.5, True, 'str', pl.FP32, pl.Mem.Vec]
            r = (n, n + 1)
            arr[n] = 3
            io[0:2, n] = w
            pl.tile.store(t, [0, 0], a)
            return y
        """,
    "tuple_unpack": """
        @pl.function
        def pair(self, x: pl.INDEX) -> tuple[pl.INDEX, pl.INDEX]:
            return x, x + 1

        @pl.function
        def main(self, a: pl.INDEX):
            p, q = self.pair(a)
            r, s = self.pair(p)
            return p + r
        """,
    "unknown_unpack": """
        @pl.function
        def pair(self, x):
            return x, x

        @pl.function
        def main(self, a):
            p, q = self.pair(a)
            return q
        """,
    "if_forms": """
        @pl.function
        def main(self, c: pl.BOOL, a: pl.INDEX, b: pl.INDEX):
            if c:
                y1 = pl.yield_(a)
            else:
                y1 = pl.yield_(b)
            if c and a < b:
                y2, y3 = pl.yield_(a, b)
            else:
                y2, y3 = pl.yield_(b, a)
            if not c:
                t = 1
            elif a > 1:
                t = 2
            else:
                pass
            return y1 + y2
        """,
    "loops": """
        @pl.function
        def main(self, n: pl.INDEX, a: pl.Tensor[[4], pl.FP32]):
            s_init: pl.INT64 = 0
            for i, (s, acc) in pl.range(2, n, 2, init_values=(s_init, a)):
                acc2 = pl.add(acc, acc)
                s_out, acc_out = pl.yield_(s + i, acc2)
            for i in pl.parallel(n):
                for j in pl.range(i, n):
                    if j > 3:
                        break
                    continue
            for k in pl.unroll(4):
                pass
            return s_out
        """,
    "whiles": """
        @pl.function
        def main(self, n: pl.INT64):
            i: pl.Scalar[pl.INT64] = 0
            while i < n:
                i = i + 1
            x_init: pl.Scalar[pl.INT64] = 0
            for (x, y) in pl.while_(init_values=(x_init, i)):
                pl.cond(x < n)
                x_next, y_next = pl.yield_(x + 1, y)
            for (x,) in pl.while_(init_values=(x_init,)):
                pl.cond(x < n)
                x = x + 1
            return x_next
        """,
    "scopes": """
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a):
            return a

        @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
        def main(self, a, b):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint='k'):
                c = pl.exp(a)
            with pl.at(level=pl.Level.HOST) as tid:
                pl.system.set_ffts(a)
            with pl.cluster():
                pass
            with pl.graph('g', dumps=[a, c]):
                pass
            with pl.spmd(8, deps=[tid]) as tid2:
                t = pl.submit(self.kernel, a, deps=[tid], dumps=[a])
            for i in pl.spmd(4):
                x = pl.tile.get_block_idx()
            for _ in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                pass
            with pl.scope(mode=pl.ScopeMode.MANUAL):
                pl.dump_tag(a)
                d = self.kernel(a)
            with pl.at(level=pl.Level.CORE_GROUP):
                e = pl.exp(a)
            with pl.manual_scope():
                pass
            return tid2
        """,
}


@pytest.mark.parametrize("name", sorted(STATEMENT_FORMS))
def test_statement_forms_roundtrip(name: str) -> None:
    roundtrip(wrap(STATEMENT_FORMS[name]))


def test_unpack_is_resugared_and_desugarings_are_not() -> None:
    text = python_print(roundtrip(wrap(STATEMENT_FORMS["tuple_unpack"] + STATEMENT_FORMS["assign_and_types"]
                                       .replace("def main", "def other"))))
    assert "p, q = self.pair(a)" in text
    assert "ret__tmp" not in text
    assert "arr = pl.array.update_element(arr, n, pl.const(3, pl.INT32))" in text  # the array's dtype
    assert "io = pl.tensor.assemble(io, pl.tensor.reshape(w, [2, 1]), [0, n])" in text


def test_unpack_tmp_used_elsewhere_prints_literally() -> None:
    prog = parse_program(wrap(STATEMENT_FORMS["unknown_unpack"]))
    main = prog.functions["main"]
    assert isinstance(main.body, SeqStmts)
    tmp_assign, p_assign, q_assign, _ret = main.body.stmts
    assert isinstance(tmp_assign, AssignStmt)
    edited = SeqStmts((tmp_assign, p_assign, q_assign, ReturnStmt((tmp_assign.var,))))
    text = python_print(Program("P", (Function("main", main.param_list, body=edited), *prog.function_list[:1])))
    assert "ret__tmp_v0 = self.pair(a)" in text and "p = ret__tmp_v0[0]" in text
    again = parse_program(text)
    assert python_print(again) == text


@pytest.mark.parametrize("name", sorted(SEED_000))
def test_seed_000_roundtrip(name: str) -> None:
    roundtrip(SEED_000[name])


def test_seed_004_roundtrip() -> None:
    roundtrip(wrap(SEED_004_BODY))


def test_print_statement_and_function_directly() -> None:
    prog = parse_program(wrap(STATEMENT_FORMS["loops"]))
    fn = prog.functions["main"]
    # Printed by itself, a function has no `self` (a module-level function), and parses back so.
    assert python_print(fn).startswith("@pl.function\ndef main(n: pl.Scalar[pl.INDEX]")
    assert_structural_equal(parse_function(python_print(fn)), fn)
    assert isinstance(fn.body, SeqStmts)
    loop_text = python_print(fn.body.stmts[1])
    assert loop_text.splitlines()[0] == "for i, (s, acc) in pl.range(2, n, 2, init_values=(s_init, a)):"
    assert loop_text.splitlines()[-1] == "    s_out, acc_out = pl.yield_(s + i, acc2)"
    assert python_print(Call("add", (ConstInt(1), ConstInt(2)))) == "pl.add(1, 2)"


def _hand_built_while(*, annotated: bool = True) -> tuple[WhileStmt, Var]:
    """`for (x,) in pl.while_(init_values=(0,)): pl.cond(x < 10); x_final = pl.yield_(x + 1)`."""
    x = IterArg("x", ScalarType(DataType.INDEX), ConstInt(0))
    final = Var("x_final", ScalarType(DataType.INDEX))
    body = SeqStmts([YieldStmt([BinaryExpr(BinOp.Add, x, ConstInt(1))], annotated=annotated)])
    return WhileStmt(BinaryExpr(BinOp.Lt, x, ConstInt(10)), [x], body, [final], natural=False), final


def test_a_yield_built_by_hand_prints_its_result_type_unless_concise() -> None:
    loop, _ = _hand_built_while()
    assert python_print(loop).splitlines()[-1] == "    x_final: pl.Scalar[pl.INDEX] = pl.yield_(x + 1)"
    assert python_print(loop, concise=True).splitlines()[-1] == "    x_final = pl.yield_(x + 1)"
    unannotated, _ = _hand_built_while(annotated=False)  # as a pass that builds a yield may say
    assert python_print(unannotated).splitlines()[-1] == "    x_final = pl.yield_(x + 1)"


def test_a_parsed_yield_prints_the_annotation_its_source_wrote() -> None:
    source = wrap(
        """
        @pl.function
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for i, (a,) in pl.range(n, init_values=(0,)):
                b = pl.yield_(a + i)
            for j, (c,) in pl.range(n, init_values=(b,)):
                d: pl.Scalar[pl.INDEX] = pl.yield_(c + j)
            for k, (e, f) in pl.range(n, init_values=(d, d)):
                g, h = pl.yield_(e + k, f)
            return g + h
        """
    )
    text = python_print(roundtrip(source))
    assert "        b = pl.yield_(a + i)" in text
    assert "        d: pl.Scalar[pl.INDEX] = pl.yield_(c + j)" in text
    assert "        g, h = pl.yield_(e + k, f)" in text


def test_a_function_level_yield_prints_as_return() -> None:
    # Functions return, loops yield: a hand-built body ending in a yield outside any loop or if.
    x = Var("x", ScalarType(DataType.INDEX))
    body = SeqStmts([SeqStmts([AssignStmt(x, ConstInt(1), annotated=False), YieldStmt([x])])])
    fn = Function("f", [], [ScalarType(DataType.INDEX)], body)
    assert python_print(fn).splitlines()[-1] == "    return x"
    assert python_print(parse_function(python_print(fn))) == python_print(fn)
    loop, final = _hand_built_while()
    text = python_print(Function("g", [], [ScalarType(DataType.INDEX)], SeqStmts([loop, YieldStmt([final])])))
    assert "x_final: pl.Scalar[pl.INDEX] = pl.yield_(x + 1)" in text and text.endswith("\n    return x_final")
    assert python_print(YieldStmt([x])) == "pl.yield_(x)"  # a statement printed alone stays itself
