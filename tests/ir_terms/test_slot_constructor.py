"""`nodes.slot_constructor`: the decoder's fast way to make a node holds the node the class makes."""

from __future__ import annotations

from dataclasses import fields

import pytest

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import AssignStmt, Call, Keywords, Node, OpName, Span, Var, slot_constructor
from nanopto.ir_terms.types import ScalarType


def _slots(node: Node) -> dict[str, object]:
    """Every field, compared or not (a span, a statement's comments, a call's result type)."""
    return {spec.name: getattr(node, spec.name) for spec in fields(node)}  # type: ignore[arg-type]


def test_it_makes_what_the_class_makes_with_the_other_fields_at_their_defaults() -> None:
    span = Span("f.py", 3, 4)
    x = Var("x", ScalarType(DataType.INT32), span=span)
    call = Call(OpName("tensor.add"), (x, x), span=span)
    made_call = slot_constructor(Call, ("op", "args", "kwargs", "span"))(call.op, call.args, Keywords(()), span)
    assert _slots(made_call) == _slots(call) and type(made_call) is Call
    stmt = AssignStmt(x, call, annotated=False, span=span, comments=("# why",))
    make_assign = slot_constructor(AssignStmt, ("var", "value", "annotated", "span", "comments"))
    assert _slots(make_assign(x, made_call, False, span, ("# why",))) == _slots(stmt)
    assert _slots(slot_constructor(AssignStmt, ("value", "var"))(call, x)) == _slots(AssignStmt(x, call))


def test_a_default_factory_runs_for_each_node() -> None:
    """A Var left without an id gets a fresh one each time, as `Var(name, type)` does."""
    make = slot_constructor(Var, ("name", "type"))
    first, second = make("y", ScalarType(DataType.FP32)), make("y", ScalarType(DataType.FP32))
    assert first.id != second.id and first != second
    assert {k: v for k, v in _slots(first).items() if k != "id"} == {"name": "y", "type": ScalarType(DataType.FP32), "span": None}


def test_a_field_the_class_lacks_or_a_required_one_left_out_is_refused() -> None:
    with pytest.raises(TypeError, match="no field 'value'"):
        slot_constructor(Var, ("name", "value"))
    with pytest.raises(TypeError, match="needs the field 'value'"):
        slot_constructor(AssignStmt, ("var",))
