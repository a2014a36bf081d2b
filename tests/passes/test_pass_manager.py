"""The pass framework: Pass verification, PassContext, instruments, registry, manager, specs."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    Function,
    FunctionType,
    Program,
    ReturnStmt,
    SeqStmts,
    Span,
    Var,
)
from nanopto.passes import (
    CallbackInstrument,
    IRProperty,
    OptimizationStrategy,
    Pass,
    PassContext,
    PassManager,
    PassRegistry,
    PipelineSpecError,
    PropertyRequirementError,
    UnknownPassError,
    VerificationError,
    VerificationLevel,
    format_pipeline,
    parse_pipeline,
)
from nanopto.passes.hoist_nested_calls import HoistNestedCalls

INLINED = IRProperty.InlineFunctionsEliminated


def function(name: str, func_type: FunctionType = FunctionType.Opaque, calls: str | None = None) -> Function:
    stmts = []
    if calls is not None:
        stmts.append(AssignStmt(Var("r"), Call(calls, (), function=True, span=Span("p.py", 7, 8))))
    return Function(name, (), body=SeqStmts((*stmts, ReturnStmt())), func_type=func_type)


def with_inline() -> Program:
    return Program("P", (function("helper", FunctionType.Inline), function("main", calls="helper")))


def without_inline() -> Program:
    return Program("P", (function("main"),))


# ---------------------------------------------------------------------------------------------
# Dummy passes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeepProgram(Pass):
    """Changes nothing and claims nothing."""

    name: ClassVar[str] = "keep-program"

    def run(self, program: Program) -> Program:
        return program


@dataclass(frozen=True)
class DropInline(Pass):
    """Claims InlineFunctionsEliminated but only deletes the helpers, leaving calls dangling."""

    name: ClassVar[str] = "drop-inline"
    produced: ClassVar[frozenset[IRProperty]] = frozenset({INLINED})

    def run(self, program: Program) -> Program:
        kept = tuple(f for f in program.function_list if f.func_type is not FunctionType.Inline)
        return dataclasses.replace(program, function_list=kept)


@dataclass(frozen=True)
class FakeInline(Pass):
    """A correct stand-in for InlineFunctions on these tiny programs: drops helpers and calls."""

    name: ClassVar[str] = "inline-functions"
    produced: ClassVar[frozenset[IRProperty]] = frozenset({INLINED})
    trace: bool = False

    def run(self, program: Program) -> Program:
        kept = tuple(
            dataclasses.replace(f, body=SeqStmts((ReturnStmt(),)))
            for f in program.function_list
            if f.func_type is not FunctionType.Inline
        )
        return dataclasses.replace(program, function_list=kept)


@dataclass(frozen=True)
class NeedsInlined(Pass):
    name: ClassVar[str] = "needs-inlined"
    required: ClassVar[frozenset[IRProperty]] = frozenset({INLINED})

    def run(self, program: Program) -> Program:
        return program


@dataclass(frozen=True)
class ReintroduceInline(Pass):
    """Breaks InlineFunctionsEliminated and says so."""

    name: ClassVar[str] = "reintroduce-inline"
    invalidated: ClassVar[frozenset[IRProperty]] = frozenset({INLINED})

    def run(self, program: Program) -> Program:
        return with_inline()


@dataclass(frozen=True)
class NeedsTypes(Pass):
    name: ClassVar[str] = "needs-types"
    required: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.TypeChecked})

    def run(self, program: Program) -> Program:
        return program


@pytest.fixture
def registry() -> Iterator[PassRegistry]:
    reg = PassRegistry()
    for cls in (KeepProgram, DropInline, FakeInline, NeedsInlined, HoistNestedCalls):
        reg.register(cls.name, cls)
    yield reg


# ---------------------------------------------------------------------------------------------
# Pass and verification
# ---------------------------------------------------------------------------------------------


def test_pass_without_claims_runs() -> None:
    program = with_inline()
    assert KeepProgram()(program) is program


def test_broken_produced_property_raises_with_messages_and_lines() -> None:
    with pytest.raises(VerificationError) as info:
        DropInline()(with_inline())
    message = str(info.value)
    assert "drop-inline" in message
    assert "Dangling Call to function 'helper'" in message
    assert "p.py:7:9" in message
    assert isinstance(info.value, ValueError)
    assert [d.line for d in info.value.diagnostics] == [7]


def test_correct_pass_verifies() -> None:
    result = FakeInline()(with_inline())
    assert list(result.functions) == ["main"]


def test_verification_level_none_skips_verification() -> None:
    with PassContext(verification_level=VerificationLevel.NONE):
        result = DropInline()(with_inline())
    assert list(result.functions) == ["main"]


def test_input_is_not_mutated() -> None:
    program = with_inline()
    FakeInline()(program)
    assert list(program.functions) == ["helper", "main"]


def test_pass_names_must_be_kebab_case() -> None:
    with pytest.raises(ValueError, match="kebab-case"):

        @dataclass(frozen=True)
        class Bad(Pass):
            name: ClassVar[str] = "Bad_Name"

            def run(self, program: Program) -> Program:
                return program


# ---------------------------------------------------------------------------------------------
# PassContext and instruments
# ---------------------------------------------------------------------------------------------


def test_context_nesting_and_default() -> None:
    assert PassContext.current().verification_level is VerificationLevel.BASIC
    outer = PassContext(verification_level=VerificationLevel.NONE)
    inner = PassContext()
    with outer:
        assert PassContext.current() is outer
        with inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is not outer


def test_context_is_per_thread() -> None:
    seen: list[VerificationLevel] = []
    with PassContext(verification_level=VerificationLevel.NONE):
        thread = threading.Thread(target=lambda: seen.append(PassContext.current().verification_level))
        thread.start()
        thread.join()
    assert seen == [VerificationLevel.BASIC]


def test_instruments_are_called_in_order() -> None:
    events: list[tuple[str, str, str, list[str]]] = []

    def record(tag: str) -> CallbackInstrument:
        return CallbackInstrument(
            before=lambda p, prog: events.append((tag, "before", p.name, list(prog.functions))),
            after=lambda p, prog: events.append((tag, "after", p.name, list(prog.functions))),
        )

    with PassContext(instruments=[record("a"), record("b")]):
        PassManager([FakeInline(), KeepProgram()]).run(with_inline())
    assert events == [
        ("a", "before", "inline-functions", ["helper", "main"]),
        ("b", "before", "inline-functions", ["helper", "main"]),
        ("a", "after", "inline-functions", ["main"]),
        ("b", "after", "inline-functions", ["main"]),
        ("a", "before", "keep-program", ["main"]),
        ("b", "before", "keep-program", ["main"]),
        ("a", "after", "keep-program", ["main"]),
        ("b", "after", "keep-program", ["main"]),
    ]


def test_after_pass_sees_output_before_verification_fails() -> None:
    seen: list[list[str]] = []
    instrument = CallbackInstrument(after=lambda p, prog: seen.append(list(prog.functions)))
    with PassContext(instruments=[instrument]), pytest.raises(VerificationError):
        DropInline()(with_inline())
    assert seen == [["main"]]


# ---------------------------------------------------------------------------------------------
# PassManager
# ---------------------------------------------------------------------------------------------


def test_manager_runs_in_order_and_keeps_history() -> None:
    program = with_inline()
    manager = PassManager([KeepProgram(), FakeInline(), NeedsInlined()])
    history = manager.run_with_history(program)
    assert [name for name, _ in history] == ["keep-program", "inline-functions", "needs-inlined"]
    assert history[0][1] is program
    assert list(history[1][1].functions) == ["main"]
    assert manager.run(program) is not program
    assert manager.pass_names == ["keep-program", "inline-functions", "needs-inlined"]


def test_empty_manager_returns_input() -> None:
    program = with_inline()
    assert PassManager([]).run(program) is program


def test_requirement_not_produced_and_violated() -> None:
    with pytest.raises(PropertyRequirementError) as info:
        PassManager([KeepProgram(), NeedsInlined()]).run(with_inline())
    message = str(info.value)
    assert "needs-inlined" in message and "InlineFunctionsEliminated" in message
    assert "Inline function 'helper' survives" in message


def test_requirement_established_by_verifying_the_input() -> None:
    program = without_inline()
    assert PassManager([NeedsInlined()]).run(program) is program


def test_requirement_without_verifier() -> None:
    with pytest.raises(PropertyRequirementError, match="pass 'needs-types' requires TypeChecked"):
        PassManager([NeedsTypes()]).run(without_inline())


def test_invalidated_property_is_rechecked() -> None:
    manager = PassManager([FakeInline(), ReintroduceInline(), NeedsInlined()])
    with pytest.raises(PropertyRequirementError, match="needs-inlined"):
        manager.run(with_inline())


def test_requirements_unchecked_under_level_none() -> None:
    with PassContext(verification_level=VerificationLevel.NONE):
        PassManager([NeedsTypes(), NeedsInlined()]).run(with_inline())


def test_default_strategy_resolves_names_from_the_registry(registry: PassRegistry) -> None:
    manager = PassManager.get_strategy(OptimizationStrategy.Default, registry=registry)
    assert manager.pass_names == ["inline-functions"]  # it hoists nested calls itself, as its first step
    assert list(manager.run(with_inline()).functions) == ["main"]


def test_default_strategy_with_missing_pass() -> None:
    with pytest.raises(UnknownPassError, match="inline-functions"):
        PassManager.get_strategy(OptimizationStrategy.Default, registry=PassRegistry())


def test_manager_from_pipeline_spec(registry: PassRegistry) -> None:
    manager = PassManager.from_pipeline("keep-program, inline-functions{trace=true}", registry)
    assert manager.passes == (KeepProgram(), FakeInline(trace=True))


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


def test_registry_lookup_and_errors(registry: PassRegistry) -> None:
    assert registry.names() == ["keep-program", "drop-inline", "inline-functions", "needs-inlined", "hoist-nested-calls"]
    assert registry.get("inline-functions", trace=True) == FakeInline(trace=True)
    with pytest.raises(UnknownPassError, match="no pass named 'nope'"):
        registry.get("nope")
    with pytest.raises(ValueError, match="pass 'inline-functions' has no option 'depth'"):
        registry.get("inline-functions", depth=3)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("keep-program", KeepProgram)
    with pytest.raises(ValueError, match="kebab-case"):
        registry.register("Keep_Program", KeepProgram)
    registry.register("keep-program", KeepProgram, replace=True)


def test_registry_checks_factory_builds_the_named_pass(registry: PassRegistry) -> None:
    registry.register("alias", KeepProgram)
    with pytest.raises(ValueError, match="built a pass named 'keep-program'"):
        registry.get("alias")


# ---------------------------------------------------------------------------------------------
# Pipeline specs
# ---------------------------------------------------------------------------------------------


def test_parse_pipeline() -> None:
    assert parse_pipeline("inline-functions{trace=true},fold-mul-one") == [
        ("inline-functions", {"trace": True}),
        ("fold-mul-one", {}),
    ]
    assert parse_pipeline("") == []
    assert parse_pipeline(" a { n = -3 , s = x.y , q = 'a,b' , f = false , max-depth = 2 } , b{} ") == [
        ("a", {"n": -3, "s": "x.y", "q": "a,b", "f": False, "max_depth": 2}),
        ("b", {}),
    ]
    assert parse_pipeline('a{s="true"}') == [("a", {"s": "true"})]


def test_format_pipeline_round_trips() -> None:
    spec = 'a{n=-3,s=x.y,q="a,b",f=false,t="1"},b'
    assert parse_pipeline(format_pipeline(parse_pipeline(spec))) == parse_pipeline(spec)


@pytest.mark.parametrize(
    ("spec", "column", "problem"),
    [
        ("inline_functions", 7, "kebab-case"),
        ("a,,b", 3, "expected a kebab-case pass name"),
        ("a,", 3, "found end of spec"),
        ("a{x=1", 6, "expected ',' or '}'"),
        ("a{x=1,x=2}", 7, "given twice"),
        ("a{=1}", 3, "expected an option name"),
        ("a{x}", 4, "expected '='"),
        ("a b", 3, "expected ',' between passes"),
        ('a{x="y}', 5, "unterminated"),
    ],
)
def test_bad_pipeline_specs(spec: str, column: int, problem: str) -> None:
    with pytest.raises(PipelineSpecError) as info:
        parse_pipeline(spec)
    assert info.value.column == column
    assert problem in str(info.value)
    assert f"column {column}" in str(info.value)
    assert isinstance(info.value, ValueError)
