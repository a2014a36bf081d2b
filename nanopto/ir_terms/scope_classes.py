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

from nanopto.ir_terms.nodes import (
    ConstBool,
    ConstStr,
    Expr,
    Keyword,
    MakeTuple,
    ScopeKind,
    ScopeStmt,
    SeqStmts,
    Span,
    Stmt,
    Symbol,
)


class SplitMode(enum.Enum):
    """The cross-core split hint of an InCore scope (`pl.split(pl.SplitMode.UP_DOWN)`)."""

    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"


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
        cls, level: object, name_hint: str = "", body: Stmt | Sequence[Stmt] = (), span: Span | None = None
    ) -> ScopeStmt:
        name = level.name if isinstance(level, enum.Enum) else str(level).rsplit(".", 1)[-1]
        kwargs = (Keyword("level", Symbol(f"Level.{name}")), *_named(name_hint))
        return ScopeStmt("at", _body(body), kwargs=kwargs, span=span)


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
        core_num: Expr,
        sync_start: bool = False,
        name_hint: str = "",
        body: Stmt | Sequence[Stmt] = (),
        span: Span | None = None,
    ) -> ScopeStmt:
        kwargs = (*_named(name_hint), *((Keyword("sync_start", ConstBool(True)),) if sync_start else ()))
        return ScopeStmt("spmd", _body(body), args=(core_num,), kwargs=kwargs, span=span)


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
    """`for aiv in pl.split_aiv(...):`; recognised only (build it by parsing the `pl` form)."""

    scope_kind = ScopeKind.SplitAiv

    @classmethod
    def build(cls, *args: object, **kwargs: object) -> ScopeStmt:
        raise TypeError("build a pl.split_aiv scope by parsing its pl form")
