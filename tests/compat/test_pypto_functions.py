"""Functions written outside a `@pl.program` class: `@pl.function` and `@pl.inline`."""

from __future__ import annotations

import pytest

import nanopto.language as pl
from nanopto import ir, passes


@pl.function
def scale(v: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
    w: pl.Tensor[[32], pl.FP32] = pl.mul(v, v)
    return w


@pl.inline
def square_sum(p: pl.Tensor[[32], pl.FP32], q: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
    s: pl.Tensor[[32], pl.FP32] = pl.mul(p, p)
    t: pl.Tensor[[32], pl.FP32] = pl.add(s, q)
    return t


def test_module_level_function_is_an_ir_function() -> None:
    assert isinstance(scale, ir.Function)
    assert scale.name == "scale" and [v.name_hint for v in scale.params] == ["v"]
    assert "pl.mul(v, v)" in scale.as_python()


def test_a_called_standalone_function_joins_the_program() -> None:
    @pl.program
    class Uses:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            b: pl.Tensor[[32], pl.FP32] = scale(a)
            return b

    assert list(Uses.functions) == ["main", "scale"]
    ir.assert_structural_equal(Uses.functions["scale"], scale)
    ir.assert_structural_equal(ir.parse_program(str(Uses)), Uses)


def test_inline_template_is_spliced_and_leaves_no_function() -> None:
    @pl.program
    class Spliced:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            r: pl.Tensor[[32], pl.FP32] = square_sum(a, a)
            return r

    @pl.program
    class Written:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            s: pl.Tensor[[32], pl.FP32] = pl.mul(a, a)
            t: pl.Tensor[[32], pl.FP32] = pl.add(s, a)
            r: pl.Tensor[[32], pl.FP32] = t
            return r

    assert list(Spliced.functions) == ["main"]
    ir.assert_structural_equal(Spliced, Written)


def test_inline_template_matches_an_inline_method_after_the_pass() -> None:
    @pl.program
    class WithMethod:
        @pl.function(type=pl.FunctionType.Inline)
        def square_sum(
            self, p: pl.Tensor[[32], pl.FP32], q: pl.Tensor[[32], pl.FP32]
        ) -> pl.Tensor[[32], pl.FP32]:
            s: pl.Tensor[[32], pl.FP32] = pl.mul(p, p)
            t: pl.Tensor[[32], pl.FP32] = pl.add(s, q)
            return t

        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            r: pl.Tensor[[32], pl.FP32] = self.square_sum(a, a)
            return r

    @pl.program
    class WithTemplate:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            r: pl.Tensor[[32], pl.FP32] = square_sum(a, a)
            return r

    ir.assert_structural_equal(passes.inline_functions()(WithMethod), WithTemplate)


def test_template_misuse_is_a_located_error() -> None:
    with pytest.raises(TypeError, match="template"):
        square_sum(1, 2)
    with pytest.raises(ir.UnsupportedFeatureError, match="whole statement") as info:

        @pl.program
        class Nested:
            @pl.function
            def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
                r: pl.Tensor[[32], pl.FP32] = pl.add(square_sum(a, a), a)
                return r

    assert info.value.hint is not None and "bind its result first" in info.value.hint


def test_a_template_that_calls_itself_is_an_error() -> None:
    from nanopto.ir_terms.templates import InlineFunction

    source = (
        "@pl.inline\n"
        "def loop(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n"
        "    y = loop(x)\n"
        "    return y\n"
    )
    template = InlineFunction("loop", source, "loop.py", 0)
    program = (
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n"
        "    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n"
        "        b = loop(a)\n        return b\n"
    )
    with pytest.raises(ir.UnsupportedFeatureError, match="calls itself") as info:
        ir.parse_program(program, closure={"loop": template})
    assert info.value.file == "loop.py" and info.value.line == 3


SUBWORKER = """
@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def worker(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return a
"""


def test_a_subworker_method_takes_no_self_and_prints_without_it() -> None:
    program = ir.parse_program(SUBWORKER)
    worker = program.functions["worker"]
    assert [v.name_hint for v in worker.params] == ["x"] and worker.role == ir.Role.SubWorker
    text = program.as_python()
    assert "def worker(x: pl.Tensor[[4], pl.FP32])" in text and "def main(self, a:" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    with pytest.raises(ir.ParserSyntaxError, match="SubWorker function 'worker' takes no self"):
        ir.parse_program(SUBWORKER.replace("def worker(x:", "def worker(self, x:"))


def test_a_programs_functions_iterate_as_global_vars() -> None:
    program = ir.parse_program(SUBWORKER)
    names = list(program.functions)
    assert names == ["worker", "main"] and all(isinstance(n, ir.GlobalVar) for n in names)
    assert [n.name for n in names] == ["worker", "main"] and program.functions[names[1]].name == "main"


def test_type_heads_called_in_the_older_notation_hold_shape_and_dtype() -> None:
    tensor = pl.Tensor((64, 128), pl.FP16)
    assert tensor.dtype == pl.FP16 and tensor.shape == (64, 128)
    assert pl.Scalar(pl.FP32).dtype == pl.FP32
    with pytest.raises(ValueError, match="annotation-only Tensor"):
        tensor.unwrap()
    with pytest.raises(TypeError, match="multiple values for argument 'dtype'"):
        pl.Scalar(pl.FP32, dtype=pl.INT32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        pl.Tensor([1], pl.FP32, foo=1)


def test_an_unknown_function_type_is_located_at_its_name_with_the_members_as_hint() -> None:
    source = "@pl.function(type=pl.FunctionType.Bad_é_Type)\ndef bad(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n    return x\n"
    with pytest.raises(ir.ParserSyntaxError) as info:
        pl.parse(source)
    error = info.value
    assert error.line == 1 and source.splitlines()[0][error.col :].startswith("Bad_é_Type")
    assert error.hint is not None and "InCore" in error.hint and "Orchestration" in error.hint
    assert error.source_lines == source.splitlines() and error.source_lines[error.line - 1].startswith("@pl.function")


@pytest.mark.parametrize(
    ("given", "mode"),
    [
        (ir.SplitMode.UP_DOWN.value, ir.SplitMode.UP_DOWN),
        (ir.SplitMode.LEFT_RIGHT, ir.SplitMode.LEFT_RIGHT),
        (2, ir.SplitMode.LEFT_RIGHT),  # PyPTO's stored integer
        (0, None),
        (ir.SplitMode.NONE, None),
    ],
)
def test_a_function_split_given_as_pypto_stores_it_prints_as_the_mode_it_names(given: object, mode: object) -> None:
    """`Function.split` is the mode a `split` attribute names, None for no split; the printer
    writes a mode as its `pl.SplitMode` symbol and leaves no split out (the parser drops it)."""
    span = ir.Span.unknown()
    fn = ir.Function("f", [], [], ir.SeqStmts([], span), span, attrs={"split": given})
    assert fn.split is mode and list(fn.attrs) == ["split"]
    program = ir.Program([fn], "P", span)
    text = ir.python_print(program)
    if mode is None:
        assert "func_attr" not in text and "split" not in text
        assert pl.parse_program(text).functions["f"].attrs == {}
    else:
        assert f'pl.func_attr({{"split": pl.SplitMode.{mode.name}}})' in text  # type: ignore[attr-defined]
        ir.assert_structural_equal(pl.parse_program(text), program)


def test_an_aliased_function_joins_the_program_under_its_own_name() -> None:
    aliased = scale

    @pl.program
    class Aliased:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            b: pl.Tensor[[32], pl.FP32] = aliased(a)
            return b

    @pl.program
    class Expected:
        @pl.function
        def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            b: pl.Tensor[[32], pl.FP32] = self.scale(a)
            return b

        @pl.function
        def scale(self, v: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
            w: pl.Tensor[[32], pl.FP32] = pl.mul(v, v)
            return w

    assert aliased is scale
    ir.assert_structural_equal(Aliased, Expected)


def test_two_different_functions_of_one_name_cannot_both_be_called() -> None:
    first = scale

    @pl.function
    def scale_again(v: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
        return v

    second = ir.Function("scale", scale_again.param_list, scale_again.return_types, scale_again.body)
    source = """
import nanopto.language as pl

@pl.program
class Both:
    @pl.function
    def main(self, a: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
        b: pl.Tensor[[32], pl.FP32] = first(a)
        c: pl.Tensor[[32], pl.FP32] = second(b)
        return c
"""
    with pytest.raises(ir.ParserSyntaxError) as info:
        ir.parse_program(source, "both.py", closure={"first": first, "second": second})
    err = info.value
    assert err.message.startswith("Conflicting external functions named 'scale'") and (err.line, err.col) == (9, 38)
    one = ir.parse_program(source.replace("second(b)", "first(b)"), closure={"first": first, "second": second})
    assert list(one.functions) == ["main", "scale"]


@pl.inline
def bump(x: pl.Tensor[[32], pl.FP32]) -> pl.Tensor[[32], pl.FP32]:
    result: pl.Tensor[[32], pl.FP32] = pl.add(x, 1.0)
    return result


def test_an_inline_call_yielded_is_spliced_before_the_yield() -> None:
    @pl.program
    class Yielded:
        @pl.function
        def main(self, x: pl.Tensor[[32], pl.FP32], flag: pl.Scalar[pl.INT64]) -> pl.Tensor[[32], pl.FP32]:
            for _i, (acc,) in pl.range(4, init_values=(x,)):
                nxt = pl.yield_(bump(acc))
            if flag == 0:
                out: pl.Tensor[[32], pl.FP32] = pl.yield_(bump(nxt))
            else:
                out: pl.Tensor[[32], pl.FP32] = pl.yield_(nxt)
            return out

    @pl.program
    class Expected:
        @pl.function
        def main(self, x: pl.Tensor[[32], pl.FP32], flag: pl.Scalar[pl.INT64]) -> pl.Tensor[[32], pl.FP32]:
            for _i, (acc,) in pl.range(4, init_values=(x,)):
                result: pl.Tensor[[32], pl.FP32] = pl.add(acc, 1.0)
                nxt = pl.yield_(result)
            if flag == 0:
                result_1: pl.Tensor[[32], pl.FP32] = pl.add(nxt, 1.0)
                out: pl.Tensor[[32], pl.FP32] = pl.yield_(result_1)
            else:
                out: pl.Tensor[[32], pl.FP32] = pl.yield_(nxt)
            return out

    ir.assert_structural_equal(Yielded, Expected)
    ir.assert_structural_equal(ir.parse_program(Yielded.as_python()), Yielded)
