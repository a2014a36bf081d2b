"""The `infer-tile-memory-space` pass: every tile of an InCore function gets its memory space.

docs/architecture.md#infer-tile-memory-space. Each InCore (and AIC / AIV) function goes through four
phases; every other function is returned as it is.

0. *Demand*: each operand an op constrains (`nanopto.ir_terms.op_memory`) is demanded in the
   op's preferred space; a demand flows back through view ops (`tile.slice`, `tile.reshape`, ...)
   to the tile they view, in one reverse sweep (a view is defined after what it views). When two
   demands meet, one other than `Vec` wins: `Vec` is what asks nothing special.
1. *Resolution*, forward in program order: a fixed-output op gives its space (`matmul` -> `Acc`),
   a `target_memory=` keyword is honoured as written, a retargetable producer without one
   (`tile.load`, `tile.create`) takes the demand if it is `Vec` or `Mat` (a load from memory can
   reach no other space directly), a view its operand's space, `y = x` and `c = (a, b)[0]` the
   space of what they name, anything else `Vec`. Loops carry:
   an iter arg starts in its initial value's space, and after the body the yielded space is forced
   onto the result, the iter arg and the initial value (an accumulator created in `Vec` that the
   body fills from a `matmul` is `Acc` throughout). An `if`'s result takes the space its branches
   yield when they agree.
2. *Moves*: an operand whose space its op does not allow needs a `tile.move` to the op's
   preferred space.
3. *Rewrite*: each tile Var whose space changes is replaced by a fresh Var of the new type, with
   every use (iter args rebuilt with their new initial value, so a loop's carried Vars stay
   paired); each needed move is inserted just before its first consumer in the block (and reused
   by later consumers in it and in nested blocks, never by a sibling branch); a retargetable
   producer's `target_memory=` is written to match the space chosen.

PyPTO's fifth phase, keeping loop-invariant `Mat` operands resident across a loop, is not done
here: it is an optimisation that needs caller provenance nanopto does not model.

It is Python rather than rules: it is an analysis (a forward dataflow over the statement tree and a
backward demand sweep) followed by a retyping, not one of the rewrite families the rules express
(inlining, substitution, tuple projection); its tests are in
`tests/passes/test_infer_tile_memory_space.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from nanopto.ir_terms.dtypes import MemorySpace, symbol_of_enum
from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    Keyword,
    MakeTuple,
    Program,
    SeqStmts,
    Stmt,
    Symbol,
    TupleGetItemExpr,
    Var,
    WhileStmt,
    YieldStmt,
    keyword_value,
)
from nanopto.ir_terms.op_memory import MemorySpec, memory_spec, retyped, target_memory
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import Mutator, stmt_children, walk_stmts
from nanopto.ir_terms.types import TensorType, TileLayout, TileType, TupleType
from nanopto.passes.pass_base import Pass
from nanopto.passes.registry import register_pass
from nanopto.verify.diagnostics import Diagnostic, Severity
from nanopto.verify.properties import IRProperty, VerifyContext, register_verifier

TILE_FUNCTIONS = frozenset({FunctionType.InCore, FunctionType.AIC, FunctionType.AIV})
"""The functions whose tiles the pass places; every other function passes through unchanged."""

MoveKey = tuple[int, MemorySpace]
"""A needed move: the id of the Var moved, and the space it is moved to."""


def _op_call(expr: Expr) -> tuple[Call, MemorySpec | None] | None:
    """`expr` as a call of a builtin op, with its memory spec; None for anything else."""
    if isinstance(expr, Call) and not expr.function:
        return expr, memory_spec(expr.op)
    return None


def _stronger(existing: MemorySpace | None, incoming: MemorySpace) -> bool:
    """Whether demand `incoming` replaces `existing`: any demand beats none, and beats `Vec`."""
    return existing is None or (existing is MemorySpace.Vec and incoming is not MemorySpace.Vec)


def _call_of(stmt: Stmt) -> Call | None:
    value = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr if isinstance(stmt, EvalStmt) else None
    return value if isinstance(value, Call) and not value.function else None


def _constrained_calls(body: Stmt) -> Iterator[tuple[Stmt, Call, MemorySpec]]:
    """Every statement of `body` whose op call has a memory spec, with the call and the spec."""
    for stmt in walk_stmts(body):
        call = _call_of(stmt)
        spec = memory_spec(call.op) if call is not None else None
        if call is not None and spec is not None:
            yield stmt, call, spec


def _constrained_operands(call: Call, spec: MemorySpec) -> Iterator[tuple[Var, tuple[MemorySpace, ...]]]:
    """The Var operands of `call` whose slot `spec` constrains, with the spaces allowed there
    (the first is where a move takes an operand)."""
    for i, arg in enumerate(call.args):
        allowed = spec.allowed(i)
        if allowed and isinstance(arg, Var):
            yield arg, allowed


def _last_yield(body: Stmt | None) -> YieldStmt | None:
    """The yield that ends a block (the values a loop or an `if` branch hands on)."""
    while isinstance(body, SeqStmts):
        if not body.stmts:
            return None
        body = body.stmts[-1]
    return body if isinstance(body, YieldStmt) else None


# ---------------------------------------------------------------------------------------------
# Phase 0: demand
# ---------------------------------------------------------------------------------------------


def collect_demands(body: Stmt) -> dict[int, MemorySpace]:
    """The space each Var is demanded in by the ops that read it, pushed back through views."""
    demands: dict[int, MemorySpace] = {}
    edges: list[tuple[int, int]] = []  # (view, viewed), in program order

    def demand(var_id: int, space: MemorySpace) -> None:
        if _stronger(demands.get(var_id), space):
            demands[var_id] = space

    for stmt, call, spec in _constrained_calls(body):
        for arg, allowed in _constrained_operands(call, spec):
            demand(arg.id, allowed[0])
        if spec.inherits_input and isinstance(stmt, AssignStmt):
            source = next((a for a in call.args if isinstance(a, Var) and isinstance(a.type, (TileType, TensorType))), None)
            if source is not None:
                edges.append((stmt.var.id, source.id))
    for view, viewed in reversed(edges):
        if view in demands:
            demand(viewed, demands[view])
    return demands


# ---------------------------------------------------------------------------------------------
# Phase 1: resolution
# ---------------------------------------------------------------------------------------------


class _Resolver:
    """Phase 1: the memory space of every tile Var it can place, by Var id."""

    def __init__(self, demands: dict[int, MemorySpace]) -> None:
        self.demands = demands
        self.spaces: dict[int, MemorySpace] = {}
        self.tuples: dict[int, MakeTuple] = {}
        """Vars bound to a tuple written out, `p = (a, b)`: what `p[0]` reads."""

    def block(self, stmt: Stmt | None) -> None:
        if stmt is None:
            return
        match stmt:
            case AssignStmt(var=var, value=value) if isinstance(var.type, TileType):
                space = self.produced(var, value)
                if space is not None:
                    self.spaces[var.id] = space
            case AssignStmt(var=var, value=MakeTuple() as elements):
                self.tuples[var.id] = elements
            case ForStmt() | WhileStmt():
                self.loop(stmt)
            case IfStmt():
                self.block(stmt.then_body)
                self.block(stmt.else_body)
                self.phis(stmt)
            case _:
                for child in stmt_children(stmt):
                    self.block(child)

    def space_of(self, expr: Expr) -> MemorySpace | None:
        """What is known of a Var's space: resolved here, else the space its type names."""
        if not isinstance(expr, Var):
            return None
        known = self.spaces.get(expr.id)
        if known is None and isinstance(expr.type, TileType):
            known = expr.type.memory_space
        return known

    def produced(self, var: Var, value: Expr) -> MemorySpace | None:
        if isinstance(value, Var):  # `y = x`: the same value, the same space
            return self.space_of(value)
        if isinstance(value, TupleGetItemExpr):  # `c = p[0]` of `p = (a, b)`: a's space
            element = self.element(value)
            return self.space_of(element) if element is not None else _named_space(value)
        found = _op_call(value)
        if found is None:
            return MemorySpace.Vec if isinstance(value, Call) else _named_space(value)
        call, spec = found
        if spec is None:
            if OPS.lookup(call.op) is None:
                return MemorySpace.Vec
            result = call.type
            named = result.memory_space if isinstance(result, TileType) else None
            return named if named is not None and named is not MemorySpace.DDR else MemorySpace.Vec
        if spec.output is not None:
            return spec.output
        if spec.from_kwarg:
            written = _kwarg_space(call)
            if written is not None:
                return written
            if spec.kwarg_default is not None:
                return spec.kwarg_default
            wanted = self.demands.get(var.id)
            if wanted in (MemorySpace.Vec, MemorySpace.Mat):
                return wanted
        return self.inherited(call) or MemorySpace.Vec

    def element(self, item: TupleGetItemExpr) -> Expr | None:
        """The element a projection reads, when the tuple is written out (or bound to one)."""
        source = self.tuples.get(item.tuple.id) if isinstance(item.tuple, Var) else item.tuple
        if isinstance(source, MakeTuple) and 0 <= item.index < len(source.elements):
            return source.elements[item.index]
        return None

    def inherited(self, call: Call) -> MemorySpace | None:
        """The space of the first operand whose space is resolved (a view's is its source's)."""
        for arg in call.args:
            if isinstance(arg, Var) and arg.id in self.spaces:
                return self.spaces[arg.id]
        return None

    def loop(self, loop: ForStmt | WhileStmt) -> None:
        for carried in loop.iter_args:
            if isinstance(carried.type, TileType):
                start = self.space_of(carried.init_value)
                if start is not None:
                    self.spaces[carried.id] = start
        self.block(loop.body)
        last = _last_yield(loop.body)
        if last is None:
            return
        for i, result in enumerate(loop.return_vars):
            if not isinstance(result.type, TileType) or i >= len(last.values):
                continue
            space = self.space_of(last.values[i])
            if space is None:
                continue
            self.spaces[result.id] = space
            if i < len(loop.iter_args):
                carried = loop.iter_args[i]
                self.spaces[carried.id] = space
                init = carried.init_value
                if isinstance(init, Var) and isinstance(init.type, TileType):
                    self.spaces[init.id] = space

    def phis(self, stmt: IfStmt) -> None:
        """An `if` result lives where its branches yield it, when they agree (where they do not,
        it needs a move in a branch, which is not this pass's to choose: it is left as typed)."""
        yields = [y for y in (_last_yield(stmt.then_body), _last_yield(stmt.else_body)) if y is not None]
        if not yields:
            return
        for i, result in enumerate(stmt.return_vars):
            if not isinstance(result.type, TileType):
                continue
            spaces = {s for y in yields if i < len(y.values) and (s := self.space_of(y.values[i])) is not None}
            if len(spaces) > 1:
                continue
            space = next(iter(spaces), result.type.memory_space)
            if space is not None:
                self.spaces[result.id] = space


def _named_space(value: Expr) -> MemorySpace:
    """The space a value's type names (a tile from a call nanopto cannot see into), else `Vec`."""
    ty = type_of(value)
    named = ty.memory_space if isinstance(ty, TileType) else None
    return named if named is not None and named is not MemorySpace.DDR else MemorySpace.Vec


def _kwarg_space(call: Call) -> MemorySpace | None:
    found = next((k for k in call.kwargs if k.name == "target_memory"), None)
    return None if found is None else target_memory(found.value)


def _space_symbol(space: MemorySpace) -> Symbol:
    """`pl.Mem.<space>`, as the parser reads `pl.MemorySpace.<space>` too (and PyPTO prints it)."""
    return Symbol(symbol_of_enum(space))


def resolve_spaces(body: Stmt, demands: dict[int, MemorySpace]) -> dict[int, MemorySpace]:
    """Phase 1: the space of every tile Var the analysis places, by Var id."""
    resolver = _Resolver(demands)
    resolver.block(body)
    return resolver.spaces


# ---------------------------------------------------------------------------------------------
# Phase 2: moves
# ---------------------------------------------------------------------------------------------


def collect_moves(body: Stmt, spaces: dict[int, MemorySpace]) -> set[MoveKey]:
    """Phase 2: each (Var, space) an op needs an operand moved to, its space being disallowed."""
    needed: set[MoveKey] = set()
    for _, call, spec in _constrained_calls(body):
        for arg, allowed in _constrained_operands(call, spec):
            if arg.id in spaces and spaces[arg.id] not in allowed:
                needed.add((arg.id, allowed[0]))
    return needed


# ---------------------------------------------------------------------------------------------
# Phase 3: rewrite
# ---------------------------------------------------------------------------------------------


class _Rewriter(Mutator):
    """Phase 3: retype the Vars, insert the moves, rewrite the retargetable keywords."""

    def __init__(self, spaces: dict[int, MemorySpace], needed: set[MoveKey]) -> None:
        self.spaces = spaces
        self.needed = needed
        self.renamed: dict[int, Var] = {}
        """Old Var id -> the Var that replaces it (itself when nothing about it changes)."""
        self.moved: dict[MoveKey, Var] = {}
        """The moves in reach of the statement being rewritten: made in this block or around it."""
        self.made_here: list[list[MoveKey]] = []
        self.in_block: Stmt | None = None
        """The statement `visit_SeqStmts` is visiting as an item of its block, whose moves it
        has placed already."""

    # -- Vars ---------------------------------------------------------------------------------

    def new_type(self, var: Var) -> TileType | None:
        space = self.spaces.get(var.id)
        if space is None or not isinstance(var.type, TileType):
            return None
        ty = retyped(var.type, space)
        return None if ty == var.type else ty

    def visit_Var(self, var: Var) -> Var:
        done = self.renamed.get(var.id)
        if done is None:
            ty = self.new_type(var)
            done = var if ty is None else Var(var.name, ty, span=var.span)
            self.renamed[var.id] = done
        return done

    def visit_IterArg(self, var: IterArg) -> Var:
        done = self.renamed.get(var.id)
        if done is None:
            ty = self.new_type(var)
            init = self.visit(var.init_value)
            if ty is None and init is var.init_value:
                done = var
            else:
                done = IterArg(var.name, var.type if ty is None else ty, init, var.span)
            self.renamed[var.id] = done
        return done

    # -- blocks and moves ---------------------------------------------------------------------

    def visit_SeqStmts(self, seq: SeqStmts) -> SeqStmts:
        self.made_here.append([])
        out: list[Stmt] = []
        for stmt in seq.stmts:
            out += self.moves_for(stmt)
            self.in_block = stmt
            out.append(self.visit(stmt))
        self.close_block()
        if len(out) == len(seq.stmts) and all(a is b for a, b in zip(out, seq.stmts, strict=True)):
            return seq
        return dataclasses.replace(seq, stmts=tuple(out))

    def close_block(self) -> None:
        """Moves made in a block are out of reach after it (a sibling branch must make its own)."""
        for key in self.made_here.pop():
            del self.moved[key]

    def alone(self, stmt: AssignStmt | EvalStmt) -> Stmt:
        """A consumer that is a body by itself (not an item of a `SeqStmts`), rewritten with the
        moves it needs, the two made a block of their own."""
        self.made_here.append([])
        moves = self.moves_for(stmt)
        self.in_block = stmt
        rewritten = self.visit(stmt)
        self.close_block()
        return SeqStmts((*moves, rewritten), span=stmt.span) if moves else rewritten

    def moves_for(self, stmt: Stmt) -> list[Stmt]:
        """The `tile.move`s `stmt` needs before it that are not in reach yet."""
        call = _call_of(stmt)
        spec = memory_spec(call.op) if call is not None else None
        if call is None or spec is None:
            return []
        made: list[Stmt] = []
        for i, arg in enumerate(call.args):
            allowed = spec.allowed(i)
            if not allowed or not isinstance(arg, Var):
                continue
            key = (arg.id, allowed[0])
            if key not in self.needed or key in self.moved:
                continue
            made.append(self.move(arg, allowed[0], stmt))
            self.moved[key] = made[-1].var  # type: ignore[attr-defined]
            if self.made_here:
                self.made_here[-1].append(key)
        return made

    def move(self, var: Var, space: MemorySpace, consumer: Stmt) -> AssignStmt:
        """`<name>_<Space> = pl.move(var, target_memory=space)` before `consumer`. A move out of
        `Acc` to `Vec` lands row-major and unboxed (the accumulator's boxes are undone on the way)."""
        source = self.visit(var)
        assert isinstance(source.type, TileType)
        kwargs = [Keyword("target_memory", _space_symbol(space))]
        if source.type.memory_space is MemorySpace.Acc and space is MemorySpace.Vec:
            unboxed = (("blayout", TileLayout.row_major), ("slayout", TileLayout.none_box))
            kwargs += [Keyword(key, keyword_value(key, layout)) for key, layout in unboxed]
        call = Call("move", (source,), tuple(kwargs), span=consumer.span)
        moved = Var(f"{source.name}_{space.name}", type_of(call), span=consumer.span)  # tile.move's type rule
        return AssignStmt(moved, call, annotated=True, span=consumer.span)

    # -- statements ---------------------------------------------------------------------------

    def visit_AssignStmt(self, stmt: AssignStmt) -> Stmt:
        if self.in_block is not stmt:
            return self.alone(stmt)
        value = self.value(stmt.value)
        if value is not stmt.value and isinstance(value, MakeTuple) and stmt.var.id not in self.renamed:
            self.retuple(stmt.var, stmt.value, value)
        var = self.visit(stmt.var)
        call = _op_call(value)
        if call is not None and call[1] is not None and call[1].retargetable:
            value = self.retarget(call[0], stmt.var)
        if var is stmt.var and value is stmt.value:
            return stmt
        return dataclasses.replace(stmt, var=var, value=value)

    def retuple(self, var: Var, old: Expr, new: MakeTuple) -> None:
        """`p = (a, b)`: a tuple typed by its elements follows their retyping."""
        ty = type_of(new)
        if isinstance(var.type, TupleType) and var.type == type_of(old) and isinstance(ty, TupleType):
            self.renamed[var.id] = Var(var.name, ty, span=var.span)

    def visit_EvalStmt(self, stmt: EvalStmt) -> Stmt:
        if self.in_block is not stmt:
            return self.alone(stmt)
        expr = self.value(stmt.expr)
        return stmt if expr is stmt.expr else dataclasses.replace(stmt, expr=expr)

    def value(self, expr: Expr) -> Expr:
        """A statement's value, its constrained operands replaced by the moves in reach (and a
        `dump_vars` attribute naming such an operand names its moves instead)."""
        found = _op_call(expr)
        spec = found[1] if found is not None else None
        if found is None or spec is None:
            return self.visit(expr)  # type: ignore[no-any-return]
        call = found[0]
        replaced: dict[int, list[Var]] = {}
        args: list[Expr] = []
        for i, arg in enumerate(call.args):
            allowed = spec.allowed(i)
            move = self.moved.get((arg.id, allowed[0])) if allowed and isinstance(arg, Var) else None
            if move is not None and isinstance(arg, Var):
                replaced.setdefault(arg.id, []).append(move)
            args.append(move if move is not None else self.visit(arg))
        attrs = tuple(self.attr(item, replaced) for item in call.attr_items)
        kwargs = tuple(self.visit(k) for k in call.kwargs)
        if _same(args, call.args) and _same(kwargs, call.kwargs) and _same(attrs, call.attr_items):
            return call
        return dataclasses.replace(call, args=tuple(args), kwargs=kwargs, attr_items=attrs)

    def attr(self, item: Keyword, replaced: dict[int, list[Var]]) -> Keyword:
        if item.name != "dump_vars" or not replaced or not isinstance(item.value, MakeTuple):
            return self.visit(item)  # type: ignore[no-any-return]
        elements: list[Expr] = []
        for element in item.value.elements:
            moves = replaced.get(element.id) if isinstance(element, Var) else None
            elements += moves if moves else [self.visit(element)]
        return dataclasses.replace(item, value=dataclasses.replace(item.value, elements=tuple(elements)))

    def retarget(self, call: Call, var: Var) -> Call:
        """A retargetable producer's `target_memory=` made to say the space chosen for `var`
        (left out when it is `Vec` and was not written: the op reads no keyword as `Vec`)."""
        space = self.spaces.get(var.id)
        written = _kwarg_space(call)
        if space is None or space is (written or MemorySpace.Vec):
            return call
        value = _space_symbol(space)
        if written is None and not any(k.name == "target_memory" for k in call.kwargs):
            kwargs = (*call.kwargs, Keyword("target_memory", value))
        else:
            kwargs = tuple(dataclasses.replace(k, value=value) if k.name == "target_memory" else k for k in call.kwargs)
        return dataclasses.replace(call, kwargs=kwargs)


def _same(a: Iterable[Any], b: Iterable[Any]) -> bool:
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def infer_function(fn: Function) -> Function:
    """`fn` with its tiles placed (phases 0 to 3); `fn` itself when nothing changes."""
    if fn.func_type not in TILE_FUNCTIONS:
        return fn
    body = fn.body
    demands = collect_demands(body)
    spaces = resolve_spaces(body, demands)
    if not spaces:
        return fn
    needed = collect_moves(body, spaces)
    new_body = _Rewriter(spaces, needed).visit(body)
    return fn if new_body is body else dataclasses.replace(fn, body=new_body)


def infer_program(program: Program) -> Program:
    """`program` with the tiles of every InCore function placed."""
    functions = tuple(infer_function(fn) for fn in program.function_list)
    if _same(functions, program.function_list):
        return program
    return dataclasses.replace(program, function_list=functions)


def verify_tile_memory_inferred(program: Program, context: VerifyContext) -> list[Diagnostic]:
    """Every tile an InCore function assigns has a memory space, and every operand an op
    constrains lives in a space the op allows."""
    diagnostics: list[Diagnostic] = []
    prop = IRProperty.TileMemoryInferred.value
    for fn in program.function_list:
        if fn.func_type not in TILE_FUNCTIONS:
            continue
        for stmt in walk_stmts(fn.body):
            if isinstance(stmt, AssignStmt) and isinstance(stmt.var.type, TileType) and stmt.var.type.memory_space is None:
                diagnostics.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"in '{fn.name}', tile '{stmt.var.name}' has no memory space",
                        stmt.span or fn.span,
                        prop,
                    )
                )
            call = _call_of(stmt)
            spec = memory_spec(call.op) if call is not None else None
            if call is None or spec is None:
                continue
            for i, arg in enumerate(call.args):
                allowed = spec.allowed(i)
                if not (allowed and isinstance(arg, Var) and isinstance(arg.type, TileType)):
                    continue
                space = arg.type.memory_space
                if space is not None and space not in allowed:
                    names = " or ".join(s.name for s in allowed)
                    diagnostics.append(
                        Diagnostic(
                            Severity.ERROR,
                            f"in '{fn.name}', operand {i + 1} of '{call.op}' ('{arg.name}') is in {space.name}, "
                            f"but the op takes it in {names}",
                            stmt.span or fn.span,
                            prop,
                        )
                    )
    return diagnostics


@dataclass(frozen=True)
class InferTileMemorySpace(Pass):
    """Give every tile of the InCore functions a memory space, moving what an op cannot read.

    docs/architecture.md#infer-tile-memory-space."""

    name: ClassVar[str] = "infer-tile-memory-space"
    produced: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.TileMemoryInferred})

    def run(self, program: Program) -> Program:
        return infer_program(program)


def infer_tile_memory_space() -> InferTileMemorySpace:
    """PyPTO's `passes.infer_tile_memory_space()`: the pass, to call on a program."""
    return InferTileMemorySpace()


register_verifier(IRProperty.TileMemoryInferred, verify_tile_memory_inferred)
register_pass("infer-tile-memory-space", InferTileMemorySpace)
