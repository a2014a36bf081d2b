"""The engine compiles only the rules that can fire on a run's tables, and that changes no result."""

from __future__ import annotations

import pytest

import nanopto.egraph.engine as engine
from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph.engine import PreparedEGraphs
from nanopto.egraph.selection import RulesText, split_rules_text
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.inlining import inline_program
from nanopto.terms.term_rows import top_level_forms
from nanopto.tools.examples import example_names, example_source

PROGRAM = """
(sort E)
(constructor A (i64) E)
(constructor B (i64) E)
(constructor C () E)
(relation R (i64))
(relation Seen (String))
(datatype D (Lit i64))
(ruleset r)
(rule ((A x)) ((B x)) :ruleset r :name "a-to-b")
(rule ((B x)) ((C)) :ruleset r :name "b-to-c")
(rule ((R x)) ((A x)) :ruleset r :name "r-to-a")
(rule ((Seen "(R 1) ; not a call")) ((C)) :ruleset r :name "in-a-string")
(rule ((= e (Lit x))) ((C)) :ruleset r :name "undeclared")
(Seen "x") ; a comment (Seen "y")
"""


def _names(indices: frozenset[int]) -> set[str]:
    program = split_rules_text(PROGRAM)
    return {program.forms[i].split(':name "')[1].split('"')[0] for i in indices if ":name" in program.forms[i]}


def test_the_rules_that_can_fire_are_a_closure_over_the_loaded_tables() -> None:
    program = split_rules_text(PROGRAM)
    assert list(program.forms) == top_level_forms(PROGRAM)
    # A loaded: a-to-b fires, its B rows let b-to-c fire; nothing writes R, so r-to-a cannot.
    # Seen has a row from the program's own action; a datatype's variant is not read as a table,
    # so a rule that reads one is always kept.
    assert _names(program.firing({"A"})) == {"a-to-b", "b-to-c", "in-a-string", "undeclared"}
    assert _names(program.firing({"R"})) == {"a-to-b", "b-to-c", "r-to-a", "in-a-string", "undeclared"}
    assert _names(program.firing(set())) == {"in-a-string", "undeclared"}
    kept = "\n".join(program.kept(program.firing({"A"})))
    assert "r-to-a" not in kept and "(constructor C () E)" in kept and '(Seen "x")' in kept
    # A relation or constructor nothing loads and no chosen rule reads or writes is not declared
    # either, unless the caller names it (extraction's roots).
    assert "(relation R (i64))" not in kept and "(relation Seen (String))" in kept
    assert "(relation R (i64))" in "\n".join(program.kept(program.firing({"R"})))
    only_c = "\n".join(program.kept(program.firing(set())))
    assert "(constructor A (i64) E)" not in only_c and "(constructor C () E)" in only_c
    assert "(constructor A (i64) E)" in "\n".join(program.kept(program.firing(set(), named={"A"})))


def test_a_run_that_needs_another_rule_compiles_them_all_once() -> None:
    prepared = PreparedEGraphs()
    first = prepared.get(PROGRAM, {"A"})
    assert prepared.get(PROGRAM, {"B"}) is first
    every = prepared.get(PROGRAM, {"R"})
    assert every is not first
    assert prepared.get(PROGRAM, {"A"}) is every and prepared.get(PROGRAM) is every
    every.run_program(*every.parse_program("(R 1)\n(run r 3)"))
    (out,) = every.run_program(*every.parse_program("(extract (B 1))"))
    assert isinstance(out, eb.ExtractBest)


@pytest.mark.parametrize("name", [*example_names()])
def test_compiling_only_the_rules_that_can_fire_changes_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    program = parse_program(example_source(name))
    selective = inline_program(program)

    class EveryRule(PreparedEGraphs):
        def get(self, rules: str, populated: object = None) -> eb.EGraph:
            return super().get(rules)

    monkeypatch.setattr(engine, "PREPARED", EveryRule())
    every = inline_program(program)
    assert python_print(selective.program) == python_print(every.program)
    assert selective.report.matches == every.report.matches


def test_the_stages_of_a_nested_run_share_one_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first stage compiles the statement groups later stages load (`EGraphRun.may_load`)."""
    compiled: list[int] = []

    class Counting(PreparedEGraphs):
        def _compile(self, rules: str, program: RulesText, chosen: frozenset[int]) -> tuple[eb.EGraph, frozenset[int]]:
            compiled.append(len(chosen & {rule.index for rule in program.rules}))
            return super()._compile(rules, program, chosen)

    monkeypatch.setattr(engine, "PREPARED", Counting())
    result = inline_program(parse_program(example_source("nested")))
    every = len(split_rules_text(next(iter(engine.PREPARED._egraphs))).rules)
    assert result.report.iterations > 0 and len(compiled) == 1 and compiled[0] < every / 2
