"""IR properties and the registry of verifiers that check them on a program.

A pass declares the properties it requires and produces (nanopass: a pass names its input and
output language); this module is where a property's meaning is made executable, so the pass
manager can check a declaration against the IR a pass actually returned.

A property without a registered verifier is a declaration only: the pass manager trusts a pass
that produces it and cannot establish it by verification.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    ForStmt,
    Function,
    FunctionType,
    Node,
    Program,
    ReturnStmt,
    SeqStmts,
    Span,
    Submit,
    Var,
    WhileStmt,
)
from nanopto.ir_terms.schema import (
    SIMPLE_TYPES,
    children_of,
    iter_children,
    nodes_of_class,
    type_holds_none,
    walk,
    walk_stmts,
)
from nanopto.ir_terms.types import TupleType, Type
from nanopto.verify.diagnostics import Diagnostic, Severity


class IRProperty(enum.Enum):
    """A verifiable fact about a program (the names follow PyPTO's `IRProperty`)."""

    InlineFunctionsEliminated = "InlineFunctionsEliminated"
    """No `FunctionType.Inline` function and no call or submit of one survives (docs/
    specification.md, "Produced property"). Verified."""

    NestedCallsHoisted = "NestedCallsHoisted"
    """Every Inline call that can be spliced is the whole value of its statement (docs/
    specification.md, "Nested call sites"). Produced by `hoist-nested-calls`, required by
    `inline-functions`; its verifier is registered by the pass that produces it."""

    TileMemoryInferred = "TileMemoryInferred"
    """Every tile an InCore function assigns has a memory space, and every operand an op
    constrains lives in a space the op takes (docs/architecture.md#infer-tile-memory-space). Produced by
    `infer-tile-memory-space`, which registers its verifier."""

    TypeChecked = "TypeChecked"
    """The program passed type checking. Declaration only: nanopto has no verifier for it yet."""


@dataclass(frozen=True)
class VerifyContext:
    """What a verifier may know beyond the program itself.

    `removed_inline` names the Inline functions the pass under check dropped: after inlining they
    are gone from the program, yet a call that still names one is exactly the bug to report.
    """

    removed_inline: frozenset[str] = frozenset()
    tuple_returning: frozenset[str] = frozenset()
    """The removed Inline functions that return more than one value (a tuple)."""

    @classmethod
    def between(cls, before: Program, after: Program) -> VerifyContext:
        """The context for checking `after`, the output of a pass whose input was `before`."""
        removed = {
            name: function
            for name, function in before.functions.items()
            if function.func_type is FunctionType.Inline and name not in after.functions
        }
        tuples = frozenset(name for name, function in removed.items() if _returns_a_tuple(function))
        return cls(removed_inline=frozenset(removed), tuple_returning=tuples)


def _returns_a_tuple(function: Function) -> bool:
    """By its annotation, or by its `return` statements when it has none."""
    if len(function.return_types) > 1 or any(isinstance(t, TupleType) for t in function.return_types):
        return True
    return any(isinstance(stmt, ReturnStmt) and len(stmt.values) > 1 for stmt in walk_stmts(function.body))


PropertyVerifier = Callable[[Program, VerifyContext], list[Diagnostic]]

_VERIFIERS: dict[IRProperty, PropertyVerifier] = {}


def register_verifier(
    prop: IRProperty, verifier: PropertyVerifier, *, replace: bool = False
) -> PropertyVerifier:
    """Register the verifier of `prop`; a second registration is an error unless `replace`."""
    if prop in _VERIFIERS and not replace:
        raise ValueError(f"property {prop.name} already has a verifier; pass replace=True to override")
    _VERIFIERS[prop] = verifier
    return verifier


def get_verifier(prop: IRProperty) -> PropertyVerifier | None:
    """The verifier of `prop`, or None when the property is a declaration only."""
    return _VERIFIERS.get(prop)


def has_verifier(prop: IRProperty) -> bool:
    return prop in _VERIFIERS


def verify_properties(
    program: Program,
    properties: Iterable[IRProperty],
    *,
    removed_inline: frozenset[str] = frozenset(),
    context: VerifyContext | None = None,
) -> list[Diagnostic]:
    """Run the verifier of each property (in enum order); properties without one are skipped.

    Pass either `removed_inline` or a ready `context` (which wins).
    """
    ctx = context if context is not None else VerifyContext(removed_inline=removed_inline)
    diagnostics: list[Diagnostic] = []
    for prop in sorted(set(properties), key=_enum_order):
        verifier = _VERIFIERS.get(prop)
        if verifier is not None:
            diagnostics.extend(verifier(program, ctx))
    return diagnostics


def _enum_order(prop: IRProperty) -> int:
    return list(IRProperty).index(prop)


class IRPropertySet:
    """A set of properties with PyPTO's method names (`insert`, `contains`, ...); iterable, so it
    goes wherever nanopto takes an iterable of properties."""

    def __init__(self, properties: Iterable[IRProperty] = ()) -> None:
        self._items: set[IRProperty] = set(properties)

    def insert(self, prop: IRProperty) -> None:
        self._items.add(prop)

    def remove(self, prop: IRProperty) -> None:
        self._items.discard(prop)

    def contains(self, prop: IRProperty) -> bool:
        return prop in self._items

    def contains_all(self, other: IRPropertySet) -> bool:
        return other._items <= self._items

    def union_with(self, other: IRPropertySet) -> IRPropertySet:
        return IRPropertySet(self._items | other._items)

    def intersection(self, other: IRPropertySet) -> IRPropertySet:
        return IRPropertySet(self._items & other._items)

    def difference(self, other: IRPropertySet) -> IRPropertySet:
        return IRPropertySet(self._items - other._items)

    def empty(self) -> bool:
        return not self._items

    def to_list(self) -> list[IRProperty]:
        return sorted(self._items, key=_enum_order)

    def __contains__(self, prop: object) -> bool:
        return prop in self._items

    def __iter__(self) -> Iterator[IRProperty]:
        return iter(self.to_list())

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IRPropertySet) and other._items == self._items

    __hash__ = None  # type: ignore[assignment]  # mutable, like a set

    def __repr__(self) -> str:
        return f"IRPropertySet({[p.name for p in self.to_list()]})"


class PropertyVerifierRegistry:
    """PyPTO's entry point to the registered verifiers: `verify(properties, program)`."""

    @staticmethod
    def verify(properties: Iterable[IRProperty], program: Program) -> list[Diagnostic]:
        """The diagnostics of every property that has a verifier (the others are skipped)."""
        return verify_properties(program, properties)

    @staticmethod
    def verify_or_throw(properties: Iterable[IRProperty], program: Program) -> None:
        """Raise ValueError listing the errors, if any."""
        errors = [d for d in verify_properties(program, properties) if d.is_error]
        if errors:
            raise ValueError("IR property verification failed:" + "".join(f"\n  {d}" for d in errors))

    @staticmethod
    def generate_report(diagnostics: Iterable[Diagnostic]) -> str:
        return "\n".join(str(d) for d in diagnostics)


# ---------------------------------------------------------------------------------------------
# InlineFunctionsEliminated
# ---------------------------------------------------------------------------------------------


def verify_inline_functions_eliminated(program: Program, context: VerifyContext) -> list[Diagnostic]:
    """docs/specification.md, "Produced property": no Inline function, and no Call whose callee resolves to one.

    A call or submit is dangling when its callee is an Inline function of the program, one the
    pass removed, or no function of the program at all. Each finding sits at the node's own span,
    or the nearest enclosing span when the node has none.
    """
    rule = IRProperty.InlineFunctionsEliminated.value
    functions = program.functions
    diagnostics: list[Diagnostic] = []

    def dangling(callee: str) -> str | None:
        if callee in functions:
            if functions[callee].func_type is FunctionType.Inline:
                return f"'{callee}' is an Inline function"
            return None
        if callee in context.removed_inline:
            return f"its Inline definition '{callee}' was removed"
        return f"no function '{callee}' exists in the program"

    for function in program.function_list:
        if function.func_type is FunctionType.Inline:
            message = f"Inline function '{function.name}' survives"
            diagnostics.append(Diagnostic(Severity.ERROR, message, function.span, rule))
        found: list[tuple[Node, str]] = []  # an empty message: a call the pass left in place
        # Only the launches are kept from the walk; spans are looked up only for findings: they are rare.
        for launch in _launches(function):
            if isinstance(launch, Call):
                if launch.op in context.removed_inline and launch.op not in functions:
                    found.append((launch, ""))
                    continue
                why = dangling(launch.op)
                if why is not None:
                    found.append((launch, f"Dangling Call to function '{launch.op}': {why}"))
            else:
                why = dangling(launch.callee)
                if why is not None:
                    found.append((launch, f"Dangling Call to function '{launch.callee}' (submitted): {why}"))
        if found:
            spans = _spans_within(function)
            places = _places(function) if any(not message for _, message in found) else {}
            reported_inits: set[int] = set()  # an IterArg's initializer is walked at every use of it
            for node, message in found:
                if message:
                    diagnostics.append(Diagnostic(Severity.ERROR, message, spans[id(node)], rule))
                    continue
                assert isinstance(node, Call)
                place = places.get(id(node))
                if place == "init" and id(node) in reported_inits:
                    continue
                reported_inits.add(id(node))
                why_left = _left_in_place(node, place, context)
                if why_left is not None:
                    diagnostics.append(Diagnostic(Severity.ERROR, why_left, spans[id(node)], rule, in_the_input=True))
                else:  # at a position the pass splices: the pass's own bug
                    message = f"Dangling Call to function '{node.op}': its Inline definition '{node.op}' was removed"
                    diagnostics.append(Diagnostic(Severity.ERROR, message, spans[id(node)], rule))
    return diagnostics


def _launches(function: Function) -> list[Call | Submit]:
    """The calls of program functions and the submits in `function`, in walk order (what
    `nodes_of_class` finds of them).

    The function's blocks are opened here, and an assignment of a variable or of a call on
    variables, whose types hold no call (most statements of a large program, a builtin op's call
    among them), is read directly, its call kept when it calls a function: the generic walk would
    visit the statement, then the call, to find the same. Every other statement is walked. Whether a type holds a call
    is asked once per type object (after inlining, one type object is the type of every copy of a
    Var)."""
    out: list[Call | Submit] = []
    todo: list[Any] = [function]  # Any: an assignment's fields are read before its class is narrowed
    call_free: dict[int, Type] = {}
    while todo:
        node = todo.pop()
        cls = type(node)
        if cls is AssignStmt:
            var, value = node.var, node.value
            # A leaf type is asked first, without a call: most types are such.
            if type(var.type) in SIMPLE_TYPES or type_holds_none(var.type, _LAUNCHES, call_free):
                if type(value) is Var and (type(value.type) in SIMPLE_TYPES or type_holds_none(value.type, _LAUNCHES, call_free)):
                    continue  # a copy: `y1 = d_inline3`
                if type(value) is Call and _plain_call(value, call_free):
                    if value.function:
                        out.append(value)
                    continue
        elif cls is SeqStmts or cls is Function:
            todo += reversed(children_of(node))
            continue
        out += (
            found  # type: ignore[misc]  # only Calls and Submits are kept
            for found in nodes_of_class(node, _LAUNCHES)
            if not isinstance(found, Call) or found.function
        )
    return out


def _plain_call(call: Call, call_free: dict[int, Type]) -> bool:
    """Whether `call` has no keywords nor attributes, and only Vars whose types hold no call as its
    arguments: no launch is below it."""
    if call.kwargs or call.dumps or call.attr_items:
        return False
    for arg in call.args:  # a loop: for two or three arguments all()'s generator costs more than the test
        if type(arg) is not Var or (type(arg.type) not in SIMPLE_TYPES and not type_holds_none(arg.type, _LAUNCHES, call_free)):
            return False
    return True


_LAUNCHES = (Call, Submit)
"""What `_launches` looks for."""


_NOT_HOISTED = 'docs/06-nested-call-sites.md, "What is not hoisted"'


def _left_in_place(call: Call, place: str | None, context: VerifyContext) -> str | None:
    """Why the pass left a call of a (now removed) Inline helper in place, and what to write.

    The specification splices only calls that are a statement's whole value, hoisting nested ones
    onto their own statement first, except where hoisting would change how often the call runs
    or has no statement to go before (docs/06-nested-call-sites.md, "What is not hoisted")."""
    name = call.op
    head = f"the call to Inline function '{name}'"
    if place == "while":
        return (
            f"{head} in a `while` condition cannot be spliced: the condition runs before every iteration, "
            f"statements spliced before the loop would run once ({_NOT_HOISTED}). Bind it to a variable "
            f"before the loop and again at the end of the body (`c = self.{name}(...)`), and test the variable"
        )
    if place == "init":
        return (
            f"{head} in a loop's initial values (init_values=) cannot be spliced: there is no statement of "
            f"its own to splice it before ({_NOT_HOISTED}). Bind it to a variable before the loop "
            f"(`v = self.{name}(...)`) and pass the variable"
        )
    if name in context.tuple_returning:
        return (
            f"{head} inside an expression cannot be spliced: '{name}' returns a tuple, which is wired to "
            f"the names it is unpacked into, with no single value an expression could read ({_NOT_HOISTED}). "
            f"Unpack it at its own statement (`p, q = self.{name}(...)`) and use the parts"
        )
    return None


def _places(function: Function) -> dict[int, str]:
    """Nodes (by identity) inside a `while` condition ("while") or a loop's initial value ("init")."""
    places: dict[int, str] = {}
    for node in walk(function):
        if isinstance(node, WhileStmt):
            places.update((id(sub), "while") for sub in walk(node.cond))
        if isinstance(node, ForStmt | WhileStmt):
            for iter_arg in node.iter_args:
                if iter_arg.init_value is not None:
                    places.update((id(sub), "init") for sub in walk(iter_arg.init_value))
    return places


def _spans_within(root: Function) -> dict[int, Span | None]:
    """Each node of `root` (by identity) -> its own span or the nearest enclosing one."""
    out: dict[int, Span | None] = {}
    stack: list[tuple[Node, Span | None]] = [(root, root.span)]
    while stack:
        node, inherited = stack.pop()
        span = node.span if node.span is not None else inherited
        out.setdefault(id(node), span)
        stack.extend((child, span) for child in reversed(list(iter_children(node))))
    return out


register_verifier(IRProperty.InlineFunctionsEliminated, verify_inline_functions_eliminated)
