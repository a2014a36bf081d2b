"""Body copies made by the decoder: `(Inst template site actuals)` becomes the template's statements
with each formal replaced by its actual and each callee local renamed for the site.

This is the `subst` ruleset (`rules/subst.py`) computed in one linear pass over the template
instead of inside the e-graph, where a copy at every site made up three quarters of the rows (a
5-statement helper at 1,000 sites: 67,041 rows, 17,015 without the copies): `subst-formal`
(a formal becomes its actual), `rename-local` (a local becomes the site's fresh copy, typed by its
substituted type), `rename-iter-arg` (likewise for loop carries, with the init substituted), and the
generated structural rules (everything else is rebuilt around its substituted children). The
actuals themselves are still e-graph terms: the decoder extracts them, so a projected `tmp[i]`
reaches the copy as the value it projects to. `tests/test_instantiate.py` runs both on drawn programs
and requires the same program, names included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.encoding import DecodeError, Decoder, carries_span
from nanopto.ir_terms.schema import FieldKind, fields_of, map_type
from nanopto.passes.call_sites import HelperTemplate


def formal_ids(template: HelperTemplate) -> tuple[int, ...]:
    """The variables the `actuals` of `(At site template pre actuals)` stand for: the parameters
    in order, then the module-level symbols the body mentions."""
    return (*(p.var.id for p in template.function.params), *sorted(template.free_ids))


class Instantiator:
    """The decoder's `instantiate` hook for one stage's templates.

    A template's first copies are made by walking it (`_Copy`); from the `COMPILE_AFTER`-th on,
    by a Python function generated for that template (`compile_template`), which does the same
    steps in the same order without the walk, in about half the time. Generating it costs about
    20 walks, so only a template copied many times (a 10,000-site stage spent half its decode
    time copying bodies) is worth it.
    """

    COMPILE_AFTER = 32

    def __init__(self, templates: Mapping[str, HelperTemplate]) -> None:
        self.templates = templates
        self._uses: dict[str, int] = {}
        self._compiled: dict[str, CompiledCopy] = {}

    def __call__(self, decoder: Decoder, key: str, site: int, actuals: tuple[Any, ...]) -> tuple[n.Stmt, ...]:
        template = self.templates.get(key)
        if template is None:
            raise DecodeError(f"extraction instantiated template '{key}', which the decoder was not given")
        ids = formal_ids(template)
        if len(ids) != len(actuals):
            raise DecodeError(f"site {site}: {len(actuals)} actuals for the {len(ids)} formals of '{key}'")
        copy = _Copy(decoder, site, dict(zip(ids, actuals, strict=True)), template.local_ids)
        compiled = self._compiled.get(key)
        if compiled is None:
            uses = self._uses[key] = self._uses.get(key, 0) + 1
            if uses < self.COMPILE_AFTER:
                return copy.stmts(template.body)
            compiled = self._compiled[key] = compile_template(template.body)
        return compiled(copy)


CompiledCopy = Callable[["_Copy"], tuple[n.Stmt, ...]]


def compile_template(body: tuple[n.Stmt, ...]) -> CompiledCopy:
    """A function making `_Copy(...).stmts(body)` without walking `body`.

    The generated code has one line per distinct node of the body, children before parents, in
    the order `_Copy` visits them, so fresh locals are named in the same order. Variables, loop
    carries and types still go through the `_Copy` (they need its actuals and its renaming); every
    other node becomes one `build(cls, {...})` with its attributes and span as constants.
    """
    constants: list[Any] = []
    lines: list[str] = []
    names: dict[int, str] = {}

    def constant(value: Any) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    def emit(node: Any) -> str:
        known = names.get(id(node))
        if known is not None:
            return known
        if isinstance(node, n.Var):  # formals, locals and loop carries: the copy decides
            code = f"V({constant(node)})"
        else:
            fields, keeps_span = _plan(type(node))
            parts = []
            for field_name, kind in fields:
                value = getattr(node, field_name)
                if kind is FieldKind.NODE:
                    text = emit(value)
                elif kind is FieldKind.OPT_NODE:
                    text = "None" if value is None else emit(value)
                elif kind is FieldKind.NODES:
                    text = "(" + "".join(emit(v) + ", " for v in value) + ")"
                elif kind is FieldKind.TYPE:
                    text = f"T({constant(value)})"
                elif kind is FieldKind.TYPES:
                    text = "(" + "".join(f"T({constant(v)}), " for v in value) + ")"
                else:
                    text = constant(value)
                parts.append(f"{field_name!r}: {text}")
            parts.append(f"'span': {constant(node.span) if keeps_span else 'None'}")
            code = f"build({constant(type(node))}, {{{', '.join(parts)}}})"
        name = names[id(node)] = f"x{len(names)}"
        lines.append(f"    {name} = {code}")
        return name

    results = [emit(stmt) for stmt in body]
    source = "\n".join(
        ["def copy(c):", "    V = c.node", "    T = c.type", *lines, f"    return ({''.join(r + ', ' for r in results)})"]
    )
    namespace: dict[str, Any] = {"K": tuple(constants), "build": n.build}
    # The source is generated from IR field names and constant indices only: no input text.
    exec(compile(source, "<nanopto template copy>", "exec"), namespace)
    compiled: CompiledCopy = namespace["copy"]
    return compiled


_PLANS: dict[type, tuple[tuple[tuple[str, FieldKind], ...], bool]] = {}


def _plan(cls: type) -> tuple[tuple[tuple[str, FieldKind], ...], bool]:
    """The fields of `cls` with their kinds, and whether it keeps its span (cached per class)."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = tuple((spec.name, spec.kind) for spec in fields_of(cls)), carries_span(cls)
        _PLANS[cls] = plan
    return plan


class _Copy:
    """One site's copy of one template."""

    def __init__(self, decoder: Decoder, site: int, actuals: dict[int, Any], local_ids: frozenset[int]) -> None:
        self.decoder = decoder
        self.site = site
        self.actuals = actuals
        self.local_ids = local_ids
        self.memo: dict[int, Any] = {}

    def stmts(self, stmts: tuple[n.Stmt, ...]) -> tuple[n.Stmt, ...]:
        return tuple(self.node(s) for s in stmts)

    def node(self, node: Any) -> Any:
        if type(node) is n.Var:  # the most common node: no memo needed, `fresh_copy` has one
            actual = self.actuals.get(node.id)
            if actual is not None:
                return actual
            made = self.decoder.renamed.get((node.id, self.site))
            if made is not None:
                return made
            if node.id not in self.local_ids:
                raise DecodeError(f"callee variable '{node.name}' is neither a formal nor a local of the template")
            return self.decoder.fresh_copy(node.id, self.site, node.name, lambda: self.type(node.type), None)
        key = id(node)
        done = self.memo.get(key)
        if done is None:
            done = self._node(node)
            self.memo[key] = done
        return done

    def _node(self, node: n.Node) -> Any:
        if isinstance(node, n.IterArg):
            init = node.init_value
            return self.decoder.fresh_copy(
                node.id, self.site, node.name, lambda: self.type(node.type), lambda: self.node(init)
            )
        cls = type(node)
        fields, keeps_span = _plan(cls)
        values: dict[str, Any] = {}
        for name, kind in fields:
            value = getattr(node, name)
            if kind is FieldKind.NODE:
                values[name] = self.node(value)
            elif kind is FieldKind.ATTR:
                values[name] = value
            elif kind is FieldKind.NODES:
                values[name] = tuple([self.node(v) for v in value])
            elif kind is FieldKind.OPT_NODE:
                values[name] = None if value is None else self.node(value)
            elif kind is FieldKind.TYPE:
                values[name] = self.type(value)
            else:
                values[name] = tuple([self.type(v) for v in value])
        values["span"] = node.span if keeps_span else None
        return n.build(cls, values)

    def type(self, ty: t.Type) -> t.Type:
        return map_type(ty, self.node)
