"""InlineFunctions requires nothing: it runs on a freshly parsed program (docs/specification.md,
"Purpose"), hoisting nested Inline calls itself as its first step."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from nanopto import ir, passes
from nanopto.ir_terms.nodes import Call, FunctionType, Program
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import walk
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.verify.interpreter import interpret
from nanopto.verify.strategies import programs

EXAMPLES = Path(__file__).resolve().parents[3] / "nanopto" / "examples"


def two_step(program: Program) -> Program:
    """The same work as two named passes: the result the pass alone must give."""
    return passes.PassManager.from_pipeline("hoist-nested-calls,inline-functions").run(program)


def has_inline(program: Program) -> bool:
    inline = {f.name for f in program.function_list if f.func_type is FunctionType.Inline}
    return bool(inline) or any(isinstance(c, Call) and c.function and c.op in inline for c in walk(program))


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_the_pass_alone_inlines_every_shipped_example(example: str) -> None:
    program = parse_program((EXAMPLES / example).read_text(), example)
    after = passes.inline_functions()(program)
    assert not has_inline(after)
    ir.assert_structural_equal(after, two_step(program))


NESTED = {
    "scalar operand": ("k = self.half(n) + 1", "return k"),
    "op argument": ("t = pl.add(self.dbl(x), x)", "return t"),
    "array element": ("arr = pl.array.create(2, pl.INT64)\narr[1] = self.half(n)", "return arr[1] + arr[0]"),
}


def nested_program(body: str, ret: str) -> Program:
    src = textwrap.dedent(
        """
        import nanopto.language as pl

        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def half(self, m: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
                return m + m

            @pl.function(type=pl.FunctionType.Inline)
            def dbl(self, y: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                z = pl.add(y, y)
                return z

            @pl.function
            def main(self, n: pl.Scalar[pl.INT64], x: pl.Tensor[[4], pl.FP32]) -> RET:
        """
    )
    ret_type = "pl.Tensor[[4], pl.FP32]" if "t" in ret.split()[-1] else "pl.Scalar[pl.INT64]"
    lines = textwrap.indent(body + "\n" + ret, " " * 8)
    return parse_program(src.replace("RET", ret_type) + lines + "\n")


@pytest.mark.parametrize("case", sorted(NESTED))
def test_a_nested_call_is_spliced_by_the_pass_called_by_its_api_name(case: str) -> None:
    program = nested_program(*NESTED[case])
    after = passes.inline_functions()(program)
    assert not has_inline(after)
    args = (np.int64(3), np.arange(4, dtype=np.float32))
    before_value = interpret(program, "main", *args)
    after_value = interpret(after, "main", *args)
    np.testing.assert_array_equal(np.asarray(after_value), np.asarray(before_value))


@settings(max_examples=max(1, settings.default.max_examples // 2))
@given(programs(max_helpers=2, aliasing=True))
def test_on_drawn_programs_the_pass_alone_gives_what_hoisting_then_inlining_gives(program: Program) -> None:
    """On programs drawn with calls nested in expressions (`aliasing=True`), so that the pass has
    something to hoist (the plain programs have none): half the profile's examples, each of which
    tests the hoisting. A program the pipeline refuses (a documented hazard) is refused alike."""
    try:
        expected = two_step(program)
    except InlineError as error:
        with pytest.raises(InlineError) as refused:
            passes.inline_functions()(program)
        assert str(refused.value) == str(error)
        return
    ir.assert_structural_equal(passes.inline_functions()(program), expected)
