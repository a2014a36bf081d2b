"""Shorthands for writing terms of nanopto's language in a rule.

Every term can be written with the constructors of `nanopto.terms.language` alone; these build the
common ones the way the encoder writes them, so a pattern matches what a program holds:

    x = var("x", Ex)
    call("mul", x, 1)      # pl.mul(x, 1): Call("mul", ExCons(x, ExCons(ConstInt(1, _), ExNil())), ...)
    binary("*", x, 1)      # the scalar operator x * 1: BinaryExpr("Mul", x, ConstInt(1, _))

A number is a constant (`ConstInt`, `ConstFloat`, `ConstBool`) whose dtype is a wildcard on the left
of a rule; on the right, `const(1)` builds the parser's default dtype for a literal (INDEX for an
int, FP32 for a float). A call's source span is a wildcard, or `String("")` when built.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Any

import egglog as egg
from egglog import Bool, String, f64, i64

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import BinOp
from nanopto.ir_terms.ops import OPS
from nanopto.rules.ruleset import Rule, RuleDeclarationError, declare
from nanopto.rules.user_rules import UserRuleError
from nanopto.terms import language as T

Term = T.Ex | int | float | bool
"""What a pattern argument may be: a term or a number (a constant)."""

_PRIMITIVES: dict[str, type] = {"i64": i64, "f64": f64, "String": String, "bool": Bool}
_FRESH: Iterator[int] = itertools.count()


_VAR = re.compile(r"^[a-z][A-Za-z0-9_]*$")


def var(name: str, sort: type = T.Ex) -> Any:
    """A pattern variable (an expression unless `sort` says otherwise): matches anything of its sort
    on a rule's left side, stands for what it matched on the right."""
    if not _VAR.match(name):
        raise ValueError(
            f"pattern variable {name!r} must start with a lowercase letter and contain only letters, "
            "digits and '_' (capitalised names are egglog constructors)"
        )
    return egg.var(name, sort)


def rewrite_rule(
    name: str,
    lhs: T.Ex,
    rhs: Term,
    *,
    when: Sequence[Any] = (),
    subsume: bool = False,
    doc: str = "",
) -> Rule:
    """`declare(name, rewrite(lhs, subsume=subsume).to(rhs, *when))`: every match of `lhs` where the
    facts `when` hold gets `rhs` as an equal term.

    Extraction then picks the smaller of the two, which is what a simplification wants. With
    `subsume=True` the matched term is retired, so `rhs` wins even when it is larger (and a rule
    whose `rhs` cannot be extracted then leaves nothing: `check_ruleset` refuses that shape).
    """
    right = rhs if isinstance(rhs, T.Ex) else const(rhs, built=True)
    try:
        declaration = egg.rewrite(lhs, subsume=subsume).to(right, *when)
    except (TypeError, ValueError, AttributeError) as exc:
        raise UserRuleError(f"rule {name!r}: {' '.join(str(exc).split())}") from None
    try:
        return declare(name, declaration, doc)
    except RuleDeclarationError as exc:
        raise UserRuleError(str(exc)) from None


def sort_class(sort: str) -> type:
    """The egglog-python class of a sort named as the constructor tables name it (`Ex`, `i64`, ...)."""
    found: type = _PRIMITIVES.get(sort) or getattr(T, sort)
    return found


def wildcard(sort: type, hint: str = "any") -> object:
    """A pattern variable no other part of the rule mentions (each call makes a new one)."""
    return var(f"{hint}{next(_FRESH)}", sort)


def const(value: int | float | bool, dtype: DataType | str | None = None, *, built: bool = False) -> T.Ex:
    """A constant matched by value. Without `dtype` its dtype is a wildcard, or with `built=True` (on
    a rule's right side) the parser's default for a literal."""
    if isinstance(value, bool):
        return T.ConstBool(value)
    name: object
    if dtype is not None:
        name = _dtype_name(dtype)
    elif built:
        name = DataType.INDEX.name if isinstance(value, int) else DataType.FP32.name
    else:
        name = wildcard(String, "dtype")
    if isinstance(value, int):
        return T.ConstInt(value, name)  # type: ignore[arg-type]
    if isinstance(value, float):
        return T.ConstFloat(value, name)  # type: ignore[arg-type]
    raise TypeError(f"const() takes an int, float or bool, not {type(value).__name__}")


def _dtype_name(dtype: DataType | str) -> str:
    if isinstance(dtype, DataType):
        return dtype.name
    if dtype.upper() in DataType.__members__:
        return dtype.upper()
    raise ValueError(f"unknown dtype {dtype!r} (known: {', '.join(DataType.__members__)})")


def term(value: Term) -> T.Ex:
    """A pattern argument as a term: a number becomes `const(number)`."""
    if isinstance(value, bool | int | float):
        return const(value)
    if isinstance(value, T.Ex):
        return value
    raise TypeError(f"a pattern argument must be an Ex term or a number, not {type(value).__name__}")


def exprs(*items: Term) -> T.ExL:
    """The expression list `[items...]` as a cons list (`ExCons(a, ExCons(b, ExNil()))`)."""
    out = T.ExNil()
    for item in reversed(items):
        out = T.ExCons(term(item), out)
    return out


def call(op: str, *args: Term, span: object | None = None) -> T.Ex:
    """A call of the builtin op spelled `op` (`call("mul", x, 1)` is `pl.mul(x, 1)`), with no
    keywords and no `attrs={...}`. The op is matched by the spelling the program uses: `pl.mul` is
    `"mul"`, `pl.tensor.mul` is `"tensor.mul"`. `span` defaults to a wildcard."""
    if op not in OPS:
        close = difflib.get_close_matches(op, [s for o in OPS for s in o.spellings], n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"call(): no builtin op is spelled {op!r}{hint}")
    where = span if span is not None else wildcard(String, "span")
    return T.Call(op, exprs(*args), T.ExNil(), "False", T.ExNil(), T.ExNil(), where)  # type: ignore[arg-type]


def binary(op: str, lhs: Term, rhs: Term) -> T.Ex:
    """A scalar operator as the program writes it: `binary("*", x, 1)` matches `n * 1`. `op` is the
    Python spelling (`+`, `//`, `==`, `and`, ...) or the IR's name (`Mul`, `FloorDiv`, `Eq`, ...)."""
    by_symbol = {o.value: o for o in BinOp}
    found = by_symbol.get(op) or BinOp.__members__.get(op)
    if found is None:
        raise ValueError(f"binary(): no operator {op!r} (known: {', '.join(o.value for o in BinOp)})")
    return T.BinaryExpr(found.name, term(lhs), term(rhs))


__all__ = ["Term", "binary", "call", "const", "exprs", "rewrite_rule", "sort_class", "term", "var", "wildcard"]
