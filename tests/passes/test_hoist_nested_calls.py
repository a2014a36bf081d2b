"""Nested call sites (seed 000): hoisted onto `t__inline_arg_vN`, spliced in the same stage;
the positions that must not be hoisted stay put and are reported by the verifier."""

from __future__ import annotations

import textwrap

import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.hoist_nested_calls import hoist_nested_calls
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.call_graph import inline_functions_of
from nanopto.passes.pass_manager import PropertyRequirementError
from nanopto.verify.interpreter import interpret

HEADER = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def half(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        h = n // 2
        return h

    @pl.function(type=pl.FunctionType.Inline)
    def pair(self, x: pl.Scalar[pl.INDEX]):
        return x, x
"""


def program(main_body: str, params: str = "n: pl.Scalar[pl.INDEX]") -> ir.Program:
    body = textwrap.indent(textwrap.dedent(main_body).strip(), " " * 8)
    src = f"{HEADER}\n    @pl.function\n    def main(self, {params}) -> pl.Scalar[pl.INDEX]:\n{body}\n"
    return parse_program("import nanopto.language as pl\n" + src)


def main_text(p: ir.Program) -> str:
    lines = python_print(p.functions["main"]).splitlines()
    return textwrap.dedent("\n".join(lines[2:])).strip()


def hoisted(p: ir.Program) -> str:
    fn = hoist_nested_calls(p.functions["main"], inline_functions_of(p))
    return textwrap.dedent("\n".join(python_print(fn).splitlines()[2:])).strip()


def test_binary_operand_is_hoisted_before_its_statement() -> None:
    p = program("k = self.half(n) + 1\nreturn k")
    assert hoisted(p) == "t__inline_arg_v0 = self.half(n)\nk = t__inline_arg_v0 + 1\nreturn k"


def test_top_level_call_is_left_alone_and_only_its_arguments_hoisted() -> None:
    p = program("k = self.half(self.half(n))\nreturn k")
    assert hoisted(p) == "t__inline_arg_v0 = self.half(n)\nk = self.half(t__inline_arg_v0)\nreturn k"
    assert hoisted(program("k = self.half(n)\nreturn k")) == "k = self.half(n)\nreturn k"


def test_hoist_inside_a_loop_body_lands_in_that_body_and_bound_before_the_loop() -> None:
    p = program("k = n\nfor i in pl.range(self.half(n)):\n    k = k + self.half(i)\nreturn k")
    assert hoisted(p) == textwrap.dedent(
        """\
        k = n
        t__inline_arg_v0 = self.half(n)
        for i in pl.range(t__inline_arg_v0):
            t__inline_arg_v1 = self.half(i)
            k = k + t__inline_arg_v1
        return k"""
    )


def test_array_element_update_desugaring_is_hoisted() -> None:
    p = program("arr[0] = self.half(n)\nreturn n", params="n: pl.Scalar[pl.INDEX], arr: pl.Array[4, pl.INT64]")
    assert hoisted(p).splitlines()[0] == "t__inline_arg_v0 = self.half(n)"


def test_if_condition_and_yield_value_are_hoisted() -> None:
    p = program(
        """
        if self.half(n) > 1:
            r = pl.yield_(self.half(n))
        else:
            r = pl.yield_(n)
        return r
        """
    )
    after = passes.PassManager.default().run(p)
    assert "self.half" not in python_print(after)
    for value in range(6):
        assert interpret(after, "main", value) == interpret(p, "main", value)


def test_nested_calls_expand_fully_and_compute_the_same() -> None:
    p = program("k = self.half(self.half(n)) + self.half(n)\nreturn self.half(k)")
    after = passes.PassManager.default().run(p)
    assert "self." not in python_print(after)
    for value in range(9):
        assert interpret(after, "main", value) == interpret(p, "main", value)


def test_hoisted_temporary_is_requalified_when_spliced_again() -> None:
    src = """
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def half(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            h = n // 2
            return h

        @pl.function(type=pl.FunctionType.Inline)
        def quarter(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            q = self.half(n) // 2
            return q

        @pl.function
        def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            k = self.quarter(n)
            return k
    """
    after = passes.PassManager.default().run(parse_program("import nanopto.language as pl\n" + textwrap.dedent(src)))
    names = [s.var.name for s in after.functions["main"].body.stmts if isinstance(s, ir.AssignStmt)]  # type: ignore[attr-defined]
    hoisted_names = [n for n in names if "_arg_v0" in n]
    assert hoisted_names and all(n.startswith("t__inline") and n.endswith("_inline_arg_v0") for n in hoisted_names)
    assert hoisted_names[0] != "t__inline_arg_v0"


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("k = n\nwhile k < self.half(n):\n    k = k + 1\nreturn k", 17),
        ("a, b = self.pair(n)\nk = pl.add(self.pair(n), n)\nreturn k", 17),
    ],
)
def test_positions_not_hoisted_are_reported_at_their_own_line(body: str, line: int) -> None:
    p = program(body)
    with pytest.raises(passes.VerificationError) as info:
        passes.PassManager.default().run(p)
    message = str(info.value)
    assert "cannot be spliced" in message and f":{line}:" in message
    with passes.PassContext(verification_level=passes.VerificationLevel.NONE):
        after = passes.PassManager.default().run(p)
    assert "t__inline_arg" not in python_print(after)


def test_inlining_requires_nothing_and_runs_the_hoisting_pass_as_its_first_step() -> None:
    """docs/specification.md, "Purpose": the pass runs on a freshly parsed program."""
    p = program("    k = self.half(n) + 1\n    return k")
    assert passes.InlineFunctions.required == frozenset()
    assert passes.HoistNestedCalls.produced == {passes.IRProperty.NestedCallsHoisted}
    seen: list[str] = []
    instrument = passes.CallbackInstrument(after=lambda pass_, _: seen.append(pass_.name))
    with passes.PassContext([instrument]):
        after = passes.inline_functions()(p)
    assert seen == ["hoist-nested-calls", "inline-functions"]  # the step is a pass every instrument sees
    assert "self.half" not in main_text(after) and "k = t__inline_arg_v0 + 1" in main_text(after)
    hoisted = passes.HoistNestedCalls()(p)
    assert "t__inline_arg_v0 = self.half(n)" in main_text(hoisted)
    assert passes.HoistNestedCalls()(hoisted) is hoisted  # nothing left to hoist
    seen.clear()
    with passes.PassContext([instrument]):
        again = passes.inline_functions()(hoisted)
    assert seen == ["inline-functions"]  # an already hoisted program is not hoisted twice
    ir.assert_structural_equal(again, after)
    ir.assert_structural_equal(after, passes.PassManager.from_pipeline("hoist-nested-calls,inline-functions").run(p))


def test_the_splicing_function_alone_still_names_the_step_it_needs() -> None:
    p = program("    k = self.half(n) + 1\n    return k")
    with pytest.raises(PropertyRequirementError, match="NestedCallsHoisted") as info:
        inline_program(p)
    assert "<string>:" in str(info.value) and "'half' in 'main'" in str(info.value)


def test_a_program_without_nested_calls_is_returned_as_it_is() -> None:
    p = program("    k = self.half(n)\n    return k")
    assert passes.HoistNestedCalls()(p) is p
