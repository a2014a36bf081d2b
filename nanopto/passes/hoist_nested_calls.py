"""The `hoist-nested-calls` pass: nested Inline calls onto their own bindings, so they become sites.

docs/specification.md, "Nested call sites": a site is recognised only when the call is the whole
statement value. A call anywhere else in a statement's own expressions — an argument (including the
`array.update_element(arr, i, f(x))` that `arr[i] = f(x)` desugars into), a binary operand, a loop
bound, an if condition, a yield value — is moved onto `t__inline_arg_vN = f(...)` just before its
statement, innermost first, and spliced in the same stage. Deliberately not hoisted: a call that is
already the whole value (only its arguments are), a tuple-returning callee, a `while` condition
(evaluated per iteration), an IterArg init value, and bodies that are not `SeqStmts`. Such calls stay
where they are and the InlineFunctionsEliminated verifier names them.

Every binding added carries its reason (`hoist_with_reasons`, a `HoistResult`; recorded in the
`PassContext`'s traces with `trace=True`, which `--trace`, `--json` and `--html` show).

The pass produces `NestedCallsHoisted`, which `inline-functions` requires; the default pipeline
runs both. It is Python rather than rules because it inserts statements *before* the one it
rewrites, and it is small enough to check by eye; its tests are in
`tests/passes/test_hoist_nested_calls.py`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import map_children, nodes_of, nodes_of_class, walk_stmts, whole_value
from nanopto.ir_terms.types import ScalarType, Type, UnknownType
from nanopto.passes.context import PassContext
from nanopto.passes.evaluation_order import (
    Timeline,
    is_constant,
    may_alias_params,
    reads_contents,
    vars_read,
    writes_in_place,
)
from nanopto.passes.pass_base import Pass
from nanopto.passes.registry import register_pass
from nanopto.verify.check_rebinding import RebindingCheckError, check_hoisted_operands
from nanopto.verify.diagnostics import Diagnostic, Severity
from nanopto.verify.properties import IRProperty, VerifyContext, register_verifier

Disturbs = Callable[[Call, Expr], str | None]
"""Why evaluating the call (an Inline site) may change what the expression evaluates to, or None
when it cannot (any false value means it cannot)."""


@dataclass(frozen=True)
class Hoisted:
    """One binding the pass added, and why: a nested call moved onto its own statement, or an
    operand evaluated before such a call that the call would change, hoisted along with it."""

    function: str
    stmt: AssignStmt
    reason: str


@dataclass(frozen=True)
class HoistResult:
    """The hoisted program, with every binding the pass added (what `--trace`, `--json` and the
    HTML page show for this pass)."""

    program: Program
    hoisted: tuple[Hoisted, ...] = ()


class _Hoister:
    def __init__(
        self, hoistable: Callable[[str], bool], result_type: Callable[[str], Type], disturbs: Disturbs | None
    ) -> None:
        self.hoistable = hoistable
        self.result_type = result_type
        self.disturbs = disturbs
        self.version = 0
        self.reasons: dict[int, str] = {}
        """The reason for each binding added, by the binding's identity."""

    def _is_site(self, expr: Expr) -> bool:
        return isinstance(expr, Call) and expr.function and self.hoistable(expr.op)

    def _temp(self, value: Expr, ty: Type) -> Var:
        temp = Var(f"t__inline_arg_v{self.version}", ty, span=value.span)
        self.version += 1
        return temp

    def expr(self, expr: Any, pre: list[Stmt]) -> Any:
        """Post-order: arguments first (left to right), then the call itself."""
        if isinstance(expr, Var):
            return expr
        starts: list[int] = []
        children: list[Any] = []

        def visit(child: Any) -> Any:
            starts.append(len(pre))
            children.append(self.expr(child, pre))
            return children[-1]

        rebuilt = map_children(expr, visit)
        ordered = self.keep_order(children, starts, pre)
        if ordered is not children:
            remaining = iter(ordered)
            rebuilt = map_children(rebuilt, lambda _child: next(remaining))
        if self._is_site(rebuilt):
            temp = self._temp(expr, self.result_type(rebuilt.op))
            pre.append(AssignStmt(temp, rebuilt, annotated=False, span=expr.span))
            self.reasons[id(pre[-1])] = (
                f"nested call of Inline '{rebuilt.op}': moved onto a statement of its own, so that it is a call site"
            )
            return temp
        return rebuilt

    def exprs(self, items: Sequence[Any], pre: list[Stmt]) -> list[Any]:
        """Sibling expressions, evaluated left to right."""
        starts: list[int] = []
        out: list[Any] = []
        for item in items:
            starts.append(len(pre))
            out.append(self.expr(item, pre))
        return self.keep_order(out, starts, pre)

    def keep_order(self, siblings: list[Any], starts: list[int], pre: list[Stmt]) -> list[Any]:
        """Hoist an operand along with a later sibling's call that would change it.

        Operands are evaluated left to right, so `k * 10 + self.inc(k)` reads `k` before the call;
        moving the call ahead of the statement would make the operand read what the call wrote.
        Such an operand is bound just before the later siblings' hoisted calls
        (docs/specification.md, "Meaning under aliasing"). `siblings` is returned when nothing moves.
        """
        if self.disturbs is None or len(siblings) < 2:
            return siblings
        ends = [*starts[1:], len(pre)]
        calls = [
            [s.value for s in pre[a:b] if isinstance(s, AssignStmt) and isinstance(s.value, Call) and self._is_site(s.value)]
            for a, b in zip(starts, ends, strict=True)
        ]
        moved: dict[int, Var] = {}
        for i in reversed(range(len(siblings) - 1)):
            operand = siblings[i]
            if not isinstance(operand, Expr):
                continue
            later = [c for group in calls[i + 1 :] for c in group]
            why = next((reason for call in later if (reason := self.disturbs(call, operand))), None)
            if why:
                temp = self._temp(operand, type_of(operand))
                pre.insert(ends[i], AssignStmt(temp, operand, annotated=False, span=operand.span))
                self.reasons[id(pre[ends[i]])] = why if isinstance(why, str) else "hoisted: a later call changes it"
                moved[i] = temp
        if not moved:
            return siblings
        return [moved.get(i, sibling) for i, sibling in enumerate(siblings)]

    def args_only(self, call: Call, pre: list[Stmt]) -> Call:
        args = tuple(self.exprs(call.args, pre))
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
                return dataclasses.replace(stmt, values=tuple(self.exprs(stmt.values, pre)))
            case IfStmt():
                return dataclasses.replace(
                    stmt,
                    cond=self.expr(stmt.cond, pre),
                    then_body=self.body(stmt.then_body),
                    else_body=self.body(stmt.else_body),
                )
            case ForStmt():
                start, stop, step = self.exprs((stmt.start, stmt.stop, stmt.step), pre)
                return dataclasses.replace(stmt, start=start, stop=stop, step=step, body=self.body(stmt.body))
            case WhileStmt() | ScopeStmt():
                return dataclasses.replace(stmt, body=self.body(stmt.body))
            case _:
                return stmt


def hoist_nested_calls(fn: Function, inline: dict[str, Function]) -> Function:
    """`fn` with every hoistable nested Inline call moved onto a `t__inline_arg_vN` binding, and,
    where the call would change an operand evaluated before it, that operand too."""
    return _hoist(fn, inline)[0]


def _hoist(fn: Function, inline: dict[str, Function]) -> tuple[Function, list[Hoisted]]:
    """`hoist_nested_calls`, with the bindings it added and why."""

    def returns(name: str) -> int:
        return len(inline[name].return_types)

    @functools.cache  # a question about the helper, asked at each of its calls
    def hoistable(name: str) -> bool:
        return name in inline and _returned_values(inline[name]) <= 1 and returns(name) <= 1

    def result_type(name: str) -> Type:
        types = inline[name].return_types
        return types[0] if len(types) == 1 else UnknownType()

    if not isinstance(fn.body, SeqStmts) or not _has_nested_call(fn.body, hoistable):
        return fn, []
    hoister = _Hoister(hoistable, result_type, disturbs_by_helpers(inline, may_alias_params(fn)))
    body = hoister.seq(fn.body)
    if hoister.version == 0:
        return fn, []
    hoisted = [
        Hoisted(fn.name, stmt, hoister.reasons[id(stmt)])
        for stmt in walk_stmts(body)
        if isinstance(stmt, AssignStmt) and id(stmt) in hoister.reasons
    ]
    return dataclasses.replace(fn, body=body), hoisted


def _has_nested_call(body: SeqStmts, hoistable: Callable[[str], bool]) -> bool:
    """Whether some hoistable call is not the whole value of its statement: the common case is
    none, and then the traversal that rebuilds every statement can be skipped."""
    calls = [c for c in nodes_of_class(body, (Call,)) if isinstance(c, Call) and c.function and hoistable(c.op)]
    if not calls:
        return False
    whole = {id(call) for stmt in walk_stmts(body) if (call := whole_value(stmt)) is not None}
    return any(id(call) not in whole for call in calls)


def _returned_values(fn: Function) -> int:
    body = fn.body
    if isinstance(body, SeqStmts) and body.stmts and isinstance(body.stmts[-1], ReturnStmt):
        return len(body.stmts[-1].values)
    return 0


def disturbs_by_helpers(inline: dict[str, Function], aliases: dict[int, frozenset[int]] | None = None) -> Disturbs:
    """`Disturbs` read from the helpers themselves, conservatively: a call changes an operand when
    it may write back, through a `pl.Out`/`pl.InOut` scalar, a Var the operand reads (or one that
    `aliases`, the enclosing function's `may_alias_params`, says a site may make the same), or may
    write storage in place while the operand reads elements (a helper calling another helper may do
    either); an operand with an effect of its own keeps its place too."""
    aliases = aliases or {}
    effects: dict[str, tuple[frozenset[int], bool]] = {}

    def effects_of(name: str) -> tuple[frozenset[int], bool]:
        known = effects.get(name)
        if known is None:
            helper = inline[name]
            timeline = Timeline.of(helper.body.stmts if isinstance(helper.body, SeqStmts) else (helper.body,))
            written = {v for v, points in timeline.defs.items() if points}
            nested = [c for c in nodes_of(helper.body) if isinstance(c, Call) and c.function and c.op in inline]
            passed = {a.id for c in nested for a in c.args if isinstance(a, Var)}
            outs = frozenset(
                i
                for i, p in enumerate(helper.param_list)
                if p.direction is not ParamDirection.In
                and isinstance(p.var.type, ScalarType)
                and (p.var.id in written or p.var.id in passed)
            )
            known = effects[name] = (outs, bool(timeline.stores) or bool(nested))
        return known

    def disturbs(call: Call, operand: Expr) -> str | None:
        if call.op not in inline or is_constant(operand):
            return None
        outs, stores = effects_of(call.op)
        rebound = {
            alias: a.name
            for i, a in enumerate(call.args)
            if i in outs and isinstance(a, Var)
            for alias in aliases.get(a.id, frozenset({a.id}))
        }
        written = next((rebound[v.id] for v in vars_read(operand) if v.id in rebound), None)
        if written is not None:
            return f"hoisted: `{python_print(call)}` writes `{written}`, which this operand reads"
        if stores and reads_contents(operand):
            return f"hoisted: `{python_print(call)}` may write storage in place whose elements this operand reads"
        if stores and writes_in_place(operand):
            return f"hoisted: this operand writes storage in place, which `{python_print(call)}` may read"
        return None

    return disturbs


def _inline_of(program: Program) -> dict[str, Function]:
    return {f.name: f for f in program.function_list if f.func_type is FunctionType.Inline}


def is_hoisted(program: Program) -> bool:
    """Whether no function has a nested Inline call left to hoist: `inline-functions` asks before
    running this pass as its own first step, so a hoisted program is not walked twice."""
    inline = _inline_of(program)
    return not inline or all(hoist_nested_calls(fn, inline) is fn for fn in program.function_list)


def hoist_program(program: Program) -> Program:
    """`program` with the nested Inline calls of every function hoisted (the pass's work)."""
    return hoist_with_reasons(program).program


def hoist_with_reasons(program: Program) -> HoistResult:
    """`hoist_program`, with every binding it added and why."""
    inline = _inline_of(program)
    if not inline:
        return HoistResult(program)
    done = [_hoist(fn, inline) for fn in program.function_list]
    functions = tuple(fn for fn, _ in done)
    if all(new is old for new, old in zip(functions, program.function_list, strict=True)):
        return HoistResult(program)
    problems = [
        d
        for old, new in zip(program.function_list, functions, strict=True)
        if new is not old
        for d in check_hoisted_operands(program, old, new)
    ]
    if problems:
        raise RebindingCheckError(problems)
    return HoistResult(Program(program.name, functions, span=program.span), tuple(h for _, found in done for h in found))


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
            if isinstance(stmt, AssignStmt)
            and stmt.var.name.startswith("t__inline_arg_v")
            and isinstance(stmt.value, Call)
            and stmt.value.function  # not an operand hoisted along with a call
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

    trace: bool = False
    """Record the HoistResult (every binding added, with its reason) in the current PassContext's
    `traces`."""

    def run(self, program: Program) -> Program:
        result = hoist_with_reasons(program)
        if self.trace:
            PassContext.current().traces.append((self.name, result))
        return result.program


register_verifier(IRProperty.NestedCallsHoisted, verify_nested_calls_hoisted)
register_pass("hoist-nested-calls", HoistNestedCalls)
