"""The names PyPTO's modules offer beyond `ir`, `passes` and `pl`, where nanopto has them:
comment extraction, the parser error's span and renderer, the concise message, the `pl.adir`
tables, the round-trip instrument, and a class's source lines with one parse per file."""

from __future__ import annotations

import ast
import inspect

import pytest

import nanopto.language as pl
from nanopto import ir, passes
from nanopto.ir_terms import dtypes, parse_error, source_lookup
from nanopto.ir_terms.parser import extract_line_comments

BAD = """
import nanopto.language as pl

@pl.function
def f(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    y = pl.no_such_op(x)
    return y
"""


def test_line_comments_by_line_with_their_columns() -> None:
    source = "x = 1  # note\nfor i in r:\n    # indented\n    y = 2\n## heading\n#compact\n"
    assert extract_line_comments(source) == {
        1: [(7, "note")],
        3: [(4, "indented")],
        5: [(0, "# heading")],
        6: [(0, "compact")],
    }
    assert extract_line_comments("") == {}
    assert extract_line_comments("x = 1\n") == {}


def test_a_parse_error_span_is_pyptos_one_based_dict() -> None:
    with pytest.raises(parse_error.InvalidOperationError) as caught:
        pl.parse(BAD)
    error = caught.value
    assert error.span["begin_line"] == error.line == 6
    assert error.span["begin_column"] == error.col + 1 == 9
    assert error.span["filename"] == error.file


def test_the_renderer_puts_the_location_after_an_arrow_and_a_caret_under_the_column() -> None:
    with pytest.raises(parse_error.ParserError) as caught:
        pl.parse(BAD)
    error = caught.value
    rendered = parse_error.ErrorRenderer(use_color=False).render(error)
    rows = rendered.split("\n")
    assert rows[0] == f"error: {error.message}"
    assert rows[1] == f"  --> {error.file}:{error.line}:{error.col}"
    caret = next(i for i, row in enumerate(rows) if row.endswith("^"))
    assert rows[caret - 1].startswith(f"{error.line} | ") and "pl.no_such_op(x)" in rows[caret - 1]
    assert rows[caret].index("^") == len(f"{error.line} | ") + error.col


@pytest.mark.parametrize(
    ("message", "strip", "expected"),
    [
        ("plain", False, "plain"),
        ("user message\n\nC++ Traceback (most recent call last):\n  File a.cpp", False, "user message"),
        ("user message\n\nNo stack trace available.\n(tip)", False, "user message"),
        ("positive dim\nCheck failed: dim > 0 at foo.cpp:42", False, "positive dim"),
        ("needs 2D [k.py:9:3]\nCheck failed: x at f.cpp:1", False, "needs 2D [k.py:9:3]"),
        ("needs 2D [k.py:9:3]\nCheck failed: x at f.cpp:1", True, "needs 2D"),
        ("bad [k.py:9:-1]\nCheck failed: x at f.cpp:1", True, "bad"),
        ("step must divide, got a[0:64:3]", True, "step must divide, got a[0:64:3]"),
    ],
)
def test_concise_message(message: str, strip: bool, expected: str) -> None:
    assert parse_error.concise_error_message(ValueError(message), strip_trailing_span=strip) == expected


def test_a_check_without_a_message_is_not_an_empty_message() -> None:
    concise = parse_error.concise_error_message(ValueError("\nCheck failed: a && b at x.cpp:202"))
    assert concise and "Check failed" not in concise and ".cpp" not in concise
    assert parse_error.concise_error_message(ValueError("")) == ""


def test_direction_tables_are_the_adir_names() -> None:
    assert set(dtypes.DIRECTION_TO_NAME) == set(ir.ArgDirection)
    for name, direction in dtypes.NAME_TO_DIRECTION.items():
        assert getattr(pl.adir, name) is direction
        assert dtypes.DIRECTION_TO_NAME[direction] == name
        assert dtypes.symbol_of_enum(direction) == f"adir.{name}"


def test_ir_offers_the_pass_manager_by_pyptos_names() -> None:
    assert ir.PassManager is passes.PassManager
    assert ir.OptimizationStrategy is passes.OptimizationStrategy
    with pytest.raises(AttributeError):
        ir.NoSuchName  # noqa: B018


@pl.program
class _Nested:
    @pl.function(type=pl.FunctionType.Inline)
    def half(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return n // 2

    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k: pl.Scalar[pl.INDEX] = self.half(n)
        return k + 1


def test_roundtrip_instrument_passes_a_pipeline_that_prints_and_reads_back() -> None:
    seen: list[str] = []
    check = passes.make_roundtrip_instrument()
    record = passes.CallbackInstrument(after=lambda p, _: seen.append(p.name))
    with passes.PassContext([check, record]):
        passes.PassManager.default().run(_Nested)
    assert "inline-functions" in seen


class _Plain:
    class Inner:
        pass


def _decorate(cls: type) -> type:
    return cls


@_decorate
class _Decorated:
    pass


def _local() -> type:
    class Local:
        pass

    return Local


def test_class_source_lines_are_inspects() -> None:
    for cls in (_Plain, _Plain.Inner, _Decorated, _local()):
        assert source_lookup.get_class_source_lines(cls) == inspect.getsourcelines(cls)
    assert source_lookup.get_class_source_lines(_Decorated)[0][0].startswith("@_decorate")


def test_one_parse_per_file_and_first_definition_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    source_lookup._CLASS_LINE_INDEX_CACHE.clear()
    parses: list[object] = []
    real = ast.parse

    def counting(*args: object, **kwargs: object) -> ast.Module:
        parses.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counting)
    for cls in (_Plain, _Plain.Inner, _Decorated, _local()):
        assert source_lookup.get_class_source_lines(cls)
    if not source_lookup._records_own_first_line(_Plain):
        assert len(parses) == 1
    indexer = source_lookup._ClassLineIndexer()
    indexer.visit(real("class Dup:\n    pass\n\n\nclass Dup:\n    pass\n"))
    assert indexer.index["Dup"] == 1


LEVELS = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def worker(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.POD)
    def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function
    def plain(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.AIV)
    def vector(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x
"""


def test_a_functions_level_and_role_are_the_members_the_decorator_names() -> None:
    program = pl.parse(LEVELS)
    assert isinstance(program, ir.Program)
    worker, main, plain = (program.functions[name] for name in ("worker", "main", "plain"))
    assert worker.level is ir.Level.HOST and worker.role is ir.Role.SubWorker
    assert main.level is ir.Level.CLUSTER_0 and main.role is ir.Role.Orchestrator
    assert plain.level is None and plain.role is None


def test_unwritten_level_and_role_are_what_the_function_type_implies() -> None:
    program = pl.parse(LEVELS)
    assert isinstance(program, ir.Program)
    kernel, vector = program.functions["kernel"], program.functions["vector"]
    assert kernel.level is ir.Level.CHIP_DIE and kernel.role is ir.Role.SubWorker
    assert vector.level is ir.Level.AIV and vector.role is ir.Role.SubWorker
    assert "level" not in kernel.attrs and "role" not in kernel.attrs
    reparsed = pl.parse_program(ir.python_print(program))
    ir.assert_structural_equal(reparsed, program)
    assert "level=" not in ir.python_print(kernel)


def test_self_call_of_a_name_also_defined_at_module_level_is_the_method() -> None:
    @pl.function
    def double(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y: pl.Tensor[[4], pl.FP32] = pl.add(x, x)
        return y

    @pl.program
    class Own:
        @pl.function
        def double(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            y: pl.Tensor[[4], pl.FP32] = pl.mul(x, 2.0)
            return y

        @pl.function
        def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            y: pl.Tensor[[4], pl.FP32] = self.double(x)
            return y

    assert list(Own.functions) == ["double", "main"]
    assert "pl.mul" in Own.as_python() and "pl.add" not in Own.as_python()
    assert isinstance(double, ir.Function)


def test_bare_call_of_a_name_the_program_also_defines_is_refused_where_written() -> None:
    @pl.function
    def double(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y: pl.Tensor[[4], pl.FP32] = pl.add(x, x)
        return y

    with pytest.raises(parse_error.ParserSyntaxError, match="conflicts with program function 'double'") as caught:

        @pl.program
        class Clash:
            @pl.function
            def double(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                return x

            @pl.function
            def main(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
                y: pl.Tensor[[4], pl.FP32] = double(x)
                return y

    assert caught.value.hint is not None and "self.double" in caught.value.hint
    assert caught.value.line == inspect.currentframe().f_lineno - 4  # type: ignore[union-attr]
    assert isinstance(double, ir.Function)


def test_loads_reads_a_file(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "k.py"
    path.write_text(LEVELS, encoding="utf-8")
    assert isinstance(pl.loads(str(path)), ir.Program)
    assert pl.loads_program(str(path)).name == "P"
    path.write_text(BAD, encoding="utf-8")
    with pytest.raises(pl.parser.ParserError) as caught:
        pl.loads(str(path))
    assert caught.value.file == str(path)
    with pytest.raises(OSError):
        pl.loads(str(path) + ".missing")


def test_an_abstract_subworker_requires_runtime_binding() -> None:
    program = pl.parse(LEVELS.replace("        return x\n", "        ...\n", 1))
    assert isinstance(program, ir.Program)
    assert program.functions["worker"].requires_runtime_binding
    assert not program.functions["kernel"].requires_runtime_binding
