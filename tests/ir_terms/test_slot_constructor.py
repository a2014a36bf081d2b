"""`nodes.slot_constructor`: the decoder's fast way to make a node holds the node the class makes."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields

import pytest

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    Call,
    IterArg,
    Keywords,
    Node,
    OpName,
    Span,
    Var,
    slot_constructor,
)
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


def test_the_node_made_is_of_the_class_and_frozen() -> None:
    """The node is filled as another class laid out alike, then made the class itself: once made,
    it is the class's, down to its frozen fields (a base's field too: a statement's comments, a
    loop carry's Var fields)."""
    x = Var("x")
    made = [
        slot_constructor(Var, ("name", "type"))("y", x.type),
        slot_constructor(Call, ("op", "args", "kwargs", "span"))(OpName("tensor.add"), (x, x), Keywords(()), None),
        slot_constructor(AssignStmt, ("var", "value", "comments"))(x, x, ("# why",)),
        slot_constructor(IterArg, ("name", "type", "init_value"))("i", x.type, x),
        slot_constructor(Span, ("file", "line", "col"))("f.py", 1, 2),
    ]
    assert [type(node) for node in made] == [Var, Call, AssignStmt, IterArg, Span]
    for node in made:
        for name in ("span", "comments", "name", "file"):
            if hasattr(node, name):
                with pytest.raises(FrozenInstanceError):
                    setattr(node, name, None)
    carry = made[3]
    assert isinstance(carry, IterArg)
    assert _slots(carry) == _slots(IterArg("i", x.type, x, id=carry.id))
