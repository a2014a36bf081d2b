"""Writing your own rewrite rules over nanopto's egglog sorts, and checking them before they run.

A user rule is an ordinary `Rule` (name, before, after, egglog text) in an ordinary `Ruleset`; the
pass `nanopto.passes.rewrite(ruleset, name=...)` runs it. Writing the egglog text by hand means
remembering the encoding (`(Call op args kwargs function dumps attr_items span)`, `(ConstInt "1" "INDEX")`, cons
lists), so this module also offers pattern builders that know it:

    x = var("x")
    rewrite_rule("mul-x-one", call("mul", x, const(1)), x)

renders as `(rewrite (Call "mul" (ExCons x (ExCons (ConstInt "1" _) (ExNil))) (ExNil) "False" (ExNil) (ExNil) _) x)`
with before/after `pl.mul(x, 1)` / `x` for `nanopto rules`. A pattern renders differently on the
two sides of a rule: on the left an unspecified dtype or source span is the wildcard `_`; on the
right a built call has no source span (`""`) and a constant gets its default dtype.

`check_ruleset` runs before any e-graph is built, so a typo is reported against the rule that has
it ("rule 'mul-x-one' of ruleset 'fold-mul-one': (ConstInt "1") has 1 argument, but ConstInt takes
2: ...") rather than as an egglog error about line 1 of a generated program.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nanopto.egglog_bindings import bindings as eb
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import BinOp
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.schema import fields_of
from nanopto.rules.ruleset import Rule, Ruleset
from nanopto.terms.encoding import (
    CLASS_BY_NAME,
    Constructor,
    carries_span,
    ir_constructors,
    ir_declarations,
)
from nanopto.terms.term_rows import CLEANUP_RULESET, LOAD_RULESET

RESERVED_RULESETS = frozenset({LOAD_RULESET, CLEANUP_RULESET, "splice-instance"})
"""Ruleset names the engine uses itself (`term_rows.load_rows` rebuilds terms with `load` and
`load-cleanup`; InlineFunctions swaps in `splice-instance`)."""

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_VAR = re.compile(r"^[a-z][A-Za-z0-9_]*$")


class UserRuleError(ValueError):
    """A user rule or ruleset that cannot run; the message names the ruleset and the rule."""


# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """A term over nanopto's sorts: how it reads as a rule's left side, its right side, and in `pl`.

    `match` is the text on the left of a rule (unspecified dtypes and spans are wildcards),
    `build` the text on the right (every field concrete), `shown` the `pl`-like text that
    `nanopto rules` prints, and `variables` the pattern variables it mentions.
    """

    match: str
    build: str
    shown: str
    variables: frozenset[str] = frozenset()

    # Scalar arithmetic reads as itself: `x * 1` is `binary("*", x, 1)`, the BinaryExpr a program's
    # `n * 1` parses to (a `pl.mul(n, 1)` call is a different term: see `call`).
    def __add__(self, other: PatternLike) -> Pattern:
        return binary("+", self, other)

    def __radd__(self, other: PatternLike) -> Pattern:
        return binary("+", other, self)

    def __sub__(self, other: PatternLike) -> Pattern:
        return binary("-", self, other)

    def __rsub__(self, other: PatternLike) -> Pattern:
        return binary("-", other, self)

    def __mul__(self, other: PatternLike) -> Pattern:
        return binary("*", self, other)

    def __rmul__(self, other: PatternLike) -> Pattern:
        return binary("*", other, self)

    def __floordiv__(self, other: PatternLike) -> Pattern:
        return binary("//", self, other)

    def __rfloordiv__(self, other: PatternLike) -> Pattern:
        return binary("//", other, self)

    def __mod__(self, other: PatternLike) -> Pattern:
        return binary("%", self, other)

    def __truediv__(self, other: PatternLike) -> Pattern:
        return binary("/", self, other)


PatternLike = Pattern | int | float | bool


def var(name: str) -> Pattern:
    """A pattern variable: matches any expression on the left, stands for it on the right."""
    if not _VAR.match(name):
        raise ValueError(
            f"pattern variable {name!r} must start with a lowercase letter and contain only letters, "
            "digits and '_' (capitalised names are egglog constructors)"
        )
    return Pattern(name, name, name, frozenset({name}))


def const(value: int | float | bool, dtype: DataType | str | None = None) -> Pattern:
    """A constant (`ConstInt`, `ConstFloat` or `ConstBool`), matched by value.

    Without `dtype` the left side matches the value at any dtype, and the right side builds it at
    the parser's default dtype for a literal (INDEX for an int, FP32 for a float).
    """
    if isinstance(value, bool):
        text = json.dumps(str(value))
        return Pattern(f"(ConstBool {text})", f"(ConstBool {text})", str(value))
    if isinstance(value, int):
        ctor, default = "ConstInt", DataType.INDEX
    elif isinstance(value, float):
        ctor, default = "ConstFloat", DataType.FP32
    else:
        raise TypeError(f"const() takes an int, float or bool, not {type(value).__name__}")
    literal = json.dumps(repr(value) if isinstance(value, float) else str(value))
    if dtype is None:
        matched, built = "_", json.dumps(default.name)
    else:
        name = _dtype_name(dtype)
        matched = built = json.dumps(name)
    return Pattern(f"({ctor} {literal} {matched})", f"({ctor} {literal} {built})", repr(value))


def _dtype_name(dtype: DataType | str) -> str:
    if isinstance(dtype, DataType):
        return dtype.name
    if dtype.upper() in DataType.__members__:
        return dtype.upper()
    raise ValueError(f"unknown dtype {dtype!r} (known: {', '.join(DataType.__members__)})")


def _pattern(value: PatternLike) -> Pattern:
    if isinstance(value, Pattern):
        return value
    if isinstance(value, bool | int | float):
        return const(value)
    raise TypeError(f"a pattern argument must be a Pattern or a number, not {type(value).__name__}")


def _cons(items: Sequence[str]) -> str:
    text = "(ExNil)"
    for item in reversed(items):
        text = f"(ExCons {item} {text})"
    return text


def call(op: str, *args: PatternLike) -> Pattern:
    """A call of the builtin op spelled `op` (`call("mul", x, 1)` is `pl.mul(x, 1)`), no keywords
    and no `attrs={...}`.

    The op is matched by the spelling the program uses: `pl.mul` is `"mul"`, `pl.tensor.mul` is
    `"tensor.mul"`, so a rule for both needs both. Numbers among `args` become `const(...)`.
    """
    if op not in OPS:
        close = difflib.get_close_matches(op, [s for o in OPS for s in o.spellings], n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"call(): no builtin op is spelled {op!r}{hint}")
    parts = [_pattern(a) for a in args]
    name = json.dumps(op)
    match = f"(Call {name} {_cons([p.match for p in parts])} (ExNil) \"False\" (ExNil) (ExNil) _)"
    build = f"(Call {name} {_cons([p.build for p in parts])} (ExNil) \"False\" (ExNil) (ExNil) \"\")"
    shown = f"pl.{op}({', '.join(p.shown for p in parts)})"
    return Pattern(match, build, shown, frozenset().union(*(p.variables for p in parts)))


def binary(op: str, lhs: PatternLike, rhs: PatternLike) -> Pattern:
    """A scalar operator as the program writes it: `binary("*", x, 1)` matches `n * 1`,
    `binary("<", x, y)` a comparison. `op` is the Python spelling (`+`, `//`, `==`, `and`, ...)
    or the IR's name (`Mul`, `FloorDiv`, `Eq`, ...)."""
    by_symbol = {o.value: o for o in BinOp}
    found = by_symbol.get(op) or BinOp.__members__.get(op)
    if found is None:
        known = ", ".join(o.value for o in BinOp)
        raise ValueError(f"binary(): no operator {op!r} (known: {known})")
    left, right = _pattern(lhs), _pattern(rhs)
    name = json.dumps(found.name)
    return Pattern(
        f"(BinaryExpr {name} {left.match} {right.match})",
        f"(BinaryExpr {name} {left.build} {right.build})",
        f"({left.shown} {found.value} {right.shown})",
        left.variables | right.variables,
    )


def rewrite_rule(
    name: str,
    lhs: Pattern,
    rhs: PatternLike,
    *,
    subsume: bool = False,
    before: str | None = None,
    after: str | None = None,
) -> Rule:
    """The rule `lhs => rhs` as egglog `(rewrite lhs rhs)`: every match gets `rhs` as an equal term.

    Extraction then picks the smaller of the two, which is what a simplification wants. With
    `subsume=True` the matched term is retired, so `rhs` wins even when it is larger.
    """
    right = _pattern(rhs)
    unbound = sorted(right.variables - lhs.variables)
    if unbound:
        raise UserRuleError(
            f"rule {name!r}: the right side uses {', '.join(unbound)}, which the left side "
            f"({lhs.shown}) does not bind"
        )
    flags = " :subsume" if subsume else ""
    return Rule(
        name,
        before if before is not None else lhs.shown,
        after if after is not None else right.shown,
        f"(rewrite {lhs.match} {right.build}{flags})",
    )


# ---------------------------------------------------------------------------------------------
# Checking a ruleset before it runs
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(\()|(\))|("(?:[^"\\]|\\.)*")|(;[^\n]*)|([^\s()";]+))')


def _sexprs(text: str) -> list[Any]:
    """The s-expressions of `text` as nested lists (strings stay quoted); unbalanced text raises."""
    stack: list[list[Any]] = [[]]
    pos = 0
    for match in _TOKEN.finditer(text):
        open_, close, string, _comment, atom = match.groups()
        pos = match.end()
        if open_:
            stack.append([])
        elif close:
            if len(stack) == 1:
                raise ValueError(f"unbalanced ')' at character {match.start(2) + 1}")
            done = stack.pop()
            stack[-1].append(done)
        elif string is not None:
            stack[-1].append(string)
        elif atom is not None:
            stack[-1].append(atom)
    if text[pos:].strip():
        raise ValueError(f"cannot read {text[pos:].strip()[:20]!r}")
    if len(stack) != 1:
        raise ValueError(f"{len(stack) - 1} unclosed '('")
    return stack[0]


def _show(tree: Any) -> str:
    if isinstance(tree, list):
        return "(" + " ".join(_show(t) for t in tree) + ")"
    return str(tree)


def signature(ctor: Constructor) -> str:
    """`(Call op:String args:ExL kwargs:ExL function:String dumps:ExL attr_items:ExL span:String)`: the fields a user writes."""
    cls = CLASS_BY_NAME.get(ctor.name)
    if cls is None:
        names = [""] * len(ctor.args)
    else:
        names = [f.name for f in fields_of(cls)] + (["span"] if carries_span(cls) else [])
    fields = " ".join(f"{n}:{s}" if n else s for n, s in zip(names, ctor.args, strict=True))
    return f"({ctor.name}{' ' + fields if fields else ''})"


def _check_terms(tree: Any, constructors: dict[str, Constructor]) -> None:
    """Every capitalised head must be a constructor of the IR sorts, applied to its arity.

    egglog's own primitives and keywords (`rule`, `=`, `union`, `+`, ...) are lowercase or
    symbols, and every nanopto constructor is capitalised, so a capitalised unknown is a typo.
    """
    if not isinstance(tree, list) or not tree:
        return
    head = tree[0]
    if isinstance(head, str) and head[:1].isupper():
        ctor = constructors.get(head)
        if ctor is None:
            close = difflib.get_close_matches(head, constructors, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"{_show(tree)}: no constructor named {head}{hint}")
        given = len(tree) - 1
        if given != len(ctor.args):
            raise ValueError(
                f"{_show(tree)} has {given} argument{'s' if given != 1 else ''}, but {head} takes "
                f"{len(ctor.args)}: {signature(ctor)}"
            )
    for item in tree:
        _check_terms(item, constructors)


def check_ruleset(ruleset: Ruleset) -> None:
    """Raise UserRuleError naming the rule if any rule of `ruleset` cannot run.

    Checks the names, then each rule's constructors and arities against the IR sorts, then asks
    egglog to accept the rule (sorts of arguments, unbound variables) in a scratch e-graph.
    """
    where = f"ruleset {ruleset.name!r}"
    if not _IDENT.match(ruleset.name):
        raise UserRuleError(f"{where}: a ruleset name is letters, digits, '-' and '_', starting with a letter")
    if ruleset.name in RESERVED_RULESETS:
        raise UserRuleError(f"{where}: the name is reserved by nanopto's engine; pick another")
    if not ruleset.rules:
        raise UserRuleError(f"{where} has no rules")
    seen: set[str] = set()
    for rule in ruleset.rules:
        if rule.name in seen:
            raise UserRuleError(f"{where}: two rules are named {rule.name!r}")
        seen.add(rule.name)
    constructors = {c.name: c for c in ir_constructors()}
    for rule in ruleset.rules:
        _check_rule(rule, ruleset, constructors)


def _check_rule(rule: Rule, ruleset: Ruleset, constructors: dict[str, Constructor]) -> None:
    where = f"rule {rule.name!r} of ruleset {ruleset.name!r}"
    if '"' in rule.name or "\\" in rule.name:
        raise UserRuleError(f"{where}: a rule name cannot contain quotes or backslashes")
    try:
        trees = _sexprs(rule.text)
        if len(trees) != 1 or not isinstance(trees[0], list) or trees[0][:1] not in (["rule"], ["rewrite"], ["birewrite"]):
            raise ValueError("the text must be exactly one (rule ...), (rewrite ...) or (birewrite ...) command")
        _check_terms(trees[0], constructors)
    except ValueError as exc:
        raise UserRuleError(f"{where}: {exc}") from None
    egraph = eb.EGraph()
    egraph.run_program(*egraph.parse_program(ir_declarations()))
    try:
        egraph.run_program(*egraph.parse_program(f"(ruleset {ruleset.name})\n{rule.command(ruleset.name)}"))
    except eb.EggSmolError as exc:
        message = " ".join(str(exc).split())
        raise UserRuleError(f"{where}: egglog rejects it: {message}") from None


def check_rulesets(rulesets: Iterable[Ruleset]) -> tuple[Ruleset, ...]:
    """Check every ruleset and that their names are distinct; return them as a tuple."""
    checked = tuple(rulesets)
    if not checked:
        raise UserRuleError("no rulesets given")
    names = [r.name for r in checked]
    for name in names:
        if names.count(name) > 1:
            raise UserRuleError(f"two rulesets are named {name!r}; egglog needs distinct names")
    for ruleset in checked:
        check_ruleset(ruleset)
    owner: dict[str, str] = {}
    for ruleset in checked:
        for rule in ruleset.rules:
            if rule.name in owner:
                raise UserRuleError(
                    f"rule {rule.name!r} is in both ruleset {owner[rule.name]!r} and {ruleset.name!r}; "
                    "rule names must be distinct, since match counts are reported per rule name"
                )
            owner[rule.name] = ruleset.name
    return checked


__all__ = [
    "Pattern",
    "UserRuleError",
    "call",
    "check_ruleset",
    "check_rulesets",
    "const",
    "rewrite_rule",
    "signature",
    "var",
]
