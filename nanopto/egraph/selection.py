"""Which rules of a program can fire on the rows a run loads: the ones worth compiling.

Compiling a rule costs egglog about half a millisecond, and every `push` copies every compiled
rule; the inlining program declares about 230 (a load rule per constructor, a structural subst
rule per constructor and sort), while a run's rows use a few dozen constructors. A rule can match
only when every table its query names holds a row, and a table gets rows only from the run's
loaded tables, from the program's own top-level actions, or from the actions of a rule that
fires. So the rules that can fire are a closure (`RulesText.firing`): start from the populated
tables, add each rule whose query tables are all populated, with the tables its actions write,
until nothing changes. A rule outside it never matches, so compiling it or not changes nothing
but time; declarations are always compiled, so every table exists and keeps its order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from nanopto.terms.term_rows import top_level_forms

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COMMENT = re.compile(r";[^\n]*")
_PAREN = re.compile(r"[()]")
_HEAD = re.compile(r"\(\s*([^\s()]+)")
_DECLARATIONS = frozenset({"sort", "constructor", "relation", "function", "datatype", "datatype*", "ruleset"})
"""Forms that only declare: every other form may write rows into the tables it names."""
_DECLARED = re.compile(r"\(\s*(?:constructor|relation|function)\s+([^\s()]+)")


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
    seeded: frozenset[str]
    """Tables the program's own top-level actions write (`(ScalarOperator "add" "Add")`)."""

    def firing(self, populated: Iterable[str]) -> frozenset[int]:
        """The indices of the rule forms that can fire when the tables `populated` get rows."""
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
        return frozenset(chosen)

    @property
    def every_rule(self) -> frozenset[int]:
        return frozenset(rule.index for rule in self.rules)

    def kept(self, rules: frozenset[int]) -> list[str]:
        """The program's forms with only the rule forms `rules`, every other form in its place."""
        left_out = {rule.index for rule in self.rules} - rules
        return [form for i, form in enumerate(self.forms) if i not in left_out]

    def text(self, rules: frozenset[int]) -> str:
        return "\n".join(self.kept(rules))


def _bare(form: str) -> str:
    """`form` without its string literals and comments: what remains names tables and variables."""
    return _COMMENT.sub("", _STRING.sub('""', form))


def _groups(form: str) -> list[str]:
    """The first two parenthesised groups directly inside `form` (itself one group, without strings)."""
    groups: list[str] = []
    depth, start = 0, 0
    for paren in _PAREN.finditer(form):
        if paren.group() == "(":
            depth += 1
            if depth == 2:
                start = paren.start()
        else:
            if depth == 2:
                groups.append(form[start : paren.end()])
                if len(groups) == 2:
                    break
            depth -= 1
    return groups


@functools.lru_cache(maxsize=16)
def split_rules_text(text: str) -> RulesText:
    """`text` read once per distinct program (the engine compiles the same few again and again)."""
    forms = tuple(top_level_forms(text))
    bare = [_bare(form) for form in forms]
    declared = {m.group(1) for form in bare for m in _DECLARED.finditer(form)}

    def tables(group: str) -> frozenset[str]:
        return frozenset(name for name in _HEAD.findall(group) if name in declared)

    rules: list[RuleForm] = []
    seeded: set[str] = set()
    for i, form in enumerate(bare):
        head = _HEAD.match(form)
        keyword = head.group(1) if head else ""
        groups = _groups(form)
        if keyword == "rule" and len(groups) >= 2:
            rules.append(RuleForm(i, tables(groups[0]), tables(groups[1])))
        elif keyword not in _DECLARATIONS:
            seeded |= tables(form)  # an action, a rewrite, an input: it may write any table it names
    return RulesText(forms, tuple(rules), frozenset(seeded))
