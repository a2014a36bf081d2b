"""Which rules of a program can fire on the rows a run loads: the ones worth compiling.

Compiling a rule costs egglog about half a millisecond, and every `push` copies every compiled
rule and table; the inlining program declares about 230 rules (a load rule per constructor, a
structural subst rule per constructor and sort) and a load table per constructor, while a run's
rows use a few dozen constructors. A rule can match only when every table its query names holds a
row, and a table gets rows only from the run's loaded tables, from the program's own top-level
actions, or from the actions of a rule that fires. So the rules that can fire are a closure
(`RulesText.firing`): start from the populated tables, add each rule whose query tables are all
populated, with the tables its actions write, until nothing changes. A rule outside it never
matches, so compiling it or not changes nothing but time; nor does declaring a relation or a
constructor that no chosen rule reads or writes and nothing loads (an empty load table, a node kind
the program does not use): no term of it can exist, and every `push` copies each declared table,
so a run pays for each one. Sorts and functions are always declared, and the tables kept keep
their order, so the terms and their order are the same.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from nanopto.terms.term_rows import STRING_OR_COMMENT

_PAREN = re.compile(r"[()]")
_HEAD = re.compile(r"\(\s*([^\s()]+)")
_DECLARATIONS = frozenset({"sort", "constructor", "relation", "function", "datatype", "datatype*", "ruleset"})
"""Forms that only declare: every other form may write rows into the tables it names."""
_DECLARED = re.compile(r"\(\s*(?:constructor|relation|function)\s+([^\s()]+)")


def form_keyword(form: str) -> str:
    """The head of a top-level egglog form, `rule` for `(rule ...)` ("" for no form)."""
    head = _HEAD.match(form)
    return head.group(1) if head else ""


@dataclass(frozen=True)
class RuleForm:
    """A `(rule ...)` form of the program: its position, the tables its query reads and the
    tables its actions may write (any table an action names: over-approximated, never missed)."""

    index: int
    reads: frozenset[str]
    writes: frozenset[str]


@dataclass(frozen=True)
class RulesText:
    """An egglog program split into its top-level forms, its rules read for `firing`."""

    forms: tuple[str, ...]
    rules: tuple[RuleForm, ...]
    tables: tuple[tuple[int, str], ...]
    """The `(relation ...)` and `(constructor ...)` forms: index and table."""
    seeded: frozenset[str]
    """Tables the program's own top-level actions write (`(ScalarOperator "add" "Add")`)."""

    def firing(self, populated: Iterable[str], named: Iterable[str] = ()) -> frozenset[int]:
        """The indices of the rule forms that can fire when the tables `populated` get rows, and of
        the relations and constructors those rules, the rows, the program's actions and the caller
        (`named`: the constructors extraction names, which make no rule fire) use."""
        tables = set(populated) | self.seeded
        pending = list(self.rules)
        chosen: set[int] = set()
        grew = True
        while grew:
            grew = False
            waiting = []
            for rule in pending:
                if rule.reads <= tables:
                    chosen.add(rule.index)
                    tables |= rule.writes
                    grew = True
                else:
                    waiting.append(rule)
            pending = waiting
        # A chosen rule reads only tables in `tables`, so these are every table anything uses.
        tables.update(named)
        chosen.update(i for i, table in self.tables if table in tables)
        return frozenset(chosen)

    @property
    def every_form(self) -> frozenset[int]:
        """Every rule, relation and constructor: the whole program."""
        return frozenset(rule.index for rule in self.rules) | {i for i, _ in self.tables}

    def kept(self, chosen: frozenset[int]) -> list[str]:
        """The program's forms with only the rules and tables `chosen`, every other form in its place."""
        left_out = self.every_form - chosen
        return [form for i, form in enumerate(self.forms) if i not in left_out]


def _blanked(match: re.Match[str]) -> str:
    """A string literal or comment as spaces (a string keeps its quotes), so offsets stay put."""
    text = match.group()
    return '"' + " " * (len(text) - 2) + '"' if text.startswith('"') and len(text) > 1 else " " * len(text)


_QUOTED = re.compile(STRING_OR_COMMENT, re.DOTALL)


def _forms(text: str) -> tuple[list[str], list[str], list[list[str]]]:
    """The top-level forms of `text` (as `top_level_forms` splits it), each also without its
    strings and comments, and the first two groups directly inside each of those: one scan of the
    program's parentheses, instead of one for the forms and one per form for its groups."""
    bare_text = _QUOTED.sub(_blanked, text)
    forms: list[str] = []
    bare: list[str] = []
    groups: list[list[str]] = []
    found: list[str] = []
    depth, start, inner = 0, 0, 0
    for paren in _PAREN.finditer(bare_text):
        if paren.group() == "(":
            depth += 1
            if depth == 1:
                start, found = paren.start(), []
            elif depth == 2:
                inner = paren.start()
        else:
            if depth == 2 and len(found) < 2:
                found.append(bare_text[inner : paren.end()])
            elif depth == 1:
                forms.append(text[start : paren.end()])
                bare.append(bare_text[start : paren.end()])
                groups.append(found)
            depth -= 1
    if depth != 0:
        raise ValueError("unbalanced parentheses in egglog program text")
    return forms, bare, groups


@functools.lru_cache(maxsize=16)
def split_rules_text(text: str) -> RulesText:
    """`text` read once per distinct program (the engine compiles the same few again and again)."""
    listed, bare, inner = _forms(text)
    forms = tuple(listed)
    declared = {m.group(1) for form in bare for m in _DECLARED.finditer(form)}

    def tables(group: str) -> frozenset[str]:
        return frozenset(name for name in _HEAD.findall(group) if name in declared)

    rules: list[RuleForm] = []
    declared_tables: list[tuple[int, str]] = []
    seeded: set[str] = set()
    for i, form in enumerate(bare):
        keyword = form_keyword(form)
        if keyword == "rule" and len(groups := inner[i]) >= 2:
            rules.append(RuleForm(i, tables(groups[0]), tables(groups[1])))
        elif keyword in ("relation", "constructor") and (declared_here := _DECLARED.match(form)):
            declared_tables.append((i, declared_here.group(1)))
        elif keyword not in _DECLARATIONS:
            seeded |= tables(form)  # an action, a rewrite, an input: it may write any table it names
    return RulesText(forms, tuple(rules), tuple(declared_tables), frozenset(seeded))
