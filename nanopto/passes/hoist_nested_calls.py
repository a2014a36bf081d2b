"""The `hoist-nested-calls` pass: nested Inline calls onto their own bindings, so they become sites.

docs/specification.md, "Nested call sites": a site is recognised only when the call is the whole
statement value. A call anywhere else in a statement's own expressions — an argument (including the
`array.update_element(arr, i, f(x))` that `arr[i] = f(x)` desugars into), a binary operand, a loop
bound, an if condition, a yield value — is moved onto `t__inline_arg_vN = f(...)` just before its
statement, innermost first, and spliced in the same stage. Deliberately not hoisted: a call that is
already the whole value (only its arguments are), a tuple-returning callee, a `while` condition
(evaluated per iteration), an IterArg init value, and bodies that are not `SeqStmts`. Such calls stay
where they are and the InlineFunctionsEliminated verifier names them.

The pass produces `NestedCallsHoisted`, which `inline-functions` requires; the default pipeline
runs both. It is Python rather than rules because it inserts statements *before* the one it
rewrites, and it is small enough to check by eye; its tests are in
`tests/passes/test_hoist_nested_calls.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.schema import map_children, nodes_of, walk_stmts, whole_value
from nanopto.ir_terms.types import Type, UnknownType
from nanopto.passes.pass_base import Pass
from nanopto.passes.registry import register_pass
from nanopto.verify.diagnostics import Diagnostic, Severity
from nanopto.verify.properties import IRProperty, VerifyContext, register_verifier


class _Hoister:
    def __init__(self, hoistable: Callable[[str], bool], result_type: Callable[[str], Type]) -> None:
        self.hoistable = hoistable
        self.result_type = result_type
        self.version = 0

    def _is_site(self, expr: Expr) -> bool:
        return isinstance(expr, Call) and expr.function and self.hoistable(expr.op)

    def expr(self, expr: Any, pre: list[Stmt]) -> Any:
        """Post-order: arguments first (left to right), then the call itself."""
        if isinstance(expr, Var):
            return expr
        rebuilt = map_children(expr, lambda child: self.expr(child, pre))
        if self._is_site(rebuilt):
            temp = Var(f"t__inline_arg_v{self.version}", self.result_type(rebuilt.op), span=expr.span)
            self.version += 1
            pre.append(AssignStmt(temp, rebuilt, span=expr.span))
            return temp
        return rebuilt

    def args_only(self, call: Call, pre: list[Stmt]) -> Call:
        args = tuple(self.expr(a, pre) for a in call.args)
        return call if args == call.args else dataclasses.replace(call, args=args)

    def value(self, expr: Expr, pre: list[Stmt]) -> Expr:
        if self._is_site(expr):
            assert isinstance(expr, Call)
            return self.args_only(expr, pre)
        result: Expr = self.expr(expr, pre)
        return result

    def body(self, body: Stmt | None) -> Any:
        return self.seq(body) if isinstance(body, SeqStmts) else body

    def seq(self, seq: SeqStmts) -> SeqStmts:
        out: list[Stmt] = []
        for stmt in seq.stmts:
            pre: list[Stmt] = []
            new = self.stmt(stmt, pre)
            out += pre
            out.append(new)
        return SeqStmts(tuple(out), span=seq.span)

    def stmt(self, stmt: Stmt, pre: list[Stmt]) -> Stmt:
        match stmt:
            case AssignStmt():
                return dataclasses.replace(stmt, value=self.value(stmt.value, pre))
            case EvalStmt():
                return dataclasses.replace(stmt, expr=self.value(stmt.expr, pre))
            case ReturnStmt() if len(stmt.values) == 1:
                return dataclasses.replace(stmt, values=(self.value(stmt.values[0], pre),))
            case ReturnStmt() | YieldStmt():
                return dataclasses.replace(stmt, values=tuple(self.expr(v, pre) for v in stmt.values))
            case IfStmt():
                return dataclasses.replace(
                    stmt,
                    cond=self.expr(stmt.cond, pre),
                    then_body=self.body(stmt.then_body),
                    else_body=self.body(stmt.else_body),
                )
            case ForStmt():
                return dataclasses.replace(
                    stmt,
                    start=self.expr(stmt.start, pre),
                    stop=self.expr(stmt.stop, pre),
                    step=self.expr(stmt.step, pre),
                    body=self.body(stmt.body),
                )
            case WhileStmt() | ScopeStmt():
                return dataclasses.replace(stmt, body=self.body(stmt.body))
            case _:
                return stmt


def hoist_nested_calls(fn: Function, inline: dict[str, Function]) -> Function:
    """`fn` with every hoistable nested Inline call moved onto a `t__inline_arg_vN` binding."""

    def returns(name: str) -> int:
        return len(inline[name].return_types)

    def hoistable(name: str) -> bool:
        return name in inline and _returned_values(inline[name]) <= 1 and returns(name) <= 1

    def result_type(name: str) -> Type:
        types = inline[name].return_types
        return types[0] if len(types) == 1 else UnknownType()

    if not isinstance(fn.body, SeqStmts) or not _has_nested_call(fn.body, hoistable):
        return fn
    hoister = _Hoister(hoistable, result_type)
    body = hoister.seq(fn.body)
    return fn if hoister.version == 0 else dataclasses.replace(fn, body=body)


def _has_nested_call(body: SeqStmts, hoistable: Callable[[str], bool]) -> bool:
    """Whether some hoistable call is not the whole value of its statement: the common case is
    none, and then the traversal that rebuilds every statement can be skipped."""
    calls = [c for c in nodes_of(body) if isinstance(c, Call) and c.function and hoistable(c.op)]
    if not calls:
        return False
    whole = {id(call) for stmt in walk_stmts(body) if (call := whole_value(stmt)) is not None}
    return any(id(call) not in whole for call in calls)


def _returned_values(fn: Function) -> int:
    body = fn.body
    if isinstance(body, SeqStmts) and body.stmts and isinstance(body.stmts[-1], ReturnStmt):
        return len(body.stmts[-1].values)
    return 0


def _inline_of(program: Program) -> dict[str, Function]:
    return {f.name: f for f in program.function_list if f.func_type is FunctionType.Inline}


def hoist_program(program: Program) -> Program:
    """`program` with the nested Inline calls of every function hoisted (the pass's work)."""
    inline = _inline_of(program)
    if not inline:
        return program
    functions = tuple(hoist_nested_calls(fn, inline) for fn in program.function_list)
    if all(new is old for new, old in zip(functions, program.function_list, strict=True)):
        return program
    return Program(program.name, functions, span=program.span)


def verify_nested_calls_hoisted(program: Program, context: VerifyContext) -> list[Diagnostic]:
    """One error per nested Inline call that `hoist-nested-calls` would still move."""
    inline = _inline_of(program)
    diagnostics: list[Diagnostic] = []
    for fn in program.function_list:
        hoisted = hoist_nested_calls(fn, inline) if inline else fn
        if hoisted is fn:
            continue
        temps = [
            stmt
            for stmt in walk_stmts(hoisted.body)
            if isinstance(stmt, AssignStmt) and stmt.var.name.startswith("t__inline_arg_v")
        ]
        for stmt in temps:
            callee = stmt.value.op if isinstance(stmt.value, Call) else "?"
            diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    f"the call of Inline '{callee}' in '{fn.name}' is nested inside an expression, "
                    "not the whole value of its statement",
                    stmt.span or fn.span,
                    IRProperty.NestedCallsHoisted.value,
                )
            )
    return diagnostics


@dataclass(frozen=True)
class HoistNestedCalls(Pass):
    """Move every hoistable nested Inline call onto a `t__inline_arg_vN` binding before its statement."""

    name: ClassVar[str] = "hoist-nested-calls"
    produced: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.NestedCallsHoisted})

    def run(self, program: Program) -> Program:
        return hoist_program(program)


register_verifier(IRProperty.NestedCallsHoisted, verify_nested_calls_hoisted)
register_pass("hoist-nested-calls", HoistNestedCalls)
