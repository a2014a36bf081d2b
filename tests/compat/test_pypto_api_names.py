"""The names PyPTO's Python API uses, spelled as PyPTO spells them."""

from __future__ import annotations

import pytest

import nanopto.language as pl
from nanopto import ir, passes


@pl.program
class Doubling:
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, v: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        w: pl.Tensor[[16], pl.FP32] = pl.add(v, v)
        return w

    @pl.function
    def entry(self, v: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        out: pl.Tensor[[16], pl.FP32] = self.twice(v)
        return out


def test_run_passes_is_run() -> None:
    manager = passes.PassManager.default()
    ir.assert_structural_equal(manager.run_passes(Doubling), manager.run(Doubling))


def test_pass_context_takes_instruments_then_level() -> None:
    seen: list[str] = []
    instrument = passes.CallbackInstrument(after=lambda p, _: seen.append(p.name))
    with passes.PassContext([instrument], passes.VerificationLevel.NONE) as context:
        passes.inline_functions()(passes.HoistNestedCalls()(Doubling))
    assert context.verification_level is passes.VerificationLevel.NONE
    assert seen == ["hoist-nested-calls", "inline-functions"]
    with pytest.raises(TypeError, match="instruments first"):
        passes.PassContext(passes.VerificationLevel.NONE)  # type: ignore[arg-type]


def test_property_set_and_registry_verify() -> None:
    wanted = passes.IRPropertySet()
    assert wanted.empty()
    wanted.insert(passes.IRProperty.InlineFunctionsEliminated)
    assert wanted.contains(passes.IRProperty.InlineFunctionsEliminated)
    found = passes.PropertyVerifierRegistry.verify(wanted, Doubling)
    errors = [d for d in found if d.severity == passes.DiagnosticSeverity.Error]
    assert any("twice" in d.message for d in errors)
    assert errors[0].rule_name == "InlineFunctionsEliminated"
    after = passes.inline_functions()(Doubling)
    assert passes.PropertyVerifierRegistry.verify(wanted, after) == []


def test_parser_error_kinds() -> None:
    source = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def f(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        for i in pl.range(4):
            pass
        else:
            pass
        return a
"""
    with pytest.raises(ir.UnsupportedFeatureError) as info:
        ir.parse_program(source)
    assert isinstance(info.value, ir.ParserError)
    assert info.value.line == 8  # the `for` line
    with pytest.raises(ir.ParserTypeError):
        ir.parse_program(source.replace("pl.Tensor[[4], pl.FP32]) ->", "pl.Tensor[4]) ->"))
    with pytest.raises(ir.ParserSyntaxError):
        ir.parse_program(source.replace("self, a", "a"))


def test_span_program_and_printing_names() -> None:
    span = ir.Span("k.py", 3, 4, 3, 9)
    assert (span.filename, span.line, span.col, span.end_line, span.end_col) == ("k.py", 3, 4, 3, 9)
    assert not ir.Span.unknown().is_valid() and span.is_valid()
    entry = Doubling.get_function("entry")
    assert entry is not None and Doubling.get_function("missing") is None
    assert str(Doubling) == Doubling.as_python() == ir.python_print(Doubling)
    assert str(entry) == entry.as_python() and entry.as_python().lstrip().startswith("@pl.function")
    assert ir.python_print_type(entry.return_types[0]) == "pl.Tensor[[16], pl.FP32]"
    assert ir.structural_hash(Doubling) == ir.structural_hash(ir.parse_program(str(Doubling)))


def test_leaf_nodes_take_the_span_last_positionally() -> None:
    here = ir.Span("k.py", 1, 0)
    x = ir.Var("x", ir.ScalarType(ir.DataType.INT64), here)
    assert x.span == here
    assert ir.ConstInt(7, ir.DataType.INT64, here).span == here
    assert ir.BreakStmt(here).span == here and ir.ContinueStmt(here).span == here
    assert ir.SeqStmts((ir.BreakStmt(),), here).span == here
