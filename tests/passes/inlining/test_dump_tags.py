"""`pl.dump_tag` selections through inlining (docs/specification.md, "Dump tags")."""

from __future__ import annotations

import textwrap

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


def test_helper_tag_rides_its_at_scopes_and_dispatches_renamed_to_the_callers_actual() -> None:
    """The parser puts a helper's own tag on the carrier scopes (`pl.at`, `pl.cluster`, `pl.spmd`,
    `pl.graph`) and the dispatches after it, as PyPTO's parser seeds every scope that becomes a
    kernel dispatch; the splice renames it to the caller's actual."""
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
                with pl.cluster(dumps=[a]):
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
                for _ in pl.split_aiv(2, mode=pl.SplitMode.NONE):
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


def test_call_site_tag_rides_the_call_then_reaches_carriers_and_dispatches_but_not_split_aiv() -> None:
    before = pl(CALL_SITE)
    assert 'o = self.launch(a, o, attrs={"dump_vars": [a]})' in python_print(before)
    after = passes.inline_functions()(before)
    text = python_print(after)
    assert "pl.submit(self.kernel, a, out_inline0, deps=[], dumps=[a])" in text
    assert 'out_inline0 = self.kernel(a, out_inline0, attrs={"dump_vars": [a]})' in text
    # the region itself carries no selection; the InCore scope the parser adds around it does
    assert "for _inline" in text and "pl.split_aiv(2, mode=pl.SplitMode.NONE):" in text and "split_aiv(2, dumps" not in text
    assert 'with pl.graph("g", dumps=[a]):' in text  # a carrier gets every live tag, as written by hand
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


# Selections follow values (docs/specification.md, "Dump tags"): each test below is a program
# inlined by the pass compared with the same program inlined by hand and parsed.

HELPER_REBINDS = """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def h(self, x: pl.Tensor[[16], pl.FP32], y: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(x, [0], [16])
                    pl.store(t, [0], y)
                x = pl.add(y, y)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t2 = pl.load(x, [0], [16])
                    pl.store(t2, [0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                pl.dump_tag(a)
                b = self.h(a, b)
                return b
        """


def test_a_tag_on_a_parameter_the_helper_rebinds_stops_at_the_rebinding() -> None:
    after = passes.inline_functions()(pl(HELPER_REBINDS))
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                x_inline0: pl.Tensor[[16], pl.FP32] = a
                with pl.at(level=pl.Level.CORE_GROUP, dumps=[x_inline0]):
                    t_inline1 = pl.load(x_inline0, [0], [16])
                    pl.store(t_inline1, [0], b)
                x_inline0 = pl.add(b, b)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t2_inline2 = pl.load(x_inline0, [0], [16])
                    pl.store(t2_inline2, [0], b)
                return b
        """
    )
    ir.assert_structural_equal(after, expected)


def test_a_tag_on_a_loop_carried_value_ends_with_its_loop() -> None:
    """After the loop its iteration variable is unbound: a later scope does not name it."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                for i, (acc,) in pl.range(3, init_values=(a,)):
                    pl.dump_tag(acc)
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t = pl.load(acc, [0], [16])
                        pl.store(t, [0], b)
                    acc2 = pl.yield_(acc)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t3 = pl.load(a, [0], [16])
                    pl.store(t3, [0], b)
                return b
        """
    )
    scopes = [line.strip() for line in python_print(before).splitlines() if "pl.at(" in line]
    assert scopes == [
        "with pl.at(level=pl.Level.CORE_GROUP, dumps=[acc]):",
        "with pl.at(level=pl.Level.CORE_GROUP):",
    ]
    text = python_print(passes.inline_functions()(before))
    ir.assert_structural_equal(pl(text.replace("import nanopto.language as pl\n", "", 1)), before)


def test_one_value_given_to_two_parameters_is_selected_once() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def h(self, x: pl.Tensor[[16], pl.FP32], z: pl.Tensor[[16], pl.FP32], y: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                pl.dump_tag(x)
                pl.dump_tag(z)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(x, [0], [16])
                    u = pl.load(z, [0], [16])
                    pl.store(pl.add(t, u), [0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                pl.dump_tag(a)
                b = self.h(a, a, b)
                return b
        """
    )
    after = passes.inline_functions()(before)
    text = python_print(after)
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[a]):" in text
    ir.assert_structural_equal(pl(text.replace("import nanopto.language as pl\n", "", 1)), after)


def test_a_helper_tag_left_on_a_parameter_reaches_the_callers_later_scopes() -> None:
    """The caller's own `pl.at` after the call selects `a`, as with the tag written in the caller."""
    helper = """
            @pl.function(type=pl.FunctionType.Inline)
            def h(self, x: pl.Tensor[[16], pl.FP32], y: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                pl.dump_tag(x)
                with pl.graph("g"):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t = pl.load(x, [0], [16])
                        pl.store(t, [0], y)
                return y
    """
    caller = """
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                b = self.h(a, b)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t3 = pl.load(a, [0], [16])
                    pl.store(t3, [0], b)
                return b
    """
    by_hand = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                pl.dump_tag(a)
                with pl.graph("g"):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        t_inline0 = pl.load(a, [0], [16])
                        pl.store(t_inline0, [0], b)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t3 = pl.load(a, [0], [16])
                    pl.store(t3, [0], b)
                return b
        """
    )
    for order in (helper + caller, caller + helper):  # wherever the helper is defined
        before = pl("@pl.program\nclass P:\n" + textwrap.indent(textwrap.dedent(order), "    "))
        ir.assert_structural_equal(passes.inline_functions()(before), by_hand)
    rebinding = pl(
        "@pl.program\nclass P:\n"
        + textwrap.indent(textwrap.dedent(helper + caller.replace("b = self.h(a, b)", "a = self.h(a, b)")), "    ")
    )
    assert "dumps=" not in python_print(rebinding).split("def main")[1]  # `a = self.h(a, b)`: a new value
