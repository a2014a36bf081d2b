"""`programs(ops=..., constants=..., shapes=...)`: steering the drawn programs toward the pattern a
user's rule targets, and the property recipe of docs/property-testing.md failing fast.

No test here times anything: the drawn programs are counted (derandomized, so every run counts the
same ones), and the recipe's budget is counted in examples run.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from nanopto.ir_terms.nodes import Program
from nanopto.ir_terms.printer import python_print
from nanopto.passes import PassManager
from nanopto.passes.rewrite import rewrite_program
from nanopto.rules import Ruleset, binary, call, rewrite_rule, var
from nanopto.verify.interpreter import interpret, values_equal
from nanopto.verify.strategies import ENTRY, inputs_for, programs

x = var("x")
FOLDS = Ruleset(
    "fold-mul-one",
    "pl.mul(x, 1) -> x and x * 1 -> x",
    (rewrite_rule("mul-x-one", call("mul", x, 1), x), rewrite_rule("scalar-mul-one", binary("*", x, 1), x)),
)
WRONG = Ruleset(
    "square-is-x",
    "x * x -> x, wrong on purpose",
    (rewrite_rule("mul-x-x", binary("*", x, x), x), rewrite_rule("pl-mul-x-x", call("mul", x, x), x)),
)


def drawn(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """The first `count` examples hypothesis draws, derandomized (the same ones every run)."""
    found: list[Any] = []

    @settings(
        max_examples=count, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example: Any) -> None:
        found.append(example)

    collect()
    return found


def fold_matches(program: Program) -> int:
    inlined = PassManager.default().run(program)
    return sum(rewrite_program(inlined, [FOLDS]).report.matches.values())


def test_ops_and_constants_make_a_fold_fire_in_most_programs() -> None:
    # Each program costs a pipeline run; docs/property-testing.md counts the same on other draws.
    steered = drawn(programs(ops=["mul"], constants=[1]), 10)
    fired = sum(fold_matches(p) > 0 for p in steered)
    assert fired >= 6, f"the fold fired in {fired} of 10 steered programs"  # 14 of 20, 33 of 40 when more are drawn
    plain = drawn(programs(), 5)
    assert sum(fold_matches(p) > 0 for p in plain) == 0  # the default draws no multiplication
    assert all("pl.mul(" not in python_print(p) for p in plain)


def test_shapes_set_every_tensor_and_its_inputs() -> None:
    for program, args in drawn(programs(shapes=[(2, 3)], max_helpers=1).flatmap(
        lambda p: st.tuples(st.just(p), inputs_for(p))
    ), 5):
        text = python_print(program)
        assert "pl.Tensor[[2, 3], pl.FP32]" in text and "pl.Tensor[[4]" not in text
        tensors = [a for a in args if isinstance(a, np.ndarray) and a.dtype == np.float32]
        assert tensors and all(a.shape == (2, 3) for a in tensors)
        inlined = PassManager.default().run(program)
        before, after = copy.deepcopy(args), copy.deepcopy(args)
        assert values_equal(interpret(program, ENTRY, *before), interpret(inlined, ENTRY, *after))


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"ops": ["pow"]}, "programs(ops=...) takes a non-empty list of add, sub, maximum, minimum, mul"),
        ({"ops": []}, "programs(ops=...)"),
        ({"constants": [1.5]}, "programs(constants=...) takes a non-empty list of integers 0..9"),
        ({"shapes": [(0,)]}, "programs(shapes=...)"),
    ],
)
def test_a_knob_it_cannot_draw_is_a_value_error(knobs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        programs(**knobs)


def test_the_recipe_reports_a_planted_wrong_rule_without_shrinking() -> None:
    """The recipe's settings (docs/property-testing.md): no shrink phase, so a failing property
    reports the first program that fails after at most `max_examples` runs, plus one replay."""
    runs = []

    def wrong_pass(program: Program) -> Program:
        return rewrite_program(PassManager.default().run(program), [WRONG]).program

    @settings(
        max_examples=25, deadline=None, database=None, derandomize=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    @given(programs(ops=["mul"]).flatmap(lambda p: st.tuples(st.just(p), inputs_for(p))))
    def keeps_meaning(case: tuple[Program, tuple[Any, ...]]) -> None:
        runs.append(1)
        program, args = case
        before, after = copy.deepcopy(args), copy.deepcopy(args)
        assert values_equal(interpret(program, ENTRY, *before), interpret(wrong_pass(program), ENTRY, *after))
        for was, now in zip(before, after, strict=True):
            assert values_equal(was, now)

    with pytest.raises(AssertionError):
        keeps_meaning()
    assert 1 <= len(runs) <= 26, f"{len(runs)} examples ran before the failure was reported"
