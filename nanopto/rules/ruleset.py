"""Named rules and rulesets: the vocabulary a user reads in `nanopto rules` and in a trace."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One egglog rule with its name and the before/after shape it implements."""

    name: str
    before: str
    after: str
    text: str
    """The egglog command, without `:ruleset`/`:name` (added when the ruleset is emitted)."""

    def command(self, ruleset: str) -> str:
        return f'{self.text[:-1]} :ruleset {ruleset} :name "{self.name}")'


@dataclass(frozen=True)
class Ruleset:
    """A group of rules run together; its `name` is the egglog ruleset name."""

    name: str
    doc: str
    rules: tuple[Rule, ...]

    def commands(self) -> str:
        lines = [f"(ruleset {self.name})"]
        lines += [rule.command(self.name) for rule in self.rules]
        return "\n".join(lines)

    def without(self, *rule_names: str) -> Ruleset:
        """This ruleset minus some rules: for experiments ("what if projection did not fire?")."""
        missing = set(rule_names) - {r.name for r in self.rules}
        if missing:
            raise KeyError(f"ruleset '{self.name}' has no rule {sorted(missing)}")
        return Ruleset(self.name, self.doc, tuple(r for r in self.rules if r.name not in rule_names))
