"""The term language as egglog-python classes (`nanopto/terms/language.py`) is the constructor
and fact tables, printed: the checked-in file is what the generator writes, and egglog-python
declares from it exactly the constructors the engine's declarations hold."""

from __future__ import annotations

import egglog as egg

from nanopto.terms import language
from nanopto.terms.encoding import ANALYSIS_FACTS, ir_constructors
from nanopto.terms.generate import LANGUAGE_FILE, language_source
from nanopto.terms.inlining import HELPER_CONSTRUCTORS, HELPER_FACTS, INLINE_TERMS


def test_the_checked_in_language_module_is_the_generated_one() -> None:
    assert LANGUAGE_FILE.read_text(encoding="utf-8") == language_source(), (
        "nanopto/terms/language.py is stale: run `python3 -m nanopto.terms.generate`"
    )


def test_egglog_python_declares_every_constructor_as_the_tables_do() -> None:
    """Each class, used in a rule, renders to the very declaration the engine loads."""
    tables = (*ir_constructors(), *INLINE_TERMS, *HELPER_CONSTRUCTORS)
    relations = [f for f in (*ANALYSIS_FACTS, *HELPER_FACTS) if f.value is None]
    rules = [egg.rule(getattr(language, c.name)(*_vars(c.args))).then() for c in tables]
    rules += [egg.rule(getattr(language, f.name)(*_vars(f.columns))).then() for f in relations]
    egraph = egg.EGraph(save_egglog_string=True)
    egraph.run(egg.ruleset(*rules))
    declared = set(egraph.as_egglog_string.splitlines())
    for item in (*tables, *relations):
        assert item.declaration() in declared


def _vars(sorts: tuple[str, ...]) -> list[egg.Expr]:
    return [egg.var(f"v{i}", _sort(a)) for i, a in enumerate(sorts)]


def _sort(name: str) -> type:
    primitives: dict[str, type] = {"i64": egg.i64, "f64": egg.f64, "String": egg.String, "bool": egg.Bool}
    return primitives.get(name) or getattr(language, name)
