"""When a statement list reads and writes what: the facts that keep inlining from moving an
evaluation across a write it depends on.

A call evaluates its arguments once, before the body runs, and its returned values once, when the
body ends. Substituting an argument expression into the body, or a returned expression at the
caller's later uses, evaluates it somewhere else instead; that is the same only if nothing it reads
is written in between (docs/specification.md, "Meaning under aliasing"). A `Timeline` numbers the statements of a list
in evaluation order and records, per Var, where it is read and where it is defined, and where
storage may be written in place; `may_precede` says whether a write can happen before a read.

This is the one analysis behind every binding decision (docs/specification.md, "Meaning under
aliasing"): the argument binding at a call site, the returned components of a projected site, and
the operands `hoist-nested-calls` moves with a call all ask it. Every construct that runs its body
more than once is a loop here: `pl.range` / `pl.parallel` / `pl.unroll`, `while` / `pl.while_` and a
`pl.spmd` body (once per block); a `while` condition is read inside its loop. Branches, `break` and
`continue` only skip statements, so ordering the positions of both branches one after the other
over-approximates every path. `may_alias_params` gives the variables a call site can make one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    ConstStr,
    Expr,
    ForStmt,
    Function,
    IfStmt,
    Node,
    ParamDirection,
    ScopeStmt,
    SeqStmts,
    Stmt,
    Submit,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import iter_children
from nanopto.ir_terms.types import ScalarType


@dataclass(frozen=True)
class Point:
    """Where something happens: a position in evaluation order and the loops around it."""

    position: int
    loops: frozenset[int] = frozenset()
    stmt: Stmt | None = None


def may_precede(write: Point, read: Point) -> bool:
    """Whether the write can happen before the read: earlier in the list, or in a loop around both
    (the next iteration reads what this one wrote)."""
    return write.position < read.position or bool(write.loops & read.loops)


def is_loop(stmt: Stmt) -> bool:
    """A statement whose body may run more than once: every loop kind and a `pl.spmd` body, which
    runs once per block (docs/specification.md, "Meaning under aliasing")."""
    return isinstance(stmt, ForStmt | WhileStmt) or (isinstance(stmt, ScopeStmt) and stmt.constructor == "spmd")


def is_by_reference(direction: ParamDirection, ty: object) -> bool:
    """A `pl.Out` / `pl.InOut` scalar: the caller's variable itself (the explicit scalar calling
    convention), not a copy."""
    return direction is not ParamDirection.In and isinstance(ty, ScalarType)


def may_alias_params(fn: Function) -> dict[int, frozenset[int]]:
    """Param Var id -> the params of `fn` a call site may make the same variable.

    Two `pl.Out` / `pl.InOut` scalars given one Var are one variable, so inside `fn` a write through
    one may be a write through the other, at every level of nesting: the answer is per function,
    for whatever site calls it. (Storage shared by two tensor or array parameters needs no entry:
    any in-place write counts against every read of elements, see `reads_contents`.)"""
    by_reference = frozenset(p.var.id for p in fn.param_list if is_by_reference(p.direction, p.var.type))
    if len(by_reference) < 2:
        return {}
    return {pid: by_reference for pid in by_reference}


def may_happen_between(site: Point, write: Point, reads: Iterable[Point]) -> bool:
    """Whether `write` may happen after the call at `site` and before one of `reads`: later in the
    list and before the read, or later than the call in a loop around the write and the read that
    is not around the call (the next iteration reads what this one wrote)."""
    for read in reads:
        if site.position < write.position < read.position:
            return True
        if write.position > site.position and (write.loops & read.loops) - site.loops:
            return True
    return False


def vars_read(expr: Node) -> Iterator[Var]:
    """The Vars an expression reads (an IterArg is read as itself; its initial value is read once,
    before the loop, and counted there)."""
    stack: list[Node] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Var):
            yield node
            continue
        stack.extend(iter_children(node))


def is_atom(expr: Expr) -> bool:
    """A Var or a constant: evaluating it has no effect and reads nothing but itself."""
    return isinstance(expr, Var | ConstInt | ConstFloat | ConstBool | ConstStr)


def is_constant(expr: Expr) -> bool:
    return isinstance(expr, ConstInt | ConstFloat | ConstBool | ConstStr)


def reads_contents(expr: Expr) -> bool:
    """Whether evaluating `expr` reads the elements of a tensor, tile or array (or of a Var whose
    type is not known to be a scalar): a write in place changes what it evaluates to. A bare Var
    is a handle and reads nothing."""
    if isinstance(expr, Var):
        return False
    return any(not isinstance(v.type, ScalarType) for v in vars_read(expr))


def writes_in_place(expr: Node) -> bool:
    """Whether evaluating `expr` may write storage: an op that writes an argument, a call of
    another function (it may write its pl.Out / pl.InOut buffers), or a task launch."""
    stack: list[Node] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Submit):
            return True
        if isinstance(node, Call):
            if node.function:
                return True
            op = OPS.lookup(node.op)
            if op is not None and op.writes:
                return True
        if not isinstance(node, Var):
            stack.extend(iter_children(node))
    return False


def has_call(expr: Node) -> bool:
    stack: list[Node] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Call | Submit):
            return True
        if not isinstance(node, Var):
            stack.extend(iter_children(node))
    return False


@dataclass
class Timeline:
    """The reads, definitions and in-place writes of a statement list (then `tail`, the values
    read after it, such as a helper's returned values), in evaluation order."""

    reads: dict[int, list[Point]] = field(default_factory=dict)
    defs: dict[int, list[Point]] = field(default_factory=dict)
    stores: list[Point] = field(default_factory=list)
    points: dict[int, Point] = field(default_factory=dict)
    """Each statement (by identity) -> where it is evaluated."""
    conditions: dict[int, Point] = field(default_factory=dict)
    """Each `while` statement (by identity) -> where its condition is evaluated: inside its loop."""
    end: int = 0

    @classmethod
    def of(cls, stmts: Iterable[Stmt], tail: Iterable[Expr] = ()) -> Timeline:
        timeline = cls()
        for stmt in stmts:
            timeline._visit(stmt, frozenset())
        timeline.end = timeline._next()
        for value in tail:
            timeline._read(value, Point(timeline.end))
            if writes_in_place(value):
                timeline.stores.append(Point(timeline.end))
        return timeline

    def _next(self) -> int:
        self.end += 1
        return self.end

    def _read(self, expr: Node, at: Point) -> None:
        for var in vars_read(expr):
            self.reads.setdefault(var.id, []).append(at)

    def _define(self, var: Var, at: Point) -> None:
        self.defs.setdefault(var.id, []).append(at)

    def _visit(self, stmt: Stmt, loops: frozenset[int]) -> None:
        at = self.points[id(stmt)] = Point(self._next(), loops, stmt)
        inner = loops | {id(stmt)} if is_loop(stmt) else loops
        targets: list[Var] = []
        own: list[Node | None]
        match stmt:
            case AssignStmt():
                own = [stmt.value]
                targets = [stmt.var]
            case ForStmt():
                own = [stmt.start, stmt.stop, stmt.step, *(a.init_value for a in stmt.iter_args)]
                self._define(stmt.loop_var, Point(at.position, inner, stmt))
                for iter_arg in stmt.iter_args:
                    self._define(iter_arg, Point(at.position, inner, stmt))
            case WhileStmt():
                own = [a.init_value for a in stmt.iter_args]
                self.conditions[id(stmt)] = Point(at.position, inner, stmt)
                self._read(stmt.cond, self.conditions[id(stmt)])
                for iter_arg in stmt.iter_args:
                    self._define(iter_arg, Point(at.position, inner, stmt))
            case IfStmt():
                own = [stmt.cond]
            case ScopeStmt():
                own = [*stmt.args, *stmt.kwargs]
                if stmt.var is not None:
                    self._define(stmt.var, Point(at.position, inner, stmt))  # per block for pl.spmd
            case SeqStmts():
                own = []
            case _:
                own = [c for c in iter_children(stmt) if not isinstance(c, Stmt)]
        for expr in own:
            if expr is None:
                continue
            self._read(expr, at)  # an IterArg reads itself (`vars_read`), e.g. in `pl.yield_(acc)`
            if writes_in_place(expr):
                self.stores.append(at)
        for var in targets:
            self._define(var, at)
        for child in _stmt_children(stmt):
            self._visit(child, inner)
        for var in getattr(stmt, "return_vars", ()):
            self._define(var, Point(self._next(), loops, stmt))

    def rebound_before_read(self, written: int, read: int) -> Point | None:
        """A definition of Var `written` that may precede a read of Var `read`, if any."""
        for write in self.defs.get(written, ()):
            for use in self.reads.get(read, ()):
                if may_precede(write, use):
                    return write
        return None

    def stored_before_read(self, read: int) -> Point | None:
        """An in-place write that may precede a read of Var `read`, if any."""
        for write in self.stores:
            for use in self.reads.get(read, ()):
                if may_precede(write, use):
                    return write
        return None


def _stmt_children(stmt: Stmt) -> list[Stmt]:
    match stmt:
        case SeqStmts():
            return list(stmt.stmts)
        case IfStmt():
            return [stmt.then_body] + ([stmt.else_body] if stmt.else_body is not None else [])
        case ForStmt() | WhileStmt() | ScopeStmt():
            return [stmt.body]
    return []
