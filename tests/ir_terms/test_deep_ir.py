"""IR built by hand, far deeper than the parser accepts: the printer, `Mutator`, `walk`,
`structural_equal` and `structural_hash` use explicit stacks, not recursion (docs/errors.md,
"Deep and large inputs"). Blocks nested past `MAX_PRINTED_BLOCKS` are a clear error when printed.
"""

from __future__ import annotations

import ast

import pytest

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.printer import MAX_PRINTED_BLOCKS, NestingTooDeepToPrintError, print_expr, python_print
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.ir_terms.structural import structural_equal, structural_hash
from nanopto.ir_terms.types import ScalarType

DEPTHS = [21_000, pytest.param(100_000, marks=pytest.mark.soak)]
"""CI builds 21,000 levels, deeper than any recursion limit nanopto sets (20,000, while encoding
terms), so a walk that recursed would fail here too (and no deeper: each level costs time); the
soak tier builds the 100,000 levels docs/errors.md names."""
INDEX = ScalarType(DataType.INDEX)


def _left_chain(k: n.Var, depth: int) -> n.Expr:
    expr: n.Expr = k
    for _ in range(depth):
        expr = n.BinaryExpr(n.BinOp.Add, expr, k)
    return expr


def _right_chain(k: n.Var, depth: int) -> n.Expr:
    expr: n.Expr = k
    for _ in range(depth):
        expr = n.BinaryExpr(n.BinOp.Sub, k, expr)
    return expr


def _call_chain(k: n.Var, depth: int) -> n.Expr:
    expr: n.Expr = k
    for _ in range(depth):
        expr = n.Call("add", (expr, k))
    return expr


def _program(body: n.Stmt, k: n.Var) -> n.Program:
    return n.Program("P", (n.Function("main", (n.Param(k),), return_types=(INDEX,), body=body),))


def _assigning(expr: n.Expr, k: n.Var) -> n.Program:
    m = n.Var("m", INDEX)
    return _program(n.SeqStmts((n.AssignStmt(m, expr), n.ReturnStmt((m,)))), k)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_chain_prints_left_and_right_nested(depth: int) -> None:
    k = n.Var("k", INDEX)
    assert print_expr(_left_chain(k, depth)) == " + ".join(["k"] * (depth + 1))
    assert print_expr(_right_chain(k, depth)) == "k - (" * (depth - 1) + "k - k" + ")" * (depth - 1)
    assert print_expr(_call_chain(k, depth)) == "pl.add(" * depth + "k" + ", k)" * depth
    assert python_print(_assigning(_left_chain(k, depth), k)).count(" + ") == depth


@pytest.mark.parametrize(
    ("make", "depth"),
    [(_left_chain, DEPTHS[0]), pytest.param(_left_chain, 100_000, marks=pytest.mark.soak), (_call_chain, 10_000)],
    ids=["binary", "binary-100000", "call"],
)
def test_a_deep_chain_compares_and_hashes_up_to_renaming(make: object, depth: int) -> None:
    assert callable(make)
    k1, k2 = n.Var("k", INDEX), n.Var("j", INDEX)
    a, b = _assigning(make(k1, depth), k1), _assigning(make(k2, depth), k2)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, _assigning(make(k2, depth - 1), k2))


class _Rename(Mutator):
    def __init__(self, old: n.Var, new: n.Var) -> None:
        self.old, self.new = old, new

    def visit_Var(self, var: n.Var) -> n.Var:
        return self.new if var == self.old else var


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_mutator_rebuilds_a_deep_chain(depth: int) -> None:
    k, j = n.Var("k", INDEX), n.Var("j", INDEX)
    chain = _left_chain(k, depth)
    assert Mutator().visit(chain) is chain  # the identity rebuilds nothing
    renamed = _Rename(k, j).visit(chain)
    assert renamed is not chain
    assert sum(1 for node in walk(renamed) if node == j) == depth + 1
    assert not any(node == k for node in walk(renamed))


def test_a_mutator_visits_children_left_to_right_each_before_the_next() -> None:
    k = n.Var("k", INDEX)
    a, b, c = n.Var("a", INDEX), n.Var("b", INDEX), n.Var("c", INDEX)
    seen: list[str] = []

    class Order(Mutator):
        def visit_Var(self, var: n.Var) -> n.Var:
            seen.append(var.name)
            return var

    Order().visit(n.BinaryExpr(n.BinOp.Add, n.BinaryExpr(n.BinOp.Mul, a, b), n.Call("f", (c, k))))
    assert seen == ["a", "b", "c", "k"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_deeply_nested_seq_stmts_print_as_one_block(depth: int) -> None:
    k = n.Var("k", INDEX)
    body: n.Stmt = n.ReturnStmt((k,))
    for _ in range(depth):
        body = n.SeqStmts((n.EvalStmt(n.Call("f", (k,))), body))
    program = _program(body, k)
    text = python_print(program)
    assert text.count("        pl.f(k)\n") == depth and text.endswith("        return k\n")
    assert Mutator().visit(program) is program


def _if_nest(k: n.Var, depth: int) -> n.Program:
    body: n.Stmt = n.ReturnStmt((k,))
    for _ in range(depth):
        body = n.IfStmt(k, body)
    return _program(body, k)


@pytest.mark.parametrize("depth", DEPTHS)
def test_statements_indented_as_deep_as_python_reads_print_and_deeper_is_a_clear_error(depth: int) -> None:
    k = n.Var("k", INDEX)
    deepest = _if_nest(k, MAX_PRINTED_BLOCKS - 2)  # a function's body is at level 2
    text = python_print(deepest)
    assert text.splitlines()[-1] == "    " * MAX_PRINTED_BLOCKS + "return k"
    ast.parse(text)  # the deepest text the printer writes, Python reads
    with pytest.raises(SyntaxError, match="too many levels of indentation"):
        ast.parse(text.replace("return k", "if k:\n" + "    " * (MAX_PRINTED_BLOCKS + 1) + "return k"))
    with pytest.raises(NestingTooDeepToPrintError, match="indented more than 99 levels"):
        python_print(_if_nest(k, MAX_PRINTED_BLOCKS - 1))
    with pytest.raises(NestingTooDeepToPrintError, match="indented more than 99 levels"):
        python_print(_if_nest(k, depth))
    program = _if_nest(k, depth)  # the rest of the machinery takes it
    assert Mutator().visit(program) is program
    assert structural_equal(_if_nest(k, 10_000), _if_nest(n.Var("j", INDEX), 10_000))
