"""The derived walks agree: `walk`, `nodes_of` and `nodes_of_class` see the same nodes in the same
pre-order, including the expressions inside a Var's type, an IterArg's initial value and a
launch, whether or not a `remembered_walks` scope is open."""

from __future__ import annotations

import textwrap

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import nodes_of, nodes_of_class, remembered_walks, walk

SOURCE = """
import nanopto.language as pl
N = pl.dynamic("N")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def double(self, x: pl.Tensor[[N, 4], pl.FP32]) -> pl.Tensor[[N, 4], pl.FP32]:
        y: pl.Tensor[[N, 4], pl.FP32] = pl.add(x, x)
        return y

    @pl.function
    def main(self, a: pl.Tensor[[8, 4], pl.FP32], k: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 4], pl.FP32]:
        r = self.double(a)
        for i, (acc,) in pl.range(0, k + 1, 1, init_values=(self.double(r),)):
            t = pl.add(acc, self.double(acc))
            acc = pl.yield_(t)
        return acc
"""


def _program() -> n.Program:
    return parse_program(textwrap.dedent(SOURCE))


def test_nodes_of_is_walk_in_and_out_of_a_remembered_scope() -> None:
    program = _program()
    walked = list(walk(program))
    assert any(isinstance(node, n.IterArg) for node in walked)
    symbols = [node for node in walked if isinstance(node, n.Var) and node.name == "N"]
    assert symbols, "the symbol inside a parameter's type is walked"
    assert list(nodes_of(program)) == walked and all(a is b for a, b in zip(nodes_of(program), walked, strict=True))
    with remembered_walks():
        assert all(a is b for a, b in zip(nodes_of(program), walked, strict=True))
        assert nodes_of(program) is nodes_of(program)


def test_nodes_of_class_is_the_walk_filtered() -> None:
    program = _program()
    walked = list(walk(program))
    for classes in [(n.Call,), (n.Call, n.Submit), (n.Var,), (n.IterArg,), (n.AssignStmt, n.ConstInt), (n.Submit,)]:
        expected = [node for node in walked if isinstance(node, classes)]
        found = nodes_of_class(program, classes)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True)), classes
        with remembered_walks():  # there it filters the remembered walk
            found = nodes_of_class(program, classes)
            assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True)), classes
    calls = nodes_of_class(program, (n.Call,))
    # `r = ...`, the loop body's, and the loop's initial value, met at the IterArg's declaration
    # and at each of its two uses (an IterArg's children include its initial value)
    assert sum(1 for c in calls if isinstance(c, n.Call) and c.op == "double") == 5


def test_nodes_of_class_is_the_walk_filtered_where_vars_share_one_type() -> None:
    # After inlining, one type object annotates every copy of a helper's Var: what it holds is
    # found once per type object, and the result is still the walk, filtered.
    from nanopto.ir_terms.types import ScalarType, UnknownType
    from nanopto.passes.hoist_nested_calls import hoist_program
    from nanopto.passes.inlining import inline_program

    program = inline_program(hoist_program(_program())).program
    typed = [v for v in walk(program) if isinstance(v, n.Var) and not isinstance(v.type, (UnknownType, ScalarType))]
    assert len({id(v.type) for v in typed}) < len(typed), "some Vars share one type object"
    walked = list(walk(program))
    for classes in [(n.Var,), (n.ConstInt,), (n.Var, n.ConstInt), (n.Call,)]:
        expected = [node for node in walked if isinstance(node, classes)]
        found = nodes_of_class(program, classes)
        assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True)), classes
