"""The egglog encoding: pinned egglog version, generated sorts, lossless round trip."""

from __future__ import annotations

from importlib import metadata
from importlib.resources import files

import pytest

from nanopto import ir
from nanopto.egraph import roundtrip_program
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import NODE_CLASSES
from nanopto.rules import INLINE_RULESETS, SUBST
from nanopto.terms.encoding import EGGLOG_VERSION, ir_constructors

EXAMPLES = sorted(p.name for p in files("nanopto.examples").iterdir() if p.name.endswith(".py") and p.name != "__init__.py")


def test_egglog_version_is_the_one_the_low_level_encoding_was_written_for() -> None:
    """`encoding.py` uses egglog's non-public `bindings` API: an upgrade must be a deliberate change."""
    assert metadata.version("egglog") == EGGLOG_VERSION


def test_every_node_class_has_a_constructor_and_a_substitution_rule() -> None:
    names = {c.name for c in ir_constructors()}
    rule_names = {r.name for r in SUBST.rules}
    for cls in NODE_CLASSES:
        if cls.__name__ in ("Param", "Function", "Program"):
            continue
        assert cls.__name__ in names
        if cls.__name__ not in ("Var", "IterArg"):
            assert f"subst-{cls.__name__}" in rule_names


def test_rules_have_unique_names_and_before_after_comments() -> None:
    seen: set[str] = set()
    for ruleset in INLINE_RULESETS:
        for rule in ruleset.rules:
            assert rule.name not in seen and rule.before and rule.after
            seen.add(rule.name)


@pytest.mark.parametrize("name", EXAMPLES)
def test_decode_of_encode_is_the_identity_on_every_example(name: str) -> None:
    source = files("nanopto.examples").joinpath(name).read_text()
    program = parse_program(source, name)
    ir.assert_structural_equal(roundtrip_program(program), program)
