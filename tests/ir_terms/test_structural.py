"""Structural equality: alpha-equivalence, first-difference reports, and a consistent hash."""

from __future__ import annotations

import pytest

from nanopto.ir_terms.dtypes import DataType, MemorySpace
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    Call,
    ConstFloat,
    ConstInt,
    Expr,
    ForStmt,
    Function,
    FunctionType,
    IterArg,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    SeqStmts,
    Span,
    Stmt,
    Var,
    YieldStmt,
)
from nanopto.ir_terms.structural import (
    assert_structural_equal,
    first_difference,
    structural_equal,
    structural_hash,
)
from nanopto.ir_terms.types import ScalarType, TensorType, TileType, TupleType, UnknownType

FP32 = DataType.FP32


def tensor(*dims: Expr | int) -> TensorType:
    return TensorType(tuple(ConstInt(d) if isinstance(d, int) else d for d in dims), FP32)


def add(lhs: Expr, rhs: Expr) -> BinaryExpr:
    return BinaryExpr(BinOp.Add, lhs, rhs)


def chain(names: tuple[str, str, str]) -> Function:
    """`def main(a): x = a; y = x; return y`, with the given local names."""
    a = Var(names[0], tensor(4))
    x = Var(names[1], tensor(4))
    y = Var(names[2], tensor(4))
    body = SeqStmts((AssignStmt(x, a), AssignStmt(y, x), ReturnStmt((y,))))
    return Function("main", (Param(a),), (tensor(4),), body)


def program(*functions: Function, name: str = "P") -> Program:
    return Program(name, functions)


def helper(name: str = "helper", op: str = "tensor.add") -> Function:
    p = Var("p", tensor(4))
    r = Var("r", tensor(4))
    body = SeqStmts((AssignStmt(r, Call(op, (p, p))), ReturnStmt((r,))))
    return Function(name, (Param(p),), (tensor(4),), body, func_type=FunctionType.Inline)


# ---------------------------------------------------------------------------------------------
# Alpha-equivalence
# ---------------------------------------------------------------------------------------------


def test_alpha_renaming_is_equal() -> None:
    assert_structural_equal(chain(("a", "x", "y")), chain(("b", "u", "v")))


def test_same_names_different_ids_are_equal() -> None:
    assert structural_equal(chain(("a", "x", "y")), chain(("a", "x", "y")))


def test_different_binding_structure_is_unequal() -> None:
    a, x, y = Var("a"), Var("x"), Var("y")
    lhs = SeqStmts((AssignStmt(x, a), AssignStmt(y, x)))
    a2, x2, y2 = Var("a"), Var("x"), Var("y")
    rhs = SeqStmts((AssignStmt(x2, a2), AssignStmt(y2, a2)))
    mismatch = first_difference(lhs, rhs, enable_auto_mapping=True)
    assert mismatch is not None
    assert mismatch.path == "stmts[1].value"
    assert "Var mapped to a different Var" in mismatch.reason


def test_mapping_is_checked_in_both_directions() -> None:
    # x + y vs z + z: lhs x->z is fine, then y meets z, which is already taken by x.
    x, y, z = Var("x"), Var("y"), Var("z")
    mismatch = first_difference(add(x, y), add(z, z), enable_auto_mapping=True)
    assert mismatch is not None
    assert mismatch.path == "rhs"
    assert "rhs 'z'" in mismatch.reason
    # x + x vs y + z: lhs x is already mapped to y.
    mismatch = first_difference(add(x, x), add(y, z), enable_auto_mapping=True)
    assert mismatch is not None
    assert "lhs 'x'" in mismatch.reason


def test_free_vars_map_consistently() -> None:
    x, y = Var("x"), Var("y")
    assert structural_equal(add(x, add(x, ConstInt(1))), add(y, add(y, ConstInt(1))), enable_auto_mapping=True)
    assert not structural_equal(add(x, add(x, ConstInt(1))), add(x, add(y, ConstInt(1))), enable_auto_mapping=True)


def test_shared_var_maps_to_itself() -> None:
    x = Var("x")
    assert structural_equal(add(x, x), add(x, x))


def counting_loop(loop_var: Var, body: Stmt) -> ForStmt:
    return ForStmt(loop_var, ConstInt(0), ConstInt(10), ConstInt(1), (), body)


def test_one_object_is_equal_to_itself_without_further_checks() -> None:
    # Before: `for i in range(10): i = 0`; Expected: `for j in range(10): <the same body object>`.
    # The body is one object, so it is equal to itself at once: nothing inside is paired, and
    # the `i` it assigns is not held to the pairing i <-> j (docs/coming-from-pypto.md,
    # "Comparing programs"). The hash has no such shortcut and tells the loops apart, as
    # PyPTO's does: the one place where equal values may hash apart.
    i, j = Var("i", ScalarType(DataType.INT64)), Var("j", ScalarType(DataType.INT64))
    body = AssignStmt(i, ConstInt(0))
    before, expected = counting_loop(i, body), counting_loop(j, body)
    assert_structural_equal(before, expected)
    assert structural_hash(before) != structural_hash(expected)
    assert structural_hash(before) == structural_hash(counting_loop(j, AssignStmt(j, ConstInt(0))))
    # The same body written out again is walked: j is paired with i, then the body assigns i.
    mismatch = first_difference(before, counting_loop(j, AssignStmt(i, ConstInt(0))))
    assert mismatch is not None and "Var mapped to a different Var" in mismatch.reason


def test_the_fast_path_shortcuts_a_shared_function_in_a_program() -> None:
    shared = helper("double")
    assert_structural_equal(program(shared, chain(("a", "x", "y"))), program(shared, chain(("b", "u", "v"))))
    assert structural_equal(program(shared), program(shared))


def test_a_var_met_on_both_sides_keeps_its_pairing() -> None:
    # A Var is not shortcut (nanopto's choice): once x is paired with y, meeting x on both sides
    # is a mismatch, so a pairing stays one-to-one.
    x, y = Var("x"), Var("y")
    mismatch = first_difference(add(y, add(x, ConstInt(1))), add(x, add(x, ConstInt(1))), enable_auto_mapping=True)
    assert mismatch is not None and mismatch.path == "rhs.lhs"


def test_var_types_are_compared_on_first_mapping() -> None:
    x, y = Var("x", ScalarType(DataType.INT32)), Var("y", ScalarType(DataType.INT64))
    mismatch = first_difference(x, y, enable_auto_mapping=True)
    assert mismatch is not None
    assert mismatch.path == "type.dtype"
    assert "DataType mismatch (INT32 != INT64)" in mismatch.reason


def test_shape_exprs_share_the_var_mapping() -> None:
    n1 = Var("N", ScalarType(DataType.INDEX))
    n2 = Var("M", ScalarType(DataType.INDEX))
    m2 = Var("K", ScalarType(DataType.INDEX))
    lhs = SeqStmts((AssignStmt(Var("t", tensor(n1, 4)), n1),))
    same = SeqStmts((AssignStmt(Var("s", tensor(n2, 4)), n2),))
    other = SeqStmts((AssignStmt(Var("s", tensor(n2, 4)), m2),))
    assert structural_equal(lhs, same)
    mismatch = first_difference(lhs, other)
    assert mismatch is not None
    assert mismatch.path == "stmts[0].value"


def test_var_and_iter_arg_classes_must_match() -> None:
    mismatch = first_difference(Var("x"), IterArg("x", init_value=ConstInt(0)))
    assert mismatch is not None
    assert mismatch.reason == "class Var != IterArg"


def test_iter_arg_init_values_are_compared() -> None:
    a = IterArg("acc", init_value=ConstInt(0))
    b = IterArg("acc", init_value=ConstInt(1))
    mismatch = first_difference(a, b, enable_auto_mapping=True)
    assert mismatch is not None
    assert mismatch.path == "init_value.value"


def loop(init: int) -> ForStmt:
    i = Var("i", ScalarType(DataType.INDEX))
    acc = IterArg("acc", ScalarType(DataType.INDEX), init_value=ConstInt(init))
    out = Var("out", ScalarType(DataType.INDEX))
    return ForStmt(i, ConstInt(0), ConstInt(8), ConstInt(1), (acc,), YieldStmt((add(acc, i),)), (out,))


def test_loops_with_iter_args() -> None:
    assert_structural_equal(loop(0), loop(0))
    mismatch = first_difference(loop(0), loop(3))
    assert mismatch is not None
    assert mismatch.path == "iter_args[0].init_value.value"  # the IterArg is met where the loop defines it


# ---------------------------------------------------------------------------------------------
# Fields, types, programs
# ---------------------------------------------------------------------------------------------


def test_spans_and_annotated_flag_are_ignored() -> None:
    x, y = Var("x"), Var("y")
    lhs = AssignStmt(x, ConstInt(1, span=Span("a.py", 3, 0)), annotated=True)
    rhs = AssignStmt(y, ConstInt(1), annotated=False, span=Span("b.py", 9, 4))
    assert_structural_equal(lhs, rhs)
    assert structural_hash(lhs) == structural_hash(rhs)


def test_attribute_difference_names_the_field() -> None:
    x = Var("x")
    mismatch = first_difference(Call("mul", (x,)), Call("add", (x,)))
    assert mismatch is not None
    assert mismatch.reason == "field op: 'mul' != 'add'"


def test_class_difference() -> None:
    mismatch = first_difference(add(ConstInt(1), Var("x")), add(Var("y"), Var("x")))
    assert mismatch is not None
    assert (mismatch.path, mismatch.reason) == ("lhs", "class ConstInt != Var")


def test_argument_count_difference() -> None:
    x = Var("x")
    mismatch = first_difference(Call("f", (x,)), Call("f", (x, x)))
    assert mismatch is not None
    assert mismatch.reason == "field args: 1 elements != 2 elements"


def test_first_difference_follows_field_order() -> None:
    # func_type and body both differ; body is declared first, so it is reported.
    f = helper()
    g = Function(f.name, f.param_list, f.return_types, SeqStmts(()), func_type=FunctionType.Opaque)
    mismatch = first_difference(f, g)
    assert mismatch is not None
    assert mismatch.path == "body.stmts"


def test_const_dtype_and_value() -> None:
    assert not structural_equal(ConstInt(1, DataType.INT32), ConstInt(1, DataType.INT64))
    assert not structural_equal(ConstInt(1), ConstInt(2))
    assert structural_equal(ConstFloat(0.0), ConstFloat(-0.0))
    assert structural_hash(ConstFloat(0.0)) == structural_hash(ConstFloat(-0.0))


@pytest.mark.parametrize(
    ("lhs", "rhs", "reason"),
    [
        (tensor(4), TileType((ConstInt(4),), FP32), "class TensorType != TileType"),
        (tensor(4), tensor(4, 4), "field shape: 1 elements != 2 elements"),
        (tensor(4), tensor(8), "field shape[0]: 4 != 8"),
        (
            TileType((ConstInt(4),), FP32, MemorySpace.Vec),
            TileType((ConstInt(4),), FP32, None),
            "field memory_space: MemorySpace.Vec != None",
        ),
        (
            TupleType((tensor(4), UnknownType())),
            TupleType((tensor(4), tensor(4))),
            "class UnknownType != TensorType",
        ),
    ],
)
def test_type_differences(lhs: object, rhs: object, reason: str) -> None:
    mismatch = first_difference(lhs, rhs)  # type: ignore[arg-type]
    assert mismatch is not None
    assert mismatch.reason == reason


def test_equal_types() -> None:
    assert structural_equal(
        TupleType((tensor(4, 8), ScalarType(FP32))), TupleType((tensor(4, 8), ScalarType(FP32)))
    )


def test_param_direction_is_compared() -> None:
    assert not structural_equal(Param(Var("a")), Param(Var("a"), ParamDirection.InOut))


def test_program_function_order_does_not_matter() -> None:
    lhs = program(helper(), chain(("a", "x", "y")))
    rhs = program(chain(("b", "u", "v")), helper())
    assert_structural_equal(lhs, rhs)
    assert structural_hash(lhs) == structural_hash(rhs)


def test_program_function_sets_must_match() -> None:
    mismatch = first_difference(program(helper(), chain(("a", "x", "y"))), program(chain(("a", "x", "y"))))
    assert mismatch is not None
    assert mismatch.path == "functions"
    assert "only lhs defines ['helper']" in mismatch.reason


def test_program_name_is_ignored() -> None:
    """As in PyPTO, a program's name is a label: `Before` and `Expected` compare equal."""
    lhs, rhs = program(helper(), name="Before"), program(helper(), name="Expected")
    assert structural_equal(lhs, rhs)
    assert structural_hash(lhs) == structural_hash(rhs)


def test_function_name_is_ignored_alone_but_pairs_functions_in_a_program() -> None:
    assert structural_equal(helper("f"), helper("g"))
    assert structural_hash(helper("f")) == structural_hash(helper("g"))
    assert not structural_equal(program(helper("f")), program(helper("g")))


def test_error_message_names_the_path_and_both_fragments() -> None:
    lhs = program(helper(op="tensor.mul"), chain(("a", "x", "y")))
    rhs = program(helper(op="tensor.add"), chain(("a", "x", "y")))
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(lhs, rhs)
    message = str(info.value)
    assert "functions['helper'].body.stmts[0].value" in message
    assert "field op: 'tensor.mul' != 'tensor.add'" in message
    assert "lhs:" in message and "rhs:" in message
    assert "tensor.mul" in message.split("lhs:")[1].split("rhs:")[0]


def test_deep_trees_do_not_recurse() -> None:
    def deep(depth: int) -> tuple[Stmt, Expr]:
        x = Var("x")
        expr: Expr = x
        for k in range(depth):
            expr = add(expr, ConstInt(k))
        stmt: Stmt = AssignStmt(Var("y"), expr)
        for _ in range(depth):
            stmt = SeqStmts((stmt,))
        return stmt, expr

    a, ea = deep(5000)
    b, eb = deep(5000)
    assert structural_equal(a, b, enable_auto_mapping=True)
    assert structural_hash(a, enable_auto_mapping=True) == structural_hash(b, enable_auto_mapping=True)
    assert structural_hash(ea) != structural_hash(add(eb, ConstInt(0)))


# ---------------------------------------------------------------------------------------------
# Hash
# ---------------------------------------------------------------------------------------------


def test_hash_ignores_names_but_not_binding_structure() -> None:
    assert structural_hash(chain(("a", "x", "y"))) == structural_hash(chain(("b", "u", "v")))
    x, y = Var("x"), Var("y")
    assert structural_hash(add(x, x), enable_auto_mapping=True) != structural_hash(add(x, y), enable_auto_mapping=True)
    assert structural_hash(add(x, y), enable_auto_mapping=True) == structural_hash(add(y, x), enable_auto_mapping=True)  # first var, second var
    assert structural_hash(add(x, y)) != structural_hash(add(y, x))  # free Vars hash as themselves


def test_hash_differs_for_different_ops() -> None:
    x = Var("x")
    assert structural_hash(Call("a", (x,))) != structural_hash(Call("b", (x,)))
    assert structural_hash(Var("x", tensor(4))) != structural_hash(Var("x", tensor(8)))
