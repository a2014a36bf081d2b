"""Every rejected input is a ParserError with a location, a caret and (where useful) a hint."""

from __future__ import annotations

import os
import textwrap

import pytest

import nanopto.language as pl
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.parse_error import ParserSyntaxError, ParserTypeError
from nanopto.ir_terms.parser import ParserError, parse_function, parse_program
from nanopto.ir_terms.types import TileType, UnknownType

HEADER = "import nanopto.language as pl\n\n@pl.program\nclass P:\n"
BODY_LINE = 7  # line of the first statement of `main`'s body in `_main`


def _main(body: str, params: str = "a, b", func_type: str = "", extra: str = "") -> str:
    deco = f"@pl.function(type=pl.FunctionType.{func_type})" if func_type else "@pl.function"
    method = f"{deco}\ndef main(self, {params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return HEADER + textwrap.indent(method + textwrap.dedent(extra), "    ")


def _error(source: str) -> ParserError:
    with pytest.raises(ParserError) as info:
        parse_program(source, "prog.py")
    return info.value


def test_error_str_has_location_line_caret_and_hint() -> None:
    err = _error(_main("acc = a\nacc += b\nreturn acc\n"))
    assert err.file == "prog.py" and err.line == BODY_LINE + 1 and err.col == 8
    text = str(err).splitlines()
    assert text[0] == "prog.py:8:8: Augmented assignments such as acc += ... are not supported"
    assert text[1].strip() == "acc += b"
    assert text[2].index("^") == text[1].index("acc")
    assert text[3] == "hint: write an explicit assignment: acc = acc + ..."


def test_augmented_subscript_assignment() -> None:
    err = _error(_main("a[0:4] += b\nreturn a\n"))
    assert "Augmented assignments" in err.message and err.line == BODY_LINE
    assert err.hint == "write an explicit assignment: acc = acc + ..."


@pytest.mark.parametrize("word", ["break", "continue"])
@pytest.mark.parametrize("loop", ["parallel", "unroll"])
def test_break_continue_in_parallel_or_unroll(word: str, loop: str) -> None:
    err = _error(_main(f"for i in pl.{loop}(4):\n    {word}\nreturn\n"))
    assert f"innermost loop is pl.{loop}()" in err.message
    assert err.line == BODY_LINE + 1 and err.hint


def test_break_in_range_inside_parallel_is_fine() -> None:
    parse_program(_main("for i in pl.parallel(4):\n    for j in pl.range(4):\n        break\nreturn\n"))
    parse_program(_main("for i in pl.parallel(4):\n    while a:\n        continue\nreturn\n"))


def test_break_outside_loop() -> None:
    assert "outside a loop" in _error(_main("break\n")).message


def test_bare_yield_in_while_with_init_values() -> None:
    err = _error(
        _main(
            """
            for (x,) in pl.while_(init_values=(a,)):
                pl.cond(x < b)
                pl.yield_(x + 1)
            return
            """
        )
    )
    assert "requires an assignment-form pl.yield_" in err.message
    assert err.line == BODY_LINE + 3


def test_inline_annotation_on_tuple_unpacking() -> None:
    err = _error(_main("x, y: pl.INDEX = a\nreturn\n"))
    assert err.hint is not None and "Type annotations cannot be used inline with tuple unpacking" in err.hint
    assert err.line == BODY_LINE


def test_inout_scalar_param() -> None:
    err = _error(_main("return\n", params="n: pl.InOut[pl.Scalar[pl.INDEX]]"))
    assert "Scalar parameters cannot have InOut direction" in err.message
    assert err.line == 6


def test_second_dispatch_in_spmd_body() -> None:
    err = _error(
        _main(
            """
            with pl.spmd(4):
                self.k(a)
                self.k(b)
            return
            """,
            extra="\n@pl.function(type=pl.FunctionType.InCore)\ndef k(self, x):\n    return x\n",
        )
    )
    assert "launches 2 kernels: a dispatch body may launch one kernel" in err.message
    assert err.line == BODY_LINE + 3 and err.hint


def test_second_submit_in_spmd_body() -> None:
    err = _error(
        _main(
            "with pl.spmd(4):\n    t = pl.submit(self.k, a)\n    self.k(b)\nreturn\n",
            extra="\n@pl.function\ndef k(self, x):\n    return x\n",
        )
    )
    assert "launches 2 kernels: a dispatch body may launch one kernel" in err.message and err.line == BODY_LINE + 2


def test_dump_tag_misuse() -> None:
    err = _error(_main("pl.dump_tag(a)\nreturn\n"))
    assert "Orchestration or Inline" in err.message and err.line == BODY_LINE
    err = _error(_main("pl.dump_tag(a[0])\nreturn\n", func_type="Orchestration"))
    assert "bare variable name" in err.message and err.line == BODY_LINE
    err = _error(_main("pl.dump_tag(a, a)\nreturn\n", func_type="Orchestration"))
    assert "exactly one positional argument" in err.message and err.line == BODY_LINE
    err = _error(_main("pl.dump_tag(zz)\nreturn\n", func_type="Orchestration"))
    assert "not bound" in err.message and err.line == BODY_LINE
    parse_program(_main("pl.dump_tag(a)\nreturn\n", func_type="Inline"))


def test_reserved_double_underscore_names() -> None:
    err = _error(_main("a__b = a\nreturn\n"))
    assert "reserved delimiter '__'" in err.message and err.line == BODY_LINE
    parse_program(_main("t__inline_arg_v0 = a\nreturn\n"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x = undefined_name\n", "Undefined variable 'undefined_name'"),
        ("x = pl.xyz(a)\n", "Unknown operation 'pl.xyz'"),
        ("x = self.nothere(a)\n", "unknown function 'self.nothere'"),
        ("x = len(a)\n", "unknown function 'len'"),
        ("x = a if b else a\n", "unsupported expression"),
        ("x = y = a\n", "chained assignment"),
        ("pl.yield_(a)\n", "only valid inside a loop or if"),
        ("if a:\n    x = pl.yield_(a)\nelse:\n    y = pl.yield_(a)\n", "Both branches must yield the same variables"),
        ("pl.static_print()\n", "requires at least 1 argument"),
        ("pl.static_assert(1 > 2, 'too small')\n", "static_assert failed: too small"),
        ("pl.static_assert(a > 2)\n", "not compile-time evaluable"),
        ("for i in range(4):\n    pass\n", "must use pl.range()"),
        ("for (x,) in pl.while_(init_values=(a,)):\n    x = x + 1\n", "must be pl.cond"),
        ("pl.cond(a)\n", "first statement of a pl.while_ body"),
        ("with open('f'):\n    pass\n", "must open a pl scope"),
        ("import os\n", "Unsupported statement"),
        ("x = pl.range(3)\n", "for-loop iterator"),
        ("x = a[0:4:2]\n", "step"),
        ("x: pl.Weird[4] = a\n", "unknown type annotation"),
    ],
)
def test_rejected_bodies(body: str, message: str) -> None:
    err = _error(_main(body + "return\n"))
    assert message in err.message
    assert err.line >= BODY_LINE


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import nanopto.language as pl\n", "exactly one @pl.program class, found 0"),
        (HEADER + "    pass\n@pl.program\nclass Q:\n    pass\n", "exactly one @pl.program class, found 2"),
        ("import nanopto.language as pl\n@pl.function\nclass P:\n    pass\n", "must be decorated with @pl.program"),
        (HEADER + "    def f(self):\n        return\n", "must be decorated with @pl.function"),
        (HEADER + "    @staticmethod\n    def f(self):\n        return\n", "must be decorated with @pl.function"),
        (HEADER + "    @pl.function\n    def f(a):\n        return\n", "self as its first parameter"),
        (HEADER + "    @pl.function(type=pl.FunctionType.Bogus)\n    def f(self):\n        return\n", "FunctionType member"),
        ("import numpy as pl\n", "unsupported import"),
        ("X = foo()\n", "compile-time constant"),
        ("print('hi')\n", "unsupported module-level statement"),
        ("def f(:\n", "syntax error"),
        ("x = 'a\0b'\n", ""),
    ],
)
def test_rejected_programs(source: str, message: str) -> None:
    err = _error(source)
    assert message in str(err)


def test_syntax_error_location() -> None:
    err = _error("import nanopto.language as pl\n\n@pl.program\nclass P:\n    x = (\n")
    assert err.line >= 5 and "syntax error" in err.message


def test_deep_nesting_is_a_parser_error() -> None:
    deep = "(" * 90 + "a" + ")" * 90
    parse_program(_main(f"x = {deep}\nreturn\n"))  # parentheses alone add no nesting
    chain = " + ".join(["a"] * 400)
    err = _error(_main(f"x = {chain}\nreturn\n"))
    assert "nesting too deep" in err.message
    calls = "pl.exp(" * 300 + "a" + ")" * 300
    assert "nesting too deep" in _error(_main(f"x = {calls}\nreturn\n")).message
    huge = " + ".join(["a"] * 100_000)
    assert "nesting too deep" in _error(_main(f"x = {huge}\nreturn\n")).message
    nested_ifs = "".join("    " * k + "if a:\n" for k in range(160)) + "    " * 160 + "pass\n"
    assert "nesting too deep" in str(_error(_main(nested_ifs + "return\n")))


def test_parse_program_never_executes_code() -> None:
    marker = "/tmp/nanopto_pwned"
    if os.path.exists(marker):
        os.remove(marker)
    payload = '__import__("os").system("touch /tmp/nanopto_pwned")'
    sources = [
        _main(f"{payload}\nreturn\n"),
        f"import nanopto.language as pl\nX = {payload}\n" + HEADER[len("import nanopto.language as pl\n") :] + "    pass\n",
        _main("pl.static_assert(" + payload + ")\nreturn\n"),
        _main("return\n", params=f"a: pl.Tensor[[{payload}], pl.FP32]"),
    ]
    for source in sources:
        with pytest.raises(ParserError):
            parse_program(source)
    assert not os.path.exists(marker)


def test_a_long_offending_line_is_quoted_as_a_window_around_the_column() -> None:
    err = ParserError("bad", file="f.py", line=1, col=100_000, source_line="x" * 100_000 + "$" + "y" * 100_000)
    quoted, caret = str(err).splitlines()[1:3]
    assert len(quoted) < 200 and quoted.startswith("    ...") and quoted.endswith("...")
    assert quoted[caret.index("^")] == "$"


def test_python_compiler_warnings_are_not_printed(recwarn: pytest.WarningsRecorder) -> None:
    parse_program(_main("x = '\\X'\nreturn x\n", params="a"))
    assert not [w for w in recwarn if issubclass(w.category, (SyntaxWarning, DeprecationWarning))]


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("if 1:\n    a = a\nreturn a\n", "if"),
        ("k: pl.Scalar[pl.INDEX] = 3\nwhile k:\n    k = k - 1\nreturn a\n", "while"),
        ("for (k,) in pl.while_(init_values=(3,)):\n    pl.cond(k)\n    k = pl.yield_(k - 1)\nreturn a\n", "while"),
    ],
)
def test_a_condition_of_a_known_dtype_other_than_bool_is_a_type_error(body: str, what: str) -> None:
    from nanopto.ir_terms.parse_error import ParserTypeError

    err = _error(_main(body))
    assert isinstance(err, ParserTypeError) and err.line >= BODY_LINE
    assert f"the {what} condition must be a Bool-typed scalar" in err.message and err.hint is not None
    parse_program(_main(body.replace("if 1:", "if a > b:").replace("while k:", "while k > 0:").replace("pl.cond(k)", "pl.cond(k > 0)")))


def test_strict_ssa_rejects_a_second_assignment_in_one_block() -> None:
    from nanopto.ir_terms.parse_error import SSAViolationError

    strict = "@pl.function(strict_ssa=True)"
    body = "x = pl.add(a, b)\nx = pl.add(x, b)\nreturn x\n"
    source = _main(body).replace("@pl.function\n", strict + "\n")
    err = _error(source)
    assert isinstance(err, SSAViolationError) and err.line == BODY_LINE + 1 and "'x' is assigned twice" in err.message
    parse_program(_main(body))  # without strict_ssa the name is rebound
    parse_program(_main("x = pl.add(a, b)\nif a > b:\n    x = pl.add(x, b)\nreturn x\n").replace("@pl.function\n", strict + "\n"))


def test_calls_are_checked_with_pyptos_error_classes() -> None:
    from nanopto.ir_terms.parse_error import ParserTypeError, UndefinedVariableError, UnsupportedFeatureError

    assert isinstance(_error(_main("x = self.nothere(a)\nreturn x\n")), UndefinedVariableError)
    assert isinstance(_error(_main("x = len(a)\nreturn x\n")), UnsupportedFeatureError)
    helper = "\n@pl.function\ndef h(self, x, y):\n    return x\n"
    err = _error(_main("x = self.h(a)\nreturn x\n", extra=helper))
    assert isinstance(err, ParserTypeError) and "'h' expects 2 argument(s), got 1" in err.message and err.line == BODY_LINE
    parse_program(_main("x = self.h(a, b)\nreturn x\n", extra=helper))


def test_an_empty_program_and_a_non_dict_attrs_are_syntax_errors() -> None:
    from nanopto.ir_terms.parse_error import ParserSyntaxError

    empty = _error(HEADER + "    pass\n")
    assert isinstance(empty, ParserSyntaxError) and "defines no function" in empty.message
    source = _main("return a\n").replace("@pl.function\n", "@pl.function(attrs=5)\n")
    bad = _error(source)
    assert isinstance(bad, ParserSyntaxError) and "must be a dict literal" in bad.message


def test_a_tuple_parameter_is_a_located_type_error() -> None:
    from nanopto.ir_terms.parse_error import ParserTypeError

    err = _error(_main("return a\n", params="a: tuple[pl.Tensor[[4], pl.FP32], pl.Tensor[[4], pl.FP32]], b"))
    assert isinstance(err, ParserTypeError) and "parameter 'a' cannot be a tuple" in err.message and err.line == BODY_LINE - 1


LONE = "import nanopto.language as pl\n\n@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n    return x\n"


def test_a_lone_function_where_a_program_is_expected_is_named_as_such() -> None:
    err = _error(LONE)
    assert err.message.startswith("Expected @pl.program but found @pl.function 'f'")
    assert (err.line, err.col) == (4, 0) and "pl.parse" in (err.hint or "")


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import nanopto.language as pl\nx = 1\n", "No @pl.function or @pl.program found"),
        (LONE + LONE.replace("def f", "def g"), "Multiple functions/programs found"),
    ],
)
def test_a_function_source_needs_exactly_one_function(source: str, found: str) -> None:
    with pytest.raises(ParserError) as info:
        parse_function(source, "one.py")
    assert info.value.message.startswith(found) and info.value.file == "one.py"


def test_two_programs_are_multiple_programs() -> None:
    err = _error(HEADER + "    pass\n@pl.program\nclass Q:\n    pass\n")
    assert err.message.startswith("Multiple functions/programs found") and err.line == 7


def test_python_syntax_error_is_also_a_syntax_error() -> None:
    with pytest.raises(SyntaxError) as info:
        parse_program(HEADER + "    @pl.function\n    def f(self, x):\n        return x +\n", "s.py")
    err = info.value
    assert isinstance(err, ParserSyntaxError) and "Failed to compile code" in err.message
    assert (err.filename, err.lineno) == ("s.py", 7) and str(err).startswith("s.py:7:")


def test_a_module_level_function_declares_its_parameter_types() -> None:
    with pytest.raises(ParserTypeError) as info:
        parse_function("@pl.function\ndef f(x, y: pl.Scalar[pl.INT32]):\n    return x\n", "m.py")
    err = info.value
    assert err.message == "Parameter 'x' missing type annotation" and (err.line, err.col) == (2, 6)
    assert err.hint and "x: pl.Tensor" in err.hint


def test_a_method_may_leave_its_parameter_types_out() -> None:
    fn = parse_program(_main("return a\n", params="a")).functions["main"]
    assert isinstance(fn.param_list[0].var.type, UnknownType)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        ("pl.Tile[[128], pl.FP32]", "the annotation's shape dimension 0 = 128, but pl.tile.load gives 64"),
        ("pl.Tile[[64], pl.FP16]", "the annotation's dtype FP16 is not the dtype FP32 pl.tile.load gives"),
    ],
)
def test_a_tile_annotation_says_what_the_load_gives(annotation: str, message: str) -> None:
    body = f"t: {annotation} = pl.tile.load(a, [0], [64])\nreturn a\n"
    err = _error(_main(body, params="a: pl.Tensor[[128], pl.FP32]"))
    assert isinstance(err, ParserTypeError) and err.message == message
    assert (err.line, err.col) == (BODY_LINE, 11)


def test_a_tile_annotation_that_says_what_the_load_gives_is_accepted() -> None:
    body = "t: pl.Tile[[64], pl.FP32] = pl.tile.load(a, [0], [64])\nreturn a\n"
    fn = parse_program(_main(body, params="a: pl.Tensor[[128], pl.FP32]")).functions["main"]
    assert fn.body.stmts[0].var.type == TileType([64], DataType.FP32)


DYNAMIC = """import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
        return a

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], b: pl.Tensor[[SECOND, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
        c: pl.Tensor[[128, 64], pl.FP32] = self.kernel(a, b)
        return c
"""


def test_a_dynamic_dimension_takes_one_size_at_a_call() -> None:
    closure = {"M": pl.dynamic("M"), "N": pl.dynamic("N"), "SECOND": 127}
    with pytest.raises(ParserSyntaxError) as info:
        parse_program(DYNAMIC, "dyn.py", closure=closure)
    err = info.value
    assert err.message == "'kernel' gets conflicting bindings for its dynamic dimension 'M': 128 from argument 1, 127 from argument 2"
    assert (err.line, err.col) == (11, 58) and err.hint
    agreed = parse_program(DYNAMIC, "dyn.py", closure={**closure, "SECOND": 128})
    assert list(agreed.functions) == ["kernel", "main"]


def test_an_inline_callee_may_take_disagreeing_sizes_for_one_dynamic_dimension() -> None:
    """docs/specification.md#dynamic-dimensions-and-types: the copy resolves the dimension per
    operation, so a logical and a padded buffer may share one annotation."""
    closure = {"M": pl.dynamic("M"), "N": pl.dynamic("N"), "SECOND": 127}
    inline = DYNAMIC.replace("pl.FunctionType.InCore", "pl.FunctionType.Inline")
    assert list(parse_program(inline, "dyn.py", closure=closure).functions) == ["kernel", "main"]
