"""The InlineFunctionsEliminated verifier and the property-verifier registry."""

from __future__ import annotations

import pytest

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    EvalStmt,
    Function,
    FunctionType,
    Param,
    Program,
    ReturnStmt,
    SeqStmts,
    Span,
    Submit,
    Var,
)
from nanopto.ir_terms.types import TensorType
from nanopto.verify import (
    Diagnostic,
    IRProperty,
    Severity,
    VerifyContext,
    get_verifier,
    has_verifier,
    register_verifier,
    verify_properties,
)

INLINED = IRProperty.InlineFunctionsEliminated


def at(line: int) -> Span:
    return Span("prog.py", line, 4)


def helper(func_type: FunctionType = FunctionType.Inline) -> Function:
    p = Var("p", TensorType((), DataType.FP32))
    return Function("helper", (Param(p),), ReturnStmt((p,), span=at(3)), func_type=func_type, span=at(2))


def main(*stmts: AssignStmt | EvalStmt) -> Function:
    return Function("main", (), SeqStmts((*stmts, ReturnStmt())), span=at(10))


def call(callee: str, line: int | None = None) -> AssignStmt:
    return AssignStmt(Var("r"), Call(callee, (), function=True, span=None if line is None else at(line)))


def test_clean_program_has_no_diagnostics() -> None:
    program = Program("P", (helper(FunctionType.Opaque), main(call("helper", 11))))
    assert verify_properties(program, [INLINED]) == []


def test_surviving_inline_function_and_its_call_are_reported() -> None:
    program = Program("P", (helper(), main(call("helper", 12))))
    diagnostics = verify_properties(program, [INLINED])
    assert [d.message for d in diagnostics] == [
        "Inline function 'helper' survives",
        "Dangling Call to function 'helper': 'helper' is an Inline function",
    ]
    assert [d.line for d in diagnostics] == [2, 12]
    assert all(d.severity is Severity.ERROR and d.rule == "InlineFunctionsEliminated" for d in diagnostics)


def test_call_to_removed_inline_function() -> None:
    program = Program("P", (main(call("helper", 12)),))
    [diagnostic] = verify_properties(program, [INLINED], removed_inline=frozenset({"helper"}))
    assert diagnostic.message.startswith("Dangling Call to function 'helper'")
    assert "removed" in diagnostic.message
    assert diagnostic.span == at(12)


def test_call_to_unknown_function_is_dangling() -> None:
    program = Program("P", (main(call("nowhere", 12)),))
    [diagnostic] = verify_properties(program, [INLINED])
    assert "Dangling Call to function 'nowhere'" in diagnostic.message


def test_builtin_ops_are_not_calls_to_functions() -> None:
    stmt = AssignStmt(Var("r"), Call("tensor.add", ()))
    assert verify_properties(Program("P", (main(stmt),)), [INLINED]) == []


def test_submit_of_inline_function() -> None:
    submit = EvalStmt(Submit("helper", (), span=at(14)))
    program = Program("P", (helper(), main(submit)))
    diagnostics = verify_properties(program, [INLINED])
    assert diagnostics[1].message.startswith("Dangling Call to function 'helper' (submitted)")
    assert diagnostics[1].line == 14


def test_span_falls_back_to_the_enclosing_node() -> None:
    stmt = call("helper")
    stmt = AssignStmt(stmt.var, stmt.value, span=at(20))
    [diagnostic] = verify_properties(Program("P", (main(stmt),)), [INLINED])
    assert diagnostic.line == 20


def test_nested_calls_are_found() -> None:
    inner = Call("helper", (), function=True, span=at(30))
    outer = AssignStmt(Var("r"), Call("tensor.add", (inner, inner)))
    diagnostics = verify_properties(Program("P", (main(outer),)), [INLINED])
    assert len(diagnostics) == 2


def test_context_between_programs() -> None:
    before = Program("P", (helper(), main()))
    after = Program("P", (main(),))
    assert VerifyContext.between(before, after).removed_inline == frozenset({"helper"})
    assert VerifyContext.between(before, before).removed_inline == frozenset()


def test_declared_only_properties_are_skipped() -> None:
    assert not has_verifier(IRProperty.TypeChecked)
    program = Program("P", (helper(),))
    assert verify_properties(program, [IRProperty.TypeChecked]) == []


def test_registry_refuses_silent_replacement() -> None:
    verifier = get_verifier(INLINED)
    assert verifier is not None
    with pytest.raises(ValueError, match="already has a verifier"):
        register_verifier(INLINED, verifier)
    register_verifier(INLINED, verifier, replace=True)
    assert get_verifier(INLINED) is verifier


def test_diagnostic_text_names_location_rule_and_message() -> None:
    diagnostic = Diagnostic(Severity.ERROR, "boom", at(7), "Rule")
    assert str(diagnostic) == "prog.py:7:5: error[Rule]: boom"
    assert str(Diagnostic(Severity.WARNING, "hm", None, "Rule")) == "<unknown location>: warning[Rule]: hm"
