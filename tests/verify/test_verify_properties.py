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
    return Function("helper", (Param(p),), body=ReturnStmt((p,), span=at(3)), func_type=func_type, span=at(2))


def main(*stmts: AssignStmt | EvalStmt) -> Function:
    return Function("main", (), body=SeqStmts((*stmts, ReturnStmt())), span=at(10))


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


def test_calls_are_found_inside_types_and_arguments_in_walk_order() -> None:
    """A call may sit in a Var's type (a shape) or an argument, not only be a statement's value:
    each is found, in the order a walk of the function meets them."""
    shape_call = Call("in_shape", (), function=True, span=at(11))
    shaped = Var("t", TensorType((shape_call,), DataType.FP32))
    program = Program(
        "P",
        (
            main(
                AssignStmt(Var("a"), Call("tensor.add", (shaped, shaped)), span=at(11)),
                AssignStmt(shaped, Call("first", (), function=True, span=at(12))),
                AssignStmt(Var("b"), Call("tensor.add", (Call("nested", (), function=True, span=at(13)),))),
            ),
        ),
    )
    messages = [d.message.split(":")[0] for d in verify_properties(program, [INLINED])]
    assert messages == [
        "Dangling Call to function 'in_shape'",  # the first argument's type
        "Dangling Call to function 'in_shape'",  # the second's
        "Dangling Call to function 'in_shape'",  # the target's type, before its value
        "Dangling Call to function 'first'",
        "Dangling Call to function 'nested'",
    ]


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


# -- calls the specification leaves in place ---------------------------------------------------

_HEADER = "import nanopto.language as pl\n\n@pl.program\nclass P:\n"

_LEFT_IN_PLACE = {
    "while condition": (
        """    @pl.function(type=pl.FunctionType.Inline)
    def limit(self, x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return x + 3

    @pl.function
    def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        while a < self.limit(a):
            a = a + 1
        return a
""",
        "'limit' in a `while` condition cannot be spliced",
        "Bind it to a variable before the loop",
    ),
    "nested tuple helper": (
        """    @pl.function(type=pl.FunctionType.Inline)
    def pair(self, x: pl.Scalar[pl.INDEX]) -> tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]:
        return x, x + 1

    @pl.function
    def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        b = self.pair(a)[0] + 1
        return b
""",
        "'pair' returns a tuple",
        "Unpack it at its own statement (`p, q = self.pair(...)`)",
    ),
    "IterArg initializer": (
        """    @pl.function(type=pl.FunctionType.Inline)
    def start(self, x: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        return x + 3

    @pl.function
    def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i, (acc,) in pl.range(4, init_values=(self.start(a),)):
            acc2 = acc + i
            acc3 = pl.yield_(acc2)
        return acc3
""",
        "'start' in a loop's initial values (init_values=) cannot be spliced",
        "Bind it to a variable before the loop (`v = self.start(...)`) and pass the variable",
    ),
}


@pytest.mark.parametrize("case", _LEFT_IN_PLACE)
def test_a_call_left_in_place_says_why_and_what_to_write_instead(case: str) -> None:
    from nanopto.ir_terms.parser import parse_program
    from nanopto.passes import VerificationError, inline_functions

    body, why, what = _LEFT_IN_PLACE[case]
    with pytest.raises(VerificationError) as info:
        inline_functions()(parse_program(_HEADER + body, "left.py"))
    error = info.value
    assert error.in_the_input
    assert str(error).startswith("pass 'inline-functions' cannot process this program as written (1 error(s))")
    [diagnostic] = error.diagnostics
    assert diagnostic.line == 11 and diagnostic.in_the_input
    assert why in diagnostic.message and what in diagnostic.message


def test_a_call_at_a_spliced_position_left_behind_is_still_the_pass_s_bug() -> None:
    program = Program("P", (main(call("helper", 12)),))
    [diagnostic] = verify_properties(program, [INLINED], removed_inline=frozenset({"helper"}))
    assert not diagnostic.in_the_input


def test_the_cycle_error_names_the_first_call_on_the_cycle() -> None:
    from nanopto.ir_terms.parser import parse_program
    from nanopto.passes import inline_functions
    from nanopto.passes.inlining.call_graph import InlineCycleError

    source = _HEADER + """    @pl.function
    def main(self, a):
        r = self.ping(a)
        return r

    @pl.function(type=pl.FunctionType.Inline)
    def ping(self, x):
        y = x + 1
        z = self.pong(y)
        return z

    @pl.function(type=pl.FunctionType.Inline)
    def pong(self, x):
        y = self.ping(x)
        return y
"""
    with pytest.raises(InlineCycleError) as info:
        inline_functions()(parse_program(source, "cycle.py"))
    assert str(info.value).startswith("cycle.py:13:13: Cycle detected among Inline functions: ping -> pong -> ping")
    assert "'ping' calls 'pong'" in str(info.value)
