"""Hypothesis strategies for `pl` programs with Inline helpers, and for their inputs.

Property-based testing of pass equivalence needs programs that are well typed, small, readable
when they fail and quick to shrink. The strategies here therefore draw a *description* of a
program (`ProgramDesc`: functions, statements and call sites as small frozen dataclasses), render
it to `pl` source text and parse that text with `parse_program`. A failing example is shown as
the printed program (importing this module teaches hypothesis to pretty-print a `Program` with
`python_print`), and hypothesis shrinks the description: fewer helpers, fewer statements, simpler
expressions first.

What `programs()` draws (every tensor is `pl.Tensor[[4], pl.FP32]`, every scalar
`pl.Scalar[pl.INDEX]`, every array `pl.Array[4, pl.INT64]`, so all programs are well typed):

* an entry function `main` (`pl.FunctionType.Opaque`) with In tensors `a`, `b`, an InOut tensor
  `c`, an Out tensor `out`, scalars `k`, `j` and an array `arr`;
* 1-3 Inline helpers `h0`, `h1`, ...; a helper may call only helpers defined before it, so the
  call graph is acyclic. Parameters are tensors (In, Out or InOut), plain scalars and arrays.
  Each helper returns one value or a (tensor, scalar) pair.

Statements exercise every row of the rebinding table (docs/specification.md, "Rebinding a parameter"):
read-only parameters; tensor self-updates `t = pl.tensor.assemble(t, x, [0])` (a full `[4]` window
at `[0]`); other tensor rebindings `t = pl.add(t, t)` and `t = other`; scalar rebindings
`n = n + 1`; array element writes `arr[i] = v` (parsed to `array.update_element`). Any of them may
sit inside `for i in pl.range(2):` loops and `if` / `else` branches in pre-SSA form (no yields).
Call sites take every top-level form: `y = self.h(...)`, `y, m = self.h2(...)`,
`return self.h(...)` and the discarded `self.h(...)`, with variable, constant and computed
arguments (`pl.add(a, b)`, `k + 1`). A helper's returned value is a Var, a scalar expression
without calls, or a single Call (sometimes a writing one, `return pl.tensor.assemble(...)`,
whose evaluation a discarding call site must keep) — never a value that wraps a call, which the
specification (docs/specification.md, "Discarding a return value") rejects at a discarding site. Nested calls inside expressions
are not drawn (hoisting them is a separate pass step).

Names first bound inside a loop or branch body are used only inside that body, so every read is
of a bound name on every path. Values stay small integers and only add / sub / maximum / minimum
are used, so float32 arithmetic is exact and comparisons need no tolerance.

`out_scalars` (on by default) draws explicit `pl.Out[pl.Scalar[...]]` helper parameters (the table's
"explicit Out / InOut scalar" row), whose rebinding the pass writes back to the caller's Var.

`existing_receivers=False` leaves out call sites that assign an already-bound name.

`writing_discards=True` makes every helper return a write into its first parameter and discards
such calls on the caller's InOut `c`: the shape a pass that deletes discarded calls gets wrong.

`inputs_for(program)` draws arguments for `main`: float32 arrays of shape `[4]` holding integers
0..5, ints 0..5 for scalars and int64 arrays for `pl.Array` parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from hypothesis import strategies as st
from hypothesis.vendor import pretty

from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.types import ArrayType, ScalarType, Type

__all__ = [
    "ENTRY",
    "FunctionDesc",
    "ProgramDesc",
    "inputs_for",
    "program_descs",
    "programs",
]

ENTRY = "main"
"""The name of the entry function every drawn program has."""

Kind = Literal["tensor", "scalar", "array"]
Direction = Literal["In", "Out", "InOut"]

_TYPES: dict[Kind, str] = {
    "tensor": "pl.Tensor[[4], pl.FP32]",
    "scalar": "pl.Scalar[pl.INDEX]",
    "array": "pl.Array[4, pl.INT64]",
}
_INDENT = "    "


# ---------------------------------------------------------------------------------------------
# The description: what is drawn, and how it renders to `pl` source
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamDesc:
    name: str
    kind: Kind
    direction: Direction = "In"

    def render(self) -> str:
        ty = _TYPES[self.kind]
        return f"{self.name}: {ty if self.direction == 'In' else f'pl.{self.direction}[{ty}]'}"


@dataclass(frozen=True)
class Line:
    """One simple statement, already in source form (`t = pl.add(t, t)`, `self.h0(a, k)`)."""

    text: str

    def render(self, depth: int) -> list[str]:
        return [_INDENT * depth + self.text]


@dataclass(frozen=True)
class Loop:
    var: str
    body: tuple[Stmt, ...]

    def render(self, depth: int) -> list[str]:
        return [f"{_INDENT * depth}for {self.var} in pl.range(2):", *_render_block(self.body, depth + 1)]


@dataclass(frozen=True)
class Branch:
    cond: str
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()

    def render(self, depth: int) -> list[str]:
        lines = [f"{_INDENT * depth}if {self.cond}:", *_render_block(self.body, depth + 1)]
        if self.orelse:
            lines += [f"{_INDENT * depth}else:", *_render_block(self.orelse, depth + 1)]
        return lines


Stmt = Line | Loop | Branch


def _render_block(stmts: tuple[Stmt, ...], depth: int) -> list[str]:
    lines = [line for s in stmts for line in s.render(depth)]
    return lines or [_INDENT * depth + "pass"]


@dataclass(frozen=True)
class FunctionDesc:
    name: str
    params: tuple[ParamDesc, ...]
    body: tuple[Stmt, ...]
    returns: str
    """The text after `return` (one value, `x, n`, or a call `self.h0(...)`)."""
    result_kinds: tuple[Kind, ...]
    inline: bool = True

    def render(self) -> list[str]:
        kind = "Inline" if self.inline else "Opaque"
        params = ", ".join(["self", *(p.render() for p in self.params)])
        if len(self.result_kinds) == 1:
            result = _TYPES[self.result_kinds[0]]
        else:
            result = f"tuple[{', '.join(_TYPES[k] for k in self.result_kinds)}]"
        return [
            f"{_INDENT}@pl.function(type=pl.FunctionType.{kind})",
            f"{_INDENT}def {self.name}({params}) -> {result}:",
            *(line for s in self.body for line in s.render(2)),
            f"{_INDENT * 2}return {self.returns}",
        ]


@dataclass(frozen=True)
class ProgramDesc:
    helpers: tuple[FunctionDesc, ...]
    main: FunctionDesc

    @property
    def source(self) -> str:
        lines = ["import nanopto.language as pl", "", "", "@pl.program", "class Drawn:"]
        for fn in (*self.helpers, self.main):
            lines += [*fn.render(), ""]
        return "\n".join(lines)

    def program(self) -> Program:
        return parse_program(self.source)

    def __repr__(self) -> str:
        return self.source


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


@dataclass
class _Scope:
    """Names visible at a point of a body, by kind, and the ones a statement may assign."""

    tensors: list[str] = field(default_factory=list)
    scalars: list[str] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)
    readonly: set[str] = field(default_factory=set)

    def nested(self) -> _Scope:
        return _Scope(list(self.tensors), list(self.scalars), list(self.arrays), set(self.readonly))

    def names(self, kind: Kind) -> list[str]:
        return {"tensor": self.tensors, "scalar": self.scalars, "array": self.arrays}[kind]

    def assignable(self, kind: Kind) -> list[str]:
        return [n for n in self.names(kind) if n not in self.readonly]


@dataclass(frozen=True)
class _Options:
    out_scalars: bool
    existing_receivers: bool = True
    max_depth: int = 2
    writing_discards: bool = False


class _Drawer:
    """Draws one function body; `fresh` numbers locals so that no two definitions collide."""

    def __init__(self, draw: st.DrawFn, helpers: tuple[FunctionDesc, ...], options: _Options) -> None:
        self.draw = draw
        self.helpers = helpers
        self.options = options
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, names: list[str]) -> str:
        return self.draw(st.sampled_from(names))

    # -- expressions --------------------------------------------------------------------------

    def tensor_expr(self, scope: _Scope, *, computed: bool | None = None) -> str:
        if computed is None:
            computed = self.draw(st.booleans())
        if not computed:
            return self.pick(scope.tensors)
        op = self.draw(st.sampled_from(["pl.add", "pl.sub", "pl.maximum", "pl.minimum"]))
        return f"{op}({self.pick(scope.tensors)}, {self.pick(scope.tensors)})"

    def scalar_expr(self, scope: _Scope) -> str:
        form = self.draw(st.integers(0, 3))
        if form == 0 or not scope.scalars:
            return str(self.draw(st.integers(0, 3)))
        if form == 1:
            return self.pick(scope.scalars)
        if form == 2:
            return f"{self.pick(scope.scalars)} + 1"
        return f"{self.pick(scope.scalars)} + {self.pick(scope.scalars)}"

    def condition(self, scope: _Scope) -> str:
        op = self.draw(st.sampled_from([">", "<", "=="]))
        return f"{self.scalar_expr(scope)} {op} {self.draw(st.integers(0, 3))}"

    def arg(self, kind: Kind, scope: _Scope) -> str:
        if kind == "tensor":
            return self.tensor_expr(scope)
        if kind == "scalar":
            return self.scalar_expr(scope)
        return self.pick(scope.arrays)

    def callable_helpers(self, scope: _Scope) -> list[FunctionDesc]:
        """Helpers whose arguments can be drawn here (an array argument needs an array in scope)."""
        return [h for h in self.helpers if scope.arrays or all(p.kind != "array" for p in h.params)]

    def call(self, helper: FunctionDesc, scope: _Scope) -> str:
        args = ", ".join(self.arg(p.kind, scope) for p in helper.params)
        return f"self.{helper.name}({args})"

    # -- statements ---------------------------------------------------------------------------

    def block(self, scope: _Scope, depth: int, *, min_size: int = 0, max_size: int = 4) -> tuple[Stmt, ...]:
        size = self.draw(st.integers(min_size, max_size))
        return tuple(self.stmt(scope, depth) for _ in range(size))

    def stmt(self, scope: _Scope, depth: int) -> Stmt:
        kinds = ["tensor-local", "self-update", "rebind-tensor", "rebind-scalar", "array-store"]
        if self.callable_helpers(scope):
            kinds += ["call", "call"]
        if depth < self.options.max_depth:
            kinds += ["loop", "branch"]
        kind = self.draw(st.sampled_from(kinds))
        if kind == "tensor-local":
            name = self.fresh("v")
            text = f"{name} = {self.tensor_expr(scope)}"
            scope.tensors.append(name)
            return Line(text)
        if kind == "self-update":
            t = self.pick(scope.assignable("tensor"))
            return Line(f"{t} = pl.tensor.assemble({t}, {self.tensor_expr(scope)}, [0])")
        if kind == "rebind-tensor":
            t = self.pick(scope.assignable("tensor"))
            form = self.draw(st.integers(0, 2))
            if form == 0:
                return Line(f"{t} = pl.add({t}, {t})")
            if form == 1:
                return Line(f"{t} = {self.pick(scope.tensors)}")
            return Line(f"{t} = {self.tensor_expr(scope, computed=True)}")
        if kind == "rebind-scalar":
            scalars = scope.assignable("scalar")
            if not scalars:
                return Line(f"{self.fresh('s')} = {self.scalar_expr(scope)}")
            n = self.pick(scalars)
            return Line(f"{n} = {n} + 1" if self.draw(st.booleans()) else f"{n} = {self.scalar_expr(scope)}")
        if kind == "array-store":
            if not scope.arrays:
                return Line(f"{self.fresh('v')} = {self.tensor_expr(scope)}")
            loop_vars = sorted(v for v in scope.readonly if v in scope.scalars)
            index = self.draw(st.sampled_from(["0", "1", "3", *loop_vars]))
            return Line(f"{self.pick(scope.arrays)}[{index}] = {self.scalar_expr(scope)}")
        if kind == "loop":
            var = self.fresh("i")
            inner = scope.nested()
            inner.scalars.append(var)
            inner.readonly.add(var)
            return Loop(var, self.block(inner, depth + 1, min_size=1, max_size=3))
        if kind == "branch":
            cond = self.condition(scope)
            body = self.block(scope.nested(), depth + 1, min_size=1, max_size=3)
            orelse = self.block(scope.nested(), depth + 1, max_size=2) if self.draw(st.booleans()) else ()
            return Branch(cond, body, orelse)
        return self.call_site(scope)

    def call_site(self, scope: _Scope) -> Stmt:
        helper = self.draw(st.sampled_from(self.callable_helpers(scope)))
        call = self.call(helper, scope)
        forms = ["assign", "discard", "discard"] + (["assign-existing"] if self.options.existing_receivers else [])
        form = self.draw(st.sampled_from(forms))
        if self.options.writing_discards and helper.returns.startswith("pl.tensor.assemble(") and "c" in scope.tensors:
            # Discard a write into the caller's InOut buffer: deleting it must show in `c`.
            rest = [self.arg(p.kind, scope) for p in helper.params[1:]]
            return Line(f"self.{helper.name}({', '.join(['c', *rest])})")
        if form == "discard":
            return Line(call)
        if len(helper.result_kinds) == 2:
            # Tuple unpack: `y, m = self.h(...)`; receivers may be fresh or existing names.
            receivers = []
            for kind in helper.result_kinds:
                existing = scope.assignable(kind)
                if form == "assign-existing" and existing:
                    receivers.append(self.pick(existing))
                else:
                    receivers.append(self.fresh("y" if kind == "tensor" else "m"))
            if len(set(receivers)) < len(receivers):
                receivers[1] = self.fresh("m")
            for kind, name in zip(helper.result_kinds, receivers, strict=True):
                if name not in scope.names(kind):
                    scope.names(kind).append(name)
            return Line(f"{', '.join(receivers)} = {call}")
        kind = helper.result_kinds[0]
        existing = scope.assignable(kind)
        if form == "assign-existing" and existing:
            return Line(f"{self.pick(existing)} = {call}")
        name = self.fresh("y" if kind == "tensor" else "m")
        scope.names(kind).append(name)
        return Line(f"{name} = {call}")

    def returns(self, scope: _Scope, result_kinds: tuple[Kind, ...]) -> str:
        """What the function returns: Vars, a call-free scalar expression, one Call, or a site."""
        candidates = [h for h in self.callable_helpers(scope) if h.result_kinds == result_kinds]
        # A writing Call is drawn often: it is what a discarding call site must not delete.
        forms = ["var", "assemble", "computed", "site"]
        if self.options.writing_discards:
            forms = ["assemble"]
        form = self.draw(st.sampled_from(forms))
        if form == "site" and candidates:
            return self.call(self.draw(st.sampled_from(candidates)), scope)
        if len(result_kinds) == 2:
            return f"{self.pick(scope.tensors)}, {self.scalar_expr(scope)}"
        if result_kinds == ("scalar",):
            return self.scalar_expr(scope)
        if form == "computed":
            return self.tensor_expr(scope, computed=True)
        if form == "assemble":
            t = scope.tensors[0] if self.options.writing_discards else self.pick(scope.tensors)
            return f"pl.tensor.assemble({t}, {self.tensor_expr(scope)}, [0])"
        return self.pick(scope.tensors)


def _draw_helper(draw: st.DrawFn, index: int, earlier: tuple[FunctionDesc, ...], options: _Options) -> FunctionDesc:
    kinds: list[Kind] = ["tensor", "scalar", "array"]
    n_params = draw(st.integers(1, 4))
    params: list[ParamDesc] = []
    for p in range(n_params):
        kind = draw(st.sampled_from(kinds)) if p > 0 else "tensor"
        direction: Direction = "In"
        if kind == "tensor":
            direction = draw(st.sampled_from(["In", "Out", "InOut"]))
        elif kind == "scalar" and options.out_scalars:
            direction = draw(st.sampled_from(["In", "Out"]))
        params.append(ParamDesc(f"{kind[0]}{p}", kind, direction))
    scope = _Scope()
    for param in params:
        scope.names(param.kind).append(param.name)
    drawer = _Drawer(draw, earlier, options)
    body = drawer.block(scope, 0, max_size=4)
    result_kinds: tuple[Kind, ...] = draw(st.sampled_from([("tensor",), ("tensor", "scalar"), ("scalar",)]))
    if result_kinds != ("tensor",) and not scope.scalars:
        result_kinds = ("tensor",)
    returns = drawer.returns(scope, result_kinds)
    return FunctionDesc(f"h{index}", tuple(params), body, returns, result_kinds)


_MAIN_PARAMS = (
    ParamDesc("a", "tensor"),
    ParamDesc("b", "tensor"),
    ParamDesc("c", "tensor", "InOut"),
    ParamDesc("out", "tensor", "Out"),
    ParamDesc("k", "scalar"),
    ParamDesc("j", "scalar"),
    ParamDesc("arr", "array"),
)


# Make the final values of main's own names observable, so that a pass which wrongly rebinds a
# caller's name (the `bump` example of docs/specification.md) changes an argument buffer.
_OBSERVE = (
    Line("arr[0] = k"),
    Line("arr[1] = j"),
    Line("out = pl.tensor.assemble(out, pl.add(pl.add(a, b), c), [0])"),
)


@st.composite
def _program_descs(
    draw: st.DrawFn, max_helpers: int, out_scalars: bool, existing_receivers: bool, writing_discards: bool = False
) -> ProgramDesc:
    options = _Options(out_scalars, existing_receivers, writing_discards=writing_discards)
    helpers: tuple[FunctionDesc, ...] = ()
    for index in range(draw(st.integers(1, max_helpers))):
        helpers += (_draw_helper(draw, index, helpers, options),)
    scope = _Scope()
    for param in _MAIN_PARAMS:
        scope.names(param.kind).append(param.name)
    drawer = _Drawer(draw, helpers, options)
    # At least one call site in main, so every drawn program gives the pass something to do.
    body = (drawer.call_site(scope), *drawer.block(scope, 0, max_size=4), *_OBSERVE)
    main = FunctionDesc(ENTRY, _MAIN_PARAMS, body, drawer.returns(scope, ("tensor",)), ("tensor",), inline=False)
    return ProgramDesc(helpers, main)


def program_descs(
    *, max_helpers: int = 3, out_scalars: bool = True, existing_receivers: bool = True, writing_discards: bool = False
) -> st.SearchStrategy[ProgramDesc]:
    """Descriptions of programs (see the module docstring); `.source` is the `pl` text."""
    return _program_descs(max_helpers, out_scalars, existing_receivers, writing_discards)


def programs(
    *, max_helpers: int = 3, out_scalars: bool = True, existing_receivers: bool = True, writing_discards: bool = False
) -> st.SearchStrategy[Program]:
    """Well-typed `pl` programs with an Opaque `main` and 1..`max_helpers` Inline helpers.

    `existing_receivers=False` leaves out call sites whose receiver is an already-bound name
    (`t = self.h(t, ...)`, which produces the identity write-back `t = t`)."""
    return program_descs(
        max_helpers=max_helpers,
        out_scalars=out_scalars,
        existing_receivers=existing_receivers,
        writing_discards=writing_discards,
    ).map(ProgramDesc.program)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _value_for(ty: Type) -> st.SearchStrategy[Any]:
    if isinstance(ty, ScalarType):
        return st.integers(0, 5)
    if isinstance(ty, ArrayType):
        return st.lists(st.integers(0, 5), min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.int64))
    return st.lists(st.integers(0, 5), min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.float32))


def inputs_for(program: Program, entry: str = ENTRY) -> st.SearchStrategy[tuple[Any, ...]]:
    """Arguments for `entry`, one per parameter: small-integer float32 tensors of shape [4],
    ints 0..5 for scalars and int64 arrays for `pl.Array` parameters. Arrays are fresh objects;
    copy them before each run that may write through them."""
    fn = program.functions[entry]
    return st.tuples(*(_value_for(p.var.type) for p in fn.params))


# A failing example shows the program as `pl` source, not as a tree of dataclasses.
def _pretty_program(obj: Program, printer: Any, cycle: bool) -> None:
    printer.text(python_print(obj) if not cycle else "Program(...)")


_printers: Callable[..., Any] = pretty.for_type_by_name
def _pretty_desc(obj: ProgramDesc, printer: Any, cycle: bool) -> None:
    printer.text(obj.source)


_printers("nanopto.ir_terms.nodes", "Program", _pretty_program)
_printers(__name__, "ProgramDesc", _pretty_desc)
