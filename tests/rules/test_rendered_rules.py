"""The stock rules run as egglog rendered them from their declarations, and only so."""

from __future__ import annotations

import subprocess
import sys

from nanopto.rules import INLINE_RULESETS
from nanopto.rules.generate import RENDERED_FILE, rendered_source


def test_the_checked_in_rendering_is_the_declarations_rendering() -> None:
    assert RENDERED_FILE.read_text(encoding="utf-8") == rendered_source(), (
        "nanopto/rules/rendered.py is stale: run `python3 -m nanopto.rules.generate`"
    )


def test_every_stock_rule_reads_back_through_egglogs_parser_with_its_name() -> None:
    for ruleset in INLINE_RULESETS:
        assert ruleset.rules
        for rule in ruleset.rules:
            assert rule.before and rule.after
            command = rule.command(ruleset.name)
            assert f':ruleset {ruleset.name} :name "{rule.name}"' in command


def test_running_the_stock_rules_never_imports_egglogs_python_front_end() -> None:
    code = "import sys\nfrom nanopto.rules import INLINE_RULESETS\n[r.commands() for r in INLINE_RULESETS]\nprint('egglog' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "False"


def test_a_stock_rulesets_checked_in_commands_are_its_rules_rendered() -> None:
    """`Ruleset.commands` returns the rendering checked in with the stock rules instead of rendering
    them again; it must be what rendering them gives (and a ruleset changed from one renders anew)."""
    from nanopto.rules import RETIRE
    from nanopto.rules.ruleset import _commands

    for ruleset in (*INLINE_RULESETS, RETIRE):
        assert ruleset.rendered and ruleset.commands() == _commands(ruleset)
    fewer = INLINE_RULESETS[1].without("subst-formal")
    assert not fewer.rendered and "subst-formal" not in fewer.commands()
