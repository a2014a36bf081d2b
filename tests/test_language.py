"""`nanopto.language`, the `pl` module: inert at class creation, refused as a runtime value."""

from __future__ import annotations

import itertools
import linecache
import sys
from collections.abc import Callable

import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms.parse_error import ParserError, ParserSyntaxError

_RUNTIME_USES: dict[str, Callable[[], object]] = {
    # `iter`, not a loop: before the fix, iterating went through `__getitem__` and never ended
    "iterate pl.range": lambda: iter(pl.range(10)),
    "iterate a subscript": lambda: list(itertools.islice(pl.Tensor[[4], pl.FP32], 3)),
    "truth value": lambda: bool(pl.range(3)),
    "arithmetic": lambda: pl.add(1, 2) + 1,
    "reflected arithmetic": lambda: 1 - pl.Scalar,
    "comparison": lambda: pl.range(3) < 2,
    "length": lambda: len(pl.Tensor),
    "membership": lambda: 3 in pl.Tile,
    "conversion": lambda: int(pl.const(1, pl.INT32)),
    "index": lambda: [0, 1][pl.Level.CORE_GROUP],  # type: ignore[index]
}


@pytest.mark.parametrize("use", _RUNTIME_USES)
def test_a_placeholder_used_as_a_runtime_value_raises_type_error(use: str) -> None:
    with pytest.raises(TypeError, match=r"`pl` programs are parsed by @pl.program \(or parse_program\), never run"):
        _RUNTIME_USES[use]()


def test_placeholders_still_evaluate_in_annotations_and_decorators() -> None:
    assert repr(pl.Tensor[[4], pl.FP32]) == "pl.Tensor[...]"
    assert repr(pl.Out[pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec]]) == "pl.Out[...]"
    assert repr(pl.Level.CORE_GROUP) == "pl.Level.CORE_GROUP"
    assert repr(pl.range(4, init_values=(0,))) == "pl.range(...)"

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def h(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            return x

        @pl.function
        def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            for i in pl.range(2):
                a = self.h(pl.add(a, i))
            return a

    assert sorted(P.functions) == ["h", "main"]  # type: ignore[attr-defined]


EXEC_PROGRAM = """\
import nanopto.language as pl

@pl.program
class FromExec:
    @pl.function
    def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x
"""


def _exec(code: str, filename: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(code, filename, "exec"), namespace)  # the decorators run on the exec'd text
    return namespace


def test_a_program_from_exec_reads_its_source_from_linecache() -> None:
    filename = "<exec-program>"
    linecache.cache[filename] = (len(EXEC_PROGRAM), None, EXEC_PROGRAM.splitlines(keepends=True), filename)
    try:
        program = _exec(EXEC_PROGRAM, filename)["FromExec"]
    finally:
        linecache.cache.pop(filename, None)
    expected = ir.parse_program(EXEC_PROGRAM)
    assert isinstance(program, ir.Program)
    ir.assert_structural_equal(program, expected)
    assert program.functions["main"].span.file == filename


def test_a_program_from_python_dash_c_reads_its_source_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-c", EXEC_PROGRAM])
    program = _exec(EXEC_PROGRAM, "<string>")["FromExec"]
    ir.assert_structural_equal(program, ir.parse_program(EXEC_PROGRAM))


def test_a_function_from_python_dash_c_reads_its_source_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    code = "import nanopto.language as pl\n\n@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n    return x\n"
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-c", code])
    function = _exec(code, "<string>")["f"]
    assert isinstance(function, ir.Function) and function.name == "f"


@pytest.mark.parametrize("code", [EXEC_PROGRAM, EXEC_PROGRAM.replace("@pl.program\nclass FromExec:\n    ", "").replace("\n    ", "\n").replace("self, ", "")])
def test_no_source_at_all_is_a_located_error_that_points_to_pl_parse(code: str) -> None:
    with pytest.raises(ParserSyntaxError) as info:
        _exec(code, "<nowhere>")
    assert info.value.message.startswith("Cannot retrieve source code for ")
    assert info.value.hint is not None and "pl.parse()" in info.value.hint


def test_columns_of_a_program_defined_in_a_function_count_in_the_file() -> None:
    @pl.program
    class Nested:
        @pl.function
        def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            y: pl.Tensor[[4], pl.FP32] = pl.add(x, x)
            return y

    assign = Nested.functions["main"].body.stmts[0]
    with open(__file__, encoding="utf-8") as source:
        line = source.read().splitlines()[assign.span.line - 1]
    assert line.index("y: pl.Tensor") == assign.span.col
    assert line.index("pl.add(x, x)") == assign.value.span.col
    assert Nested.span.col == line.index("y: pl.Tensor") - 8  # the `@pl.program` line, two levels out


def test_an_error_in_a_program_defined_in_a_function_points_into_the_file() -> None:
    with pytest.raises(ParserError) as info:

        @pl.program
        class Bad:
            @pl.function
            def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y: pl.Tensor[[4], pl.FP32] = pl.no_such_op(x)
                return y

    err = info.value
    with open(__file__, encoding="utf-8") as source:
        line = source.read().splitlines()[err.line - 1]
    assert err.col == line.index("pl.no_such_op")
    assert err.source_line is not None and err.source_line.rstrip() == line.rstrip()
    assert str(err).splitlines()[2].index("^") == 4 + err.col
