"""Parser rules PyPTO's parser enforces on task launches and function attributes: what is accepted,
how it prints, and each rejection as a located error with a hint."""

from __future__ import annotations

import warnings

import pytest

import nanopto.language as pl
from nanopto import ir

SOURCE = """import nanopto.language as pl

N = 8

@pl.program
class Launches:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[8], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[8], pl.FP32], w: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
{body}        return w
"""
FIRST_LINE = 13


def launch(*lines: str) -> ir.Program:
    return ir.parse_program(SOURCE.format(body="".join(f"        {line}\n" for line in lines)))


def test_launch_keywords_that_parse_print_and_round_trip() -> None:
    prog = launch(
        "with pl.manual_scope():",
        "    w, t1 = pl.spmd_submit(self.kern, v, w, core_num=N, sync_start=True, allow_early_resolve=False)",
        "    w, t2 = pl.submit(self.kern, v, w, deps=[t1], allow_early_resolve=True)",
    )
    text = prog.as_python()
    assert "core_num=8, sync_start=True)" in text  # a flag written False is what an absent one means
    assert "deps=[t1], allow_early_resolve=True)" in text
    ir.assert_structural_equal(ir.parse_program(text), prog)


REJECTED = {
    "spmd_submit without core_num": ("w, t = pl.spmd_submit(self.kern, v, w)", ir.ParserSyntaxError, "requires the core_num", "core_num=N"),
    "core_num zero": ("w, t = pl.spmd_submit(self.kern, v, w, core_num=0)", ir.ParserSyntaxError, "positive", "N > 0"),
    "core_num a float": ("w, t = pl.spmd_submit(self.kern, v, w, core_num=2.5)", ir.ParserSyntaxError, "integer", "core_num=N"),
    "core_num a boolean": ("w, t = pl.spmd_submit(self.kern, v, w, core_num=True)", ir.ParserSyntaxError, "integer", "core_num=N"),
    "sync_start not a literal": (
        "w, t = pl.spmd_submit(self.kern, v, w, core_num=4, sync_start=1)", ir.ParserSyntaxError, "boolean literal", "=True"
    ),
    "allow_early_resolve not a literal": (
        "w, t = pl.submit(self.kern, v, w, allow_early_resolve=1)",
        ir.ParserSyntaxError,
        "allow_early_resolve must be a boolean literal",
        "=True",
    ),
    "core_num on pl.submit": ("w, t = pl.submit(self.kern, v, w, core_num=4)", ir.ParserTypeError, "core_num", "pl.spmd_submit"),
    "an unknown launch keyword": ("w, t = pl.submit(self.kern, v, w, colour=4)", ir.ParserTypeError, "'colour'", "pl.submit takes"),
    "deps on a plain call": ("w = self.kern(v, w, deps=[])", ir.ParserTypeError, "keyword argument 'deps'", "pl.submit"),
    "allow_early_resolve on a plain call": (
        "w = self.kern(v, w, allow_early_resolve=True)", ir.ParserTypeError, "allow_early_resolve", "pl.submit"
    ),
    "core_num on a plain call": ("w = self.kern(v, w, core_num=4)", ir.ParserTypeError, "core_num", "pl.spmd_submit"),
    "an spmd_submit that is not unpacked": (
        "pl.spmd_submit(self.kern, v, w, core_num=4)", ir.ParserSyntaxError, "must be unpacked", "out, tid ="
    ),
    "an undefined name": ("w = self.kern(nowhere, w)", ir.UndefinedVariableError, "Undefined variable 'nowhere'", "assign it"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_launches(case: str) -> None:
    line, error, message, hint = REJECTED[case]
    with pytest.raises(error) as info:
        launch(line)
    assert message in info.value.message
    assert info.value.line == FIRST_LINE
    assert info.value.hint is not None and hint in info.value.hint


KERNEL = """import nanopto.language as pl

@pl.program
class Attrs:
    @pl.function({decorator})
    def kern(self, x: pl.Tensor[[8], pl.FP32], w: pl.Tensor[[8], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]):
{body}        out[0:8] = x[0:8]
"""
BODY_LINE = 7


def kernel(*lines: str, decorator: str = "type=pl.FunctionType.InCore") -> ir.Program:
    return ir.parse_program(KERNEL.format(decorator=decorator, body="".join(f"        {line}\n" for line in lines)))


def attrs(prog: ir.Program) -> dict[str, str]:
    fn = prog.get_function("kern")
    assert fn is not None
    return {k.name: ir.python_print(k.value) if not isinstance(k.value, ir.Var) else k.value.name for k in fn.attr_items}


def test_func_attr_statements_merge_with_the_decorator_and_print_as_one_prologue() -> None:
    prog = kernel(
        '"""A docstring may come first."""',
        'pl.func_attr({"split": pl.SplitMode.UP_DOWN})',
        'pl.func_attr({"stationary": w})',
        decorator='type=pl.FunctionType.InCore, auto_scope=False, attrs={"windowize": True}',
    )
    assert attrs(prog) == {"auto_scope": "False", "windowize": "True", "split": "pl.SplitMode.UP_DOWN", "stationary": "w"}
    text = prog.as_python()
    assert "@pl.function(type=pl.FunctionType.InCore, auto_scope=False)" in text
    assert 'pl.func_attr({"windowize": True, "split": pl.SplitMode.UP_DOWN, "stationary": w})' in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = ir.parse_program(text)
    ir.assert_structural_equal(again, prog)
    fn = again.get_function("kern")
    assert fn is not None
    assert fn.attrs["stationary"] is fn.params[1]  # the parameter itself


def test_decorator_attrs_and_func_attr_spell_the_same_function() -> None:
    body = kernel('pl.func_attr({"split": pl.SplitMode.UP_DOWN})')
    with pytest.warns(DeprecationWarning, match="cannot reference parameters"):
        decorated = kernel(decorator='type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN}')
    ir.assert_structural_equal(body, decorated)
    fn = body.get_function("kern")
    assert fn is not None and fn.attrs == {"split": ir.SplitMode.UP_DOWN.value}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel(decorator="type=pl.FunctionType.InCore, attrs={}")  # nothing to move: no warning


FUNC_ATTR_REJECTED = {
    "after another statement": (["y = pl.add(x, x)", 'pl.func_attr({"split": 1})'], "before every other statement", "top of the body"),
    "a key twice across calls": (['pl.func_attr({"split": 1})', 'pl.func_attr({"split": 2})'], "Duplicate function attribute 'split'", "once"),
    "a key twice in one call": (['pl.func_attr({"split": 1, "split": 2})'], "Duplicate function attribute 'split'. Each attribute may be declared only once.", "once"),
    "a list of numbers": (['pl.func_attr({"tile_sizes": [16, 32]})'], "Unsupported list element type for key: tile_sizes", "not in a list"),
    "not a dict": (['pl.func_attr(["split"])'], "must be a dict literal", "pl.func_attr({"),
    "a keyword": (["pl.func_attr(split=1)"], "exactly one positional dict argument", "pl.func_attr({"),
    "a key that is no string": (["pl.func_attr({1: True})"], "keys must be strings", '{"name": value}'),
    "auto_scope in the body": (['pl.func_attr({"auto_scope": False})'], "'auto_scope' cannot be set with pl.func_attr", "@pl.function"),
}


@pytest.mark.parametrize("case", sorted(FUNC_ATTR_REJECTED))
def test_rejected_func_attrs(case: str) -> None:
    lines, message, hint = FUNC_ATTR_REJECTED[case]
    with pytest.raises(ir.ParserSyntaxError) as info:
        kernel(*lines)
    assert message in info.value.message
    assert info.value.line == BODY_LINE + len(lines) - 1
    assert info.value.hint is not None and hint in info.value.hint


def test_a_list_of_parameters_or_directions_is_a_function_attribute() -> None:
    fn = kernel('pl.func_attr({"stationary": [x, out], "dirs": [pl.adir.input], "none": []})').get_function("kern")
    assert fn is not None and fn.attrs["stationary"] == [fn.params[0], fn.params[2]]


def test_a_decorator_dict_with_a_list_of_numbers_is_rejected_as_in_the_body() -> None:
    source = KERNEL.format(decorator="type=pl.FunctionType.InCore, attrs=ATTRS", body="")
    with pytest.raises(ir.ParserSyntaxError, match="Unsupported list element type for key: sizes"):
        ir.parse_program(source, closure={"ATTRS": {"sizes": [16, 32]}})


def test_an_spmd_function_keeps_a_call_attribute_and_prints_back() -> None:
    prog = kernel(decorator='type=pl.FunctionType.Spmd, attrs={"core_num": pl.system.available_cluster_count()}')
    fn = prog.get_function("kern")
    assert fn is not None and fn.func_type is ir.FunctionType.Spmd and isinstance(fn.attrs["core_num"], ir.Call)
    text = prog.as_python()
    assert "@pl.function(type=pl.FunctionType.Spmd)" in text
    assert 'pl.func_attr({"core_num": pl.system.available_cluster_count()})' in text
    ir.assert_structural_equal(ir.parse_program(text), prog)


N = ir.Var("n", ir.ScalarType(ir.DataType.INT32))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (N, "the value of function attribute 'core_num' references a variable"),
        (ir.add(N, ir.ConstInt(1, ir.DataType.INT32)), "the value of function attribute 'core_num' references a variable"),
        (pl.Scalar[pl.INT32], "the value of function attribute 'core_num' is an annotation-only pl.Scalar"),
        (pl.Tensor[[4], pl.FP16], "the value of function attribute 'core_num' is an annotation-only pl.Tensor"),
    ],
)
def test_a_decorator_attribute_naming_a_variable_or_an_annotation_is_rejected(value: object, message: str) -> None:
    source = KERNEL.format(decorator='type=pl.FunctionType.InCore, attrs={"core_num": VALUE}', body="")
    with pytest.raises(ir.ParserSyntaxError) as info:
        ir.parse_program(source, closure={"VALUE": value})
    assert info.value.message.startswith(message) and info.value.line == 5
    assert info.value.hint is not None and "pl.func_attr" in info.value.hint


def test_a_key_in_both_the_decorator_and_the_body_is_a_duplicate() -> None:
    with pytest.raises(ir.ParserSyntaxError, match="Duplicate function attribute 'split'"):
        kernel('pl.func_attr({"split": 2})', decorator='type=pl.FunctionType.InCore, attrs={"split": 1}')


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("break", "outside a loop"),
        ("for i in pl.parallel(4):\n            break", "(a parallel loop)"),
        ("for i in pl.unroll(4):\n            continue", "(an unrolled loop)"),
        ("for i in pl.spmd(4):\n            break", "cannot leave a pl.spmd body"),
        ("w = pl.no_such_op(v)", "Unknown operation 'pl.no_such_op'"),
    ],
)
def test_invalid_operations_are_invalid_operation_errors(line: str, message: str) -> None:
    with pytest.raises(ir.InvalidOperationError) as info:
        launch(line)
    assert message in info.value.message
    assert info.value.line == FIRST_LINE + line.count("\n")


def test_a_column_counts_characters_not_bytes() -> None:
    with pytest.raises(ir.UndefinedVariableError) as info:
        launch("café_résultat = pl.add(v, nowhere)")
    assert info.value.col == len("        café_résultat = pl.add(v, ")
    assert str(info.value).splitlines()[2].index("^") - 4 == info.value.col


def test_pl_parse_reads_a_program_or_a_function_from_text() -> None:
    import nanopto.language as pl

    prog = pl.parse(SOURCE.format(body=""))
    assert isinstance(prog, ir.Program) and prog.get_function("main") is not None
    fn = pl.parse("@pl.function\ndef f(x: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:\n    return x\n")
    assert isinstance(fn, ir.Function) and fn.name == "f"


def test_pl_arithmetic_on_two_scalars_is_the_scalar_expression() -> None:
    prog = launch(
        "n: pl.Scalar[pl.INT64] = 3",
        "m: pl.Scalar[pl.INT64] = pl.add(n, 2)",
        "k: pl.Scalar[pl.INT64] = pl.min(m, n)",
        "u = pl.add(v, v)",
    )
    text = prog.as_python()
    assert "m: pl.Scalar[pl.INT64] = n + 2" in text
    assert "k: pl.Scalar[pl.INT64] = pl.min(m, n)" in text
    assert "u = pl.add(v, v)" in text  # on tensors it stays the op
    ir.assert_structural_equal(ir.parse_program(text), prog)
    with pytest.raises(ir.InvalidOperationError, match="takes two scalars") as info:
        launch("u = pl.max(v, v)")
    assert info.value.line == FIRST_LINE


def test_static_print_shows_each_value_with_its_type(capsys: pytest.CaptureFixture[str]) -> None:
    launch('pl.static_print("in:", v, 42)', 'pl.static_print(f"n={N}, v={v}")')
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("]: in: v: pl.Tensor[[8], pl.FP32] 42: pl.Scalar[pl.INDEX]")
    assert out[1].endswith("]: n=8: pl.Scalar[pl.INDEX], v=v: pl.Tensor[[8], pl.FP32]")


@pytest.mark.parametrize(
    ("line", "error", "message"),
    [
        ("pl.static_print()", ir.ParserSyntaxError, "requires at least 1 argument"),
        ('pl.static_print(f"{v!r}")', ir.UnsupportedFeatureError, "conversion (!r)"),
        ('pl.static_print(f"{N:>4}")', ir.UnsupportedFeatureError, "format spec"),
        ("pl.static_assert()", ir.ParserSyntaxError, "1 or 2 arguments"),
        ("pl.static_assert(v)", ir.ParserSyntaxError, "not compile-time evaluable"),
    ],
)
def test_rejected_static_checks(line: str, error: type[ir.ParserError], message: str) -> None:
    with pytest.raises(error) as info:
        launch(line)
    assert message in info.value.message and info.value.line == FIRST_LINE and info.value.hint


def test_decorator_attrs_may_name_a_dict_the_decorator_evaluated() -> None:
    marker = 7
    attributes = {"marker": marker, "dtype": pl.FP16, "memory_space": pl.Mem.Vec, "direction": pl.adir.input}

    with pytest.warns(DeprecationWarning, match="cannot reference parameters"):

        @pl.program
        class Named:
            @pl.function(attrs=attributes)
            def kernel(self, x: pl.Tensor[[4], pl.FP16]) -> pl.Tensor[[4], pl.FP16]:
                return x

    fn = Named.get_function("kernel")
    assert fn is not None and fn.attrs == attributes
    text = Named.as_python()
    assert 'pl.func_attr({"marker": 7, "dtype": pl.FP16, "memory_space": pl.Mem.Vec, "direction": pl.adir.input})' in text
    ir.assert_structural_equal(ir.parse_program(text), Named)
