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

`aliasing=True` draws the shapes inlining can get wrong under aliasing and evaluation order
(docs/specification.md, "Meaning under aliasing"): one caller variable passed to several parameters,
also two `pl.Out` scalars of a helper that passes them on to another (one variable at several levels
of nesting), expressions over a variable next to that variable (`k * 2 + 1`, `arr[0] + k`,
`pl.add(a, b)` beside `a`), `pl.Out` scalars given assignable Vars, tuple receivers the call reads
(`k, j = self.h(k, j)`), tuple results read late (after a rebinding of an argument), never, twice,
in a `while` condition or in a `pl.spmd` body, calls nested after an operand (`m = k * 10 +
self.h(k)`), calls in every loop kind (`pl.range`, `pl.parallel`, `pl.unroll`, `while`, a `pl.spmd`
body) with `break` / `continue`, loops carrying a scalar or tensor value (`init_values=`, also
`pl.while_`, with or without a yield) given to parameters of every direction, a `pl.Out` scalar
defined by a branch result, helpers rebinding a tensor parameter to a view of it (`t = t[0:2]`) or
an Array parameter to another array (before every later use; rarely where a later use may see
either, which is refused), and helpers returning a tuple temporary after rebinding one of its
elements or writing in place. Each program gets one trap of the argument kinds and one of the
returned-value kinds (`_TRAPS`); about one program in a hundred is refused, for a documented
hazard (bench/aliasing_soak.py counts them).

`ops`, `constants` and `shapes` steer the drawing toward the pattern a user's rule targets
(`programs(ops=["mul"], constants=[1])` draws `pl.mul(x, 1)` and `k * 1`); left unset, programs
are drawn exactly as without them.

`inputs_for(program)` draws arguments for `main`: float32 arrays of the program's tensor shape
(`[4]` by default) holding integers 0..5, ints 0..5 for scalars and int64 arrays for `pl.Array`
parameters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
from hypothesis import strategies as st
from hypothesis.vendor import pretty

from nanopto.ir_terms.nodes import ConstInt, Program
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.types import ArrayType, ScalarType, TensorType, Type

__all__ = [
    "ENTRY",
    "KNOWN_OPS",
    "TENSOR_OPS",
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


LOOP_KINDS = ("range", "parallel", "unroll", "spmd", "while")
"""The loop kinds `aliasing=True` draws a body in: every counted loop, a `pl.spmd` body (once per
block) and a natural `while` over a counter."""


@dataclass(frozen=True)
class Loop:
    var: str
    body: tuple[Stmt, ...]
    kind: str = "range"

    def render(self, depth: int) -> list[str]:
        pad = _INDENT * depth
        if self.kind == "while":  # the counter first: a `continue` in the body cannot skip it
            head = [f"{pad}{self.var} = 0", f"{pad}while {self.var} < 2:", f"{pad}{_INDENT}{self.var} = {self.var} + 1"]
            return [*head, *(line for s in self.body for line in s.render(depth + 1))]
        return [f"{pad}for {self.var} in pl.{self.kind}(2):", *_render_block(self.body, depth + 1)]


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


@dataclass(frozen=True)
class Lines:
    """Several simple statements drawn together (`t = self.h(k)`, `k = k + 5`, `u = t[0]`)."""

    texts: tuple[str, ...]

    def render(self, depth: int) -> list[str]:
        return [_INDENT * depth + text for text in self.texts]


@dataclass(frozen=True)
class CarriedLoop:
    """`for i, (acc,) in pl.range(2, init_values=(init,)):` ... `result = pl.yield_(acc)` (or
    `pl.yield_(yields)`); `kind` is any counted loop or `while_` (`pl.cond(acc < 12)` first);
    `exit` puts an `if ...: continue` / `break` before the yield; with `result` None the body has
    no yield (pre-SSA: the body's own assignments to `acc` carry it)."""

    var: str
    acc: str
    init: str
    body: tuple[Stmt, ...]
    result: str | None
    yields: str | None = None
    kind: str = "range"
    exit: str | None = None

    def render(self, depth: int) -> list[str]:
        pad, inner = _INDENT * depth, _INDENT * (depth + 1)
        if self.kind == "while_":
            head = [f"{pad}for ({self.acc},) in pl.while_(init_values=({self.init},)):", f"{inner}pl.cond({self.acc} < 12)"]
        else:
            head = [f"{pad}for {self.var}, ({self.acc},) in pl.{self.kind}(2, init_values=({self.init},)):"]
        body = [line for s in self.body for line in s.render(depth + 1)]
        if self.exit is not None:
            test = f"{self.acc} > 7" if self.kind == "while_" else f"{self.var} > 0"
            body += [f"{inner}if {test}:", f"{inner}{_INDENT}{self.exit}"]
        tail = [] if self.result is None else [f"{inner}{self.result} = pl.yield_({self.yields or self.acc})"]
        return [*head, *body, *tail] if body or tail else [*head, f"{inner}pass"]


Stmt = Line | Lines | Loop | Branch | CarriedLoop


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


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
    shape: tuple[int, ...] = (4,)
    """The shape of every tensor of the program (`programs(shapes=...)`)."""

    @property
    def source(self) -> str:
        lines = ["import nanopto.language as pl", "", "", "@pl.program", "class Drawn:"]
        for fn in (*self.helpers, self.main):
            lines += [*fn.render(), ""]
        text = "\n".join(lines)
        if self.shape != (4,):  # every tensor type, and every assemble's whole-window offset
            dims = ", ".join(str(d) for d in self.shape)
            text = text.replace(_TYPES["tensor"], f"pl.Tensor[[{dims}], pl.FP32]")
            text = text.replace(", [0])", f", [{', '.join('0' for _ in self.shape)}])")
        return text

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
    tuples: list[tuple[str, tuple[Kind, ...]]] = field(default_factory=list)
    """Tuple receivers assigned in this very block (a later site may assign one again)."""

    def nested(self) -> _Scope:
        return _Scope(list(self.tensors), list(self.scalars), list(self.arrays), set(self.readonly))

    def names(self, kind: Kind) -> list[str]:
        return {"tensor": self.tensors, "scalar": self.scalars, "array": self.arrays}[kind]

    def assignable(self, kind: Kind) -> list[str]:
        return [n for n in self.names(kind) if n not in self.readonly]


TENSOR_OPS = ("add", "sub", "maximum", "minimum")
"""The element-wise tensor ops drawn by default (exact on small integers in float32)."""

KNOWN_OPS = (*TENSOR_OPS, "mul")
"""What `programs(ops=...)` accepts: each is drawn as `pl.<op>(x, y)` on tensors, and `add`,
`sub`, `mul` also as the scalar operators `+`, `-`, `*`."""

_SCALAR_OPERATORS = {"add": "+", "sub": "-", "mul": "*"}


@dataclass(frozen=True)
class _Options:
    out_scalars: bool
    existing_receivers: bool = True
    max_depth: int = 2
    writing_discards: bool = False
    aliasing: bool = False
    ops: tuple[str, ...] | None = None
    """Tensor ops to draw (`programs(ops=...)`); None: `TENSOR_OPS`, scalars use `+` only."""
    constants: tuple[int, ...] | None = None
    """Integer constants to draw (`programs(constants=...)`); None: 0..3 and `+ 1`."""

    @property
    def scalar_operators(self) -> tuple[str, ...]:
        if self.ops is None:
            return ("+",)
        return tuple(_SCALAR_OPERATORS[o] for o in self.ops if o in _SCALAR_OPERATORS) or ("+",)

    def constant(self, draw: st.DrawFn) -> int:
        return draw(st.integers(0, 3) if self.constants is None else st.sampled_from(self.constants))


class _Drawer:
    """Draws one function body; `fresh` numbers locals so that no two definitions collide."""

    def __init__(self, draw: st.DrawFn, helpers: tuple[FunctionDesc, ...], options: _Options) -> None:
        self.draw = draw
        self.helpers = helpers
        self.options = options
        self.counter = 0
        self.carried: list[str] = []
        """Loop-carried values of the loops being drawn, innermost last."""

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, names: list[str]) -> str:
        return self.draw(st.sampled_from(names))

    # -- expressions --------------------------------------------------------------------------

    def tensor_expr(self, scope: _Scope, *, computed: bool | None = None) -> str:
        if computed is None:
            # Steered (`ops` / `constants` given): mostly an op, so the pattern a rule targets shows.
            steered = self.options.ops is not None or self.options.constants is not None
            computed = self.draw(st.integers(0, 3)) > 0 if steered else self.draw(st.booleans())
        if not computed:
            return self.pick(scope.tensors)
        ops = ["pl.add", "pl.sub", "pl.maximum", "pl.minimum"]
        if self.options.ops is not None:
            ops = [f"pl.{o}" for o in self.options.ops]
        op = self.draw(st.sampled_from(ops))
        first = self.pick(scope.tensors)
        if self.options.constants is not None and self.draw(st.integers(0, 3)) > 0:
            return f"{op}({first}, {self.options.constant(self.draw)})"  # the shape a fold rule targets
        return f"{op}({first}, {self.pick(scope.tensors)})"

    def scalar_expr(self, scope: _Scope) -> str:
        form = self.draw(st.integers(0, 3))
        if form == 0 or not scope.scalars:
            return str(self.options.constant(self.draw))
        if form == 1:
            return self.pick(scope.scalars)
        operator = "+"
        if self.options.ops is not None:
            operator = self.draw(st.sampled_from(self.options.scalar_operators))
        if form == 2:
            constant = 1 if self.options.constants is None else self.options.constant(self.draw)
            return f"{self.pick(scope.scalars)} {operator} {constant}"
        return f"{self.pick(scope.scalars)} {operator} {self.pick(scope.scalars)}"

    def condition(self, scope: _Scope) -> str:
        op = self.draw(st.sampled_from([">", "<", "=="]))
        return f"{self.scalar_expr(scope)} {op} {self.options.constant(self.draw)}"

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
        if not self.options.aliasing:
            args = ", ".join(self.arg(p.kind, scope) for p in helper.params)
            return f"self.{helper.name}({args})"
        used: list[tuple[Kind, str]] = []
        texts: dict[int, str] = {}
        # pl.Out scalars first: the arguments of the others then often read the Var they write.
        order = sorted(range(len(helper.params)), key=lambda i: helper.params[i].direction == "In")
        for i in order:
            param = helper.params[i]
            texts[i] = self.aliasing_arg(param, scope, [name for kind, name in used if kind == param.kind])
            used.append((param.kind, texts[i]))
        return f"self.{helper.name}({', '.join(texts[i] for i in range(len(helper.params)))})"

    def aliasing_arg(self, param: ParamDesc, scope: _Scope, used: list[str]) -> str:
        """An argument that aliases another often: the same Var again, an expression over a Var
        passed next to it, an element of an array; an Out scalar mostly gets an assignable Var."""
        names = [n for n in used if n in scope.names(param.kind)]
        carried = [n for n in self.carried if n in scope.names(param.kind)]
        if carried and self.draw(st.integers(0, 3)) == 0:
            return carried[-1]  # a loop-carried value, whatever the parameter's direction
        if param.kind == "scalar" and param.direction != "In":
            assignable = scope.assignable("scalar") or scope.scalars
            if self.carried and self.carried[-1] in assignable and self.draw(st.booleans()):
                return self.carried[-1]  # the loop-carried value the write-back must land on
            if assignable and self.draw(st.integers(0, 4)) > 0:
                return self.pick(sorted(set(assignable) & set(names)) or assignable)
            return self.scalar_expr(scope)
        form = self.draw(st.integers(0, 3))
        if param.kind == "array":
            return self.pick(names or scope.arrays)
        if param.kind == "tensor" and form == 0:
            return self.pick(scope.tensors)  # a buffer the caller observes
        if form == 0 or not (names or scope.names(param.kind)):
            return self.arg(param.kind, scope)
        base = self.pick(names or scope.names(param.kind))
        if param.kind == "scalar":
            if form == 1:
                return base
            if form == 2 and scope.arrays:
                return f"{self.pick(scope.arrays)}[0] + {base}"
            return f"{base} * 2 + 1"
        if form == 1:
            return base
        return f"pl.add({base}, {self.pick(scope.tensors)})"

    # -- statements ---------------------------------------------------------------------------

    def block(self, scope: _Scope, depth: int, *, min_size: int = 0, max_size: int = 4) -> tuple[Stmt, ...]:
        size = self.draw(st.integers(min_size, max_size))
        return tuple(self.stmt(scope, depth) for _ in range(size))

    def stmt(self, scope: _Scope, depth: int) -> Stmt:
        kinds = ["tensor-local", "self-update", "rebind-tensor", "rebind-scalar", "array-store"]
        if self.callable_helpers(scope):
            kinds += ["call", "call"]
            if self.options.aliasing:
                kinds += ["call", "nested-call", "nested-call"]
        if depth < self.options.max_depth:
            kinds += ["loop", "branch"]
            if self.options.aliasing and scope.scalars:
                kinds += ["carried-loop"]
        kind = self.draw(st.sampled_from(kinds))
        if kind == "nested-call":
            return self.nested_call(scope)
        if kind == "carried-loop":
            var, acc = self.fresh("i"), self.fresh("acc")
            tensor = bool(self.options.aliasing and scope.tensors and self.draw(st.integers(0, 2)) == 0)
            inner = scope.nested()
            inner.names("tensor" if tensor else "scalar").append(acc)
            inner.scalars.append(var)
            inner.readonly.add(var)
            self.carried.append(acc)
            calls = [self.call_site(inner)] if self.callable_helpers(inner) else []
            body = (*calls, *self.block(inner, depth + 1, min_size=1 - len(calls), max_size=2))
            self.carried.pop()
            loop_kind = self.draw(st.sampled_from(["range", "parallel", "unroll"]))
            # break / continue need a sequential innermost loop (pl.range, while).
            exit_ = self.draw(st.sampled_from([None, None, "continue", "break"])) if loop_kind == "range" else None
            if tensor:
                result = self.fresh("y")
                init = self.pick(scope.tensors)
                scope.tensors.append(result)
            else:
                result = self.fresh("r")
                init = self.pick(scope.scalars)
                scope.scalars.append(result)
            return CarriedLoop(var, acc, init, body, result, kind=loop_kind, exit=exit_)
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
            loop_kind = self.draw(st.sampled_from(LOOP_KINDS)) if self.options.aliasing else "range"
            at_entry = inner.nested()  # the names bound on every path to any point of the body
            body = self.block(inner, depth + 1, min_size=1, max_size=3)
            if self.options.aliasing and loop_kind in ("range", "while") and self.draw(st.integers(0, 3)) == 0:
                # `break` / `continue` skip the rest of the body: the back edge still counts.
                exit_ = self.draw(st.sampled_from(["break", "continue"]))
                at = self.draw(st.integers(0, len(body)))
                body = (*body[:at], Branch(self.condition(at_entry), (Line(exit_),)), *body[at:])
            return Loop(var, body, loop_kind)
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
        if len(helper.result_kinds) == 2 and self.options.aliasing and self.draw(st.booleans()):
            return self.tuple_read_late(helper, call, scope)
        if len(helper.result_kinds) == 2:
            # Tuple unpack: `y, m = self.h(...)`; receivers may be fresh or existing names.
            receivers = []
            for kind in helper.result_kinds:
                existing = scope.assignable(kind)
                if self.options.aliasing:  # `k, j = self.swap(k, j)`: receivers the call reads
                    existing = [n for n in existing if _mentions(call, n)] or existing
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

    def tuple_read_late(self, helper: FunctionDesc, call: str, scope: _Scope) -> Stmt:
        """`t = self.h(...)`, then maybe a rebinding of a Var the call read, then each component
        read zero, one or two times."""
        same = [name for name, kinds in scope.tuples if kinds == helper.result_kinds]
        receiver = self.pick(same) if bool(same) and self.draw(st.booleans()) else self.fresh("tup")
        scope.tuples.append((receiver, helper.result_kinds))
        texts = [f"{receiver} = {call}"]
        rebindable = [n for n in scope.assignable("scalar") if _mentions(call, n)]
        if bool(rebindable) and self.draw(st.booleans()):
            n = self.pick(rebindable)
            texts.append(f"{n} = {n} + 5")
        self.read_components(helper, receiver, scope, texts)
        if self.draw(st.booleans()):
            # The same receiver assigned again: each read takes the value of the site before it.
            texts.append(f"{receiver} = {self.call(helper, scope)}")
            self.read_components(helper, receiver, scope, texts)
        return Lines(tuple(texts))

    def read_components(self, helper: FunctionDesc, receiver: str, scope: _Scope, texts: list[str]) -> None:
        for index, kind in enumerate(helper.result_kinds):
            for _ in range(self.draw(st.integers(0, 2))):
                name = self.fresh("y" if kind == "tensor" else "m")
                texts.append(f"{name} = {receiver}[{index}]")
                scope.names(kind).append(name)

    def nested_call(self, scope: _Scope) -> Stmt:
        """A call inside an expression, after an operand that reads what the call may write."""
        single = [h for h in self.callable_helpers(scope) if len(h.result_kinds) == 1]
        if not single:
            return self.call_site(scope)
        helper = self.draw(st.sampled_from(single))
        call = self.call(helper, scope)
        kind = helper.result_kinds[0]
        name = self.fresh("y" if kind == "tensor" else "m")
        if kind == "scalar":
            read = [n for n in scope.scalars if _mentions(call, n)]
            operand = self.pick(read) if bool(read) and self.draw(st.integers(0, 3)) > 0 else self.scalar_expr(scope)
            text = f"{name} = {operand} * 10 + {call}"
        else:
            read = [n for n in scope.tensors if _mentions(call, n)]
            operand = self.pick(read or scope.tensors)
            text = f"{name} = pl.add(pl.add({operand}, {operand}), {call})"
        scope.names(kind).append(name)
        return Line(text)

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
            if self.options.aliasing and self.draw(st.booleans()):
                # A component with an effect: it must happen once, however often it is read.
                t = self.pick(scope.tensors)
                return f"pl.tensor.assemble({t}, pl.add({t}, {self.pick(scope.tensors)}), [0]), {self.scalar_expr(scope)}"
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
    # With aliasing, often a read-only scalar next to a pl.Out scalar: `f(n, m)` called `f(k + 1, k)`.
    pattern: list[tuple[Kind, Direction]] = []
    if options.aliasing and options.out_scalars and draw(st.booleans()):
        pattern = [("tensor", "In"), ("scalar", "In"), ("scalar", "Out")]
        n_params = max(n_params, 3)
    for p in range(n_params):
        if p < len(pattern):
            params.append(ParamDesc(f"{pattern[p][0][0]}{p}", *pattern[p]))
            continue
        kind = draw(st.sampled_from(kinds)) if p > 0 else "tensor"
        direction: Direction = "In"
        if kind == "tensor":
            direction = draw(st.sampled_from(["In", "Out", "InOut"]))
        elif kind == "scalar" and options.out_scalars:
            direction = draw(st.sampled_from(["In", "Out", "Out"] if options.aliasing else ["In", "Out"]))
        params.append(ParamDesc(f"{kind[0]}{p}", kind, direction))
    scope = _Scope()
    for param in params:
        scope.names(param.kind).append(param.name)
    drawer = _Drawer(draw, earlier, options)
    body = (*(_writes_first(draw, params) if options.aliasing else ()), *drawer.block(scope, 0, max_size=4))
    shapes: list[tuple[Kind, ...]] = [("tensor",), ("tensor", "scalar"), ("scalar",)]
    result_kinds: tuple[Kind, ...] = draw(st.sampled_from(shapes + shapes[1:] if options.aliasing else shapes))
    if result_kinds != ("tensor",) and not scope.scalars:
        result_kinds = ("tensor",)
    returns = drawer.returns(scope, result_kinds)
    pair = len(result_kinds) == 2 and not returns.startswith("self.") and scope.assignable("scalar")
    if options.aliasing and pair and draw(st.booleans()):
        # `tmp = (x, n); n = n + 1; return tmp`: the tuple holds the values it was made of.
        n = draw(st.sampled_from(scope.assignable("scalar")))
        body += (Line(f"tmp = ({returns})"), Line(f"{n} = {n} + 1"))
        returns = "tmp"
    return FunctionDesc(f"h{index}", tuple(params), body, returns, result_kinds)


def _writes_first(draw: st.DrawFn, params: list[ParamDesc]) -> tuple[Stmt, ...]:
    """Writes through parameters before the body reads the others: a `pl.Out` scalar's write-back,
    an array element, a tensor self-update."""
    tensors = [p.name for p in params if p.kind == "tensor"]
    lines: list[Stmt] = []
    for param in params:
        if not draw(st.booleans()):
            continue
        if param.kind == "scalar" and param.direction != "In":
            lines.append(Line(f"{param.name} = {param.name} + 3"))
        elif param.kind == "array":
            lines.append(Line(f"{param.name}[0] = 9"))
        elif param.kind == "tensor" and len(tensors) > 1:
            source = draw(st.sampled_from([t for t in tensors if t != param.name]))
            lines.append(Line(f"{param.name} = pl.tensor.assemble({param.name}, {source}, [0])"))
    return tuple(lines)


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


_S, _T = _TYPES["scalar"], _TYPES["tensor"]


_TRAPS = (
    ("out-scalar", "in-place", "view", "shared", "spmd", "carried", "new-array", "hoist"),
    ("temp", "swap", "effect", "condition", "spmd-tuple", "in-place-tuple", "late"),
)
"""The kinds of trap, arguments and operands first, returned values second: a program draws one of
each. Hypothesis draws the ends of a list more often than its middle; the kinds whose old
behaviour shows least often are at the ends."""


def _trap(
    draw: st.DrawFn, name: str, scope: _Scope, drawer: _Drawer, kinds: tuple[str, ...] = _TRAPS[0] + _TRAPS[1]
) -> tuple[tuple[FunctionDesc, ...], tuple[Stmt, ...]]:
    *made, stmts = _trap_helpers(draw, name, scope, drawer, kinds)
    return tuple(cast(FunctionDesc, h) for h in reversed(made)), cast(tuple[Stmt, ...], stmts)


def _trap_helpers(
    draw: st.DrawFn, name: str, scope: _Scope, drawer: _Drawer, kinds: tuple[str, ...]
) -> tuple[Any, ...]:
    """One of the shapes inlining gets wrong under aliasing or evaluation order, with its variations:
    a helper and the statements of `main` that call it (docs/specification.md, "Meaning under aliasing")."""
    kind = draw(st.sampled_from(kinds))
    v = draw(st.sampled_from(scope.assignable("scalar")))
    w = draw(st.sampled_from([n for n in scope.assignable("scalar") if n != v] or [v]))
    c = draw(st.integers(1, 9))

    def new(prefix: str) -> str:
        """A name main binds, made observable (`_observe_all`)."""
        name = drawer.fresh(prefix)
        scope.names("tensor" if prefix == "y" else "scalar").append(name)
        return name

    out = f"{name}(self, m: pl.Out[{_S}]) -> {_S}"
    if kind == "out-scalar":  # the write-back changes an argument read after it
        arg = draw(st.sampled_from([v, f"{v} + 1", f"{v} * 2"]))
        body = [f"m = m + {c}", "r = n + m"]
        form = draw(st.integers(0, 2))
        if form == 1:  # a loop reads `n` again after the write
            body = ["for i in pl.range(2):", "    m = m + n", "r = n + m"]
        elif form == 2:  # so does a `pl.spmd` body, once per block, though `n` is read only before the write in it
            body = ["for blk in pl.spmd(2):", f"    m = m + n + {c}", "r = m"]
        helper = _helper(f"{name}(self, n: {_S}, m: pl.Out[{_S}]) -> {_S}", body, "r", ("scalar",))
        return helper, (Line(f"{new('m')} = self.{name}({arg}, {v})"),)
    if kind == "in-place":  # an in-place write changes an expression argument
        if draw(st.booleans()):
            helper = _helper(f"{name}(self, xs: {_TYPES['array']}, n: {_S}) -> {_S}", [f"xs[0] = {c}"], "n", ("scalar",))
            return helper, (Line(f"{new('m')} = self.{name}(arr, arr[0] + {v})"),)
        sig = f"{name}(self, t: {_T}, x: {_T}, y: {_T}) -> {_T}"
        helper = _helper(sig, ["t = pl.tensor.assemble(t, y, [0])"], "x", ("tensor",))
        return helper, (Line(f"{new('y')} = self.{name}(c, pl.add(c, b), a)"),)
    if kind == "view":  # a view of a parameter is a new value, not a self-update of it
        sig = f"{name}(self, t: {_T}) -> pl.Tensor[[2], pl.FP32]"
        helper = _helper(sig, ["t = t[0:2]"], "t", ("tensor",))  # a [2] view: no other site calls it
        return helper, (Line(f"{drawer.fresh('v')} = self.{name}(a)"),)
    if kind == "new-array":  # an Array parameter rebound to another array
        sig = f"{name}(self, xs: {_TYPES['array']}, n: {_S}) -> {_S}"
        form = draw(st.integers(0, 7))
        if form == 0:  # rebound in a branch, used after it: either array (refused)
            body = ["if n > 2:", "    xs = pl.array.create(4, pl.INT64)", f"xs[0] = {c}"]
        elif form <= 3:  # rebound in straight-line code: a local from there on
            body = ["xs[1] = n", "xs = pl.array.create(4, pl.INT64)", f"xs[0] = n + {c}", "n = xs[0] + xs[1]"]
        else:  # rebound and used only inside its block
            body = ["xs[1] = n", "if n > 1:", "    xs = pl.array.create(4, pl.INT64)", f"    xs[0] = {c}", "    n = n + xs[0]"]
        returns = "xs[0]" if form == 0 else "n"
        helper = _helper(sig, body, returns, ("scalar",))
        return helper, (Line(f"{new('m')} = self.{name}(arr, {v})"),)
    if kind == "shared":  # two pl.Out scalars given one variable, through a nested helper
        inner = _helper(
            f"{name}_g(self, x: {_S}, y: pl.Out[{_S}]) -> {_S}", [f"y = y + {c}", "r = x + y"], "r", ("scalar",)
        )
        body = [f"r = self.{name}_g(q, p)" if draw(st.booleans()) else f"r = q * 10 + self.{name}_g(p, p)"]
        helper = _helper(f"{name}(self, p: pl.Out[{_S}], q: pl.Out[{_S}]) -> {_S}", body, "r", ("scalar",))
        if draw(st.booleans()):
            return helper, inner, (Line(f"{new('m')} = self.{name}({v}, {v})"),)
        i, acc, res, m = drawer.fresh("i"), drawer.fresh("acc"), new("m"), drawer.fresh("m")
        body_stmts = (Line(f"{m} = self.{name}({acc}, {acc})"),)
        return helper, inner, (CarriedLoop(i, acc, v, body_stmts, res, yields=f"{acc} + {m}"),)  # `m` observed
    if kind == "spmd":  # a pl.spmd body runs once per block: a write late in it precedes a read early in it
        sig = f"{name}(self, n: {_S}, m: pl.Out[{_S}], xs: {_TYPES['array']}) -> {_S}"
        body = ["for blk in pl.spmd(2):", "    xs[blk] = n", f"    m = m + {c}"]
        helper = _helper(sig, body, "m", ("scalar",))
        arg = draw(st.sampled_from([v, f"{v} + 1", f"{v} * 2"]))
        # Read right away: `_OBSERVE` overwrites arr[0] and arr[1] at the end of main.
        return helper, (Line(f"{new('m')} = self.{name}({arg}, {v}, arr)"), Line(f"{new('m')} = arr[1]"))
    if kind == "condition":  # a tuple component read in a while condition, its argument rebound in the body
        helper = _helper(f"{name}(self, n: {_S}) -> tuple[{_S}, {_S}]", [], "n, n + 1", ("scalar", "scalar"))
        t, w = drawer.fresh("tup"), new("m")
        texts = [f"{t} = self.{name}({v})", f"{w} = 0", f"while {w} < {t}[{draw(st.integers(0, 1))}]:"]
        texts += [f"    {v} = {v} + 1", f"    {w} = {w} + 1"]
        return helper, (Lines(tuple(texts)),)
    if kind == "spmd-tuple":  # a tuple component read in a pl.spmd body that rebinds its argument
        helper = _helper(f"{name}(self, n: {_S}) -> tuple[{_S}, {_S}]", [], "n, n + 1", ("scalar", "scalar"))
        t = drawer.fresh("tup")
        texts = [f"{t} = self.{name}({v})", "for blk in pl.spmd(2):", f"    arr[blk] = arr[blk] + {t}[0]"]
        texts += [f"    {v} = {v} + {c}", f"{new('m')} = arr[1]"]  # read before `_OBSERVE` overwrites it
        return helper, (Lines(tuple(texts)),)
    if kind == "in-place-tuple":  # a tuple temporary, then an in-place write (not a rebinding of a handle)
        sig = f"{name}(self, o: pl.InOut[{_T}], x: {_T}) -> tuple[{_T}, {_T}]"
        body = ["tmp = (x, pl.add(x, x))", "o = pl.tensor.assemble(o, pl.add(o, x), [0])"]
        helper = _helper(sig, body, "tmp", ("tensor", "tensor"))
        return helper, (Line(f"{new('y')}, {new('y')} = self.{name}(c, c)"),)
    if kind == "hoist":  # an operand evaluated before a nested call that changes it
        helper = _helper(out, [f"m = m + {c}"], "m", ("scalar",))
        return helper, (Line(f"{new('m')} = {v} * 10 + self.{name}({v})"),)
    if kind == "swap":  # receivers the call reads
        helper = _helper(f"{name}(self, x: {_S}, y: {_S}) -> tuple[{_S}, {_S}]", [], "y, x", ("scalar", "scalar"))
        return helper, (Line(f"{v}, {w} = self.{name}({v}, {w})"),)
    if kind in ("late", "temp"):  # a component read after a rebinding; a tuple temporary
        sig = f"{name}(self, n: {_S}) -> tuple[{_S}, {_S}]"
        if kind == "temp":
            helper = _helper(sig, ["tmp = (n, n + 1)", f"n = n + {c}"], "tmp", ("scalar", "scalar"))
        else:
            helper = _helper(sig, [], "n, n + 1", ("scalar", "scalar"))
        t = drawer.fresh("tup")
        if kind == "late":
            # The argument rebound before the read, and the same receiver assigned again by a
            # second site given the rebound argument: whatever the inputs, a read taking the value
            # from after the rebinding, or the other site's value, shows.
            texts = [f"{t} = self.{name}({v})", f"{v} = {v} + {c}", f"{new('m')} = {t}[0]", f"{t} = self.{name}({v})"]
            texts.append(f"{new('m')} = {t}[{draw(st.integers(0, 1))}]")
        else:  # the argument rebound before the read
            texts = [f"{t} = self.{name}({v})", f"{v} = {c}", f"{new('m')} = {t}[0]"]
        return helper, (Lines(tuple(texts)),)
    if kind == "effect":  # a component with an effect, read never or twice
        sig = f"{name}(self, o: pl.InOut[{_T}], x: {_T}) -> tuple[{_T}, {_T}]"
        helper = _helper(sig, [], "x, pl.tensor.assemble(o, pl.add(o, x), [0])", ("tensor", "tensor"))
        t = drawer.fresh("tup")
        reads = [f"{new('y')} = {t}[{i}]" for i in draw(st.sampled_from([[0], [1, 1], [0, 1]]))]
        return helper, (Lines((f"{t} = self.{name}(c, a)", *reads)),)
    # A loop-carried value given to a pl.Out scalar, in every loop kind, read again after the call or
    # not, with `continue` / `break`, with or without a yield; the helper defines the parameter by an
    # assignment, or by a branch's result (which the splice must not leave on the loop's name).
    if draw(st.booleans()):
        helper = _helper(out, [f"m = m + {c}"], "m", ("scalar",))
    else:
        helper = _helper(out, ["if m > 3:", f"    m = pl.yield_(m + {c})", "else:", "    m = pl.yield_(m + 1)"], "m", ("scalar",))
    i, acc, r, res = drawer.fresh("i"), drawer.fresh("acc"), drawer.fresh("m"), new("m")
    loop_kind = draw(st.sampled_from(["range", "parallel", "unroll", "while_"]))
    exit_ = draw(st.sampled_from([None, "continue", "break"])) if loop_kind in ("range", "while_") else None
    form = draw(st.integers(0, 3))
    if form == 0:  # pre-SSA: the write-back alone carries the value, observed in the array
        index = "0" if loop_kind == "while_" else i
        loop_body: tuple[Stmt, ...] = (Line(f"arr[{index}] = arr[{index}] + {acc}"), Line(f"self.{name}({acc})"))
        return helper, (CarriedLoop(i, acc, v, loop_body, None, kind=loop_kind, exit=exit_), Line(f"{res} = {v}"))
    if form == 1:
        loop_body = (Line(f"{r} = self.{name}({acc})"), Line(f"{acc} = {acc} + {r}"))
        return helper, (CarriedLoop(i, acc, v, loop_body, res, kind=loop_kind, exit=exit_),)
    if form == 2:  # the yield reads the value after the call
        loop_body = (Line(f"{r} = self.{name}({acc})"),)
        return helper, (CarriedLoop(i, acc, v, loop_body, res, kind=loop_kind, exit=exit_),)
    step = drawer.fresh("m")
    loop_body = (Line(f"{r} = self.{name}({acc})"), Line(f"{step} = {r} + 1"))
    return helper, (CarriedLoop(i, acc, v, loop_body, res, yields=step, kind=loop_kind, exit=exit_),)


def _helper(signature: str, body: list[str], returns: str, result_kinds: tuple[Kind, ...]) -> FunctionDesc:
    """A helper written out (`_trap`): `signature` is `name(self, ...) -> type`."""
    return _Written(signature.split("(")[0], (), tuple(Line(b) for b in body), returns, result_kinds, signature=signature)


@dataclass(frozen=True)
class _Written(FunctionDesc):
    signature: str = ""

    def render(self) -> list[str]:
        return [
            f"{_INDENT}@pl.function(type=pl.FunctionType.Inline)",
            f"{_INDENT}def {self.signature}:",
            *(line for s in self.body for line in s.render(2)),
            f"{_INDENT * 2}return {self.returns}",
        ]


def _observe_all(scope: _Scope) -> tuple[Stmt, ...]:
    """Make every scalar and tensor main binds observable: a wrong value read inside a helper only
    shows if it reaches a buffer."""
    total = " + ".join(scope.scalars)
    tensors = scope.tensors[0]
    for name in scope.tensors[1:]:
        tensors = f"pl.add({tensors}, {name})"
    return (Line(f"arr[2] = {total}"), Line(f"c = pl.tensor.assemble(c, {tensors}, [0])"))


@st.composite
def _program_descs(
    draw: st.DrawFn,
    max_helpers: int,
    out_scalars: bool,
    existing_receivers: bool,
    writing_discards: bool = False,
    aliasing: bool = False,
    ops: tuple[str, ...] | None = None,
    constants: tuple[int, ...] | None = None,
    shapes: tuple[tuple[int, ...], ...] | None = None,
) -> ProgramDesc:
    options = _Options(
        out_scalars, existing_receivers, writing_discards=writing_discards, aliasing=aliasing, ops=ops, constants=constants
    )
    helpers: tuple[FunctionDesc, ...] = ()
    for index in range(draw(st.integers(1, max_helpers))):
        helpers += (_draw_helper(draw, index, helpers, options),)
    scope = _Scope()
    for param in _MAIN_PARAMS:
        scope.names(param.kind).append(param.name)
    drawer = _Drawer(draw, helpers, options)
    # At least one call site in main, so every drawn program gives the pass something to do.
    first = drawer.call_site(scope)
    traps: tuple[Stmt, ...] = ()
    if aliasing:
        for kinds in _TRAPS:
            made, stmts = _trap(draw, f"h{len(helpers)}", scope, drawer, kinds)
            helpers += made
            traps += stmts
    body = (first, *traps, *drawer.block(scope, 0, max_size=4), *_OBSERVE)
    if aliasing:
        body += _observe_all(scope)
    main = FunctionDesc(ENTRY, _MAIN_PARAMS, body, drawer.returns(scope, ("tensor",)), ("tensor",), inline=False)
    shape = (4,) if shapes is None else draw(st.sampled_from(shapes))
    return ProgramDesc(helpers, main, shape)


def _checked_knobs(
    ops: Sequence[str] | None, constants: Sequence[int] | None, shapes: Sequence[Sequence[int]] | None
) -> tuple[tuple[str, ...] | None, tuple[int, ...] | None, tuple[tuple[int, ...], ...] | None]:
    """The knobs as tuples; a value the drawing cannot use is a ValueError saying what can be."""
    if ops is not None:
        ops = tuple(ops)
        unknown = [o for o in ops if o not in KNOWN_OPS]
        if not ops or unknown:
            raise ValueError(f"programs(ops=...) takes a non-empty list of {', '.join(KNOWN_OPS)}; got {list(ops)!r}")
    if constants is not None:
        constants = tuple(constants)
        if not constants or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 9 for c in constants):
            raise ValueError(f"programs(constants=...) takes a non-empty list of integers 0..9; got {list(constants)!r}")
    if shapes is not None:
        shapes = tuple(tuple(shape) for shape in shapes)
        if not shapes or not all(
            1 <= len(shape) <= 3 and all(isinstance(d, int) and 1 <= d <= 8 for d in shape) for shape in shapes
        ):
            raise ValueError(f"programs(shapes=...) takes a non-empty list of shapes of 1-3 dimensions 1..8; got {shapes!r}")
    return ops, constants, shapes  # type: ignore[return-value]


def program_descs(
    *,
    max_helpers: int = 3,
    out_scalars: bool = True,
    existing_receivers: bool = True,
    writing_discards: bool = False,
    aliasing: bool = False,
    ops: Sequence[str] | None = None,
    constants: Sequence[int] | None = None,
    shapes: Sequence[Sequence[int]] | None = None,
) -> st.SearchStrategy[ProgramDesc]:
    """Descriptions of programs (see the module docstring); `.source` is the `pl` text."""
    knobs = _checked_knobs(ops, constants, shapes)
    return _program_descs(max_helpers, out_scalars, existing_receivers, writing_discards, aliasing, *knobs)


def programs(
    *,
    max_helpers: int = 3,
    out_scalars: bool = True,
    existing_receivers: bool = True,
    writing_discards: bool = False,
    aliasing: bool = False,
    ops: Sequence[str] | None = None,
    constants: Sequence[int] | None = None,
    shapes: Sequence[Sequence[int]] | None = None,
) -> st.SearchStrategy[Program]:
    """Well-typed `pl` programs with an Opaque `main` and 1..`max_helpers` Inline helpers.

    `existing_receivers=False` leaves out call sites whose receiver is an already-bound name
    (`t = self.h(t, ...)`, which produces the identity write-back `t = t`).

    Steer the drawing toward the pattern a rule of yours targets (the defaults draw as before):

    * `ops`: the tensor ops drawn, from `KNOWN_OPS` (`["mul"]` draws `pl.mul(x, y)`); `add`,
      `sub` and `mul` also become the scalar operators `+`, `-`, `*` (`k * j`);
    * `constants`: the integer constants drawn (0..9), also as the second operand of a tensor op
      (`pl.mul(x, 1)`) and of a scalar one (`k * 1`);
    * `shapes`: the tensor shapes drawn, one per program (`[(2, 3)]`; default `[4]`);
      `inputs_for` follows the program's shape.

    `programs(ops=["mul"], constants=[1])` draws a `pl.mul(x, 1)` or `k * 1` in most programs."""
    return program_descs(
        max_helpers=max_helpers,
        out_scalars=out_scalars,
        existing_receivers=existing_receivers,
        writing_discards=writing_discards,
        aliasing=aliasing,
        ops=ops,
        constants=constants,
        shapes=shapes,
    ).map(ProgramDesc.program)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def _value_for(ty: Type) -> st.SearchStrategy[Any]:
    if isinstance(ty, ScalarType):
        return st.integers(0, 5)
    if isinstance(ty, ArrayType):
        return st.lists(st.integers(0, 5), min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.int64))
    dims = tuple(d.value for d in ty.shape if isinstance(d, ConstInt)) if isinstance(ty, TensorType) else (4,)
    if dims == (4,):
        return st.lists(st.integers(0, 5), min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.float32))
    size = int(np.prod(dims))
    return st.lists(st.integers(0, 5), min_size=size, max_size=size).map(
        lambda v: np.array(v, dtype=np.float32).reshape(dims)
    )


def inputs_for(program: Program, entry: str = ENTRY) -> st.SearchStrategy[tuple[Any, ...]]:
    """Arguments for `entry`, one per parameter: small-integer float32 tensors of shape [4],
    ints 0..5 for scalars and int64 arrays for `pl.Array` parameters. Arrays are fresh objects;
    copy them before each run that may write through them."""
    fn = program.functions[entry]
    return st.tuples(*(_value_for(p.var.type) for p in fn.param_list))


# A failing example shows the program as `pl` source, not as a tree of dataclasses.
def _pretty_program(obj: Program, printer: Any, cycle: bool) -> None:
    printer.text(python_print(obj) if not cycle else "Program(...)")


_printers: Callable[..., Any] = pretty.for_type_by_name
def _pretty_desc(obj: ProgramDesc, printer: Any, cycle: bool) -> None:
    printer.text(obj.source)


_printers("nanopto.ir_terms.nodes", "Program", _pretty_program)
_printers(__name__, "ProgramDesc", _pretty_desc)
