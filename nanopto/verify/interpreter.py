"""The reference interpreter: the oracle that says whether a pass kept a program's meaning.

nanopass tests every pass by running each program before and after it and comparing the results
(STYLE.md, "Tests are a corpus of programs plus an oracle"). This module is that oracle for the
`pl` IR. It is deliberately small and literal, because it must be obviously right rather than
fast, and it models exactly the `pl` semantics that inlining can get wrong:

* **Handles, not copies.** A tensor, tile or array value is a numpy array object, and the
  environment maps a Var (by id) to that object. A bare assignment `x = y` rebinds `x` to the same
  object and writes nothing (pypto-03-functions, "Writing an Out / InOut parameter": `out = expr`
  writes nothing). Ops that make a value (`pl.add`) return a new array; ops that declare `writes`
  (`tensor.assemble`, `tile.store`, `array.update_element`) write into their destination and
  return it; a subscript `a[i, 0:4]` is a numpy *view*, so a write through it reaches `a`. This is
  what separates the `twice` example computing 3A from a wrong inlining computing 4A.
* **Calls bind, never copy.** A call of any function (Inline ones included) binds each parameter
  to the argument object, so `pl.Out` / `pl.InOut` buffers the caller passes are mutated in place
  and the caller sees the writes; a rebinding of a parameter (`n = n + 1`) stays local to the
  callee (the `bump` example of docs/specification.md, "Rebinding a parameter"). A `pl.Out` / `pl.InOut` scalar is the caller's variable:
  its final value is copied back, and two such parameters given the same Var are one variable.
* **Op semantics come only from the op registry** (`OpDef.semantics`), so declaring an op is
  all it takes to make it executable here.

Everything else is executed in the plainest way that is faithful for comparing two versions of a
program: parallel, unrolled and SPMD loops run sequentially in index order, `pl.submit` runs its
callee synchronously, and launch metadata (`deps=`, `optimizations=`, dump selections) is not
evaluated because it cannot change a value in a sequential model and may name ops (`pl.split`)
that have no value semantics.

Errors are `InterpreterError`, a `RuntimeError`: the program is well formed enough to run but
fails while running (a shape mismatch, an out-of-bounds write, an unbound name, a runaway loop).
Its message says what failed, at which source location, in which function and through which
call chain, so a failing property test points at the line to look at.
"""

from __future__ import annotations

import enum
import itertools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BinaryExpr,
    BinOp,
    BreakStmt,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ConstStr,
    ContinueStmt,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    InlineStmt,
    IterArg,
    Keyword,
    MakeTuple,
    Node,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    SliceExpr,
    Span,
    Stmt,
    Submit,
    Symbol,
    TupleGetItemExpr,
    UnaryExpr,
    UnOp,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.ops import OPS, OpContext, OpRegistry
from nanopto.ir_terms.types import ScalarType

__all__ = [
    "DEFAULT_MAX_CALL_DEPTH",
    "DEFAULT_MAX_STEPS",
    "InterpreterError",
    "interpret",
    "values_equal",
]

DEFAULT_MAX_STEPS = 10_000_000
"""Statement executions (and loop iterations) allowed per run, so a runaway loop fails, never hangs."""

DEFAULT_MAX_CALL_DEPTH = 64
"""Nested function calls allowed; a recursive program fails with a readable error, not RecursionError.

Each `pl` call costs several Python frames, so this stays well inside Python's default recursion
limit; a program that still exhausts Python's stack (deeply nested control flow) is reported as an
`InterpreterError` too.
"""


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

_SHOWN_CALLERS = 8


class InterpreterError(RuntimeError):
    """A program failed while running: what, where (`span`), in which function, via which calls.

    A `RuntimeError` rather than a `ValueError`: the program parsed and verified, so the fault is
    found by running it (a shape mismatch, an out-of-bounds write, a step budget exhausted).
    """

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        function: str | None = None,
        call_stack: Sequence[tuple[str, Span | None]] = (),
    ) -> None:
        self.reason = message
        self.span = span
        self.function = function
        self.call_stack = tuple(call_stack)
        where = str(span) if span is not None else "<unknown location>"
        text = f"{where}: {message}"
        if function is not None:
            text += f" (in function '{function}')"
        # The innermost caller first, as a traceback read bottom-up would show it; a runaway
        # recursion would list dozens of identical frames, so only the innermost few are shown.
        shown = self.call_stack[-_SHOWN_CALLERS:]
        for caller, call_span in reversed(shown):
            at = str(call_span) if call_span is not None else "<unknown location>"
            text += f"\n  called from '{caller}' at {at}"
        if len(self.call_stack) > len(shown):
            text += f"\n  ... and {len(self.call_stack) - len(shown)} more caller(s)"
        super().__init__(text)


# ---------------------------------------------------------------------------------------------
# Scalar and elementwise operators of BinaryExpr / UnaryExpr
# ---------------------------------------------------------------------------------------------


def _either_array(a: Any, b: Any) -> bool:
    return isinstance(a, np.ndarray) or isinstance(b, np.ndarray)


def _and(a: Any, b: Any) -> Any:
    # Both operands are already evaluated: `and` in the IR is a value operator, not control flow.
    return np.logical_and(a, b) if _either_array(a, b) else bool(a) and bool(b)


def _or(a: Any, b: Any) -> Any:
    return np.logical_or(a, b) if _either_array(a, b) else bool(a) or bool(b)


def _min(a: Any, b: Any) -> Any:
    return np.minimum(a, b) if _either_array(a, b) else min(a, b)


def _max(a: Any, b: Any) -> Any:
    return np.maximum(a, b) if _either_array(a, b) else max(a, b)


_BINARY: dict[BinOp, Callable[[Any, Any], Any]] = {
    BinOp.Add: operator.add,
    BinOp.Sub: operator.sub,
    BinOp.Mul: operator.mul,
    BinOp.FloorDiv: operator.floordiv,  # Python // on scalars, np.floor_divide on arrays
    BinOp.FloorMod: operator.mod,  # Python % (sign of the divisor) on both
    BinOp.FloatDiv: operator.truediv,
    BinOp.Pow: operator.pow,
    BinOp.Eq: operator.eq,
    BinOp.Ne: operator.ne,
    BinOp.Lt: operator.lt,
    BinOp.Le: operator.le,
    BinOp.Gt: operator.gt,
    BinOp.Ge: operator.ge,
    BinOp.And: _and,
    BinOp.Or: _or,
    BinOp.Xor: operator.xor,
    BinOp.BitAnd: operator.and_,
    BinOp.BitOr: operator.or_,
    BinOp.BitShiftLeft: operator.lshift,
    BinOp.BitShiftRight: operator.rshift,
    BinOp.Min: _min,
    BinOp.Max: _max,
}


_COMPARISONS = frozenset({BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Le, BinOp.Gt, BinOp.Ge})
"""The operators that may compare values other than numbers (a dtype, a string); every other
operator takes numbers, tensors or tiles only."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.ndarray, np.generic))


def _not(a: Any) -> Any:
    return np.logical_not(a) if isinstance(a, np.ndarray) else not a


def _abs(a: Any) -> Any:
    return np.abs(a) if isinstance(a, np.ndarray) else abs(a)


_UNARY: dict[UnOp, Callable[[Any], Any]] = {
    UnOp.Neg: operator.neg,
    UnOp.Not: _not,
    UnOp.BitNot: operator.invert,
    UnOp.Abs: _abs,
}


SCALAR_INT_RANGE = (-(1 << 63), (1 << 64) - 1)
"""Integer overflow, defined. A scalar integer is computed exactly (a Python int), and a result
outside every integer type of the IR (INT64's low end to UINT64's high end) is an
InterpreterError, found before computing a `**` or `<<` that would be too large. Tensor, tile and
array elements are numpy values of their dtype: integers wrap modulo 2**bits as the fixed-width
type does, floats follow IEEE 754 (overflow to inf, 0/0 to nan); neither warns."""


def _overflows_before(op: BinOp, lhs: Any, rhs: Any) -> bool:
    """A scalar `**` or `<<` whose result would be past 64 bits, told without computing it."""
    if type(lhs) is not int or type(rhs) is not int:
        return False
    if op is BinOp.Pow:
        return abs(lhs) > 1 and rhs > 64
    return op is BinOp.BitShiftLeft and lhs != 0 and rhs > 64


def _overflow_message(op: str) -> str:
    low, high = SCALAR_INT_RANGE
    return (
        f"operator '{op}': integer overflow: the result is outside the IR's integer types ({low} to {high}); "
        "scalars compute exactly and stop there rather than wrap"
    )


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python scalar the IR's scalar values are (arrays pass through)."""
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------------------------------------
# Execution state
# ---------------------------------------------------------------------------------------------


class _Flow(enum.Enum):
    """How a statement finished; loops and calls consume the non-NORMAL ones."""

    NORMAL = enum.auto()
    BREAK = enum.auto()
    CONTINUE = enum.auto()
    RETURN = enum.auto()


@dataclass
class _Frame:
    """One running function: its environment and the control-flow values in flight.

    `yielded` holds the values of the most recent `pl.yield_` not yet consumed by the enclosing
    if/loop; `stmt_span` is the location reported for an expression that carries no span.
    """

    function: Function
    call_span: Span | None
    env: dict[int, Any] = field(default_factory=dict)
    yielded: tuple[Any, ...] | None = None
    returned: Any = None
    stmt_span: Span | None = None


class _AliasedEnv(dict[int, Any]):
    """An environment in which some Var ids name one slot: `pl.Out`/`pl.InOut` scalar parameters
    given the same caller Var are that one variable (the explicit scalar calling convention, the
    way the inliner substitutes them), so a write through either is seen through both."""

    def __init__(self, aliases: dict[int, int]) -> None:
        super().__init__()
        self.aliases = aliases

    def __getitem__(self, key: int) -> Any:
        return super().__getitem__(self.aliases.get(key, key))

    def __setitem__(self, key: int, value: Any) -> None:
        super().__setitem__(self.aliases.get(key, key), value)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self.aliases.get(key, key) if isinstance(key, int) else key)

    def get(self, key: int, default: Any = None) -> Any:
        return super().get(self.aliases.get(key, key), default)


def _is_scalar_output(param: Param) -> bool:
    """A `pl.Out` / `pl.InOut` scalar: the caller's variable, copied back after the call."""
    return param.direction is not ParamDirection.In and isinstance(param.var.type, ScalarType)


def _aliased_scalar_outputs(params: Sequence[Param], site: Node | None) -> dict[int, int]:
    """Param id -> the id of the first Out/InOut scalar param given the same caller Var at `site`."""
    if not isinstance(site, Call):
        return {}
    first: dict[int, int] = {}
    aliases: dict[int, int] = {}
    for param, arg in zip(params, site.args, strict=False):
        if not _is_scalar_output(param) or not isinstance(arg, Var):
            continue
        if arg.id in first:
            aliases[param.var.id] = first[arg.id]
        else:
            first[arg.id] = param.var.id
    return aliases


class _Interpreter:
    """Runs one program; one instance per `interpret` call, so task ids and step counts restart."""

    def __init__(self, program: Program, *, max_steps: int, max_call_depth: int, ops: OpRegistry) -> None:
        self._functions = dict(program.functions)
        self._ops = ops
        self._max_steps = max_steps
        self._max_call_depth = max_call_depth
        self._steps = 0
        self._ctx = OpContext()
        self._task_ids = self._ctx.task_ids
        # Frames are popped only on normal exit: after an exception the stack still shows where
        # the program was, which is what the error report needs.
        self._frames: list[_Frame] = []
        self.scalar_outputs: dict[int, Any] = {}
        """After a call: argument index -> final value of each Out/InOut scalar parameter."""
        self._stmt_handlers: dict[type, Callable[[Any], _Flow]] = {
            SeqStmts: self._exec_seq,
            AssignStmt: self._exec_assign,
            EvalStmt: self._exec_eval,
            ReturnStmt: self._exec_return,
            YieldStmt: self._exec_yield,
            BreakStmt: self._exec_break,
            ContinueStmt: self._exec_continue,
            IfStmt: self._exec_if,
            ForStmt: self._exec_for,
            WhileStmt: self._exec_while,
            ScopeStmt: self._exec_scope,
            InlineStmt: self._exec_inline,
        }
        self._expr_handlers: dict[type, Callable[[Any], Any]] = {
            Var: self._eval_var,
            IterArg: self._eval_var,
            ConstInt: self._eval_const,
            ConstFloat: self._eval_const,
            ConstBool: self._eval_const,
            ConstStr: self._eval_const,
            Symbol: self._eval_symbol,
            BinaryExpr: self._eval_binary,
            UnaryExpr: self._eval_unary,
            Call: self._eval_call,
            Submit: self._eval_submit,
            MakeTuple: self._eval_tuple,
            TupleGetItemExpr: self._eval_tuple_item,
            SliceExpr: self._eval_slice,
        }

    # -- errors ---------------------------------------------------------------------------------

    def error(self, message: str, node: Node | None = None) -> InterpreterError:
        """An error at `node` (or the running statement when the node has no span)."""
        frame = self._frames[-1] if self._frames else None
        span = node.span if node is not None and node.span is not None else None
        if span is None and frame is not None:
            span = frame.stmt_span
        stack = [(f.function.name, callee.call_span) for f, callee in itertools.pairwise(self._frames)]
        return InterpreterError(
            message,
            span,
            frame.function.name if frame is not None else None,
            stack,
        )

    @property
    def call_depth(self) -> int:
        return len(self._frames)

    @property
    def _frame(self) -> _Frame:
        return self._frames[-1]

    # -- functions ------------------------------------------------------------------------------

    def call(
        self,
        name: str,
        args: Sequence[Any],
        kwargs: dict[str, Any],
        site: Node | None,
    ) -> Any:
        """Run function `name` with parameters bound to the argument objects themselves."""
        function = self._functions.get(name)
        if function is None:
            raise self.error(f"call of unknown function '{name}'", site)
        if len(self._frames) >= self._max_call_depth:
            raise self.error(
                f"call of '{name}' exceeds the call depth limit of {self._max_call_depth} "
                "(is the call graph recursive?)",
                site,
            )
        params = function.param_list
        if len(args) > len(params):
            raise self.error(
                f"function '{name}' takes {len(params)} argument(s) but {len(args)} were given", site
            )
        frame = _Frame(function, site.span if site is not None else None)
        aliases = _aliased_scalar_outputs(params, site)
        if aliases:
            frame.env = _AliasedEnv(aliases)
        for param, value in zip(params, args, strict=False):
            frame.env[param.var.id] = value
        by_name = {p.var.name: p for p in params[len(args) :]}
        for key, value in kwargs.items():
            if key not in by_name:
                raise self.error(f"function '{name}' got an unexpected or repeated argument '{key}'", site)
            frame.env[by_name.pop(key).var.id] = value
        if by_name:
            missing = ", ".join(f"'{p}'" for p in by_name)
            raise self.error(f"function '{name}' is missing argument(s) {missing}", site)
        self._frames.append(frame)
        flow = self.exec(function.body)
        if flow in (_Flow.BREAK, _Flow.CONTINUE):
            raise self.error(f"'{flow.name.lower()}' outside a loop in function '{name}'")
        self._frames.pop()
        self.scalar_outputs = {
            i: frame.env[p.var.id]
            for i, p in enumerate(params)
            if _is_scalar_output(p) and p.var.id in frame.env
        }
        return frame.returned

    # -- statements -----------------------------------------------------------------------------

    def exec(self, stmt: Stmt) -> _Flow:
        frame = self._frame
        # The enclosing statement's span comes back after this one, so a loop condition
        # evaluated after its body is reported at the loop, not at the body's last line. On an
        # exception it is deliberately not restored: the innermost statement is the one to report.
        enclosing = frame.stmt_span
        if stmt.span is not None:
            frame.stmt_span = stmt.span
        self._tick(stmt)
        handler = self._stmt_handlers.get(type(stmt))
        if handler is None:
            raise self.error(f"cannot execute a {type(stmt).__name__}", stmt)
        flow = handler(stmt)
        frame.stmt_span = enclosing
        return flow

    def _tick(self, node: Node) -> None:
        self._steps += 1
        if self._steps > self._max_steps:
            raise self.error(
                f"step budget of {self._max_steps} exhausted (a loop that does not terminate?); "
                "raise max_steps if the program is just long",
                node,
            )

    def _exec_seq(self, stmt: SeqStmts) -> _Flow:
        for child in stmt.stmts:
            flow = self.exec(child)
            if flow is not _Flow.NORMAL:
                return flow
        return _Flow.NORMAL

    def _exec_assign(self, stmt: AssignStmt) -> _Flow:
        # Rebinding, never copying: `x = y` makes `x` name the very object `y` names.
        self._frame.env[stmt.var.id] = self.eval(stmt.value)
        return _Flow.NORMAL

    def _exec_eval(self, stmt: EvalStmt) -> _Flow:
        self.eval(stmt.expr)
        return _Flow.NORMAL

    def _exec_return(self, stmt: ReturnStmt) -> _Flow:
        values = tuple(self.eval(v) for v in stmt.values)
        frame = self._frame
        if not values:
            frame.returned = None
        elif len(values) == 1:
            frame.returned = values[0]
        else:
            frame.returned = values
        return _Flow.RETURN

    def _exec_yield(self, stmt: YieldStmt) -> _Flow:
        # Recorded, not returned: the enclosing if/loop decides what the values bind to.
        self._frame.yielded = tuple(self.eval(v) for v in stmt.values)
        return _Flow.NORMAL

    def _exec_inline(self, stmt: InlineStmt) -> _Flow:
        raise self.error(
            f"an InlineStmt (a verbatim {stmt.language.value} body) is not run by the reference interpreter", stmt
        )

    def _exec_break(self, stmt: BreakStmt) -> _Flow:
        return _Flow.BREAK

    def _exec_continue(self, stmt: ContinueStmt) -> _Flow:
        return _Flow.CONTINUE

    def _exec_if(self, stmt: IfStmt) -> _Flow:
        taken = stmt.then_body if self._truth(self.eval(stmt.cond), stmt.cond) else stmt.else_body
        if not stmt.return_vars:
            return _Flow.NORMAL if taken is None else self.exec(taken)
        frame = self._frame
        outer_yield, frame.yielded = frame.yielded, None
        flow = _Flow.NORMAL if taken is None else self.exec(taken)
        yielded, frame.yielded = frame.yielded, outer_yield
        if flow is not _Flow.NORMAL:
            return flow
        branch = "then" if taken is stmt.then_body else "else"
        self._bind_yield(stmt, stmt.return_vars, yielded, f"the {branch} branch of this if")
        return _Flow.NORMAL

    def _bind_yield(
        self, stmt: Stmt, targets: Sequence[Var], yielded: tuple[Any, ...] | None, what: str
    ) -> None:
        if yielded is None:
            raise self.error(f"{what} yields no value for {len(targets)} result variable(s)", stmt)
        if len(yielded) != len(targets):
            raise self.error(f"{what} yields {len(yielded)} value(s) for {len(targets)} variable(s)", stmt)
        env = self._frame.env
        for var, value in zip(targets, yielded, strict=True):
            env[var.id] = value

    def _init_iter_args(self, iter_args: Sequence[IterArg]) -> None:
        # Init values are all evaluated before any is bound: they belong to the enclosing scope.
        values = [self.eval(arg.init_value) for arg in iter_args]
        env = self._frame.env
        for arg, value in zip(iter_args, values, strict=True):
            env[arg.id] = value

    def _bind_results(self, stmt: ForStmt | WhileStmt) -> None:
        if not stmt.return_vars:
            return
        if len(stmt.return_vars) != len(stmt.iter_args):
            raise self.error(
                f"loop has {len(stmt.return_vars)} result variable(s) but {len(stmt.iter_args)} iter_args",
                stmt,
            )
        env = self._frame.env
        for var, arg in zip(stmt.return_vars, stmt.iter_args, strict=True):
            env[var.id] = self._lookup(arg, stmt)

    def _run_iteration(self, stmt: ForStmt | WhileStmt) -> _Flow:
        """One loop body; its trailing yield (if any) becomes the iter_args of the next one.

        A body without a yield (pre-SSA `x = x + 1` on the iter_arg itself) leaves the iter_args
        as the body rebound them, so both spellings carry state the same way.
        """
        frame = self._frame
        frame.yielded = None
        flow = self.exec(stmt.body)
        yielded, frame.yielded = frame.yielded, None
        if flow is _Flow.NORMAL and yielded is not None:
            self._bind_yield(stmt, stmt.iter_args, yielded, "the loop body")
        return flow

    def _exec_for(self, stmt: ForStmt) -> _Flow:
        start = self._as_int(self.eval(stmt.start), stmt.start, "loop start")
        stop = self._as_int(self.eval(stmt.stop), stmt.stop, "loop stop")
        step = self._as_int(self.eval(stmt.step), stmt.step, "loop step")
        if step == 0:
            raise self.error("loop step must not be zero", stmt)
        self._init_iter_args(stmt.iter_args)
        frame = self._frame
        outer_yield = frame.yielded
        # Parallel and unrolled loops run in index order: for comparing a program before and
        # after a pass, any fixed order is faithful, and the sequential one is the simplest.
        for index in range(start, stop, step):
            self._tick(stmt)
            frame.env[stmt.loop_var.id] = index
            flow = self._run_iteration(stmt)
            if flow is _Flow.BREAK:
                break
            if flow is _Flow.RETURN:
                return flow
        frame.yielded = outer_yield
        self._bind_results(stmt)
        return _Flow.NORMAL

    def _exec_while(self, stmt: WhileStmt) -> _Flow:
        self._init_iter_args(stmt.iter_args)
        frame = self._frame
        outer_yield = frame.yielded
        # Natural `while c:` and `pl.while_` + `pl.cond(c)` differ only in how the state is
        # carried; both re-evaluate the condition before every iteration.
        while self._truth(self.eval(stmt.cond), stmt.cond):
            self._tick(stmt)
            flow = self._run_iteration(stmt)
            if flow is _Flow.BREAK:
                break
            if flow is _Flow.RETURN:
                return flow
        frame.yielded = outer_yield
        self._bind_results(stmt)
        return _Flow.NORMAL

    def _exec_scope(self, stmt: ScopeStmt) -> _Flow:
        """Run a scope's body: once, or once per block for `pl.spmd`.

        Scopes are not loops, so a break/continue/return inside one leaves the scope and reaches
        the enclosing loop or function. The `as tid` capture gets a fresh task id; the loop
        variable of `for i in pl.spmd(N)` is bound by `i = pl.tile.get_block_idx()` inside the
        scope (docs/specification.md, "Statement forms"), which reads the block. Any other scope, including
        a `pl.split_aiv` region (whose lane binding reads lane 0), runs its body
        once: a pass must not make a program depend on how a kernel is split across cores, so
        one sequential run is what before/after comparisons need.
        """
        env = self._frame.env
        if stmt.constructor != "spmd":
            if stmt.var is not None:
                env[stmt.var.id] = 0 if stmt.for_form else next(self._task_ids)
            return self.exec(stmt.body)
        blocks = self._as_int(self.eval(self._spmd_count(stmt)), stmt, "pl.spmd block count")
        if stmt.var is not None and not stmt.for_form:
            env[stmt.var.id] = next(self._task_ids)
        ctx = self._ctx
        saved = (ctx.block_idx, ctx.block_num)
        ctx.block_num = blocks
        try:
            for block in range(blocks):
                self._tick(stmt)
                ctx.block_idx = block
                if stmt.var is not None and stmt.for_form:
                    env[stmt.var.id] = block
                flow = self.exec(stmt.body)
                if flow is not _Flow.NORMAL:
                    return flow
        finally:
            ctx.block_idx, ctx.block_num = saved
        return _Flow.NORMAL

    def _spmd_count(self, stmt: ScopeStmt) -> Expr:
        if stmt.args:
            return stmt.args[0]
        for kw in stmt.kwargs:
            if kw.name == "core_num":
                return kw.value
        raise self.error("pl.spmd needs a block count (a first argument or core_num=)", stmt)

    # -- expressions ----------------------------------------------------------------------------

    def eval(self, expr: Expr) -> Any:
        handler = self._expr_handlers.get(type(expr))
        if handler is None:
            raise self.error(f"cannot evaluate a {type(expr).__name__}", expr)
        return handler(expr)

    def _lookup(self, var: Var, site: Node) -> Any:
        try:
            return self._frame.env[var.id]
        except KeyError:
            raise self.error(f"variable '{var.name}' is used before it is bound", site) from None

    def _eval_var(self, expr: Var) -> Any:
        return self._lookup(expr, expr)

    def _eval_const(self, expr: ConstInt | ConstFloat | ConstBool | ConstStr) -> Any:
        return expr.value

    def _eval_symbol(self, expr: Symbol) -> Any:
        # `pl.FP32` is a DataType (ops such as create_tensor take one); any other constant
        # (`pl.Level.CORE_GROUP`) is only ever compared or passed along, so its path suffices.
        name = expr.path.rsplit(".", 1)[-1]
        if name in DataType.__members__:
            return DataType[name]
        return expr.path

    def _eval_binary(self, expr: BinaryExpr) -> Any:
        lhs, rhs = self.eval(expr.lhs), self.eval(expr.rhs)
        if isinstance(lhs, np.ndarray) and isinstance(rhs, np.ndarray) and lhs.shape != rhs.shape:
            raise self.error(
                f"operator '{expr.op.value}': shape mismatch: {list(lhs.shape)} vs {list(rhs.shape)}", expr
            )
        if expr.op not in _COMPARISONS and not (_is_number(lhs) and _is_number(rhs)):
            # Python's `%` and `*` on a string or tuple would format or repeat it: 100 bytes of
            # source (`'%*d' % (10**9, 1)`) and a gigabyte of string
            raise self.error(
                f"operator '{expr.op.value}': operands must be numbers, tensors or tiles, "
                f"not {type(lhs).__name__} and {type(rhs).__name__}",
                expr,
            )
        if _overflows_before(expr.op, lhs, rhs):
            raise self.error(_overflow_message(expr.op.value), expr)
        try:
            with np.errstate(all="ignore"):
                result = _scalar(_BINARY[expr.op](lhs, rhs))
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise self.error(f"operator '{expr.op.value}': {exc}", expr) from None
        return self._in_range(result, expr.op.value, expr)

    def _eval_unary(self, expr: UnaryExpr) -> Any:
        operand = self.eval(expr.operand)
        try:
            with np.errstate(all="ignore"):
                result = _scalar(_UNARY[expr.op](operand))
        except (ArithmeticError, TypeError, ValueError) as exc:
            raise self.error(f"operator '{expr.op.value}': {exc}", expr) from None
        return self._in_range(result, expr.op.value, expr)

    def _in_range(self, result: Any, op: str, expr: Expr) -> Any:
        if type(result) is int and not SCALAR_INT_RANGE[0] <= result <= SCALAR_INT_RANGE[1]:
            raise self.error(_overflow_message(op), expr)
        return result

    def _eval_kwargs(self, kwargs: Sequence[Keyword]) -> dict[str, Any]:
        return {kw.name: self.eval(kw.value) for kw in kwargs}

    def _eval_call(self, expr: Call) -> Any:
        args = [self.eval(a) for a in expr.args]
        kwargs = self._eval_kwargs(expr.kwargs)
        if expr.function:
            result = self.call(expr.op, args, kwargs, expr)
            # The explicit scalar calling convention: a `pl.Out`/`pl.InOut` scalar is the caller's
            # variable, so its final value is copied back (a Python int cannot be shared).
            for index, value in self.scalar_outputs.items():
                target = expr.args[index] if index < len(expr.args) else None
                if isinstance(target, Var):
                    self._frame.env[target.id] = value
            return result
        op = self._ops.lookup(expr.op)
        if op is None:
            raise self.error(f"unknown op 'pl.{expr.op}' (declare it in the op registry to run it)", expr)
        try:
            return op.semantics(self._ctx, args, kwargs)
        except RecursionError:
            raise
        except Exception as exc:
            # Whatever made the op fail (an OpError, or numpy rejecting the operands), the
            # program's fault is at this op, so that is where the report points.
            shown = op.name if op.name.startswith("pld.") else f"pl.{op.name}"
            raise self.error(f"op '{shown}': {str(exc).strip()}{_operands(expr, args)}", expr) from exc

    def _eval_submit(self, expr: Submit) -> Any:
        # Synchronous: the task has finished, with all its writes, when submit returns. The
        # value is the callee's results followed by the task id, or the task id alone when the
        # callee returns nothing (the type `pl.submit` has: docs/coming-from-pypto.md).
        args = [self.eval(a) for a in expr.args]
        if not expr.spmd:
            returned = self.call(expr.callee, args, {}, expr)
            done = next(self._task_ids)
            if returned is None or (isinstance(returned, tuple) and not returned):
                return done
            return (*(returned if isinstance(returned, tuple) else (returned,)), done)
        # pl.spmd_submit: the kernel once per block, in block order (as a `pl.spmd` scope runs);
        # the value is the last block's results followed by the dispatch's task id.
        count = next(k.value for k in expr.kwargs if k.name == "core_num")
        blocks = self._as_int(self.eval(count), expr, "pl.spmd_submit core_num")
        ctx = self._ctx
        saved = (ctx.block_idx, ctx.block_num)
        ctx.block_num = blocks
        results: Any = ()
        try:
            for block in range(blocks):
                ctx.block_idx = block
                results = self.call(expr.callee, args, {}, expr)
        finally:
            ctx.block_idx, ctx.block_num = saved
        values = results if isinstance(results, tuple) else (results,)
        return (*values, next(self._task_ids))

    def _eval_tuple(self, expr: MakeTuple) -> Any:
        return tuple(self.eval(e) for e in expr.elements)

    def _eval_tuple_item(self, expr: TupleGetItemExpr) -> Any:
        value = self.eval(expr.tuple)
        if not isinstance(value, tuple):
            raise self.error(f"item {expr.index} of a {type(value).__name__}, not of a tuple", expr)
        if not 0 <= expr.index < len(value):
            raise self.error(f"item {expr.index} of a {len(value)}-tuple", expr)
        return value[expr.index]

    def _eval_slice(self, expr: SliceExpr) -> Any:
        start = None if expr.start is None else self._as_int(self.eval(expr.start), expr.start, "slice start")
        stop = None if expr.stop is None else self._as_int(self.eval(expr.stop), expr.stop, "slice stop")
        return slice(start, stop)

    # -- value checks ---------------------------------------------------------------------------

    def _truth(self, value: Any, node: Node) -> bool:
        if isinstance(value, np.ndarray):
            if value.size != 1:
                raise self.error(f"condition is an array of shape {list(value.shape)}, not a scalar", node)
            value = value.reshape(()).item()
        return bool(value)

    def _as_int(self, value: Any, node: Node, what: str) -> int:
        if isinstance(value, np.ndarray) and value.size == 1:
            value = value.reshape(()).item()
        if isinstance(value, (int, np.integer)):
            return int(value)
        raise self.error(f"{what} must be an integer, got {value!r}", node)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def _operands(expr: Call, args: Sequence[Any]) -> str:
    """The array operands a failed op was given, by the variable each came from: which argument
    has the wrong shape is what the user must find (`matrix` of shape [4])."""
    shown = [
        f"'{arg.name}' of shape {list(value.shape)} ({value.dtype})"
        for arg, value in zip(expr.args, args, strict=False)
        if isinstance(arg, Var) and isinstance(value, np.ndarray)
    ]
    return f"; operands: {', '.join(shown)}" if shown else ""


def interpret(
    program: Program,
    entry: str,
    *args: Any,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_call_depth: int = DEFAULT_MAX_CALL_DEPTH,
    ops: OpRegistry = OPS,
) -> Any:
    """Run `program.entry(*args)` and return its result (None, a value, or a tuple of values).

    Array arguments are used as they are, never copied: an `Out` / `InOut` buffer is written in
    place, exactly as a caller's buffer is on the device. To compare two versions of a program,
    give each run its own fresh copies of the inputs and compare the results *and* the buffers
    with `values_equal`.

    Raises `InterpreterError` for any failure of the program (including runaway loops, which
    stop after `max_steps`, and recursion deeper than `max_call_depth`).
    """
    machine = _Interpreter(program, max_steps=max_steps, max_call_depth=max_call_depth, ops=ops)
    try:
        return machine.call(entry, list(args), {}, None)
    except RecursionError:
        # Nesting too deep for Python's own stack (deep statements or expressions rather than
        # deep calls); the frames left on the machine's stack say where it happened.
        raise machine.error(
            f"the program nests too deeply for Python's stack ({machine.call_depth} nested call(s); "
            "is the call graph recursive?)"
        ) from None


def values_equal(a: Any, b: Any) -> bool:
    """Whether two interpreter results are the same, for deciding that a pass kept meaning.

    Tuples and lists compare elementwise; arrays must have equal shapes, integer and boolean
    arrays must be exactly equal and floating ones `np.allclose` with NaN equal to NaN (a pass
    may legitimately reorder nothing, but float results pass through numpy reductions whose
    rounding we do not want to pin). Integers compare exactly, floats approximately. Values of
    different kinds (an array and a scalar, a tuple and a value) are never equal.
    """
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        return all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if _is_float_array(a) or _is_float_array(b):
            return bool(np.allclose(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    a, b = _scalar(a), _scalar(b)
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return bool(np.isclose(a, b))
    return bool(a == b)


def _is_float_array(value: np.ndarray[Any, Any]) -> bool:
    return value.dtype.kind in "fc"
