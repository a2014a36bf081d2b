"""The printer's Var occurrences (what its renaming, dimension scan and use counts read) are the
generic walk's, whatever the statements' types hold: its direct reading of simple assignments
must skip no variable of a type (a symbolic dimension) and keep the walk's order."""

from __future__ import annotations

import textwrap

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printed_names import definitions
from nanopto.ir_terms.printer import _var_occurrences, python_print
from nanopto.ir_terms.schema import nodes_of_class

SOURCE = """
import nanopto.language as pl
N = pl.dynamic("N")

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[8, 4], pl.FP32], d: pl.Tensor[[N, 4], pl.FP32], k: pl.Scalar[pl.INDEX]):
        b: pl.Tensor[[8, 4], pl.FP32] = pl.add(a, a)
        c = b
        e: pl.Tensor[[N, 4], pl.FP32] = pl.mul(d, d)
        f = e
        g: pl.Tensor[[8, 4], pl.FP32] = pl.sub(b, c)
        m = k + 1
        return g, f, m
"""


def test_occurrences_are_the_generic_walks_with_typed_and_dimensioned_vars() -> None:
    program = parse_program(textwrap.dedent(SOURCE))
    for fn in program.function_list:
        walked = nodes_of_class(fn, (n.Var,))
        assert [v.name for v in walked].count("N") > 1  # read from the types of d, e and f
        assert [id(v) for v in _var_occurrences(fn)] == [id(v) for v in walked]


def test_a_dimensioned_program_prints_its_dimension() -> None:
    printed = python_print(parse_program(textwrap.dedent(SOURCE)))
    assert 'N = pl.dynamic("N")' in printed
    assert python_print(parse_program(printed)) == printed


def test_a_call_on_dimensioned_vars_assigned_to_an_untyped_target() -> None:
    """A statement a pass built: its target's type holds nothing, its arguments' types hold N."""
    main = parse_program(textwrap.dedent(SOURCE)).function_list[0]
    d = main.param_list[1].var
    stmt = n.AssignStmt(n.Var("s"), n.Call("tensor.add", (d, d)))
    walked = nodes_of_class(stmt, (n.Var,))
    assert [v.name for v in walked] == ["s", "d", "N", "d", "N"]
    assert [id(v) for v in _var_occurrences(n.SeqStmts((stmt,)))] == [id(v) for v in walked]


BLOCKS = """
import nanopto.language as pl

@pl.program
class Q:
    @pl.function
    def main(self, a: pl.Tensor[[8, 4], pl.FP32], n: pl.Scalar[pl.INDEX]):
        b = pl.add(a, a)
        for i, (acc,) in pl.range(n, init_values=(b,)):
            c = pl.mul(acc, acc)
            if i < 2:
                d = pl.add(c, c)
                e = pl.yield_(d)
            else:
                e = pl.yield_(c)
            acc_next = pl.yield_(e)
        with pl.manual_scope():
            f = pl.sub(acc_next, b)
        g = f
        return g
"""


def test_the_bindings_read_in_the_same_walk_are_the_definitions() -> None:
    """What the renaming reads as bound, in the order it renames in: `definitions` of the body,
    for the assignments read directly and for the loops, ifs and scopes walked."""
    for source in (SOURCE, BLOCKS):
        for fn in parse_program(textwrap.dedent(source)).function_list:
            defs: list[n.Var] = []
            _var_occurrences(fn, defs)
            assert len(defs) > 5
            assert [id(v) for v in defs] == [id(v) for v in definitions(fn.body)]
