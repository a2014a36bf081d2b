"""Structural equality and hashing of IR nodes and types, up to renaming of variables.

Pass tests compare a pass's output with a hand-written expected program whose Vars are different
objects with different ids (and often different names), so equality must be alpha-equivalence,
with PyPTO's rules (its `structural_equal` reference):

- The same object is equal to itself at once (PyPTO's fast path, docs/coming-from-pypto.md,
  "Comparing programs"): a node or type met on both sides is not walked and pairs no Vars, so
  `for i: x = i` and `for j: x = i` sharing one body object are equal. A Var is the exception
  (nanopto's choice): it is a reference whose pairing must stay one-to-one, so `x + (x + 1)` and
  `x + (y + 1)` stay unequal under auto-mapping, as PyPTO's "x cannot map to both" rule wants.
- The comparison walks both sides together in pre-order, in field-declaration order, except that
  a defining field whose Vars the fields declared before it read comes first (a `WhileStmt`'s
  carried Vars before its condition, a `ScopeStmt`'s lane Var before its body).
- A Var met first under a *defining* field (an assigned, loop, carried, result or parameter Var,
  PyPTO's DefFields; with its type and an IterArg's initial value) is renamed: the two Vars are
  paired in a bijection that holds every later occurrence to it.
- A Var met first anywhere else is *free* and must be the same Var on both sides, unless
  `enable_auto_mapping=True`, which renames free Vars too (on first encounter, as above).
  PyPTO's default is `False`, and so is ours: two programs parsed apart still compare equal,
  since a program defines every Var it reads.
- Spans, Var names, leading comments, the names of a Program and of a Function (PyPTO declares
  them ignored fields: a `Before` and an `Expected` class compare equal), and fields declared
  `compare=False` (such as `AssignStmt.annotated`) are ignored; everything else is read off
  `schema.fields_of`, so a node added to `nodes.py` is compared without touching this module.
  Inside a program, functions still pair up by name, since calls refer to them by name.
- The attributes of a call or submit (`attr_items`, its `attrs={...}`) compare as a mapping, as
  PyPTO compares them: both sides are read in key order, so the order they were written in does
  not matter, and a Var inside a value is a use under the same Var bijection as everything else
  (a free Var must be the same on both sides, a renamed one its partner). The hash reads them in
  the same key order.
- `structural_hash` follows the same walk: a renamed Var hashes as the index of its first
  occurrence, a free one as its id, so values equal in a mode hash alike in that mode, except
  where the fast path decided. It has no such shortcut: a hash sees one value, not whether the
  other side holds the same object, so the loops above hash apart (as PyPTO's do, and its tests
  ask: they tell `for i` from `for j` by hash and call them equal).

The traversal is an explicit work stack, not recursion, so a deep body (a long `SeqStmts` chain,
a tall expression tree) never hits Python's recursion limit.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.schema import FieldKind, FieldSpec, fields_of

Comparable = n.Node | t.Type
"""What the functions of this module accept: any IR node (Program, Function, Stmt, Expr, ...)
or a Type."""

_TYPE_CLASSES = t.TYPE_DATACLASSES
"""Types, and the parts of a tile type that hold expressions: compared field by field, their
expressions under the same Var bijection as the rest."""

_FRAGMENT_LIMIT = 2000  # characters of a repr fallback kept in an error message

_IGNORED_FIELDS: dict[type, frozenset[str]] = {n.Function: frozenset({"name"})}
"""Fields that are labels, not structure: neither compared nor hashed (Program's name is handled
in `_program`, which compares its functions as a mapping)."""


_MAPPING_FIELDS: frozenset[tuple[type, str]] = frozenset({(n.Call, "attr_items"), (n.Submit, "attr_items")})
"""Fields of Keywords that are a mapping, not a sequence: compared and hashed in key order."""


def _field_value(node: object, name: str) -> Any:
    """A field's value in comparison order: a mapping field's Keywords sorted by key."""
    value = getattr(node, name)
    if value and (type(node), name) in _MAPPING_FIELDS:
        return tuple(sorted(value, key=lambda k: k.name))
    return value


def _compared_specs(cls: type) -> list[FieldSpec]:
    """The fields compared and hashed, in comparison order: declaration order, except that a
    defining field whose Vars the fields declared before it read comes first (`_SCOPING_FIRST`)."""
    ignored = _IGNORED_FIELDS.get(cls, frozenset())
    specs = [spec for spec in _specs(cls) if spec.compared and spec.name not in ignored]
    first = _SCOPING_FIRST.get(cls, ())
    return [s for s in specs if s.name in first] + [s for s in specs if s.name not in first]


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


def structural_equal(a: Comparable, b: Comparable, enable_auto_mapping: bool = False) -> bool:
    """True when `a` and `b` are equal up to spans, names and a consistent Var renaming.

    A Var met first where it is defined (assigned, loop, carried, result and parameter Vars) is
    renamed; a Var met first where it is read is free and must be the same Var on both sides,
    unless `enable_auto_mapping=True`, which renames every Var.
    """
    return first_difference(a, b, enable_auto_mapping) is None


class StructuralMismatchError(AssertionError, ValueError):
    """What `assert_structural_equal` raises: an AssertionError for test runners, and a
    ValueError, as PyPTO's `assert_structural_equal` raises."""


def assert_structural_equal(a: Comparable, b: Comparable, enable_auto_mapping: bool = False) -> None:
    """Raise `StructuralMismatchError` naming the first difference (path, reason, both fragments)."""
    mismatch = first_difference(a, b, enable_auto_mapping)
    if mismatch is not None:
        raise StructuralMismatchError(mismatch.describe())


def first_difference(a: Comparable, b: Comparable, enable_auto_mapping: bool = False) -> StructuralMismatch | None:
    """The first difference in pre-order, comparison order (`_compared_specs`), or None if equal."""
    return _Comparator(enable_auto_mapping).run(a, b)


def structural_hash(node: Comparable, enable_auto_mapping: bool = False, *, var_types: bool = True) -> int:
    """A hash consistent with `structural_equal` in the same mode: equal values hash alike, except
    two values equal only because they share an object under different binders (the fast path).

    Var names are ignored and a renamed Var is hashed as the index of its first occurrence, so
    renamings hash alike; a free Var (without `enable_auto_mapping`) is hashed as itself. Functions of a
    program are hashed in name order, because equality treats them as a mapping. The hash is
    stable across processes (blake2b, no salted `str` hashes). `var_types=False` leaves the Vars'
    types out: an expression is then the same whichever types its Vars were given (a pass may
    derive a Var's type afresh).
    """
    return _Hasher(enable_auto_mapping, var_types).run(node)


_DEFINING_FIELDS: dict[type, frozenset[str]] = {
    n.AssignStmt: frozenset({"var"}),
    n.ForStmt: frozenset({"loop_var", "iter_args", "return_vars"}),
    n.WhileStmt: frozenset({"iter_args", "return_vars"}),
    n.IfStmt: frozenset({"return_vars"}),
    n.ScopeStmt: frozenset({"var"}),
    n.Param: frozenset({"var"}),
}
"""The fields that define Vars: compared with auto-mapping whatever the caller asked (PyPTO's
DefFields), down to the defined Vars' types and an IterArg's initial value."""

_SCOPING_FIRST: dict[type, tuple[str, ...]] = {
    n.WhileStmt: ("iter_args",),  # the condition reads the carried Vars
    n.ScopeStmt: ("var",),  # `for aiv_id in pl.split_aiv(...)`: the body reads the lane Var
}


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
    """One comparison: the Var bijection and a stack of pending checks (popped in pre-order).

    A check carries `bind`: whether it lies under a defining field, where Vars are renamed even
    without auto-mapping."""

    def __init__(self, auto_mapping: bool) -> None:
        self.lhs_to_rhs: dict[int, n.Var] = {}
        self.rhs_to_lhs: dict[int, n.Var] = {}
        self.stack: list[_Task] = []
        self.auto_mapping = auto_mapping

    def run(self, a: object, b: object) -> StructuralMismatch | None:
        self._push_all([self._deferred(a, b, _ROOT, a, b, "", self.auto_mapping)])
        while self.stack:
            mismatch = self.stack.pop()()
            if mismatch is not None:
                return mismatch
        return None

    # Pushing in reverse keeps the pops in comparison order, so the *first* difference wins.
    def _push_all(self, tasks: list[_Task]) -> None:
        self.stack.extend(reversed(tasks))

    def _deferred(self, a: object, b: object, path: _Path, pa: object, pb: object, name: str, bind: bool) -> _Task:
        return lambda: self._value(a, b, path, pa, pb, name, bind)

    def _value(
        self, a: object, b: object, path: _Path, pa: object, pb: object, name: str, bind: bool
    ) -> StructuralMismatch | None:
        """Dispatch on what the values are: node, type, tuple or plain attribute."""
        if isinstance(a, n.Node) or isinstance(b, n.Node):
            return self._node(a, b, path, bind)
        if isinstance(a, _TYPE_CLASSES) or isinstance(b, _TYPE_CLASSES):
            return self._type(a, b, path, bind)
        if isinstance(a, (tuple, n.StmtList)) and isinstance(b, (tuple, n.StmtList)):
            return self._sequence(a, b, path, pa, pb, name, bind)
        return _attr_difference(a, b, path, pa, pb, name)

    def _sequence(
        self, a: Sequence[object], b: Sequence[object], path: _Path, pa: object, pb: object, name: str, bind: bool
    ) -> StructuralMismatch | None:
        if len(a) != len(b):
            return StructuralMismatch(str(path), f"field {name}: {len(a)} elements != {len(b)} elements", pa, pb)
        self._push_all(
            [
                self._deferred(x, y, _index_path(path, i), pa, pb, f"{name}[{i}]", bind)
                for i, (x, y) in enumerate(zip(a, b, strict=True))
            ]
        )
        return None

    def _node(self, a: object, b: object, path: _Path, bind: bool) -> StructuralMismatch | None:
        if a is b and not isinstance(a, n.Var):  # the fast path (module docstring)
            return None
        if type(a) is not type(b):
            return StructuralMismatch(str(path), f"class {_class_name(a)} != {_class_name(b)}", a, b)
        if isinstance(a, n.Var):
            assert isinstance(b, n.Var)
            return self._var(a, b, path, bind)
        if isinstance(a, n.Program):
            assert isinstance(b, n.Program)
            return self._program(a, b, path, bind)
        defining = _DEFINING_FIELDS.get(type(a), frozenset())
        tasks: list[_Task] = []
        for spec in _compared_specs(type(a)):
            va, vb = _field_value(a, spec.name), _field_value(b, spec.name)
            sub = _field_path(path, spec.name)
            if spec.kind is FieldKind.ATTR:
                tasks.append(self._deferred_attr(va, vb, sub, a, b, spec.name))
            else:
                tasks.append(self._deferred(va, vb, sub, a, b, spec.name, bind or spec.name in defining))
        self._push_all(tasks)
        return None

    def _deferred_attr(self, a: object, b: object, path: _Path, pa: object, pb: object, name: str) -> _Task:
        """An attribute is compared as a value even when it is a tuple of literals."""
        return lambda: _attr_difference(a, b, path, pa, pb, name)

    def _var(self, a: n.Var, b: n.Var, path: _Path, bind: bool) -> StructuralMismatch | None:
        """Alpha-equivalence: map on first encounter, then hold both directions to the mapping.

        Without `bind`, a Var neither side has mapped yet is free: it must be the same Var."""
        mapped_b = self.lhs_to_rhs.get(a.id)
        mapped_a = self.rhs_to_lhs.get(b.id)
        if mapped_b is None and mapped_a is None:
            if not bind:
                if a.id == b.id:
                    return None
                reason = f"free Vars differ without auto-mapping: lhs {_show_var(a)}, rhs {_show_var(b)}"
                return StructuralMismatch(str(path), reason, a, b)
            self.lhs_to_rhs[a.id] = b
            self.rhs_to_lhs[b.id] = a
            tasks = [self._deferred(a.type, b.type, _field_path(path, "type"), a, b, "type", bind)]
            if isinstance(a, n.IterArg):
                assert isinstance(b, n.IterArg)
                sub = _field_path(path, "init_value")
                tasks.append(self._deferred(a.init_value, b.init_value, sub, a, b, "init_value", bind))
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

    def _program(self, a: n.Program, b: n.Program, path: _Path, bind: bool) -> StructuralMismatch | None:
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
                tasks.append(self._deferred(fa[name], fb[name], sub, a, b, name, bind))
        self._push_all(tasks)
        return None

    def _type(self, a: object, b: object, path: _Path, bind: bool) -> StructuralMismatch | None:
        """Types compare as dataclasses; their shape expressions share the Var bijection."""
        if a is b:
            return None
        if type(a) is not type(b):
            return StructuralMismatch(str(path), f"class {_class_name(a)} != {_class_name(b)}", a, b)
        fields_b = dict(_type_fields(b))
        self._push_all(
            [
                self._deferred(value, fields_b[name], _field_path(path, name), a, b, name, bind)
                for name, value in _type_fields(a)
            ]
        )
        return None


_DIMENSION_FIELDS = frozenset({"shape", "valid_shape", "stride"})
"""The fields of a type (or a tile view) that are lists of dimensions, printed as a shape is."""


def _type_fields(ty: object) -> list[tuple[str, object]]:
    """A type's compared fields. A constant shape dimension is its integer value: an annotation
    does not spell a dimension's dtype (`pl.Tensor[[64], pl.FP32]`), so two types that print the
    same are the same type (docs/coming-from-pypto.md, "Printing constants, shapes and lists")."""
    assert dataclasses.is_dataclass(ty)
    fields: list[tuple[str, object]] = []
    for f in dataclasses.fields(ty):
        if not f.compare:
            continue
        value = getattr(ty, f.name)
        if f.name in _DIMENSION_FIELDS:
            value = tuple(d.value if type(d) is n.ConstInt else d for d in value)
        fields.append((f.name, value))
    return fields


def _attr_difference(
    a: object, b: object, path: _Path, pa: object, pb: object, name: str
) -> StructuralMismatch | None:
    """Two attribute values differ when their types or values do. Enums are named as PyPTO names
    them in its messages: `ForKind mismatch (Sequential != Parallel)`."""
    if type(a) is type(b) and a == b:
        return None
    if isinstance(a, enum.Enum) and type(a) is type(b):
        assert isinstance(b, enum.Enum)
        reason = f"field {name}: {type(a).__name__} mismatch ({a.name} != {b.name})"
    else:
        reason = f"field {name}: {_show_attr(a)} != {_show_attr(b)}"
    return StructuralMismatch(str(path), reason, pa, pb)


# ---------------------------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------------------------


class _Hasher:
    """Feeds a token stream that mirrors `_Comparator`'s traversal into blake2b; each pending
    value carries the comparator's `bind` (under a defining field, or auto-mapping)."""

    def __init__(self, auto_mapping: bool, var_types: bool = True) -> None:
        self.var_index: dict[int, int] = {}
        self.auto_mapping = auto_mapping
        self.var_types = var_types
        self.digest = hashlib.blake2b(digest_size=8)

    def run(self, root: object) -> int:
        stack: list[tuple[object, bool]] = [(root, self.auto_mapping)]
        while stack:
            value, bind = stack.pop()
            children = self._visit(value, bind)
            stack.extend(reversed(children))
        return int.from_bytes(self.digest.digest(), "little", signed=True)

    def _token(self, *parts: object) -> None:
        self.digest.update(("\x1f".join(_token_text(p) for p in parts) + "\x1e").encode())

    def _visit(self, value: object, bind: bool) -> list[tuple[object, bool]]:
        """Emit the tokens of `value` itself and return its children, in comparison order."""
        if isinstance(value, _Token):
            self._token("attr", value.value)
            return []
        if value is None:
            self._token("none")
            return []
        if isinstance(value, n.Var):
            index = self.var_index.get(value.id)
            if index is not None:
                self._token("var", type(value).__name__, index)
                return []
            if not bind:
                self._token("free", type(value).__name__, value.id)
                return []
            index = self.var_index[value.id] = len(self.var_index)
            self._token("var", type(value).__name__, index)
            children: list[object] = [value.type] if self.var_types else []
            if isinstance(value, n.IterArg):
                children.append(value.init_value)
            return [(child, bind) for child in children]
        if isinstance(value, n.Program):
            self._token("program", tuple(sorted(value.functions)))
            return [(value.functions[name], bind) for name in sorted(value.functions)]
        if isinstance(value, n.Node):
            self._token("node", type(value).__name__)
            defining = _DEFINING_FIELDS.get(type(value), frozenset())
            fields: list[tuple[object, bool]] = []
            for spec in _compared_specs(type(value)):
                field_value = _field_value(value, spec.name)
                if spec.kind is FieldKind.ATTR:
                    fields.append((_Token(field_value), bind))
                else:
                    fields.append((field_value, bind or spec.name in defining))
            return fields
        if isinstance(value, _TYPE_CLASSES):
            self._token("type", type(value).__name__)
            return [(field_value, bind) for _, field_value in _type_fields(value)]
        if isinstance(value, (tuple, n.StmtList)):
            self._token("tuple", len(value))
            return [(item, bind) for item in value]
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
    if isinstance(value, (tuple, n.StmtList)):
        return "(" + ",".join(_token_text(v) for v in value) + ")"
    return f"r:{value!r}"
