"""Named rules and rulesets: the vocabulary a user reads in `nanopto rules` and in a trace.

A rule is declared in egglog-python's own language over the term classes
(`nanopto.terms.language`): `rewrite(lhs).to(rhs, *conditions)`, `birewrite(...)`,
`rule(*facts).then(*actions)`. `declare(name, declaration)` turns one into a `Rule`: egglog-python
checks the sorts and translates it, egglog renders it to the text the engine runs, and its
before/after lines are printed from the declaration itself (`nanopto.rules.shown`). A rewrite is
run as the rule egglog would desugar it to, `(rule ((= lhs ...) conditions...) ((union lhs rhs)))`,
so that it carries its name into the run report. A `Rule(name, before, after, text)` of raw egglog
text is still accepted (a user's rules file may hold one).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from nanopto.egglog_bindings import bindings as eb
from nanopto.rules.shown import show_actions, show_expr, show_facts
from nanopto.terms.term_rows import SPAN

if TYPE_CHECKING:
    from egglog import RewriteOrRule

    Declaration: TypeAlias = RewriteOrRule
else:
    Declaration = Any
"""What egglog-python's `rewrite(...).to(...)`, `birewrite(...).to(...)` and `rule(...).then(...)` make.
egglog-python's front end is imported only where a rule is declared (`declare`), so running the
stock rules (rendered once, `nanopto.rules.rendered`) never loads it (docs/architecture.md#latency)."""

COST_TABLE = "cost_table_"
"""The prefix of the function egglog-python's `set_cost` writes for a constructor (`cost_table_Call`)."""

REVERSED = " (reversed)"
"""Appended to a birewrite's name for its right-to-left half (both count as the one rule)."""


class UserRuleError(ValueError):
    """A user rule or ruleset that cannot run; the message names the ruleset and the rule."""


class RuleDeclarationError(UserRuleError):
    """egglog-python could not translate a declaration (a sort error, an unknown function)."""


@dataclass(frozen=True)
class Rendered:
    """A declaration translated by egglog-python: one egglog rule per direction, without a ruleset."""

    rules: tuple[tuple[str, list[eb._Action], list[eb._Fact]], ...]
    """(egglog rule name, head actions, body facts) per direction."""


@dataclass(frozen=True)
class Rule:
    """One egglog rule with its name and the before/after shape it implements.

    Made by `declare` (a typed declaration) or directly from raw egglog `text` (a user's)."""

    name: str
    before: str
    after: str
    text: str = ""
    """Raw egglog: one `(rule ...)`, `(rewrite ...)` or `(birewrite ...)`, without `:ruleset`/`:name`;
    for a declared rule, the egglog rule(s) egglog rendered from it."""
    doc: str = ""
    """What the rule is for, in words (`nanopto rules` prints it after the before/after line)."""
    rendered: Rendered | None = field(default=None, compare=False, repr=False)
    where: str = field(default="", compare=False, repr=False)
    """`file:line` of the code that declared the rule (a user's rules file), for errors that blame it."""

    def __post_init__(self) -> None:
        if not self.where:
            object.__setattr__(self, "where", declared_at())

    @property
    def egglog_names(self) -> tuple[str, ...]:
        """The names egglog reports this rule's matches under."""
        rendered = self.rendered
        if rendered is None:
            try:
                rendered = parse_raw(self.name, self.text)
            except RuleDeclarationError:
                return (self.name,)
        return tuple(name for name, _, _ in rendered.rules)

    @property
    def subsumes(self) -> bool:
        """Whether the rule retires a term (`subsume`): the only way a rule can leave nothing to extract."""
        if self.rendered is None:
            return "subsume" in self.text or "delete" in self.text
        return any(
            isinstance(action, eb.Change) for _, head, _ in self.rendered.rules for action in head
        )

    @property
    def cost_tables(self) -> frozenset[str]:
        """The cost tables (`cost_table_<Constructor>`) the rule writes: egglog-python's
        `set_cost(term, n)` gives `term` the cost `n` for extraction (docs/your-own-rules.md#costs)."""
        rendered = self.rendered
        if rendered is None:
            if COST_TABLE not in self.text:  # no table to find: skip parsing (the stock rules, at every start)
                return frozenset()
            try:
                rendered = parse_raw(self.name, self.text)
            except RuleDeclarationError:
                return frozenset()
        return frozenset(
            action.lhs
            for _, head, _ in rendered.rules
            for action in head
            if isinstance(action, eb.Set) and action.lhs.startswith(COST_TABLE)
        )

    def command(self, ruleset: str) -> str:
        """The egglog command(s) running this rule in `ruleset`, rendered by egglog."""
        rendered = self.rendered if self.rendered is not None else parse_raw(self.name, self.text)
        return "\n".join(
            str(eb.RuleCommand(eb.Rule(SPAN, head, body, name, ruleset))) for name, head, body in rendered.rules
        )


_RULES_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def declared_at() -> str:
    """`file:line` of the nearest caller outside `nanopto.rules` (and Python's own machinery): where
    a user wrote the rule."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(("<", _RULES_DIR)) and "/egglog/" not in filename:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""


_PARSER = eb.EGraph()
"""Only parses raw rule text; it never runs anything."""


@functools.lru_cache(maxsize=256)
def parse_raw(name: str, text: str) -> Rendered:
    """A raw egglog rule (`rule`, `rewrite` or `birewrite`), read by egglog's own parser and run as
    the rules it stands for, named `name`. egglog reads each `_` as a fresh variable `@_k`, a name
    its parser reserves; it is renamed `_k` so the rendered text reads back."""
    try:
        commands = _PARSER.parse_program(text)
    except eb.EggSmolError as exc:
        raise RuleDeclarationError(f"rule {name!r}: egglog cannot read it: {' '.join(str(exc).split())}") from None
    if len(commands) == 1:
        rules = _as_rules(name, commands[0])
    elif commands and all(isinstance(c, eb.RuleCommand) for c in commands):
        # A rendered rule that runs as several egglog rules (a birewrite): each keeps its own name.
        rules = tuple((c.rule.name, list(c.rule.head), list(c.rule.body)) for c in commands)  # type: ignore[union-attr]
    else:
        raise RuleDeclarationError(
            f"rule {name!r}: the text must be exactly one (rule ...), (rewrite ...) or (birewrite ...) command"
        )
    return Rendered(tuple((n, *_renamed_wildcards(h, b)) for n, h, b in rules))


def _as_rules(name: str, command: object) -> tuple[tuple[str, list[eb._Action], list[eb._Fact]], ...]:
    match command:
        case eb.RewriteCommand(rewrite=rw, subsume=subsume):
            return ((name, *_desugared(rw.lhs, rw.rhs, list(rw.conditions), subsume)),)
        case eb.BiRewriteCommand(rewrite=rw):
            return (
                (name, *_desugared(rw.lhs, rw.rhs, list(rw.conditions), False)),
                (name + REVERSED, *_desugared(rw.rhs, rw.lhs, list(rw.conditions), False)),
            )
        case eb.RuleCommand(rule=rl):
            return ((name, list(rl.head), list(rl.body)),)
        case _:
            pass
    raise RuleDeclarationError(
        f"rule {name!r}: the text must be exactly one (rule ...), (rewrite ...) or (birewrite ...) command"
    )


def _renamed_wildcards(head: list[eb._Action], body: list[eb._Fact]) -> tuple[list[eb._Action], list[eb._Fact]]:
    def rename(expr: eb._Expr) -> eb._Expr:
        if isinstance(expr, eb.Var) and expr.name.startswith("@"):
            return eb.Var(SPAN, "__" + expr.name[1:].lstrip("_"))
        if isinstance(expr, eb.Call):
            return eb.Call(SPAN, expr.name, [rename(a) for a in expr.args])
        return expr

    return _mapped(head, body, rename)


def declare(name: str, declaration: Declaration, doc: str = "") -> Rule:
    """The rule `declaration` (made with egglog-python's `rewrite`, `birewrite` or `rule`) named `name`."""
    import egglog as egg
    from egglog.declarations import BiRewriteDecl, Ident, RewriteDecl, RuleDecl
    from egglog.egraph_state import EGraphState

    if not isinstance(declaration, egg.RewriteOrRule):
        raise RuleDeclarationError(
            f"rule {name!r}: expected rewrite(...).to(...), birewrite(...).to(...) or rule(...).then(...), "
            f"got {type(declaration).__name__}"
        )
    try:
        state = EGraphState(eb.EGraph())
        state.__egg_decls__ |= declaration.__egg_decls__
        command = state.command_to_egg(declaration.decl, Ident(""))
    except (eb.EggSmolError, TypeError, ValueError, KeyError) as exc:
        raise RuleDeclarationError(f"rule {name!r}: {' '.join(str(exc).split())}") from None
    decl = declaration.decl
    match command:
        case eb.RewriteCommand(rewrite=rewrite, subsume=subsume):
            assert isinstance(decl, RewriteDecl)
            head, body = _desugared(rewrite.lhs, rewrite.rhs, rewrite.conditions, subsume)
            rendered = Rendered(((name, head, body),))
            before, after = _shown_rewrite(rewrite.lhs, rewrite.rhs, rewrite.conditions, subsume)
        case eb.BiRewriteCommand(rewrite=rewrite):
            assert isinstance(decl, BiRewriteDecl)
            forward = _desugared(rewrite.lhs, rewrite.rhs, rewrite.conditions, False)
            backward = _desugared(rewrite.rhs, rewrite.lhs, rewrite.conditions, False)
            rendered = Rendered(((name, *forward), (name + REVERSED, *backward)))
            before, after = _shown_rewrite(rewrite.lhs, rewrite.rhs, rewrite.conditions, False)
            after += "   (and back)"
        case eb.RuleCommand(rule=rule):
            assert isinstance(decl, RuleDecl)
            rendered = Rendered(((name, list(rule.head), list(rule.body)),))
            before, after = show_facts(rule.body), show_actions(rule.head)
        case _:
            raise RuleDeclarationError(f"rule {name!r}: {type(command).__name__} is not a rule")
    rendered = Rendered(tuple((n, *_renumbered(_grounded(h, b), b)) for n, h, b in rendered.rules))
    text = "\n".join(str(eb.RuleCommand(eb.Rule(SPAN, h, b, n, ""))) for n, h, b in rendered.rules)
    return Rule(name, before, after, text, doc=doc, rendered=rendered)


WILDCARD_DEFAULTS = {"span": "", "dtype": ""}
"""The wildcards `nanopto.rules.patterns` makes (`_span3`, `_dtype7`): matched as anything on a
rule's left side; on its right side, where nothing binds them, they are built as a call without
source span and a constant of the parser's default dtype for its literal."""
_DEFAULT_DTYPE = {"ConstInt": "INDEX", "ConstFloat": "FP32"}


def _vars_in(expr: eb._Expr, into: set[str]) -> None:
    if isinstance(expr, eb.Var):
        into.add(expr.name)
    elif isinstance(expr, eb.Call):
        for arg in expr.args:
            _vars_in(arg, into)


def _bound(body: list[eb._Fact]) -> set[str]:
    names: set[str] = set()
    for fact in body:
        if isinstance(fact, eb.Eq):
            _vars_in(fact.left, names)
            _vars_in(fact.right, names)
        else:
            _vars_in(fact.expr, names)
    return names


def _wildcard(name: str) -> str | None:
    """The kind of a pattern wildcard variable (`span`, `dtype`), or None."""
    for kind in WILDCARD_DEFAULTS:
        prefix = f"_{kind}"
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return kind
    return None


def _ground(expr: eb._Expr, bound: set[str], dtype: str = "") -> eb._Expr:
    if isinstance(expr, eb.Var) and expr.name not in bound:
        kind = _wildcard(expr.name)
        if kind == "span":
            return eb.Lit(SPAN, eb.String(""))
        if kind == "dtype" and dtype:
            return eb.Lit(SPAN, eb.String(dtype))
        return expr
    if isinstance(expr, eb.Call):
        default = _DEFAULT_DTYPE.get(expr.name, "")
        return eb.Call(SPAN, expr.name, [_ground(a, bound, default) for a in expr.args])
    return expr


def _grounded(head: list[eb._Action], body: list[eb._Fact]) -> list[eb._Action]:
    """`head` with the wildcards nothing binds built as their defaults (`WILDCARD_DEFAULTS`)."""
    bound = _bound(body)
    out: list[eb._Action] = []
    for action in head:
        match action:
            case eb.Union(lhs=a, rhs=b):
                out.append(eb.Union(SPAN, _ground(a, bound), _ground(b, bound)))
            case eb.Expr_(expr=e):
                out.append(eb.Expr_(SPAN, _ground(e, bound)))
            case eb.Set(lhs=name, args=args, rhs=b):
                out.append(eb.Set(SPAN, name, [_ground(a, bound) for a in args], _ground(b, bound)))
            case eb.Let(lhs=name, rhs=e):
                out.append(eb.Let(SPAN, name, _ground(e, bound)))
                bound.add(name)
            case _:
                out.append(action)
    return out


def _renumbered(head: list[eb._Action], body: list[eb._Fact]) -> tuple[list[eb._Action], list[eb._Fact]]:
    """The wildcards numbered per rule, in order of appearance (`_span0`, `_dtype0`, `_dtype1`, ...),
    so a rule renders the same text whatever else the process declared before it."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(expr: eb._Expr) -> eb._Expr:
        if isinstance(expr, eb.Var):
            kind = _wildcard(expr.name)
            if kind is None:
                return expr
            if expr.name not in names:
                names[expr.name] = f"_{kind}{counts.get(kind, 0)}"
                counts[kind] = counts.get(kind, 0) + 1
            return eb.Var(SPAN, names[expr.name])
        if isinstance(expr, eb.Call):
            return eb.Call(SPAN, expr.name, [rename(a) for a in expr.args])
        return expr

    return _mapped(head, body, rename)


def _mapped(
    head: list[eb._Action], body: list[eb._Fact], rename: Callable[[eb._Expr], eb._Expr]
) -> tuple[list[eb._Action], list[eb._Fact]]:
    """`head` and `body` with `rename` applied to every expression."""
    facts: list[eb._Fact] = [
        eb.Eq(SPAN, rename(f.left), rename(f.right)) if isinstance(f, eb.Eq) else eb.Fact(rename(f.expr)) for f in body
    ]
    actions: list[eb._Action] = []
    for action in head:
        match action:
            case eb.Union(lhs=a, rhs=b):
                actions.append(eb.Union(SPAN, rename(a), rename(b)))
            case eb.Expr_(expr=e):
                actions.append(eb.Expr_(SPAN, rename(e)))
            case eb.Set(lhs=fn, args=args, rhs=b):
                actions.append(eb.Set(SPAN, fn, [rename(a) for a in args], rename(b)))
            case eb.Let(lhs=var, rhs=e):
                actions.append(eb.Let(SPAN, var, rename(e)))
            case eb.Change(change=change, sym=fn, args=args):
                actions.append(eb.Change(SPAN, change, fn, [rename(a) for a in args]))
            case _:
                actions.append(action)
    return actions, facts


_LHS = "__lhs"
"""The variable bound to a rewrite's matched term (egglog's own desugaring binds one too)."""


def _desugared(
    lhs: eb._Expr, rhs: eb._Expr, conditions: list[eb._Fact], subsume: bool
) -> tuple[list[eb._Action], list[eb._Fact]]:
    """`(rewrite lhs rhs :when conditions)` as the rule egglog runs for it."""
    matched = eb.Var(SPAN, _LHS)
    head: list[eb._Action] = [eb.Union(SPAN, matched, rhs)]
    if subsume:
        if not isinstance(lhs, eb.Call):
            raise RuleDeclarationError("a subsuming rewrite must match a constructor application")
        head.append(eb.Change(SPAN, eb.Subsume(), lhs.name, lhs.args))
    return head, [eb.Eq(SPAN, matched, lhs), *conditions]


def _shown_rewrite(lhs: eb._Expr, rhs: eb._Expr, conditions: list[eb._Fact], subsume: bool) -> tuple[str, str]:
    where = f"   where {show_facts(conditions)}" if conditions else ""
    return show_expr(lhs) + where, show_expr(rhs) + ("   (replacing it)" if subsume else "")


@dataclass(frozen=True)
class Ruleset:
    """A group of rules run together; its `name` is the egglog ruleset name."""

    name: str
    doc: str
    rules: tuple[Rule, ...]
    rendered: str = field(default="", compare=False, repr=False)
    """`commands()` as rendered when the ruleset was generated (the stock rulesets, from
    `nanopto.rules.rendered`): rendering reads every raw rule with egglog's parser, about 30 ms of
    every process's first run."""

    def commands(self) -> str:
        return self.rendered or _commands(self)

    @property
    def cost_tables(self) -> frozenset[str]:
        """The cost tables its rules write (`Rule.cost_tables`)."""
        return _cost_tables(self)

    def egglog_names(self) -> dict[str, str]:
        """egglog rule name -> the name of the rule it belongs to (a birewrite has two)."""
        return {egglog: rule.name for rule in self.rules for egglog in rule.egglog_names}

    def without(self, *rule_names: str) -> Ruleset:
        """This ruleset minus some rules: for experiments ("what if projection did not fire?")."""
        missing = set(rule_names) - {r.name for r in self.rules}
        if missing:
            raise KeyError(f"ruleset '{self.name}' has no rule {sorted(missing)}")
        return Ruleset(self.name, self.doc, tuple(r for r in self.rules if r.name not in rule_names))


@functools.lru_cache(maxsize=64)
def _cost_tables(ruleset: Ruleset) -> frozenset[str]:
    """Found once per ruleset: the engine asks at every run."""
    return frozenset(table for rule in ruleset.rules for table in rule.cost_tables)


@functools.lru_cache(maxsize=64)
def _commands(ruleset: Ruleset) -> str:
    """Rendered once per ruleset: the engine asks for the text at every run."""
    lines = [str(eb.AddRuleset(SPAN, ruleset.name))]
    lines += [rule.command(ruleset.name) for rule in ruleset.rules]
    return "\n".join(lines)
