"""`pl.dump_tag` selections through inlining (docs/specification.md, "Dump tags")."""

from __future__ import annotations

import textwrap

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


def test_helper_tag_rides_its_at_scopes_and_dispatches_renamed_to_the_callers_actual() -> None:
    """The parser puts a helper's own tag on the `pl.at` scopes and dispatches after it; a
    `pl.cluster` or `pl.graph` is no dispatch, so it gets nothing."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
                return out

            @pl.function(type=pl.FunctionType.Inline)
            def stage(self, x: pl.Tensor[[4], pl.FP32], out: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                pl.dump_tag(x)
                with pl.cluster():
                    y = pl.exp(x)
                with pl.at(level=pl.Level.CORE_GROUP):
                    z = pl.exp(x)
                out = self.kernel(x, out)
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
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                out_inline0 = o
                with pl.cluster():
                    y_inline1 = pl.exp(a)
                with pl.at(level=pl.Level.CORE_GROUP, dumps=[a]):
                    z_inline2 = pl.exp(a)
                out_inline0 = self.kernel(a, out_inline0, attrs={"dump_vars": [a]})
                o = out_inline0
                return o
        """
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after, expected)
    assert "pl.dump_tag" not in python_print(after)


def test_helper_tag_follows_a_local_binding() -> None:
    """A rebound tensor param gets a local; the mark names that local, which the caller binds."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def twice(self, t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                pl.dump_tag(t)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.add(t, t)
                return t

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                u = self.twice(a)
                return u
        """
    )
    text = python_print(passes.inline_functions()(before))
    assert "t_inline0: pl.Tensor[[4], pl.FP32] = a" in text
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[t_inline0]):" in text


CALL_SITE = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def launch(self, x: pl.Tensor[[4], pl.FP32], out: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                t = pl.submit(self.kernel, x, out, deps=[])
                out = self.kernel(x, out)
                for _ in pl.split_aiv(2):
                    z = pl.add(x, x)
                with pl.graph("g"):
                    w = pl.add(out, out)
                with pl.cluster():
                    v = pl.exp(x)
                return out

            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[4], pl.FP32], out: pl.Tensor[[4], pl.FP32]):
                return out

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                pl.dump_tag(a)
                o = self.launch(a, o)
                return o
        """


def test_call_site_tag_rides_the_call_then_reaches_dispatches_that_use_it_but_not_split_aiv() -> None:
    before = pl(CALL_SITE)
    assert 'o = self.launch(a, o, attrs={"dump_vars": [a]})' in python_print(before)
    after = passes.inline_functions()(before)
    text = python_print(after)
    assert "pl.submit(self.kernel, a, out_inline0, deps=[], dumps=[a])" in text
    assert 'out_inline0 = self.kernel(a, out_inline0, attrs={"dump_vars": [a]})' in text
    assert "for _inline" in text and "pl.split_aiv(2):" in text and "split_aiv(2, dumps" not in text
    assert "with pl.graph('g'):" in text or 'with pl.graph("g"):' in text
    assert "with pl.cluster(dumps=[a]):" in text
    assert "pl.dump_tag" not in text
    ir.assert_structural_equal(pl(text.replace("import nanopto.language as pl\n", "", 1)), after)


def test_a_reassigned_name_is_a_new_untagged_value() -> None:
    before = pl(CALL_SITE.replace("pl.dump_tag(a)", "pl.dump_tag(a)\n                a = pl.add(a, a)"))
    assert "dump_vars" not in python_print(before)
    assert "dumps=" not in python_print(passes.inline_functions()(before))


def test_untagged_sites_share_one_template_and_tagged_ones_get_a_variant() -> None:
    from nanopto.passes.inlining import inline_program

    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def run(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                with pl.cluster():
                    y = pl.exp(x)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                r = self.run(a)
                pl.dump_tag(b)
                s = self.run(b)
                return s
        """
    )
    text = python_print(inline_program(before).program)
    assert text.count("with pl.cluster():") == 1
    assert text.count("with pl.cluster(dumps=[b]):") == 1
