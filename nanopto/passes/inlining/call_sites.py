"""Call sites of Inline helpers and what Python decides about each before the rules run.

docs/specification.md, "Call-site forms": a call site is recognised only when the Call is the whole statement value
(`lhs = f(...)`, `f(...)`, `return f(...)`). For each site this module decides, per parameter,
whether the formal is replaced by the actual or bound to a fresh local first (the rebinding table in
`rebinding.py`, plus the argument kinds), how a multi-value result is wired, and whether a discarded
result is legal. These decisions become egglog facts (`Arg`, `TupleForm`, the site term's bindings); the rules then do
all the splicing, substituting and renaming.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import linecache
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from nanopto.ir_terms.infer import type_of
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ConstInt,
    EvalStmt,
    Expr,
    ForStmt,
    Function,
    IterArg,
    MakeTuple,
    Node,
    ParamDirection,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Span,
    Stmt,
    Submit,
    TupleGetItemExpr,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.printer import print_type, python_print
from nanopto.ir_terms.schema import iter_children, map_children, nodes_of, walk, whole_value
from nanopto.ir_terms.types import (
    ArrayType,
    ScalarType,
    TensorType,
    TileLayout,
    TileType,
    TupleType,
    Type,
    UnknownType,
)
from nanopto.passes.evaluation_order import (
    Timeline,
    has_call,
    is_atom,
    is_constant,
    is_loop,
    may_alias_params,
    reads_contents,
    writes_in_place,
)
from nanopto.passes.inlining.rebinding import RebindingRow, classify_params, is_self_update


class SiteForm(enum.Enum):
    ASSIGN = "lhs = f(args)"
    TUPLE_PROJECT = "a, b = f(args)  (uses projected, no tuple binding)"
    TUPLE_BIND = "t = f(args)  (multi-value result also used whole)"
    RETURN = "return f(args)"
    DISCARD = "f(args)  (result discarded)"


# A member read off its Enum class goes through the class's attribute hook (Python 3.11: about a
# microsecond, as long as the rest of a site's form takes): the members asked per site, read once.
_RETURN, _DISCARD, _ASSIGN = SiteForm.RETURN, SiteForm.DISCARD, SiteForm.ASSIGN
_TUPLE_BIND, _TUPLE_PROJECT = SiteForm.TUPLE_BIND, SiteForm.TUPLE_PROJECT
_OUT_SCALAR = RebindingRow.OUT_SCALAR


class Hazard(enum.Enum):
    """Why a program is refused to keep its meaning under aliasing (docs/specification.md, "Meaning
    under aliasing"): the binding that would keep it is one the specification forbids. The value is
    how a report names it."""

    ARRAY_REBOUND = "an Array parameter rebound to another array where a later use may see either"


class InlineError(ValueError):
    """A call site the pass cannot splice as written; the message says where and what to do.

    `hazard` is set when the refusal keeps a program's meaning under aliasing (a `Hazard`), and
    None for every other refusal (a form, a type or an argument the specification rejects)."""

    def __init__(self, message: str, hazard: Hazard | None = None) -> None:
        super().__init__(message)
        self.hazard = hazard


@dataclass(frozen=True)
class HelperTemplate:
    """An Inline helper ready to splice: its statements without the trailing return, the returned
    values, its locals, and the rebinding row of each parameter."""

    function: Function
    body: tuple[Stmt, ...]
    returns: tuple[Expr, ...]
    rows: tuple[RebindingRow, ...]
    local_ids: frozenset[int]
    free_ids: frozenset[int]

    @property
    def name(self) -> str:
        return self.function.name

    @functools.cached_property
    def body_nodes(self) -> tuple[Node, ...]:
        """Every node of the body, pre-order: walked once for the questions asked of a helper
        (its forms, its dump selections, what it defines)."""
        return tuple(walk(SeqStmts(self.body)))

    @functools.cached_property
    def defined_by_control_flow(self) -> frozenset[int]:
        """Params the body defines other than by an assignment: an if or loop result, a loop or
        scope variable."""
        params = {p.var.id for p in self.function.param_list}
        found: set[int] = set()
        for node in self.body_nodes:
            found.update(v for v in _defined_vars(node) if v in params)
        return frozenset(found)

    @functools.cached_property
    def by_reference(self) -> frozenset[int]:
        """The `pl.Out` / `pl.InOut` scalar parameters: the caller's variable itself, not a copy."""
        return frozenset(
            p.var.id for p in self.function.param_list if p.direction is not ParamDirection.In and isinstance(p.var.type, ScalarType)
        )

    @functools.cached_property
    def timeline(self) -> Timeline:
        """Where the body (then its returned values) reads and writes what."""
        return Timeline.of(self.body, self.returns)


@dataclass(frozen=True)
class ParamBinding:
    """What one formal stands for at one site."""

    param: Var
    actual: Expr
    row: RebindingRow
    bind_local: bool
    reason: str

    def __init__(self, param: Var, actual: Expr, row: RebindingRow, bind_local: bool, reason: str) -> None:
        # One update of the dict, as `CallSite` does: made for every argument of every site.
        self.__dict__.update(param=param, actual=actual, row=row, bind_local=bind_local, reason=reason)


@dataclass(frozen=True)
class CallSite:
    number: int
    caller: str
    helper: str
    call: Call
    stmt: Stmt
    form: SiteForm
    bindings: tuple[ParamBinding, ...]
    reads: tuple[TupleGetItemExpr, ...] = ()
    """A projected site: the caller's reads `tmp[i]` its assignment reaches (`tuple_results`)."""
    stand_in: Var | None = None
    """A projected site whose receiver is assigned more than once: the Var standing for the
    receiver at this site's assignment and reads only."""
    bound_returns: tuple[tuple[int, str], ...] = ()
    """A projected site: the returned components bound at the call, each with the reason."""
    copied_out: tuple[int, ...] = ()
    """The `pl.Out` scalar parameters (by index) whose argument is a loop-scoped name the helper
    defines by a control-flow result: the body works on a local, copied back to the argument at
    its end (`write_back_templates`)."""

    def __init__(
        self,
        number: int,
        caller: str,
        helper: str,
        call: Call,
        stmt: Stmt,
        form: SiteForm,
        bindings: tuple[ParamBinding, ...],
        reads: tuple[TupleGetItemExpr, ...] = (),
        stand_in: Var | None = None,
        bound_returns: tuple[tuple[int, str], ...] = (),
        copied_out: tuple[int, ...] = (),
    ) -> None:
        # The fields above, set in one update of the instance's dict: the frozen dataclass's own
        # __init__ makes one object.__setattr__ call per field (half the cost of finding a site).
        # The fields stay read-only; a test holds this signature to the fields.
        self.__dict__.update(
            number=number,
            caller=caller,
            helper=helper,
            call=call,
            stmt=stmt,
            form=form,
            bindings=bindings,
            reads=reads,
            stand_in=stand_in,
            bound_returns=bound_returns,
            copied_out=copied_out,
        )

    @property
    def span(self) -> Span | None:
        return self.call.span or self.stmt.span


def _where(node: Stmt | Expr, fn: Function) -> str:
    span = node.span or fn.span
    return f"{span}" if span is not None else f"function '{fn.name}'"


def make_template(fn: Function) -> HelperTemplate:
    """Split a (fully expanded) helper into body and returned values and classify its params."""
    fn = _rename_rebound_arrays(fn)
    stmts = fn.body.stmts if isinstance(fn.body, SeqStmts) else (fn.body,)
    returns: tuple[Expr, ...] = ()
    if stmts and isinstance(stmts[-1], ReturnStmt):
        returns = stmts[-1].values
        stmts = stmts[:-1]
    walked = list(walk(SeqStmts(stmts)))
    for node in walked:
        if isinstance(node, ReturnStmt):
            raise InlineError(
                f"{_where(node, fn)}: Inline function '{fn.name}' returns before its last statement; "
                "an Inline body can only return at its end (bind the value and return it last)"
            )
    by_reference = frozenset(
        p.var.id for p in fn.param_list if p.direction is not ParamDirection.In and isinstance(p.var.type, ScalarType)
    )
    projected, returns = _project_returned_tuple(stmts, returns, by_reference)
    if projected is not stmts:
        walked = list(walk(SeqStmts(projected)))
    stmts = projected
    params = {p.var.id for p in fn.param_list}
    local_ids: set[int] = set()
    referenced: set[int] = set()
    # The body's nodes were walked above (unless the projection changed the body), then the rest.
    for node in itertools.chain(walked, *(walk(root) for root in (*returns, *(p.var for p in fn.param_list)))):
        if isinstance(node, Var) and not isinstance(node, IterArg):
            referenced.add(node.id)
        if isinstance(node, AssignStmt):
            local_ids.add(node.var.id)
        if type(node) not in _PLAIN_CLASSES:  # most nodes define nothing: no generator for them
            local_ids.update(_defined_vars(node))
    local_ids -= params
    free = referenced - params - local_ids
    template = HelperTemplate(fn, stmts, returns, classify_params(fn), frozenset(local_ids), frozenset(free))
    # The body was just walked: what `body_nodes` would walk again (a cached property of the
    # immutable template, so seeding it changes no answer).
    template.__dict__["body_nodes"] = tuple(walked)
    return template


def _rename_rebound_arrays(fn: Function) -> Function:
    """An Array parameter's rebinding lands on the caller's Var (the table's Array row: codegen
    cannot declare an array alias). That is right for an in-place update (`xs[i] = v`); a rebinding
    to another array (`xs = pl.array.create(...)`) would replace the caller's buffer. Where every
    later use of the parameter runs after that rebinding, in straight-line code or inside the
    rebinding's own block, the new array is a local of its own from there on, which needs no alias
    (nanopto's choice: docs/specification.md, "Meaning under aliasing"); otherwise no splice keeps
    the meaning and the helper is refused at the line."""
    arrays = [p.var for p in fn.param_list if isinstance(p.var.type, ArrayType)]
    for param in arrays:
        while True:
            path = _first_rebinding(fn.body, param)
            if path is None:
                break
            fn = _split_at(fn, param, path)
    return fn


_Path = list[tuple[SeqStmts, int]]


def _first_rebinding(body: Stmt, param: Var) -> _Path | None:
    """The path (each enclosing list and index) to the first assignment rebinding Array `param`
    to another array, or None."""

    def search(stmt: Stmt, path: _Path) -> _Path | None:
        if isinstance(stmt, SeqStmts):
            for i, inner in enumerate(stmt.stmts):
                found = search(inner, [*path, (stmt, i)])
                if found is not None:
                    return found
            return None
        if isinstance(stmt, AssignStmt):
            return path if stmt.var.id == param.id and not is_self_update(stmt) else None
        for child in iter_children(stmt):
            if isinstance(child, Stmt):
                found = search(child, path)
                if found is not None:
                    return found
        return None

    return search(body, [])


def _split_at(fn: Function, param: Var, path: _Path) -> Function:
    """`fn` with Array `param` renamed to a fresh local from the rebinding at `path` to the end of
    its block; refused (`Hazard.ARRAY_REBOUND`) when a use after that block, or before it in a loop
    that runs the block again, could see either array."""
    block, index = path[-1]
    stmt = block.stmts[index]
    assert isinstance(stmt, AssignStmt)
    fresh = Var(param.name, param.type, span=stmt.span)
    by = {param.id: fresh}
    new_body: Stmt = SeqStmts(
        (*block.stmts[:index], dataclasses.replace(stmt, var=fresh), *(replace_vars(s, by) for s in block.stmts[index + 1 :])),
        span=block.span,
    )
    old_child: Stmt = block
    seen_later = False
    for outer, i in reversed(path[:-1]):
        holder = _with_child(outer.stmts[i], old_child, new_body)
        if is_loop(holder) and param.id in _ids(holder):
            seen_later = True  # the next iteration reads the parameter, meaning the new array
        seen_later = seen_later or any(param.id in _ids(later) for later in outer.stmts[i + 1 :])
        old_child, new_body = outer, SeqStmts((*outer.stmts[:i], holder, *outer.stmts[i + 1 :]), span=outer.span)
    if seen_later:
        raise InlineError(
            f"{_where(stmt, fn)}: Inline function '{fn.name}' rebinds its Array parameter '{param.name}' "
            f"to another array ({_quoted(stmt)}) where a later use may see either array; the rebinding "
            "would land on the caller's array (an Array parameter is never given a local copy). "
            "Give the new array a name of its own.",
            Hazard.ARRAY_REBOUND,
        )
    return dataclasses.replace(fn, body=new_body)


def _with_child(holder: Stmt, old: Stmt, new: Stmt) -> Stmt:
    """`holder` with its child statement `old` (by identity) replaced by `new`."""

    def swap(child: Any) -> Any:
        return new if child is old else child

    return map_children(holder, swap)


def _ids(stmt: Stmt) -> set[int]:
    return {v.id for v in walk(stmt) if isinstance(v, Var)}


def _quoted(stmt: Stmt) -> str:
    """The user's line for `stmt`: the source line at its span when the file can be read, else the
    statement as printed, unless printing shows names the user did not write."""
    span = stmt.span
    if span is not None and span.is_valid() and os.path.isfile(span.file):
        line = linecache.getline(span.file, span.line).strip()
        if line:
            return f"`{line}`"
    printed = python_print(stmt)
    return f"`{printed}`" if "__inline" not in printed else "at that line"


def _defined_vars(node: object) -> Iterator[int]:
    if type(node) not in _DEFINING_CLASSES and not _defines(type(node)):
        return  # most nodes (expressions, assignments) have none of the fields below
    for name in ("loop_var", "var"):
        var = getattr(node, name, None)
        if isinstance(var, Var) and not isinstance(var, IterArg) and not isinstance(node, AssignStmt):
            yield var.id
    for var in getattr(node, "return_vars", ()):
        yield var.id


_DEFINING_CLASSES: set[type] = set()
_PLAIN_CLASSES: set[type] = set()


def _defines(cls: type) -> bool:
    """Whether nodes of `cls` may define a Var `_defined_vars` reports (a `loop_var`, a `var`
    other than an assignment's, `return_vars`); remembered per class."""
    if cls in _PLAIN_CLASSES:
        return False
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    if cls is not AssignStmt and fields & {"loop_var", "var", "return_vars"}:
        _DEFINING_CLASSES.add(cls)
        return True
    _PLAIN_CLASSES.add(cls)
    return False


def _project_returned_tuple(
    stmts: tuple[Stmt, ...], returns: tuple[Expr, ...], by_reference: frozenset[int] = frozenset()
) -> tuple[tuple[Stmt, ...], tuple[Expr, ...]]:
    """`tmp = (a, b); return tmp` returns the same as `return a, b` (nanopto's choice: docs/specification.md, "Tuple returns and projection")."""
    if len(returns) != 1 or not isinstance(returns[0], Var):
        return stmts, returns
    tmp = returns[0]
    defs = [s for s in stmts if isinstance(s, AssignStmt) and s.var == tmp]
    if len(defs) != 1 or not isinstance(defs[0].value, MakeTuple):
        return stmts, returns
    others = [s for s in stmts if s is not defs[0]]
    if any(node == tmp for s in others for node in walk(s)):
        return stmts, returns
    made = stmts.index(defs[0])
    later = stmts[made + 1 :]
    if not later:
        return tuple(others), defs[0].value.elements
    # Each element is evaluated where the tuple is made; an element the statements after it could
    # change is bound there to a local of its own (docs/specification.md, "Meaning under aliasing").
    rebound = {v for s in later for node in walk(s) for v in _defined_ids(node)}
    if rebound & by_reference:
        # pl.Out / pl.InOut scalars a site gives the same Var are one variable: a write to one
        # may be a write to another.
        rebound |= by_reference
    effects = any(writes_in_place(e) for s in later for e in walk(s) if isinstance(e, Expr))
    bound: list[Stmt] = []
    elements: list[Expr] = []
    for i, element in enumerate(defs[0].value.elements):
        changed = any(v.id in rebound for v in walk(element) if isinstance(v, Var))
        if changed or (not is_atom(element) and (has_call(element) or (effects and reads_contents(element)))):
            local = Var(f"{tmp.name}_{i}", type_of(element), span=element.span)
            bound.append(AssignStmt(local, element, annotated=False, span=defs[0].span))
            element = local
        elements.append(element)
    return (*stmts[:made], *bound, *later), tuple(elements)


def _defined_ids(node: object) -> Iterator[int]:
    if isinstance(node, AssignStmt):
        yield node.var.id
    yield from _defined_vars(node)


def _is_call_like(expr: Expr) -> bool:
    return isinstance(expr, Call | Submit)


BindingPolicy = Callable[[Var, RebindingRow, Expr], tuple[bool, str]]
"""`(param, row, actual) -> (bind a fresh local first?, the reason --trace shows)`: the decision the
staging driver is given (`bind_argument`, the specification's, unless a teaching hook plants another)."""


def bind_argument(param: Var, row: RebindingRow, actual: Expr) -> tuple[bool, str]:
    """Whether the actual is bound to a fresh local first, and why (docs/specification.md, "Argument binding")."""
    if _is_call_like(actual):
        return True, "computed argument: evaluated once at the call site"
    if row.binds_local:
        return True, "the callee rebinds this parameter: its rebinding stays on a local"
    if row.rebinds_caller_var and not isinstance(actual, Var):
        return True, "rebound parameter whose argument is not an assignable Var"
    if row.rebinds_caller_var and isinstance(actual, IterArg) and row is not RebindingRow.OUT_SCALAR:
        return True, "rebound parameter whose argument is a loop-carried value"
    return False, "substituted directly"


def find_sites(
    fn: Function, templates: dict[str, HelperTemplate], first_number: int, policy: BindingPolicy = bind_argument
) -> list[CallSite]:
    """The top-level Inline call sites of `fn`, in program order, numbered from `first_number`;
    `policy` decides which arguments are bound to fresh locals first."""
    sites: list[CallSite] = []
    whole_uses = _WholeUses(fn)
    aliases = may_alias_params(fn)  # per caller, not per site
    for node in nodes_of(fn.body):
        if not isinstance(node, SeqStmts):
            continue
        for stmt in node.stmts:
            call = _site_call(stmt)
            if call is None or call.op not in templates:
                continue
            template = templates[call.op]
            sites.append(_make_site(fn, stmt, call, template, first_number + len(sites), whole_uses, policy, aliases))
    return sites


def _site_call(stmt: Stmt) -> Call | None:
    value = whole_value(stmt)
    return value if isinstance(value, Call) and value.function else None


class _WholeUses:
    """`_whole_tuple_uses(fn)`, computed on the first question: only multi-value sites ask, and it
    walks every node of the caller."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self._ids: set[int] | None = None

    def __contains__(self, var_id: int) -> bool:
        if self._ids is None:
            self._ids = _whole_tuple_uses(self.fn)
        return var_id in self._ids

    @functools.cached_property
    def loop_scoped(self) -> frozenset[int]:
        """The caller's IterArgs, loop variables and scope variables: names a control-flow result
        cannot take in printed `pl` (printed and parsed again, it would be a new variable)."""
        scoped: set[int] = set()
        for node in nodes_of(self.fn.body):
            if isinstance(node, ForStmt):
                scoped.add(node.loop_var.id)
            if isinstance(node, ForStmt | WhileStmt):
                scoped.update(a.id for a in node.iter_args)
            if isinstance(node, ScopeStmt) and node.var is not None:
                scoped.add(node.var.id)
        return frozenset(scoped)


def _whole_tuple_uses(fn: Function) -> set[int]:
    """Ids of Vars used other than as `v[i]`: a multi-value receiver used whole needs a binding."""
    whole: set[int] = set()
    for node in nodes_of(fn.body):
        children: Iterator[object]
        if isinstance(node, AssignStmt):
            children = iter((node.value,))
        elif isinstance(node, TupleGetItemExpr):
            children = iter(())
        else:
            children = iter_children(node)
        whole.update(child.id for child in children if isinstance(child, Var))
    return whole


def _make_site(
    fn: Function,
    stmt: Stmt,
    call: Call,
    template: HelperTemplate,
    number: int,
    whole_uses: _WholeUses,
    policy: BindingPolicy = bind_argument,
    aliases: dict[int, frozenset[int]] | None = None,
) -> CallSite:
    """One site of `fn`; `aliases` is `may_alias_params(fn)` (computed here when not given)."""
    helper = template.function
    if call.kwargs:
        raise InlineError(
            f"{_where(call, fn)}: call to Inline function '{helper.name}' uses keyword arguments; "
            "pass them positionally"
        )
    if len(call.args) != len(helper.param_list):
        raise InlineError(
            f"{_where(call, fn)}: Inline function '{helper.name}' takes {len(helper.param_list)} argument(s), "
            f"this call in '{fn.name}' passes {len(call.args)}"
        )
    bindings = []
    params, rows, args = helper.param_list, template.rows, call.args
    # By index: as many arguments as parameters (checked above), and a template has a row per
    # parameter; a strict zip under enumerate cost more than the rest of the loop.
    for index in range(len(args)):
        param, row, actual = params[index].var, rows[index], args[index]
        validate_argument(fn, call, helper, index, actual)
        bind, reason = policy(param, row, actual)
        bindings.append(ParamBinding(param, actual, row, bind, reason))
    bindings = bind_disturbed_arguments(template, bindings, may_alias_params(fn) if aliases is None else aliases)
    form = _form_of(fn, stmt, template, whole_uses)
    copied_out = (
        tuple(
            i
            for i, b in enumerate(bindings)
            if b.row is _OUT_SCALAR
            and not b.bind_local
            and isinstance(b.actual, Var)
            and b.actual.id in whole_uses.loop_scoped
            and b.param.id in template.defined_by_control_flow
        )
        if _OUT_SCALAR in template.rows  # (the bindings' rows are the template's)
        else ()
    )
    return CallSite(number, fn.name, helper.name, call, stmt, form, tuple(bindings), copied_out=copied_out)


def bind_disturbed_arguments(
    template: HelperTemplate, bindings: list[ParamBinding], aliases: dict[int, frozenset[int]] | None = None
) -> list[ParamBinding]:
    """Bind an argument the specification substitutes directly when the body would change what
    it evaluates to before using it (docs/specification.md, "Meaning under aliasing").

    The call evaluates every argument once, before the body. A substituted argument is evaluated
    at each use instead, which is the same unless the body first rebinds a caller Var the argument
    reads (a `pl.Out` scalar given that Var) or writes in place storage whose elements it reads;
    then it is bound to a fresh local at the call, which is what the call evaluated. `aliases` are
    the caller's variables a site of the caller may make one (`may_alias_params`): a write to one
    is a write to each.
    """
    rebinders = [
        b for b in bindings if b.row is _OUT_SCALAR and not b.bind_local and isinstance(b.actual, Var)
    ]
    # pl.Out / pl.InOut scalars given the same Var are one variable (the caller's), whether or not
    # this body writes them: such a Var stays substituted, by reference.
    by_reference = template.by_reference
    out: list[ParamBinding] = []
    for b in bindings:
        # A Var is a handle (it reads no elements), so only a write-back can disturb it: with none,
        # a Var argument is undisturbed (the commonest case, answered first).
        if b.bind_local or (not rebinders and isinstance(b.actual, Var)):
            out.append(b)
            continue
        shared = b.param.id in by_reference and isinstance(b.actual, Var)
        reason = None if shared or b.row.rebinds_caller_var else _disturbance(template, b, rebinders, aliases or {})
        out.append(b if reason is None else ParamBinding(b.param, b.actual, b.row, True, reason))
    return out


def _disturbance(
    template: HelperTemplate, b: ParamBinding, rebinders: list[ParamBinding], aliases: dict[int, frozenset[int]]
) -> str | None:
    """Why the substituted argument of `b` must be bound instead, or None. The helper's timeline is
    built only when a question needs it (a Var argument with no write-back to fear asks none)."""
    if is_constant(b.actual):
        return None
    if not isinstance(b.actual, Var) and isinstance(type_of(b.actual), TensorType | TileType | ArrayType):
        return "computed argument: evaluated once at the call site"
    read = {v.id for v in walk(b.actual) if isinstance(v, Var)} if rebinders else set()
    for writer in rebinders:
        assert isinstance(writer.actual, Var)
        written = aliases.get(writer.actual.id, frozenset({writer.actual.id}))
        if writer is not b and written & read and template.timeline.rebound_before_read(writer.param.id, b.param.id):
            return f"bound: `{writer.param.name}` writes `{writer.actual.name}`, which this argument reads"
    if reads_contents(b.actual):
        store = template.timeline.stored_before_read(b.param.id)
        if store is not None:
            where = f" ({store.stmt.span})" if store.stmt is not None and store.stmt.span is not None else ""
            return f"bound: the body writes storage in place{where} before it reads this argument, whose elements it reads"
    return None


def validate_argument(fn: Function, call: Call, helper: Function, index: int, actual: Expr) -> None:
    """Reject an argument whose type contradicts the formal's, before anything is substituted.

    docs/specification.md, "Argument validation": splicing a Tile of the wrong
    dtype, rank, shape or memory space would produce a program that parses and prints but is
    wrong, so the error is raised here, at the call site. Only types that are both known are
    compared, and a dimension only when both sides are constants (a `pl.dynamic` formal matches
    any extent).
    """
    param = helper.param_list[index].var
    formal = param.type
    if isinstance(formal, UnknownType):
        return  # before typing the actual: most helpers' parameters are unannotated
    got = type_of(actual)
    if isinstance(got, UnknownType):
        return
    problem = type_mismatch(formal, got)
    if problem is not None:
        raise InlineError(
            f"{_where(call, fn)}: argument {index + 1} of the call to Inline function '{helper.name}' "
            f"in '{fn.name}' does not fit parameter '{param.name}': {problem} "
            f"(parameter: {print_type(formal)}, argument `{python_print(actual)}`: {print_type(got)})"
        )


def type_mismatch(formal: Type, actual: Type) -> str | None:
    """What differs between a formal's type and an actual's, or None when they are compatible.

    Scalar dtypes are not compared: `pl` converts scalars implicitly (an INDEX literal passed
    to an INT64 parameter is fine), while tensors, tiles and arrays are storage whose element
    type and layout the callee's body relies on.
    """
    if type(formal) is not type(actual):
        return f"a {_kind(actual)} is passed where a {_kind(formal)} is expected"
    if isinstance(formal, TensorType | TileType):
        assert isinstance(actual, TensorType | TileType)
        if formal.dtype is not actual.dtype:
            return f"dtype {actual.dtype.name} where {formal.dtype.name} is expected"
        if len(formal.shape) != len(actual.shape):
            return f"rank {len(actual.shape)} where rank {len(formal.shape)} is expected"
        for axis, (want, have) in enumerate(zip(formal.shape, actual.shape, strict=True)):
            if isinstance(want, ConstInt) and isinstance(have, ConstInt) and want.value != have.value:
                return f"extent {have.value} in dimension {axis} where {want.value} is expected"
    if isinstance(formal, TileType):
        assert isinstance(actual, TileType)
        want_space, have_space = formal.memory_space, actual.memory_space
        if want_space is not None and have_space is not None and want_space is not have_space:
            return f"a tile in memory space {have_space.name} where {want_space.name} is expected"
        if want_space is not None and have_space is not None:
            want_layout, have_layout = _layout(formal), _layout(actual)
            if want_layout != have_layout:
                return f"a tile laid out {_show_layout(have_layout)} where {_show_layout(want_layout)} is expected"
    if isinstance(formal, ArrayType):
        assert isinstance(actual, ArrayType)
        if formal.dtype is not actual.dtype:
            return f"array of {actual.dtype.name} where {formal.dtype.name} is expected"
        if isinstance(formal.size, ConstInt) and isinstance(actual.size, ConstInt) and formal.size.value != actual.size.value:
            return f"array of size {actual.size.value} where {formal.size.value} is expected"
    return None


def _layout(tile: TileType) -> tuple[TileLayout, TileLayout, int]:
    """A tile's box layouts and box size: its own view's, or its memory space's implicit ones."""
    view = tile.effective_tile_view
    return view.blayout, view.slayout, view.fractal


def _show_layout(layout: tuple[TileLayout, TileLayout, int]) -> str:
    blayout, slayout, fractal = layout
    return f"blayout={blayout.name}, slayout={slayout.name}, fractal={fractal}"


def _kind(ty: Type) -> str:
    return {ScalarType: "Scalar", TensorType: "Tensor", TileType: "Tile", ArrayType: "Array", TupleType: "tuple"}.get(
        type(ty), "value"
    )


def _form_of(fn: Function, stmt: Stmt, template: HelperTemplate, whole_uses: _WholeUses) -> SiteForm:
    if isinstance(stmt, ReturnStmt):
        return _RETURN
    if isinstance(stmt, EvalStmt):
        _check_discardable(fn, stmt, template)
        return _DISCARD
    assert isinstance(stmt, AssignStmt)
    if len(template.returns) == 0:
        raise InlineError(
            f"{_where(stmt, fn)}: Inline function '{template.name}' returns nothing, "
            f"but its result is assigned to '{stmt.var.name}'"
        )
    if len(template.returns) == 1:
        return _ASSIGN
    return _TUPLE_BIND if stmt.var.id in whole_uses else _TUPLE_PROJECT


def _check_discardable(fn: Function, stmt: EvalStmt, template: HelperTemplate) -> None:
    """docs/specification.md, "Discarding a return value": a value that wraps a call cannot be discarded."""
    for value in template.returns:
        if _is_call_like(value):
            continue
        if any(_is_call_like(node) for node in walk(value) if isinstance(node, Expr)):
            raise InlineError(
                f"{_where(stmt, fn)}: the result of Inline function '{template.name}' is discarded here, "
                f"but its return value `{python_print(value)}` wraps a call: it cannot become an EvalStmt, "
                "and deleting it would delete the call. Return that call directly from the helper, "
                "or bind the helper's result at the call site (`x = self."
                f"{template.name}(...)`)."
            )


def binding_type(binding: ParamBinding) -> Type:
    """The type of the fresh local a bound parameter gets: the formal's, else the actual's."""
    if not isinstance(binding.param.type, UnknownType):
        return binding.param.type
    if isinstance(binding.actual, Var):
        return binding.actual.type
    return UnknownType()


def write_back_templates(sites: list[CallSite], templates: dict[str, HelperTemplate], chosen: dict[int, str]) -> None:
    """Give each site with `copied_out` parameters the variant of its template that copies them.

    A `pl.Out` scalar's definitions land on the caller's variable; when that variable is an IterArg
    or a loop variable and the helper defines the parameter by an if or loop result, the result
    would be that loop-scoped name, which printed `pl` cannot say (parsed again, it is a new
    variable). The variant works on a local and assigns it to the parameter once, at its end: the
    same value lands on the same variable (nanopto's choice: docs/specification.md, "Meaning under
    aliasing")."""
    for site in sites:
        if not site.copied_out:
            continue
        base = chosen.get(site.number, site.helper)
        key = f"{base}@copy_out({', '.join(map(str, site.copied_out))})"
        if key not in templates:
            templates[key] = with_copied_out(templates[base], site.copied_out)
        chosen[site.number] = key


def with_copied_out(template: HelperTemplate, indices: tuple[int, ...]) -> HelperTemplate:
    """`template` whose parameters `indices` are worked on through a local each: `p_local = p`
    first, `p = p_local` last."""
    params = [template.function.param_list[i].var for i in indices]
    local_of = {p.id: Var(p.name, p.type, span=p.span) for p in params}
    body = [replace_vars(stmt, local_of) for stmt in template.body]
    returns = tuple(replace_vars(value, local_of) for value in template.returns)
    first = [AssignStmt(local_of[p.id], p, annotated=False, span=p.span) for p in params]
    last = [AssignStmt(p, local_of[p.id], annotated=False, span=p.span) for p in params]
    return dataclasses.replace(
        template,
        body=(*first, *body, *last),
        returns=returns,
        local_ids=template.local_ids | {v.id for v in local_of.values()},
    )


_N = TypeVar("_N", bound=Node)


def replace_vars(node: _N, by: dict[int, Var]) -> _N:
    """`node` with each Var whose id is in `by` replaced."""
    if isinstance(node, Var) and not isinstance(node, IterArg):
        return cast(_N, by.get(node.id, node))

    def visit(child: Any) -> Any:
        return replace_vars(child, by) if isinstance(child, Node) else child

    return map_children(node, visit)
