"""The grammar of the IR, read off the node dataclasses, and the traversals derived from it.

Nanopass-style: a pass writes only the clauses that change something. `map_children` is the one
identity traversal every mutator builds on, and `fields_of` is what the egglog encoding uses to
declare one constructor per node class.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t


class FieldKind(enum.Enum):
    NODE = "node"  # one child node
    OPT_NODE = "opt_node"  # a child node or None
    NODES = "nodes"  # a tuple of child nodes
    TYPE = "type"  # a Type (which may hold shape expressions)
    TYPES = "types"  # a tuple of Types
    ATTR = "attr"  # a literal: str, int, bool, enum


_NODE_NAMES = {"Expr", "Stmt", "Var", "Keyword", "Param", "Function", "IterArg"}


def _classify(annotation: str) -> FieldKind:
    ann = annotation.replace(" ", "")
    if ann in _NODE_NAMES:
        return FieldKind.NODE
    if ann.endswith("|None") and ann[: -len("|None")] in _NODE_NAMES:
        return FieldKind.OPT_NODE
    if ann.startswith("tuple[") and ann.endswith(",...]") and ann[6:-5] in _NODE_NAMES:
        return FieldKind.NODES
    if ann == "Type":
        return FieldKind.TYPE
    if ann == "tuple[Type,...]":
        return FieldKind.TYPES
    return FieldKind.ATTR


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: FieldKind
    compared: bool


_FIELDS: dict[type, tuple[FieldSpec, ...]] = {}
_METADATA = frozenset({"span", "comments", "result_type"})
"""The fields that are not part of a node's value: equality, hashing and traversal ignore them.
The encoding carries a span and comments in the span String; a function call's `result_type`
is not carried (a call the pass rebuilds infers its type again)."""


def fields_of(cls: type) -> tuple[FieldSpec, ...]:
    """The fields of a node class, in declaration order, without the span and a statement's comments
    (cached per class)."""
    specs = _FIELDS.get(cls)
    if specs is None:
        specs = tuple(
            FieldSpec(f.name, _classify(str(f.type)), f.compare)
            for f in dataclasses.fields(cls)
            if f.name not in _METADATA
        )
        _FIELDS[cls] = specs
    return specs


NODE_CLASSES: tuple[type[n.Node], ...] = (
    n.Var,
    n.IterArg,
    n.ConstInt,
    n.ConstFloat,
    n.ConstBool,
    n.ConstStr,
    n.Symbol,
    n.BinaryExpr,
    n.UnaryExpr,
    n.Keyword,
    n.Call,
    n.Submit,
    n.MakeTuple,
    n.TupleGetItemExpr,
    n.SliceExpr,
    n.AssignStmt,
    n.EvalStmt,
    n.ReturnStmt,
    n.YieldStmt,
    n.InlineStmt,
    n.BreakStmt,
    n.ContinueStmt,
    n.SeqStmts,
    n.IfStmt,
    n.ForStmt,
    n.WhileStmt,
    n.ScopeStmt,
    n.Param,
    n.Function,
    n.Program,
)

N = TypeVar("N")


def map_type(ty: t.Type, fn: Callable[[n.Expr], n.Expr]) -> t.Type:
    """Apply `fn` to every shape/size expression of a type; returns `ty` itself if nothing changed."""
    match ty:
        case t.TensorType(shape):  # a distributed tensor keeps its kind and layout
            new = tuple(map(fn, shape))
            return ty if _same(new, shape) else dataclasses.replace(ty, shape=new)
        case t.TileType(shape=shape, memref=memref, tile_view=view):
            new = tuple(map(fn, shape))
            new_memref = None if memref is None else _map_memref(memref, fn)
            new_view = None if view is None else _map_view(view, fn)
            if _same(new, shape) and new_memref is memref and new_view is view:
                return ty
            return t.TileType(new, ty.dtype, new_memref, new_view, ty.memory_space)
        case t.ArrayType(size=size, dtype=dtype):
            new_size = fn(size)
            return ty if new_size is size else t.ArrayType(size=new_size, dtype=dtype)
        case t.TupleType(types):
            new_types = tuple(map_type(x, fn) for x in types)
            return ty if _same(new_types, types) else t.TupleType(new_types)
        case _:
            return ty


def _map_memref(memref: t.MemRef, fn: Callable[[n.Expr], n.Expr]) -> t.MemRef:
    offset = fn(memref.byte_offset)
    return memref if offset is memref.byte_offset else t.MemRef(memref.name, offset, memref.size)


def _map_view(view: t.TileView, fn: Callable[[n.Expr], n.Expr]) -> t.TileView:
    """`view` with `fn` applied to its expressions (its valid shape, strides and start offset)."""
    valid = tuple(fn(d) for d in view.valid_shape)
    stride = tuple(fn(d) for d in view.stride)
    start = None if view.start_offset is None else fn(view.start_offset)
    if _same(valid, view.valid_shape) and _same(stride, view.stride) and start is view.start_offset:
        return view
    return dataclasses.replace(view, valid_shape=valid, stride=stride, start_offset=start)


def type_exprs(ty: t.Type) -> Iterator[n.Expr]:
    """The shape/size expressions inside a type."""
    match ty:
        case t.TensorType(shape=shape):
            yield from shape
        case t.TileType(shape=shape, memref=memref, tile_view=view):
            yield from shape
            if memref is not None:
                yield memref.byte_offset
            if view is not None:
                yield from view.valid_shape
                yield from view.stride
                if view.start_offset is not None:
                    yield view.start_offset
        case t.ArrayType(size=size):
            yield size
        case t.TupleType(types):
            for x in types:
                yield from type_exprs(x)
        case _:
            return


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))  # in C: a retyping walk asks it per node


_CHILD_FIELDS: dict[type, tuple[tuple[str, FieldKind], ...]] = {}


def _child_fields(cls: type) -> tuple[tuple[str, FieldKind], ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = tuple((f.name, f.kind) for f in fields_of(cls) if f.kind is not FieldKind.ATTR)
        _CHILD_FIELDS[cls] = fields
    return fields


SIMPLE_TYPES = (t.UnknownType, t.ScalarType)
"""The types that hold no expressions (nearly every Var's): a walk asks `type(ty) in SIMPLE_TYPES`
inline, without a call, before `type_holds_none`."""

_ChildrenOf = Callable[[Any], list[Any]]
_CHILDREN: dict[type, _ChildrenOf] = {}
_CHILDREN_REVERSED: dict[type, _ChildrenOf | None] = {}
_BRANCHES_REVERSED: dict[type, _ChildrenOf | None] = {}
"""`_compile_children(cls, reverse=True, branches=True)` by class."""


def _compile_children(cls: type, reverse: bool, branches: bool = False) -> _ChildrenOf | None:
    """`children_of` for the nodes of `cls` as straight-line code, compiled once per class (as
    `dataclasses` compiles an `__init__`): `[node.lhs, node.rhs]` for a BinaryExpr. With `reverse`,
    the children last to first, what a walk pushes on its stack, and None for a class without
    children. A walk is most of the time that printing and the checks around inlining take, and
    the loop over a class's field table that this replaces took three times as long. With
    `branches`, the children less the leaf Vars (of a type without expressions): a walk that looks
    for other nodes never needs them, and most nodes are such Vars."""
    fields = _child_fields(cls)
    if reverse:
        if not fields:
            return None
        fields = tuple(reversed(fields))
    order = "reversed" if reverse else ""
    kept = "type(c) is not var or type(c.type) not in simple_types"  # not a leaf Var
    if all(kind is FieldKind.NODE for _, kind in fields) and not branches:
        body = [f"    return [{', '.join(f'node.{name}' for name, _ in fields)}]"]
    else:
        body = ["    out = []"]
        for name, kind in fields:
            match kind:
                case FieldKind.NODE if branches:
                    body += [f"    c = node.{name}", f"    if {kept}:", "        out.append(c)"]
                case FieldKind.NODE:
                    body.append(f"    out.append(node.{name})")
                case FieldKind.OPT_NODE if branches:
                    body += [f"    c = node.{name}", f"    if c is not None and ({kept}):", "        out.append(c)"]
                case FieldKind.OPT_NODE:
                    body += [f"    value = node.{name}", "    if value is not None:", "        out.append(value)"]
                case FieldKind.NODES if branches:
                    body += [f"    for c in {order}(node.{name}):", f"        if {kept}:", "            out.append(c)"]
                case FieldKind.NODES:
                    body.append(f"    out += {order}(node.{name})")
                case FieldKind.TYPE:
                    body += [
                        f"    value = node.{name}",
                        "    if not isinstance(value, simple_types):",
                        f"        out += {order}(list(type_exprs(value)))",
                    ]
                case _:
                    body += [f"    for ty in {order}(node.{name}):", f"        out += {order}(list(type_exprs(ty)))"]
        body.append("    return out")
    namespace: dict[str, Any] = {"simple_types": SIMPLE_TYPES, "type_exprs": type_exprs, "var": n.Var}
    exec("\n".join(["def children(node):", *body]), namespace)  # the text is ours, made from the field table
    children: _ChildrenOf = namespace["children"]
    return children


def children_of(node: n.Node) -> list[n.Node]:
    """The direct child nodes of `node` (expressions inside types included), as a new list.

    The hot path of every traversal: one compiled function per class (`_compile_children`).
    """
    children = _CHILDREN.get(type(node))
    if children is None:
        compiled = _compile_children(type(node), reverse=False)
        assert compiled is not None  # only a reversed one is ever None
        children = _CHILDREN[type(node)] = compiled
    return children(node)


def iter_children(node: n.Node) -> Iterator[n.Node]:
    """The direct child nodes of `node` (expressions inside types included)."""
    return iter(children_of(node))


def map_children(node: N, fn: Callable[[Any], Any]) -> N:
    """Rebuild `node` with `fn` applied to each child (identity-preserving when nothing changes).

    A `Var` keeps its id when its type is rewritten, so its identity survives the traversal.
    """
    return _mapper(type(node))(node, fn)  # type: ignore[no-any-return]


_Mapper = Callable[[Any, Callable[[Any], Any]], Any]
_MAPPERS: dict[type, _Mapper] = {}


def _mapper(cls: type) -> _Mapper:
    mapper = _MAPPERS.get(cls)
    if mapper is None:
        mapper = _MAPPERS[cls] = _compile_mapper(cls)
    return mapper


def _compile_mapper(cls: type) -> _Mapper:
    """`map_children` for the nodes of `cls` as straight-line code, compiled once per class (as
    `_compile_children` is): each child field in declaration order, `fn` applied to each child, the
    node rebuilt only when one changed. A rewriting traversal (a `Mutator`) calls it for every node
    it visits, and the loop over the field table it replaces cost as much as the rebuilding.

    The node is rebuilt by calling its class with every field as a keyword, the call
    `dataclasses.replace` makes, written out: replace reads the field table on every call, and
    a retyping traversal rebuilds a hundred thousand nodes. Every node class takes all its fields
    as `__init__` arguments (a Var's id included, so a rebuilt Var keeps it); one that did not
    could not be rebuilt this way, and is refused here rather than given a fresh id."""
    body = ["def mapper(node, fn):"]
    unchanged = []
    for k, (name, kind) in enumerate(_child_fields(cls)):
        body.append(f"    v{k} = node.{name}")
        match kind:
            case FieldKind.NODE:
                body.append(f"    n{k} = fn(v{k})")
            case FieldKind.OPT_NODE:
                body.append(f"    n{k} = None if v{k} is None else fn(v{k})")
            case FieldKind.NODES:
                # map in C: a generator per tuple field and node cost as much as the visits
                # (an empty tuple, most of a call's keywords and selections, maps to itself)
                body += [
                    f"    if v{k}:",
                    f"        mapped = tuple(map(fn, v{k}))",
                    f"        n{k} = v{k} if same(mapped, v{k}) else mapped",
                    "    else:",
                    f"        n{k} = v{k}",
                ]
            case FieldKind.TYPE:
                body.append(f"    n{k} = v{k} if type(v{k}) in simple_types else map_type(v{k}, fn)")
            case _:
                body += [
                    f"    mapped = tuple(map_type(v, fn) for v in v{k})",
                    f"    n{k} = v{k} if same(mapped, v{k}) else mapped",
                ]
        unchanged.append(f"n{k} is v{k}")
    body.append(f"    if {' and '.join(unchanged) or 'True'}:")
    body.append("        return node")
    child_index = {name: k for k, (name, _) in enumerate(_child_fields(cls))}
    declared = dataclasses.fields(cls)
    if len(declared) != len(cls.__dataclass_fields__) or not all(f.init for f in declared):  # type: ignore[attr-defined]
        raise TypeError(f"map_children rebuilds a {cls.__name__} from its __init__ arguments, which are not all its fields")
    arguments = ", ".join(
        f"{f.name}=n{child_index[f.name]}" if f.name in child_index else f"{f.name}=node.{f.name}" for f in declared
    )
    body.append(f"    return cls({arguments})")
    namespace: dict[str, Any] = {"cls": cls, "same": _same, "map_type": map_type, "simple_types": SIMPLE_TYPES}
    exec("\n".join(body), namespace)  # the text is ours, made from the field table
    mapper: _Mapper = namespace["mapper"]
    return mapper


def walk(node: n.Node) -> Iterator[n.Node]:
    """Every node below and including `node`, pre-order, without recursion."""
    stack: list[Any] = [node]  # Any: a leaf Var's type is read before its class is narrowed
    pop, push = stack.pop, stack.extend
    table = _CHILDREN_REVERSED
    var, simple = n.Var, SIMPLE_TYPES
    while stack:
        current = pop()
        yield current
        cls = type(current)
        if cls is var and type(current.type) in simple:
            continue  # a leaf: most nodes are such Vars, and asking for their (no) children is a call
        if cls in table:
            children = table[cls]
        else:
            children = table[cls] = _compile_children(cls, reverse=True)
        if children is not None:
            push(children(current))


_Memo = dict[int, tuple[n.Node, tuple[n.Node, ...]]]
_WALKS: ContextVar[tuple[_Memo, ...]] = ContextVar("nanopto_remembered_walks", default=())
"""The open `remembered_walks` scopes, innermost last; a ContextVar, so each thread or task that
runs a pass has its own."""
_StmtMemo = dict[int, tuple[n.Stmt, tuple[n.Stmt, ...]]]
_STMT_WALKS: ContextVar[tuple[_StmtMemo, ...]] = ContextVar("nanopto_remembered_statement_walks", default=())
"""The same scopes' `walk_stmts` results."""


@contextmanager
def remembered_walks() -> Iterator[None]:
    """Within the block, `nodes_of` and `walk_stmts` walk each root once. A pass run opens one, so a caller asked
    about its calls, sites, tags, size and names is walked once, and nothing outlives the run."""
    token = _WALKS.set((*_WALKS.get(), {}))
    statements = _STMT_WALKS.set((*_STMT_WALKS.get(), {}))
    try:
        yield
    finally:
        _STMT_WALKS.reset(statements)
        _WALKS.reset(token)


def nodes_of(node: n.Node) -> tuple[n.Node, ...]:
    """`tuple(walk(node))`, remembered inside `remembered_walks` (IR nodes are immutable).

    An entry holds the root itself, so its id cannot be reused while the entry lives.
    """
    scopes = _WALKS.get()
    if not scopes:
        return tuple(_all_nodes(node))
    memo = scopes[-1]
    entry = memo.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    nodes = tuple(_all_nodes(node))
    memo[id(node)] = (node, nodes)
    return nodes


def _all_nodes(node: n.Node) -> list[n.Node]:
    """`list(walk(node))`, built in one loop rather than through a generator (a whole program is
    a few hundred thousand nodes)."""
    out: list[n.Node] = []
    append = out.append
    stack: list[Any] = [node]  # Any: a leaf Var's type is read before its class is narrowed
    pop, push = stack.pop, stack.extend
    table = _CHILDREN_REVERSED
    var, simple = n.Var, SIMPLE_TYPES
    while stack:
        current = pop()
        append(current)
        cls = type(current)
        if cls is var and type(current.type) in simple:
            continue  # a leaf, without the call asking for its children (as in `walk`)
        if cls in table:
            children = table[cls]
        else:
            children = table[cls] = _compile_children(cls, reverse=True)
        if children is not None:
            push(children(current))
    return out


def type_holds_none(ty: t.Type, classes: tuple[type[n.Node], ...], known: dict[int, t.Type]) -> bool:
    """Whether type `ty`'s expressions hold no node of `classes` (a tensor's shape of constants
    holds no Var). `known` holds the types found so for these `classes`, by id, each kept so that
    its id stays its own while `known` lives: after inlining, one type object is the type of every
    copy of a Var, and a walk that keeps one `known` asks each type once."""
    if id(ty) in known:
        return True
    if any(nodes_of_class(e, classes) for e in type_exprs(ty)):
        return False
    known[id(ty)] = ty
    return True


def nodes_of_class(node: n.Node, classes: tuple[type[n.Node], ...]) -> list[n.Node]:
    """The nodes below and including `node` that are instances of `classes`, pre-order: a walk
    that keeps only what a check reads, for one that looks for a few nodes among many (filtering
    `nodes_of` builds the list of every node first).

    What a Var's type holds is found once per type object: after inlining, one annotation's type
    is the type of every copy of its Var (a Var's only children are its type's expressions).
    Inside `remembered_walks` it filters the remembered walk instead: one walk of a root serves
    every question asked of it there."""
    if _WALKS.get():
        return [found for found in nodes_of(node) if isinstance(found, classes)]
    out: list[n.Node] = []
    append = out.append
    stack: list[Any] = [node]  # Any: a leaf Var's type is read before its class is narrowed
    pop, push = stack.pop, stack.extend
    var, simple = n.Var, SIMPLE_TYPES
    # Looking for no Var, the walk never pushes a leaf Var: most nodes are such Vars.
    branches = not any(issubclass(var, c) for c in classes)
    table = _BRANCHES_REVERSED if branches else _CHILDREN_REVERSED
    in_types: dict[int, tuple[t.Type, list[n.Node]]] = {}  # the type kept alive, so its id stays its own
    while stack:
        current = pop()
        if isinstance(current, classes):
            append(current)
        cls = type(current)
        if cls is var:
            ty = current.type
            if type(ty) in simple:
                continue  # a leaf (as in `walk`)
            found = in_types.get(id(ty))
            if found is None:
                found = in_types[id(ty)] = (ty, [x for e in type_exprs(ty) for x in nodes_of_class(e, classes)])
            out += found[1]
            continue
        if cls in table:
            children = table[cls]
        else:
            children = table[cls] = _compile_children(cls, reverse=True, branches=branches)
        if children is not None:
            push(children(current))
    return out


_STMT_FIELDS: dict[type, tuple[str, ...]] = {}


def _stmt_fields(cls: type) -> tuple[str, ...]:
    fields = _STMT_FIELDS.get(cls)
    if fields is None:
        annotations = {f.name: str(f.type).replace(" ", "") for f in dataclasses.fields(cls)}
        fields = tuple(
            f.name for f in fields_of(cls) if annotations[f.name] in ("Stmt", "Stmt|None", "tuple[Stmt,...]")
        )
        _STMT_FIELDS[cls] = fields
    return fields


def stmt_children(stmt: n.Stmt) -> list[n.Stmt]:
    """The statements directly inside `stmt` (a body, the branches, a sequence's items)."""
    children: list[n.Stmt] = []
    for name in _stmt_fields(type(stmt)):
        value = getattr(stmt, name)
        if isinstance(value, (tuple, n.StmtList)):
            children.extend(value)
        elif value is not None:
            children.append(value)
    return children


def walk_stmts(stmt: n.Stmt) -> Iterator[n.Stmt]:
    """Every statement below and including `stmt`, pre-order, never entering expressions: the
    cheap traversal for questions only statements answer (definitions, carries, results).
    Remembered inside `remembered_walks`, as `nodes_of` is: the pass, its type derivation and its
    checker ask about the same bodies several times."""
    scopes = _STMT_WALKS.get()
    if not scopes:
        return _walk_stmts(stmt)
    memo = scopes[-1]
    entry = memo.get(id(stmt))
    if entry is None or entry[0] is not stmt:
        entry = memo[id(stmt)] = (stmt, tuple(_walk_stmts(stmt)))
    return iter(entry[1])


def _walk_stmts(stmt: n.Stmt) -> Iterator[n.Stmt]:
    """`walk_stmts`, walked.

    Without recursion, on an explicit stack: most statements (assignments, calls, returns) hold
    no statement and answer from the per-class field table without building a list."""
    stack: list[n.Stmt] = [stmt]
    pop, push = stack.pop, stack.extend
    table = _STMT_FIELDS
    while stack:
        current = pop()
        yield current
        cls = type(current)
        names = table.get(cls)
        if names is None:
            names = _stmt_fields(cls)
        if not names:
            continue
        children: list[n.Stmt] = []
        for name in names:
            value = getattr(current, name)
            if isinstance(value, (tuple, n.StmtList)):
                children.extend(value)
            elif value is not None:
                children.append(value)
        children.reverse()
        push(children)


def _in_turn(values: list[Any]) -> Callable[[Any], Any]:
    """A function that returns `values` one after another, whatever it is given."""
    remaining = iter(values)
    return lambda _: next(remaining)


_RECURSION_BUDGET = 200
"""Levels a `Mutator` recurses before it continues on an explicit stack (Python allows 1,000)."""


class Mutator:
    """A rewriting traversal: override `visit_<ClassName>` for the nodes that change.

    The default for every node is to rebuild it from its visited children, so a pass states only
    the clauses that differ from the identity; `leave(node)` sees every node so rebuilt (the
    identity by default). The default traversal is an explicit stack, not recursion, so a deep
    tree (a 100,000-deep `BinaryExpr` chain built by hand, nested `SeqStmts`) is no
    `RecursionError`; only a `visit_<ClassName>` that calls `visit` or `generic_visit` itself
    nests Python calls, once per node of its class on a path.
    """

    def visit(self, node: Any) -> Any:
        method = self._override(type(node))
        if method is not None:
            return method(self, node)
        return self.generic_visit(node)

    def leave(self, node: Any) -> Any:
        """A node the default traversal rebuilt from its visited children, before it is used."""
        return node

    _depth = 0
    """How many `generic_visit` calls are open on the Python stack (recursing, the fast way)."""

    def generic_visit(self, node: N) -> N:
        """`node` rebuilt from its visited children (`map_children` with `visit`), each visited
        completely, left to right. By recursion up to `_RECURSION_BUDGET` levels (the common case,
        and the fastest), below that on an explicit stack."""
        if self._depth >= _RECURSION_BUDGET:
            return self._rebuilt_on_a_stack(node)
        self._depth += 1
        try:
            # `map_children`'s compiled body called directly: a frame fewer per level of recursion
            return self.leave(_mapper(type(node))(node, self.visit))  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def _rebuilt_on_a_stack(self, node: N) -> N:
        """`generic_visit` without recursion: the same visits in the same order."""
        results: list[Any] = []
        stack: list[tuple[Any, int]] = [(node, -1)]  # (node, -1): expand; (node, k): rebuild from k results
        while stack:
            current, count = stack.pop()
            if count >= 0:
                visited = results[len(results) - count :]
                del results[len(results) - count :]
                rebuilt = map_children(current, _in_turn(visited))
                results.append(self.leave(rebuilt))
                continue
            if current is not node:
                method = self._override(type(current))
                if method is not None:
                    results.append(method(self, current))
                    continue
            kids = children_of(current)
            stack.append((current, len(kids)))
            stack.extend((kid, -1) for kid in reversed(kids))
        result: N = results[0]
        return result

    _OVERRIDES: dict[type, Callable[[Any, Any], Any] | None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._OVERRIDES = {}

    def _override(self, node_class: type) -> Callable[[Any, Any], Any] | None:
        """The subclass's `visit_<ClassName>` for `node_class`, or None (looked up once per class)."""
        table = type(self)._OVERRIDES
        if node_class not in table:
            table[node_class] = getattr(type(self), f"visit_{node_class.__name__}", None)
        return table[node_class]


Mutator._OVERRIDES = {}


def whole_value(stmt: n.Stmt) -> n.Expr | None:
    """The expression that is a statement's whole value, where a call is a site (docs/specification.md,
    "Call-site forms": a site is a call that is the whole statement value); None for other statements."""
    if isinstance(stmt, n.AssignStmt):
        return stmt.value
    if isinstance(stmt, n.EvalStmt):
        return stmt.expr
    if isinstance(stmt, n.ReturnStmt) and len(stmt.values) == 1:
        return stmt.values[0]
    return None
