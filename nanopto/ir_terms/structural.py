"""Structural equality and hashing of IR nodes and types, up to renaming of variables.

Pass tests compare a pass's output with a hand-written expected program whose Vars are different
objects with different ids (and often different names), so equality must be alpha-equivalence:
the comparison builds a bijection between the Var ids of the two sides on first encounter and
holds every later occurrence to it. Spans, Var names, the names of a Program and of a Function
(as PyPTO, which declares them ignored fields: a `Before` and an `Expected` class compare equal),
and fields declared `compare=False` (such as `AssignStmt.annotated`) are ignored; everything else
is read off `schema.fields_of`, so a node added to `nodes.py` is compared without touching this
module. Inside a program, functions still pair up by name, since calls refer to them by name.

The traversal is an explicit work stack, not recursion, so a deep body (a long `SeqStmts` chain,
a tall expression tree) never hits Python's recursion limit.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.schema import FieldKind, FieldSpec, fields_of

Comparable = n.Node | t.Type
"""What the functions of this module accept: any IR node (Program, Function, Stmt, Expr, ...)
or a Type."""

_TYPE_CLASSES = (t.ScalarType, t.TensorType, t.TileType, t.ArrayType, t.TupleType, t.UnknownType)

_FRAGMENT_LIMIT = 2000  # characters of a repr fallback kept in an error message

_IGNORED_FIELDS: dict[type, frozenset[str]] = {n.Function: frozenset({"name"})}
"""Fields that are labels, not structure: neither compared nor hashed (Program's name is handled
in `_program`, which compares its functions as a mapping)."""


def _compared_specs(cls: type) -> list[FieldSpec]:
    ignored = _IGNORED_FIELDS.get(cls, frozenset())
    return [spec for spec in _specs(cls) if spec.compared and spec.name not in ignored]


@dataclass(frozen=True)
class StructuralMismatch:
    """The first place two IR values differ: where (`path`), why, and the two differing values."""

    path: str
    reason: str
    lhs: object
    rhs: object

    def describe(self) -> str:
        """A readable report: the path, the reason and both fragments as `pl` source."""
        where = self.path or "<root>"
        return (
            f"IR is not structurally equal at {where}: {self.reason}\n"
            f"  lhs:\n{_indent(render_fragment(self.lhs))}\n"
            f"  rhs:\n{_indent(render_fragment(self.rhs))}"
        )


def structural_equal(a: Comparable, b: Comparable, enable_auto_mapping: bool = True) -> bool:
    """True when `a` and `b` are equal up to spans, names and a consistent Var renaming.

    With `enable_auto_mapping=False` only the Vars `a` and `b` define (assigned, loop, carried,
    result and parameter Vars) are renamed; a free Var must be the same Var on both sides.
    """
    return first_difference(a, b, enable_auto_mapping) is None


class StructuralMismatchError(AssertionError, ValueError):
    """What `assert_structural_equal` raises: an AssertionError for test runners, and a
    ValueError, as PyPTO's `assert_structural_equal` raises."""


def assert_structural_equal(a: Comparable, b: Comparable, enable_auto_mapping: bool = True) -> None:
    """Raise `StructuralMismatchError` naming the first difference (path, reason, both fragments)."""
    mismatch = first_difference(a, b, enable_auto_mapping)
    if mismatch is not None:
        raise StructuralMismatchError(mismatch.describe())


def first_difference(a: Comparable, b: Comparable, enable_auto_mapping: bool = True) -> StructuralMismatch | None:
    """The first difference in pre-order, field-declaration order, or None if equal."""
    if enable_auto_mapping:
        return _Comparator().run(a, b)
    return _Comparator(defined_ids(a), defined_ids(b)).run(a, b)


def structural_hash(node: Comparable, enable_auto_mapping: bool = True, *, var_types: bool = True) -> int:
    """A hash consistent with `structural_equal`: equal values hash alike.

    Var names are ignored and a Var is hashed as the index of its first occurrence, so renamings
    hash alike (with `enable_auto_mapping=False`, a free Var is hashed as itself). Functions of a
    program are hashed in name order, because equality treats them as a mapping. The hash is
    stable across processes (blake2b, no salted `str` hashes). `var_types=False` leaves the Vars'
    types out: an expression is then the same whichever types its Vars were given (a pass may
    derive a Var's type afresh).
    """
    return _Hasher(var_types, None if enable_auto_mapping else defined_ids(node)).run(node)


_DEFINING_FIELDS: dict[type, tuple[str, ...]] = {
    n.AssignStmt: ("var",),
    n.ForStmt: ("loop_var", "iter_args", "return_vars"),
    n.WhileStmt: ("iter_args", "return_vars"),
    n.IfStmt: ("return_vars",),
    n.ScopeStmt: ("var",),
    n.Param: ("var",),
}


def defined_ids(root: Comparable) -> frozenset[int]:
    """The ids of the Vars `root` defines: what strict comparison still renames."""
    if not isinstance(root, n.Node):
        return frozenset()
    from nanopto.ir_terms.schema import walk

    ids: set[int] = set()
    for node in walk(root):
        for name in _DEFINING_FIELDS.get(type(node), ()):
            value = getattr(node, name)
            ids.update(v.id for v in (value if isinstance(value, tuple) else (value,)) if isinstance(v, n.Var))
    return frozenset(ids)


def render_fragment(value: object) -> str:
    """`value` printed as `pl` source when it is a node or type, else (or if printing fails) repr."""
    if isinstance(value, (n.Node, *_TYPE_CLASSES)):
        try:
            from nanopto.ir_terms.printer import python_print

            return python_print(value)
        except Exception:  # the printer may not know this fragment; any repr beats no message
            pass
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} too deep to show>"
    if len(text) > _FRAGMENT_LIMIT:
        text = text[:_FRAGMENT_LIMIT] + " ..."
    return text


# ---------------------------------------------------------------------------------------------
# Paths and formatting
# ---------------------------------------------------------------------------------------------


def _specs(cls: type) -> tuple[FieldSpec, ...]:
    # `fields_of` is `functools.cache`d, whose stub wants a Hashable; a class is one at runtime.
    return fields_of(cast(Any, cls))


@dataclass(frozen=True)
class _Path:
    """A path as a link to its parent: spelling every path out would cost memory quadratic in
    the depth (a 50,000-deep chain made gigabytes of path strings); it is spelled on a mismatch."""

    parent: _Path | None
    step: str

    def __str__(self) -> str:
        steps: list[str] = []
        link: _Path | None = self
        while link is not None:
            steps.append(link.step)
            link = link.parent
        return "".join(reversed(steps)).removeprefix(".")


_ROOT = _Path(None, "")


def _field_path(path: _Path, name: str) -> _Path:
    return _Path(path, f".{name}")


def _index_path(path: _Path, index: int) -> _Path:
    return _Path(path, f"[{index}]")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines() or [""])


def _show_attr(value: object) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _show_var(var: n.Var) -> str:
    return f"{var.name!r}#{var.id}"


def _class_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


# ---------------------------------------------------------------------------------------------
# Equality
# ---------------------------------------------------------------------------------------------

_Task = Callable[[], "StructuralMismatch | None"]


class _Comparator:
    """One comparison: the Var bijection and a stack of pending checks (popped in pre-order)."""

    def __init__(self, lhs_defined: frozenset[int] | None = None, rhs_defined: frozenset[int] | None = None) -> None:
        self.lhs_to_rhs: dict[int, n.Var] = {}
        self.rhs_to_lhs: dict[int, n.Var] = {}
        self.stack: list[_Task] = []
        self.lhs_defined = lhs_defined
        """Without auto-mapping, the Vars each side defines; any other Var must be the same Var."""
        self.rhs_defined = rhs_defined or frozenset()

    def run(self, a: object, b: object) -> StructuralMismatch | None:
        self._push_value(a, b, _ROOT, a, b, "")
        while self.stack:
            mismatch = self.stack.pop()()
            if mismatch is not None:
                return mismatch
        return None

    # Pushing in reverse keeps the pops in declaration order, so the *first* difference wins.
    def _push_all(self, tasks: list[_Task]) -> None:
        self.stack.extend(reversed(tasks))

    def _push_value(self, a: object, b: object, path: _Path, pa: object, pb: object, name: str) -> None:
        self.stack.append(lambda: self._value(a, b, path, pa, pb, name))

    def _value(
        self, a: object, b: object, path: _Path, pa: object, pb: object, name: str
    ) -> StructuralMismatch | None:
        """Dispatch on what the values are: node, type, tuple or plain attribute."""
        if isinstance(a, n.Node) or isinstance(b, n.Node):
            return self._node(a, b, path)
        if isinstance(a, _TYPE_CLASSES) or isinstance(b, _TYPE_CLASSES):
            return self._type(a, b, path)
        if isinstance(a, tuple) and isinstance(b, tuple):
            return self._sequence(a, b, path, pa, pb, name)
        if type(a) is not type(b) or a != b:
            return StructuralMismatch(str(path), f"field {name}: {_show_attr(a)} != {_show_attr(b)}", pa, pb)
        return None

    def _sequence(
        self, a: tuple[object, ...], b: tuple[object, ...], path: _Path, pa: object, pb: object, name: str
    ) -> StructuralMismatch | None:
        if len(a) != len(b):
            return StructuralMismatch(str(path), f"field {name}: {len(a)} elements != {len(b)} elements", pa, pb)
        self._push_all(
            [
                self._deferred(x, y, _index_path(path, i), pa, pb, f"{name}[{i}]")
                for i, (x, y) in enumerate(zip(a, b, strict=True))
            ]
        )
        return None

    def _deferred(self, a: object, b: object, path: _Path, pa: object, pb: object, name: str) -> _Task:
        return lambda: self._value(a, b, path, pa, pb, name)

    def _node(self, a: object, b: object, path: _Path) -> StructuralMismatch | None:
        if a is None and b is None:
            return None
        if type(a) is not type(b):
            return StructuralMismatch(str(path), f"class {_class_name(a)} != {_class_name(b)}", a, b)
        if isinstance(a, n.Var):
            assert isinstance(b, n.Var)
            return self._var(a, b, path)
        if isinstance(a, n.Program):
            assert isinstance(b, n.Program)
            return self._program(a, b, path)
        tasks: list[_Task] = []
        for spec in _compared_specs(type(a)):
            va, vb = getattr(a, spec.name), getattr(b, spec.name)
            sub = _field_path(path, spec.name)
            if spec.kind is FieldKind.ATTR:
                tasks.append(self._deferred_attr(va, vb, sub, a, b, spec.name))
            else:
                tasks.append(self._deferred(va, vb, sub, a, b, spec.name))
        self._push_all(tasks)
        return None

    def _deferred_attr(self, a: object, b: object, path: _Path, pa: object, pb: object, name: str) -> _Task:
        """An attribute is compared as a value even when it is a tuple of literals."""

        def check() -> StructuralMismatch | None:
            if type(a) is not type(b) or a != b:
                return StructuralMismatch(str(path), f"field {name}: {_show_attr(a)} != {_show_attr(b)}", pa, pb)
            return None

        return check

    def _var(self, a: n.Var, b: n.Var, path: _Path) -> StructuralMismatch | None:
        """Alpha-equivalence: map on first encounter, then hold both directions to the mapping."""
        mapped_b = self.lhs_to_rhs.get(a.id)
        mapped_a = self.rhs_to_lhs.get(b.id)
        if mapped_b is None and mapped_a is None:
            if self.lhs_defined is not None and a.id != b.id and (
                a.id not in self.lhs_defined or b.id not in self.rhs_defined
            ):
                reason = f"free Vars differ without auto-mapping: lhs {_show_var(a)}, rhs {_show_var(b)}"
                return StructuralMismatch(str(path), reason, a, b)
            self.lhs_to_rhs[a.id] = b
            self.rhs_to_lhs[b.id] = a
            tasks = [self._deferred(a.type, b.type, _field_path(path, "type"), a, b, "type")]
            if isinstance(a, n.IterArg):
                assert isinstance(b, n.IterArg)
                sub = _field_path(path, "init_value")
                tasks.append(self._deferred(a.init_value, b.init_value, sub, a, b, "init_value"))
            self._push_all(tasks)
            return None
        if mapped_b is not None and mapped_b.id == b.id:
            return None
        if mapped_b is not None:
            reason = (
                f"Var mapped to a different Var: lhs {_show_var(a)} was mapped to rhs "
                f"{_show_var(mapped_b)}, but here meets rhs {_show_var(b)}"
            )
        else:
            assert mapped_a is not None
            reason = (
                f"Var mapped to a different Var: rhs {_show_var(b)} was mapped to lhs "
                f"{_show_var(mapped_a)}, but here meets lhs {_show_var(a)}"
            )
        return StructuralMismatch(str(path), reason, a, b)

    def _program(self, a: n.Program, b: n.Program, path: _Path) -> StructuralMismatch | None:
        """Functions compare as a mapping by name, in `a`'s order; their order may differ."""
        fa, fb = a.functions, b.functions

        def names() -> StructuralMismatch | None:
            missing = [name for name in fa if name not in fb]
            extra = [name for name in fb if name not in fa]
            if not missing and not extra:
                return None
            parts = []
            if missing:
                parts.append(f"only lhs defines {missing}")
            if extra:
                parts.append(f"only rhs defines {extra}")
            reason = "functions differ: " + "; ".join(parts)
            return StructuralMismatch(str(_field_path(path, "functions")), reason, list(fa), list(fb))

        tasks: list[_Task] = [names]
        for name in fa:
            if name in fb:
                sub = _field_path(path, f"functions[{name!r}]")
                tasks.append(self._deferred(fa[name], fb[name], sub, a, b, name))
        self._push_all(tasks)
        return None

    def _type(self, a: object, b: object, path: _Path) -> StructuralMismatch | None:
        """Types compare as dataclasses; their shape expressions share the Var bijection."""
        if type(a) is not type(b):
            return StructuralMismatch(str(path), f"class {_class_name(a)} != {_class_name(b)}", a, b)
        assert dataclasses.is_dataclass(a)
        self._push_all(
            [
                self._deferred(
                    getattr(a, f.name), getattr(b, f.name), _field_path(path, f.name), a, b, f.name
                )
                for f in dataclasses.fields(a)
                if f.compare
            ]
        )
        return None


# ---------------------------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------------------------


class _Hasher:
    """Feeds a token stream that mirrors `_Comparator`'s traversal into blake2b."""

    def __init__(self, var_types: bool = True, defined: frozenset[int] | None = None) -> None:
        self.var_index: dict[int, int] = {}
        self.var_types = var_types
        self.defined = defined
        self.digest = hashlib.blake2b(digest_size=8)

    def run(self, root: object) -> int:
        stack: list[object] = [root]
        while stack:
            value = stack.pop()
            children = self._visit(value)
            stack.extend(reversed(children))
        return int.from_bytes(self.digest.digest(), "little", signed=True)

    def _token(self, *parts: object) -> None:
        self.digest.update(("\x1f".join(_token_text(p) for p in parts) + "\x1e").encode())

    def _visit(self, value: object) -> list[object]:
        """Emit the tokens of `value` itself and return its children, in comparison order."""
        if isinstance(value, _Token):
            self._token("attr", value.value)
            return []
        if value is None:
            self._token("none")
            return []
        if isinstance(value, n.Var):
            first = value.id not in self.var_index
            index = self.var_index.setdefault(value.id, len(self.var_index))
            if self.defined is not None and value.id not in self.defined:
                self._token("free", type(value).__name__, value.id)
            else:
                self._token("var", type(value).__name__, index)
            if not first:
                return []
            if isinstance(value, n.IterArg):
                return [value.type, value.init_value] if self.var_types else [value.init_value]
            return [value.type] if self.var_types else []
        if isinstance(value, n.Program):
            self._token("program", tuple(sorted(value.functions)))
            return [value.functions[name] for name in sorted(value.functions)]
        if isinstance(value, n.Node):
            self._token("node", type(value).__name__)
            children: list[object] = []
            for spec in _compared_specs(type(value)):
                field_value = getattr(value, spec.name)
                if spec.kind is FieldKind.ATTR:
                    children.append(_Token(field_value))
                else:
                    children.append(field_value)
            return children
        if isinstance(value, _TYPE_CLASSES):
            self._token("type", type(value).__name__)
            return [getattr(value, f.name) for f in dataclasses.fields(value) if f.compare]
        if isinstance(value, tuple):
            self._token("tuple", len(value))
            return list(value)
        self._token("attr", value)
        return []


@dataclass(frozen=True)
class _Token:
    """An attribute value hashed as one literal, even when it is a tuple."""

    value: object


def _token_text(value: object) -> str:
    """A text form under which values that compare equal coincide (`1 == 1.0`, `0.0 == -0.0`)."""
    if isinstance(value, enum.Enum):
        return f"e:{type(value).__name__}.{value.name}"
    if isinstance(value, (bool, int, float)):
        return f"n:{hash(value)}"  # numeric hashes are unsalted and agree across int/float/bool
    if isinstance(value, str):
        return f"s:{value}"
    if value is None:
        return "N"
    if isinstance(value, tuple):
        return "(" + ",".join(_token_text(v) for v in value) + ")"
    return f"r:{value!r}"
