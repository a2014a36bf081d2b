"""PyPTO's scope statement classes (`InCoreScopeStmt`, `SpmdScopeStmt`, ...) as views of `ScopeStmt`.

nanopto keeps one `ScopeStmt` node whose kind is derived from the `pl` constructor written
(`ScopeStmt.kind`), so the egglog encoding, the traversal and the printer have a single scope
form. PyPTO has one class per kind. Each class here is a view over that one node: `isinstance(s,
SpmdScopeStmt)` is true for a `ScopeStmt` whose kind is `Spmd`, and calling the class builds the
`ScopeStmt` the parser would build for the matching `pl` form. No instance of a view class exists.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    ConstBool,
    ConstInt,
    ConstStr,
    Expr,
    IRInvariantError,
    Keyword,
    Level,
    MakeTuple,
    Role,
    ScopeKind,
    ScopeStmt,
    SeqStmts,
    Span,
    Stmt,
    Symbol,
)
from nanopto.ir_terms.nodes import SplitMode as SplitMode  # re-exported: the split hint's enum
from nanopto.ir_terms.types import ScalarType


class _ScopeView(type):
    """The metaclass of the views: instance checks read the kind, calls build a `ScopeStmt`."""

    scope_kind: ScopeKind

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, ScopeStmt) and obj.kind is cls.scope_kind

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __call__(cls, *args: Any, **kwargs: Any) -> ScopeStmt:
        build = getattr(cls, "build")  # noqa: B009 (a classmethod each view defines)
        scope: ScopeStmt = build(*args, **kwargs)
        return scope


_INDEX = ScalarType(DataType.INDEX)
"""The type of a for-form scope's loop variable, as the parser gives it."""


def _body(body: Stmt | Sequence[Stmt]) -> Stmt:
    return body if isinstance(body, Stmt) else SeqStmts(tuple(body))


def _named(name_hint: str) -> tuple[Keyword, ...]:
    return (Keyword("name_hint", ConstStr(name_hint)),) if name_hint else ()


def _split(split: SplitMode | None) -> tuple[Keyword, ...]:
    if split is None or split is SplitMode.NONE:
        return ()
    from nanopto.ir_terms.nodes import Call

    entry = Call("split", (Symbol(f"SplitMode.{split.name}"),))
    return (Keyword("optimizations", MakeTuple((entry,), is_list=True)),)


class InCoreScopeStmt(metaclass=_ScopeView):
    """`with pl.at(level=pl.Level.CORE_GROUP):`."""

    scope_kind = ScopeKind.InCore

    @classmethod
    def build(
        cls,
        split: SplitMode | None = None,
        name_hint: str = "",
        body: Stmt | Sequence[Stmt] = (),
        span: Span | None = None,
    ) -> ScopeStmt:
        level = Keyword("level", Symbol("Level.CORE_GROUP"))
        return ScopeStmt("at", _body(body), kwargs=(level, *_named(name_hint), *_split(split)), span=span)


class HierarchyScopeStmt(metaclass=_ScopeView):
    """`with pl.at(level=pl.Level.HOST):` (any level but CORE_GROUP)."""

    scope_kind = ScopeKind.Hierarchy

    @classmethod
    def build(
        cls,
        level: Level | str,
        role: Role | None = None,
        name_hint: str = "",
        body: Stmt | Sequence[Stmt] = (),
        span: Span | None = None,
    ) -> ScopeStmt:
        name = level.name if isinstance(level, enum.Enum) else str(level).rsplit(".", 1)[-1]
        kwargs: tuple[Keyword, ...] = (Keyword("level", Symbol(f"Level.{name}")),)
        if role is not None:
            kwargs += (Keyword("role", Symbol(f"Role.{role.name}")),)
        return ScopeStmt("at", _body(body), kwargs=(*kwargs, *_named(name_hint)), span=span)


class ClusterScopeStmt(metaclass=_ScopeView):
    """`with pl.cluster():`."""

    scope_kind = ScopeKind.Cluster

    @classmethod
    def build(cls, name_hint: str = "", body: Stmt | Sequence[Stmt] = (), span: Span | None = None) -> ScopeStmt:
        return ScopeStmt("cluster", _body(body), kwargs=_named(name_hint), span=span)


class SpmdScopeStmt(metaclass=_ScopeView):
    """`with pl.spmd(core_num):`."""

    scope_kind = ScopeKind.Spmd

    @classmethod
    def build(
        cls,
        core_num: Expr | int,
        sync_start: bool = False,
        name_hint: str = "",
        body: Stmt | Sequence[Stmt] = (),
        span: Span | None = None,
    ) -> ScopeStmt:
        kwargs = (*_named(name_hint), *((Keyword("sync_start", ConstBool(True)),) if sync_start else ()))
        count = ConstInt(core_num) if isinstance(core_num, int) else core_num
        return ScopeStmt("spmd", _body(body), args=(count,), kwargs=kwargs, span=span)


class RuntimeScopeStmt(metaclass=_ScopeView):
    """`with pl.scope():` (automatic) or `with pl.manual_scope():` (`manual=True`)."""

    scope_kind = ScopeKind.Runtime

    @classmethod
    def build(
        cls, manual: bool = False, name_hint: str = "", body: Stmt | Sequence[Stmt] = (), span: Span | None = None
    ) -> ScopeStmt:
        return ScopeStmt("manual_scope" if manual else "scope", _body(body), kwargs=_named(name_hint), span=span)


class GraphScopeStmt(metaclass=_ScopeView):
    """`with pl.graph("name"):`."""

    scope_kind = ScopeKind.Graph

    @classmethod
    def build(cls, name_hint: str, body: Stmt | Sequence[Stmt] = (), span: Span | None = None) -> ScopeStmt:
        return ScopeStmt("graph", _body(body), args=(ConstStr(name_hint),), span=span)


class SplitAivScopeStmt(metaclass=_ScopeView):
    """`for _ in pl.split_aiv(count, mode=pl.SplitMode.<split>):`; the region runs on the two AIV
    lanes, so `count` is 2."""

    scope_kind = ScopeKind.SplitAiv

    @classmethod
    def build(
        cls,
        split: SplitMode,
        count: int = 2,
        name_hint: str = "",
        body: Stmt | Sequence[Stmt] = (),
        span: Span | None = None,
    ) -> ScopeStmt:
        if count != 2:
            raise IRInvariantError(f"a pl.split_aiv region has 2 lanes, got count={count}")
        kwargs = (Keyword("mode", Symbol(f"SplitMode.{split.name}")), *_named(name_hint))
        return ScopeStmt("split_aiv", _body(body), (ConstInt(count),), kwargs, span=span)
