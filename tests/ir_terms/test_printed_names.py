"""The printer never prints two distinct Vars as one identifier, and marks a function's free uses.

Distinct Vars that share a name print as `acc`, `acc_1`, ..., as PyPTO's printer prints them,
whether built by hand or parsed (a loop header's Vars are its own), and the text reads back as the
same program; printed once, a program's names are all distinct, so it prints again as it is."""

from __future__ import annotations

import random
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser import SEED_000, SEED_004_BODY
from test_printer_roundtrip import STATEMENT_FORMS, wrap

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    ConstInt,
    Expr,
    ForStmt,
    Function,
    IterArg,
    Program,
    ReturnStmt,
    SeqStmts,
    Stmt,
    Var,
    YieldStmt,
)
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printed_names import FREE_VAR_MARKER, printed_names, renamed
from nanopto.ir_terms.printer import TMP_MARKER, python_print
from nanopto.ir_terms.schema import walk
from nanopto.ir_terms.structural import assert_structural_equal, structural_equal
from nanopto.ir_terms.types import ScalarType, TensorType
from nanopto.verify.strategies import programs

INDEX = ScalarType(DataType.INDEX)
I32 = ScalarType(DataType.INT32)


def add(a: Expr, b: Expr) -> BinaryExpr:
    return BinaryExpr(BinOp.Add, a, b)


def program(*functions: Function) -> Program:
    return Program("P", functions)


def reads_back(prog: Program) -> str:
    """The printed text, which parses back to a program structurally equal to `prog`."""
    text = python_print(prog)
    assert_structural_equal(parse_program(text), prog)
    return text


def body_of(text: str) -> str:
    """The statements of the program's only function, dedented."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def ")) + 1
    return textwrap.dedent("\n".join(line for line in lines[start:] if line.strip())) + "\n"


def test_two_function_level_vars_with_one_name_print_apart() -> None:
    a = Var("a", I32)
    t, t_again = Var("t", I32), Var("t", I32)
    body = SeqStmts([AssignStmt(t, add(a, ConstInt(1))), AssignStmt(t_again, add(t, t)), ReturnStmt([t_again])])
    prog = program(Function("f", [a], [I32], body))
    # Printed with the one name, the text reads back as a single `t` assigned twice: another program.
    same_name = python_print(prog).replace("t_1", "t")
    assert not structural_equal(parse_program(same_name), prog)
    assert body_of(reads_back(prog)) == "t: pl.Scalar[pl.INT32] = a + 1\nt_1: pl.Scalar[pl.INT32] = t + t\nreturn t_1\n"


def test_an_iter_arg_that_hides_a_variable_the_body_reads_is_renamed() -> None:
    x = Var("x", INDEX)
    carried = IterArg("x", INDEX, x)
    i, out = Var("i", INDEX), Var("out", INDEX)
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), [carried], SeqStmts([YieldStmt([add(carried, x)])]), [out])
    prog = program(Function("f", [x], [INDEX], SeqStmts([loop, ReturnStmt([out])])))
    assert body_of(reads_back(prog)) == (
        "for i, (x_1,) in pl.range(4, init_values=(x,)):\n"
        "    out: pl.Scalar[pl.INDEX] = pl.yield_(x_1 + x)\n"
        "return out\n"
    )


def test_a_suffix_skips_the_names_other_variables_have() -> None:
    v, v_again, v_1 = Var("v", I32), Var("v", I32), Var("v_1", I32)
    body = SeqStmts(
        [
            AssignStmt(v_1, ConstInt(1)),
            AssignStmt(v_again, add(v, v_1)),
            ReturnStmt([add(v, v_again)]),
        ]
    )
    text = reads_back(program(Function("f", [v], [I32], body)))
    assert "v_2: pl.Scalar[pl.INT32] = v + v_1" in text and "return v + v_2" in text


def test_a_variable_defined_and_used_keeps_its_definition_name_everywhere() -> None:
    first, second = Var("s", I32), Var("s", I32)
    body = SeqStmts([AssignStmt(first, ConstInt(1)), AssignStmt(second, add(first, first)), ReturnStmt([add(second, first)])])
    text = reads_back(program(Function("f", [], [I32], body)))
    assert body_of(text) == "s: pl.Scalar[pl.INT32] = 1\ns_1: pl.Scalar[pl.INT32] = s + s\nreturn s_1 + s\n"


def test_a_use_the_function_never_binds_is_marked_free() -> None:
    a, leaked, stray = Var("a", I32), Var("a", I32), Var("stray", I32)
    local = Var("local", I32)
    body = SeqStmts([AssignStmt(local, add(a, stray)), ReturnStmt([add(local, leaked)])])
    text = python_print(Function("f", [a], [I32], body))
    assert f"local: pl.Scalar[pl.INT32] = a + stray{FREE_VAR_MARKER}" in text
    assert f"return local + a_1{FREE_VAR_MARKER}" in text
    assert f"a{FREE_VAR_MARKER}" not in text and f"local{FREE_VAR_MARKER}" not in text


def test_a_statement_printed_alone_has_no_free_variables_but_is_disambiguated() -> None:
    outer, other = Var("u", I32), Var("u", I32)
    result = Var("r", I32)
    assert python_print(AssignStmt(result, add(outer, ConstInt(1)))) == "r: pl.Scalar[pl.INT32] = u + 1"
    assert python_print(AssignStmt(result, add(outer, other))) == "r: pl.Scalar[pl.INT32] = u + u_1"


def test_symbolic_dimensions_are_never_renamed_nor_marked() -> None:
    n = Var("N", INDEX)  # free in the function: the program's dimension N
    local_n = Var("N", I32)
    a = Var("a", TensorType([n], DataType.FP32))
    body = SeqStmts([AssignStmt(local_n, ConstInt(3)), ReturnStmt([local_n])])
    text = reads_back(program(Function("f", [a], [I32], body)))
    assert 'N = pl.dynamic("N")' in text and "def f(self, a: pl.Tensor[[N], pl.FP32])" in text
    assert "N_1: pl.Scalar[pl.INT32] = 3" in text and FREE_VAR_MARKER not in text


def _counting_loop(total: Var) -> Stmt:
    """`for i, (acc,) in pl.range(8, init_values=(acc,)): acc = pl.yield_(acc + i)`, its own `i`
    and carried `acc`, its result the outer `acc`."""
    carried = IterArg("acc", INDEX, total)
    i = Var("i", INDEX)
    return ForStmt(i, ConstInt(0), ConstInt(8), ConstInt(1), [carried], SeqStmts([YieldStmt([add(carried, i)])]), [total])


def test_sibling_loops_headers_print_apart() -> None:
    # Two sibling loops that both count with `i` and carry an `acc` (five Vars, two names): each
    # distinct Var prints under a name of its own, in the order parameters, then definitions.
    acc = Var("acc", INDEX)
    prog = program(Function("f", [acc], [INDEX], SeqStmts([_counting_loop(acc), _counting_loop(acc), ReturnStmt([acc])])))
    assert body_of(reads_back(prog)) == (
        "for i, (acc_1,) in pl.range(8, init_values=(acc,)):\n"
        "    acc: pl.Scalar[pl.INDEX] = pl.yield_(acc_1 + i)\n"
        "for i_1, (acc_2,) in pl.range(8, init_values=(acc,)):\n"
        "    acc: pl.Scalar[pl.INDEX] = pl.yield_(acc_2 + i_1)\n"
        "return acc\n"
    )


def test_sibling_loops_printed_without_their_function_print_apart() -> None:
    first, second = _counting_loop(Var("acc", INDEX)), _counting_loop(Var("acc", INDEX))
    text = python_print(SeqStmts([first, second]))
    assert text.count("for i, (acc,) in pl.range(8, init_values=(acc_1,)):") == 1
    assert text.count("for i_1, (acc_2,) in pl.range(8, init_values=(acc_3,)):") == 1


def test_a_result_that_would_read_back_as_the_variable_it_shadows_is_renamed() -> None:
    # The loop's result is a new Var named like the parameter: `acc = pl.yield_(...)` would rebind
    # the parameter, so the result prints as `acc_2` (the iter arg, bound first, is `acc_1`).
    acc, result, i = Var("acc", INDEX), Var("acc", INDEX), Var("i", INDEX)
    carried = IterArg("acc", INDEX, acc)
    loop = ForStmt(i, ConstInt(0), ConstInt(8), ConstInt(1), [carried], SeqStmts([YieldStmt([add(carried, i)])]), [result])
    text = reads_back(program(Function("f", [acc], [INDEX], SeqStmts([loop, ReturnStmt([add(result, acc)])]))))
    assert "for i, (acc_1,) in pl.range(8, init_values=(acc,)):" in text
    assert "acc_2: pl.Scalar[pl.INDEX] = pl.yield_(acc_1 + i)" in text and "return acc_2 + acc" in text


def test_a_parsed_program_prints_its_header_names_apart_and_then_as_printed() -> None:
    source = textwrap.dedent(
        """\
        # nanopto.program: P
        import nanopto.language as pl


        @pl.program
        class P:
            @pl.function
            def f(self, n: pl.Scalar[pl.INDEX], acc: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                for i in pl.range(n):
                    x = i
                for i, (acc,) in pl.range(n, init_values=(acc,)):
                    acc = pl.yield_(acc + i)
                for (acc,) in pl.while_(init_values=(acc,)):
                    pl.cond(acc < n)
                    acc = pl.yield_(acc + 1)
                if n > 2:
                    m = pl.yield_(acc)
                else:
                    m = pl.yield_(n)
                return m

            @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
            def g(self, a):
                for i in pl.spmd(4):
                    x = i + 1
                for i in pl.spmd(4):
                    y = i * 2
                return a
        """
    )
    prog = parse_program(source)
    names: dict[str, set[int]] = {}
    for var in (v for v in _vars(prog)):
        names.setdefault(var.name, set()).add(var.id)
    assert len(names["i"]) == 4 and len(names["acc"]) == 3  # distinct Vars, one name each
    text = python_print(prog)
    assert text == (
        source.replace("for i, (acc,) in pl.range(n, init_values=(acc,)):", "for i_1, (acc_1,) in pl.range(n, init_values=(acc,)):")
        .replace("acc = pl.yield_(acc + i)", "acc = pl.yield_(acc_1 + i_1)")
        .replace("for (acc,) in pl.while_(init_values=(acc,)):", "for (acc_2,) in pl.while_(init_values=(acc,)):")
        .replace("pl.cond(acc < n)", "pl.cond(acc_2 < n)")
        .replace("acc = pl.yield_(acc + 1)", "acc = pl.yield_(acc_2 + 1)")
        .replace("for i in pl.spmd(4):\n            y = i * 2", "for i_1 in pl.spmd(4):\n            y = i_1 * 2")
    )
    again = parse_program(text)
    assert_structural_equal(again, prog)
    assert python_print(again) == text


def _vars(prog: Program) -> list[Var]:
    return [node for node in walk(prog) if isinstance(node, Var)]


def _names_collided(prog: Program, rng: random.Random) -> Program:
    """`prog` with some of its variables renamed to another variable's name, as a buggy pass might
    leave it (a tuple temporary keeps its name: the printer re-sugars it by name)."""
    functions = []
    for fn in prog.function_list:
        distinct = list({v.id: v for v in _vars(Program("P", (fn,))) if TMP_MARKER not in v.name}.values())
        names: dict[int, str] = {}
        for _ in range(rng.randint(1, 3) if len(distinct) > 1 else 0):
            a, b = rng.sample(distinct, 2)
            names[a.id] = b.name
        functions.append(renamed(fn, names))
    return Program(prog.name, tuple(functions))


@settings(max_examples=40, deadline=None)
@given(programs(aliasing=True), st.randoms(use_true_random=False))
def test_drawn_programs_with_collided_names_read_back_as_themselves(prog: Program, rng: random.Random) -> None:
    reads_back(_names_collided(prog, rng))


FORMS = {**{f"seed-000 {k}": v for k, v in SEED_000.items()}, "seed-004": wrap(SEED_004_BODY)}
FORMS.update((f"form {k}", wrap(v)) for k, v in STATEMENT_FORMS.items())


@pytest.mark.parametrize("name", sorted(FORMS))
def test_statement_forms_with_collided_names_read_back_as_themselves(name: str) -> None:
    # Every statement form (pl.while_, natural while, if with results, with ... as, for-form scopes,
    # nested loops): the printer's scoping agrees with the parser's.
    prog = parse_program(python_print(parse_program(textwrap.dedent(FORMS[name]))))
    for fn in prog.function_list:  # printed once, every Var keeps its name
        occurrences = [v for v in walk(fn) if isinstance(v, Var)]
        assert printed_names(occurrences, [p.var for p in fn.param_list], fn.body, closed=True) == {}
    rng = random.Random(name)
    for _ in range(20):
        reads_back(_names_collided(prog, rng))


def test_an_auto_name_takes_its_suffix_on_the_base() -> None:
    # `t__inline_arg_v0_1` would break the auto-name grammar, which the parser enforces.
    first, second = Var("t__inline_arg_v0", I32), Var("t__inline_arg_v0", I32)
    body = SeqStmts([AssignStmt(first, ConstInt(1)), AssignStmt(second, add(first, first)), ReturnStmt([second])])
    text = reads_back(program(Function("f", [], [I32], body)))
    assert "t_1__inline_arg_v0: pl.Scalar[pl.INT32] = t__inline_arg_v0 + t__inline_arg_v0" in text
