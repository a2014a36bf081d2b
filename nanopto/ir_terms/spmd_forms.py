"""The scopes the parser adds around a `pl.spmd` body, and how the printer reads them back.

`for i in pl.spmd(N)` is a `pl.spmd` scope around an InCore scope (`pl.at` at CORE_GROUP) whose
first statement binds `i = pl.tile.get_block_idx()`; a `with pl.spmd(N)` body that reads the
block index, or that carries `optimizations=`, gets the same InCore scope without the binding
(docs/specification.md, "Statement forms"). The parser builds these shapes with the functions
here, and the printer uses `for_form` to print the first shape as the loop it came from: one
definition of each shape for both directions, so what is printed reads back as the same IR.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ConstStr,
    Expr,
    Function,
    Keyword,
    MakeTuple,
    ScopeKind,
    ScopeStmt,
    SeqStmts,
    Span,
    Stmt,
    Submit,
    Symbol,
    Var,
)
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import walk

SPMD_SUFFIX = "_spmd"
"""The suffix that tells a `pl.spmd` scope's name from its InCore scope's (`q_proj_spmd`, `q_proj`)."""

BLOCK_INDEX_OP = "tile.get_block_idx"
TASK_INVALID_OP = "system.task_invalid"


def split_name_hint(name_hint: str) -> tuple[str, str]:
    """The names of the `pl.spmd` scope and of the InCore scope added inside it for a written
    `name_hint=`: `"q_proj"` and `"q_proj_spmd"` both give `("q_proj_spmd", "q_proj")`."""
    if not name_hint:
        return "", ""
    base = name_hint[: -len(SPMD_SUFFIX)] if name_hint.endswith(SPMD_SUFFIX) else name_hint
    return base + SPMD_SUFFIX, base


def incore_scope(body: Stmt, name_hint: str, optimizations: Keyword | None, span: Span | None) -> ScopeStmt:
    """The InCore scope the parser adds inside a `pl.spmd` scope, as `pl.at(level=CORE_GROUP,
    name_hint=..., optimizations=[...])` would build it."""
    kwargs = [Keyword("level", Symbol("Level.CORE_GROUP"))]
    if name_hint:
        kwargs.append(Keyword("name_hint", ConstStr(name_hint)))
    if optimizations is not None:
        kwargs.append(optimizations)
    return ScopeStmt("at", body, (), tuple(kwargs), span=span)


def wrapped(body: Stmt, name_hint: str, optimizations: Keyword | None, span: Span | None) -> SeqStmts:
    """A `pl.spmd` body inside the InCore scope the parser adds (`incore_scope`), as the body of
    the `pl.spmd` scope: a sequence of that one scope, as a written carrier is."""
    return SeqStmts((incore_scope(body, name_hint, optimizations, span),))


def is_block_index(expr: Expr) -> bool:
    """`pl.tile.get_block_idx()` in any of its spellings (`pl.get_block_idx()`)."""
    if not isinstance(expr, Call) or expr.function or expr.args:
        return False
    op = OPS.lookup(expr.op)
    return op is not None and op.name == BLOCK_INDEX_OP


@dataclass(frozen=True)
class BodyWork:
    """What a `with pl.spmd(N)` body does once every Inline call in it is spliced: whether it reads
    the block index, and its kernel launches (each named by the expression in the body that makes
    it: the launch itself, or the Inline call whose helper makes it).

    Reading through Inline calls makes the parser's choice of form (per-block body or dispatch)
    the same before and after InlineFunctions, so an inlined program reads back as itself
    (docs/10-the-rest-of-the-specification.md#where-a-spliced-scope-may-stand)."""

    reads_block_index: bool
    launches: tuple[Expr, ...]


def body_work(body: Stmt, inline: Mapping[str, Function]) -> BodyWork:
    """`BodyWork` of `body`, where `inline` holds the program's Inline helpers parsed so far (a
    helper's own calls to helpers are read the same way)."""
    reads = False
    launches: list[Expr] = []
    for node in walk(body):
        if isinstance(node, Submit):
            launches.append(node)
        elif isinstance(node, Call) and node.function and node.op in inline:
            inner = body_work(inline[node.op].body, inline)
            reads = reads or inner.reads_block_index
            launches.extend(node for _ in inner.launches)
        elif isinstance(node, Call) and node.function:
            launches.append(node)
        elif isinstance(node, Call) and is_block_index(node):
            reads = True
    return BodyWork(reads, tuple(launches))


def carrier(body: Stmt) -> ScopeStmt | None:
    """The InCore scope a `pl.spmd` body already is (`with pl.at(CORE_GROUP, ...):` alone, with
    the definition of its `as tid` before it), or None."""
    stmts = _stmts(body)
    if len(stmts) == 2 and is_task_placeholder(stmts[0], stmts[1]):
        stmts = stmts[1:]
    scope = stmts[0] if len(stmts) == 1 else None
    return scope if isinstance(scope, ScopeStmt) and scope.kind is ScopeKind.InCore else None


def block_index(var: Var, span: Span | None) -> AssignStmt:
    """`i = pl.tile.get_block_idx()`: the binding of the for-form's loop variable."""
    return AssignStmt(var, Call(BLOCK_INDEX_OP, (), span=span), annotated=False, span=span)


def is_task_placeholder(stmt: Stmt, scope: Stmt) -> bool:
    """`tid = pl.system.task_invalid()` right before the `pl.at`/`pl.spmd` scope that captures
    `tid` (`as tid`): the definition the parser writes for the capture, printed as the `as tid`."""
    return (
        isinstance(stmt, AssignStmt)
        and isinstance(stmt.value, Call)
        and stmt.value.op == TASK_INVALID_OP
        and not stmt.value.args
        and isinstance(scope, ScopeStmt)
        and not scope.for_form
        and scope.var is not None
        and scope.var.id == stmt.var.id
    )


@dataclass(frozen=True)
class ForForm:
    """A `pl.spmd` scope that prints as `for <var> in pl.spmd(...)`: its loop variable, the
    InCore scope's keywords to print on the header, and the statements after the binding."""

    var: Var
    incore: ScopeStmt
    body: tuple[Stmt, ...]


def _stmts(body: Stmt) -> tuple[Stmt, ...]:
    return body.stmts if isinstance(body, SeqStmts) else (body,)


def for_form(scope: ScopeStmt) -> ForForm | None:
    """The for-form `scope` was parsed from, or None when it prints as a `with` statement: a
    `pl.spmd` scope without a capture whose whole body is an InCore scope (no capture, no dump
    selection, nothing but a name and optimizations) that starts by binding the block index, the
    two names related as `split_name_hint` makes them."""
    if scope.constructor != "spmd" or scope.var is not None or scope.for_form:
        return None
    inner = _stmts(scope.body)
    if len(inner) != 1 or not isinstance(inner[0], ScopeStmt):
        return None
    incore = inner[0]
    if incore.kind is not ScopeKind.InCore or incore.var is not None or incore.dumps or incore.args:
        return None
    if any(k.name not in ("level", "name_hint", "optimizations") for k in incore.kwargs):
        return None
    stmts = _stmts(incore.body)
    first = stmts[0] if stmts else None
    if not (isinstance(first, AssignStmt) and isinstance(first.value, Call) and is_block_index(first.value)):
        return None
    if split_name_hint(incore.name_hint)[0] != scope.name_hint:
        return None
    return ForForm(first.var, incore, stmts[1:])


def canonical_optimizations(written: Keyword) -> Keyword | None:
    """`optimizations=[...]` as one list whatever its spelling: `pl.split(MODE)` then
    `pl.cross_core_slot(slot_num=N)`; the deprecated `pl.split(MODE, slot_num=N)` is those two
    entries; a split whose mode is NONE says nothing and is left out (PyPTO prints none); an empty
    list is no keyword."""
    entries = written.value.elements if isinstance(written.value, MakeTuple) else ()
    split: Call | None = None
    slot: Expr | None = None
    for entry in entries:
        if not isinstance(entry, Call):
            continue
        count = next((k.value for k in entry.kwargs if k.name == "slot_num"), None)
        if entry.op in ("split", "optimizations.split"):
            mode = entry.args[0] if entry.args else next((k.value for k in entry.kwargs if k.name == "mode"), None)
            if mode is not None and not (isinstance(mode, Symbol) and mode.path.endswith(".NONE")):
                split = Call("split", (mode,), span=entry.span)
            slot = count if count is not None else slot
        elif entry.op in ("cross_core_slot", "optimizations.cross_core_slot") and count is not None:
            slot = count
    out: list[Expr] = [split] if split is not None else []
    if slot is not None:
        out.append(Call("cross_core_slot", (), (Keyword("slot_num", slot),)))
    if not out:
        return None
    return Keyword("optimizations", MakeTuple(tuple(out), is_list=True), span=written.span)
