"""The pass and the stepper run one staging driver (`driver.run_stages`): on every shipped example
and on drawn programs they give the same program (up to the names of fresh locals) and refuse the
same programs with the same error."""

from __future__ import annotations

from importlib.resources import files

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from nanopto import ir
from nanopto.ir_terms.structural import structural_equal
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.steps import inline_steps
from nanopto.verify.strategies import programs

EXAMPLES = sorted(p.name for p in files("nanopto.examples").iterdir() if p.name.endswith(".py") and p.name != "__init__.py")

Outcome = tuple[str, object]


def by_pass(program: ir.Program) -> Outcome:
    try:
        return "program", inline_program(hoist_program(program)).program
    except Exception as error:  # a refusal: compared with the stepper's below
        return type(error).__name__, str(error)


def by_stepper(program: ir.Program) -> Outcome:
    try:
        steps = list(inline_steps(program))
    except Exception as error:
        return type(error).__name__, str(error)
    return "program", steps[-1].program if steps else program


def assert_same(program: ir.Program) -> str:
    """Pass and stepper agree on `program`; returns "program" or the refusal's error class."""
    (kind, passed), (stepped_kind, stepped) = by_pass(program), by_stepper(program)
    assert kind == stepped_kind, (kind, passed, stepped_kind, stepped)
    if kind == "program":
        assert isinstance(passed, ir.Program) and isinstance(stepped, ir.Program)
        assert structural_equal(passed, stepped, enable_auto_mapping=True), (
            ir.python_print(passed), ir.python_print(stepped)
        )
    return kind


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_stepper_and_the_pass_agree_on_every_example(name: str) -> None:
    assert_same(ir.parse_program(files("nanopto.examples").joinpath(name).read_text(), name))


@pytest.mark.parametrize("count", [18, pytest.param(200, marks=pytest.mark.soak)])
def test_the_stepper_and_the_pass_agree_on_drawn_programs(count: int) -> None:
    """CI draws the first 18 programs (derandomized, the same every run); the soak tier draws 200.
    The 18 reach every line of nanopto that the first 25 reach beyond the shipped examples, but
    one (is_self_update's `t = t`, which tests/verify reaches); each program costs about half a
    CPU-second, mostly the stepper's one stage per site."""
    seen = {"program": 0, "refused": 0}

    @settings(
        max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(aliasing=True))
    def agree(program: ir.Program) -> None:
        seen["program" if assert_same(program) == "program" else "refused"] += 1

    agree()
    assert seen["program"] > 0, seen  # refusals are rare since one analysis decides every binding
