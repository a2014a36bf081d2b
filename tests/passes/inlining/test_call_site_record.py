"""`CallSite` and `ParamBinding` write their own constructors (one update of the dict, made per call
site and per argument): they must still take exactly their fields, with their defaults, and stay
frozen, comparable, replaceable records."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap

import pytest

from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining.call_sites import CallSite, ParamBinding, SiteForm
from nanopto.passes.inlining.driver import inline_program

SOURCE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x):
        a = pl.add(x, x)
        return a

    @pl.function
    def main(self, y0):
        y1 = self.helper(y0)
        y2 = self.helper(y1)
        return y2
"""


@pytest.mark.parametrize("record", [CallSite, ParamBinding])
def test_the_constructor_takes_exactly_the_fields_with_their_defaults(record: type) -> None:
    parameters = list(inspect.signature(record.__init__).parameters.values())[1:]  # type: ignore[misc]
    fields = dataclasses.fields(record)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, field in zip(parameters, fields, strict=True):
        expected = inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        assert parameter.default == expected, field.name


def test_a_site_is_a_frozen_record() -> None:
    sites = inline_program(parse_program(textwrap.dedent(SOURCE))).sites
    first, second = sites
    assert (first.number, first.caller, first.helper, first.form) == (0, "main", "helper", SiteForm.ASSIGN)
    assert first.reads == () and first.stand_in is None and first.bound_returns == () and first.copied_out == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.number = 5  # type: ignore[misc]
    again = dataclasses.replace(first)
    assert again == first and hash(again) == hash(first) and again is not first
    assert dataclasses.replace(first, number=1) != first and first != second
    assert dataclasses.replace(first, copied_out=(0,)).copied_out == (0,)
    assert vars(first).keys() == {f.name for f in dataclasses.fields(CallSite)}


def test_a_binding_is_a_frozen_record() -> None:
    binding = inline_program(parse_program(textwrap.dedent(SOURCE))).sites[1].bindings[0]
    assert (binding.param.name, binding.actual.name, binding.bind_local) == ("x", "y1", False)  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        binding.bind_local = True  # type: ignore[misc]
    again = dataclasses.replace(binding)
    assert again == binding and hash(again) == hash(binding) and again is not binding
    assert dataclasses.replace(binding, bind_local=True) != binding
    assert vars(binding).keys() == {f.name for f in dataclasses.fields(ParamBinding)}
