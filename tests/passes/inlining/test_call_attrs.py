"""A call's `attrs={...}` through InlineFunctions: a spliced call keeps its attributes, and a Var
in an attribute value is substituted and renamed like any other use, by the generated rules."""

from __future__ import annotations

import textwrap

from nanopto import ir, passes
from nanopto.ir_terms.nodes import Call, MakeTuple, Var
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import walk
from nanopto.passes.evaluation_order import vars_read


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


KERNEL = """
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
                return out
"""


def test_a_formal_in_an_attr_becomes_the_actual_and_a_local_its_renamed_copy() -> None:
    """The helper's `sync_with: [x]` is `[a]` at a site passing `a`; `[y]`, a helper
    local, names the local's copy; the other attributes ride along unchanged."""
    before = pl(
        """
        @pl.program
        class P:"""
        + KERNEL
        + """
            @pl.function(type=pl.FunctionType.Inline)
            def stage(self, x: pl.Tensor[[4], pl.FP32], out: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y = pl.exp(x, attrs={"sync_with": [x], "pipeline_membership": "0:1"})
                out = self.kernel(y, out, attrs={"sync_with": [x, y], "arg_direction_overrides": [1], "e": []})
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                o = self.stage(a, o)
                return o
        """
    )
    expected = pl(
        """
        @pl.program
        class P:"""
        + KERNEL
        + """
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                out_inline0 = o
                y_inline1 = pl.exp(a, attrs={"pipeline_membership": "0:1", "sync_with": [a]})
                out_inline0 = self.kernel(y_inline1, out_inline0, attrs={"e": [], "arg_direction_overrides": [1], "sync_with": [a, y_inline1]})
                o = out_inline0
                return o
        """
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, expected)
    main = after.get_function("main")
    assert main is not None
    calls = [node for node in walk(main.body) if isinstance(node, Call)]
    assert [list(c.attrs) for c in calls] == [
        ["sync_with", "pipeline_membership"],  # the written order is kept
        ["sync_with", "arg_direction_overrides", "e"],
    ]
    params = {p.var.name: p.var for p in main.param_list}
    edges = calls[1].attr_items[0].value
    assert isinstance(edges, MakeTuple) and edges.elements[0] is params["a"]
    assert isinstance(edges.elements[1], Var) and edges.elements[1] is calls[1].args[0]


def test_two_sites_substitute_their_own_actuals() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def stage(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y = pl.exp(x, attrs={"sync_with": [x]})
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                c = self.stage(a)
                d = self.stage(b)
                return d
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y_inline0 = pl.exp(a, attrs={"sync_with": [a]})
                c = y_inline0
                y_inline1 = pl.exp(b, attrs={"sync_with": [b]})
                d = y_inline1
                return d
        """
    )
    ir.assert_structural_equal(passes.inline_functions()(before), expected)


def test_a_site_calls_own_attrs_go_with_it() -> None:
    """The call of an Inline helper disappears when it is spliced, and its attributes with it."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def stage(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y = pl.exp(x)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                c = self.stage(a, attrs={"pipeline_membership": "0:1"})
                return c
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y_inline0 = pl.exp(a)
                c = y_inline0
                return c
        """
    )
    ir.assert_structural_equal(passes.inline_functions()(before), expected)


def test_the_analyses_read_a_var_in_an_attr_as_a_use() -> None:
    """hoist-nested-calls reads an operand with `vars_read`, the rebinding checker with its own
    walk; both go through a node's generic children, and an attribute's value is one."""
    a, b = Var("a"), Var("b")
    call = Call("exp", (a,), attr_items={"sync_with": [b]})  # type: ignore[arg-type]
    assert {v.name for v in vars_read(call)} == {"a", "b"}
    assert any(node is b for node in walk(call))
