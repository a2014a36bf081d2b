"""Generic `attrs={...}` on builtin-op calls, function calls and `pl.submit`, as PyPTO writes
them: parsed, printed back, compared as a mapping, and refused with a located error when a key or
value is not one an attribute can be."""

from __future__ import annotations

import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.ir_terms.nodes import Call, ConstInt, Keyword, MakeTuple, Submit, Var
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk

SOURCE = """import nanopto.language as pl

@pl.program
class Attrs:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        t = pl.tile.load(x, [0], [8])
        out = pl.tile.store(t, [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, p: pl.Tensor[[8], pl.FP32], q: pl.Tensor[[8], pl.FP32], r: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
{body}        return r
"""
FIRST_LINE = 13


def program(*lines: str) -> ir.Program:
    return ir.parse_program(SOURCE.format(body="".join(f"        {line}\n" for line in lines)))


def calls(prog: ir.Program) -> list[Call | Submit]:
    main = prog.get_function("main")
    assert main is not None
    return [n for n in walk(main.body) if isinstance(n, Call | Submit)]


ACCEPTED = {
    "a builtin op": ['s = pl.exp(p, attrs={"sync_with": [q], "pipeline_membership": "0:1"})'],
    "every kind of value": [
        's = pl.exp(p, attrs={"i": 11, "n": -3, "f": 2.5, "b": True, "s": "hello", "d": pl.FP16,'
        ' "m": pl.Mem.Vec, "v": q, "l": [1, 2], "e": [], "dirs": [pl.adir.input, pl.adir.output_existing]})'
    ],
    "a function call, with its dump selection": [
        'r = self.kernel(p, r, attrs={"dump_vars": [p], "arg_direction_overrides": [1]})'
    ],
    "a builtin op's dump_vars, an attribute like any other": ['s = pl.exp(p, attrs={"note": 1, "dump_vars": [p]})'],
    "an empty list": ['r = self.kernel(p, r, attrs={"arg_direction_overrides": []})'],
    "a submit": ['tid = pl.submit(self.kernel, p, r, dumps=[p], attrs={"memory": pl.Mem.Vec, "edges": [q]})'],
    "an spmd submit": ['r, tid = pl.spmd_submit(self.kernel, p, r, core_num=4, attrs={"pipeline_membership": "1:2"})'],
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_attrs_round_trip(case: str) -> None:
    prog = program(*ACCEPTED[case])
    text = python_print(prog)
    again = ir.parse_program(text)
    ir.assert_structural_equal(prog, again)
    assert ir.structural_hash(prog) == ir.structural_hash(again)
    assert python_print(again) == text
    assert "attrs={" in text


def test_attrs_print_as_pypto_writes_them() -> None:
    text = python_print(program(*ACCEPTED["a builtin op"], *ACCEPTED["a function call, with its dump selection"]))
    assert 's = pl.exp(p, attrs={"sync_with": [q], "pipeline_membership": "0:1"})' in text
    assert 'r = self.kernel(p, r, attrs={"dump_vars": [p], "arg_direction_overrides": [1]})' in text


def test_the_ir_keeps_them_in_order_as_keywords_and_attrs_reads_them_as_values() -> None:
    prog = program(*ACCEPTED["every kind of value"], *ACCEPTED["a function call, with its dump selection"])
    builtin, dispatch = calls(prog)
    assert [k.name for k in builtin.attr_items] == ["i", "n", "f", "b", "s", "d", "m", "v", "l", "e", "dirs"]
    assert isinstance(builtin.attr_items, tuple) and all(isinstance(k, Keyword) for k in builtin.attr_items)
    view = builtin.attrs
    assert (view["i"], view["n"], view["f"], view["b"], view["s"]) == (11, -3, 2.5, True, "hello")
    assert view["d"] is ir.DataType.FP16 and view["m"] is ir.MemorySpace.Vec
    main = prog.get_function("main")
    assert main is not None
    q = main.param_list[1].var
    assert view["v"] is q and view["l"] == [1, 2] and view["e"] == []
    # the dump selection stays `dumps`; `attrs` shows both, as PyPTO's `call.attrs` does
    assert [v.name for v in dispatch.dumps] == ["p"]
    assert dispatch.attrs == {"dump_vars": [main.param_list[0].var], "arg_direction_overrides": [1]}
    assert all(k.name != "dump_vars" for k in dispatch.attr_items)


def test_attrs_compare_as_a_mapping() -> None:
    ab = program('s = pl.exp(p, attrs={"a": [q], "b": "x"})')
    ba = program('s = pl.exp(p, attrs={"b": "x", "a": [q]})')
    ir.assert_structural_equal(ab, ba)
    assert ir.structural_hash(ab) == ir.structural_hash(ba)
    for different in ('s = pl.exp(p, attrs={"a": [p], "b": "x"})', 's = pl.exp(p, attrs={"a": [q], "c": "x"})',
                      's = pl.exp(p, attrs={"a": [q]})', 's = pl.exp(p)'):
        assert not ir.structural_equal(ab, program(different)), different


def test_a_var_in_an_attr_is_held_to_the_var_mapping() -> None:
    """Two Vars defined alike pair up; an attribute naming the partner is equal, one naming
    another Var is not."""
    left = program("s = pl.exp(p)", 't = pl.exp(s, attrs={"edge": [s]})')
    right = program("u = pl.exp(p)", 't = pl.exp(u, attrs={"edge": [u]})')
    other = program("u = pl.exp(p)", 't = pl.exp(u, attrs={"edge": [p]})')
    ir.assert_structural_equal(left, right)
    assert not ir.structural_equal(left, other)


def test_a_builtin_ops_dump_vars_is_an_attribute_not_a_dump_selection() -> None:
    """A builtin op is no dispatch: its `"dump_vars"` stays in `attr_items`, where it was written,
    reads back as PyPTO's `attrs`, and a `pl.dump_tag` adds nothing to it."""
    prog = program('pl.dump_tag(q)', 's = pl.add(p, q, attrs={"pipeline_membership": "0:3", "dump_vars": [p]})')
    op = next(c for c in calls(prog) if isinstance(c, Call) and not c.function)
    p = prog.get_function("main").param_list[0].var  # type: ignore[union-attr]
    assert op.dumps == () and [k.name for k in op.attr_items] == ["pipeline_membership", "dump_vars"]
    assert op.attrs == {"pipeline_membership": "0:3", "dump_vars": [p]}
    assert 's = pl.add(p, q, attrs={"pipeline_membership": "0:3", "dump_vars": [p]})' in python_print(prog)
    built = Call(ir.Op("exp"), [X], {}, {"dump_vars": [X]}, X.type, ir.Span.unknown())  # PyPTO's constructor
    assert built.dumps == () and built.attrs == {"dump_vars": [X]} and str(built) == 'pl.exp(x, attrs={"dump_vars": [x]})'


def test_built_by_hand_from_a_dict_as_pypto_does() -> None:
    x = Var("x")
    call = Call("exp", (x,), attr_items={"edges": [x], "n": 2})  # type: ignore[arg-type]
    assert call.attr_items == (Keyword("edges", MakeTuple((x,), is_list=True)), Keyword("n", ConstInt(2)))
    assert python_print(call) == 'pl.exp(x, attrs={"edges": [x], "n": 2})'
    with pytest.raises(ValueError, match="given twice"):
        Call("exp", (x,), attr_items=(Keyword("n", ConstInt(1)), Keyword("n", ConstInt(2))))
    with pytest.raises(ValueError, match="dump selection"):
        Submit("k", (x,), attr_items={"dump_vars": [x]})  # type: ignore[arg-type]


REJECTED = {
    "a key that is not a string literal": (
        's = pl.exp(p, attrs={1: "x"})', ir.ParserTypeError, "key is a string literal", 'attrs={"name": value}'
    ),
    "a computed key": ('s = pl.exp(p, attrs={p: "x"})', ir.ParserTypeError, "key is a string literal", None),
    "a key given twice": ('s = pl.exp(p, attrs={"a": 1, "a": 2})', ir.ParserSyntaxError, "'a' is given twice", "once"),
    "an expression value": ('s = pl.exp(p, attrs={"a": p + 1})', ir.ParserTypeError, "attrs['a'] is a BinOp", "a list of those"),
    "a call value": ('s = pl.exp(p, attrs={"a": pl.exp(p)})', ir.ParserTypeError, "attrs['a'] is a Call", None),
    "a nested list": ('s = pl.exp(p, attrs={"a": [[1]]})', ir.ParserTypeError, "attrs['a'] is a nested list", None),
    "a tuple": ('s = pl.exp(p, attrs={"a": (1, 2)})', ir.ParserTypeError, "attrs['a'] is a tuple", None),
    "None": ('s = pl.exp(p, attrs={"a": None})', ir.ParserTypeError, "attrs['a'] is None", None),
    "an unbound name": ('s = pl.exp(p, attrs={"a": [nothing]})', ir.UndefinedVariableError, "'nothing'", "bound before"),
    "not a dict": ("s = pl.exp(p, attrs=[p])", ir.ParserTypeError, "takes a dict literal", None),
    "a dump selection on a submit": (
        'tid = pl.submit(self.kernel, p, r, attrs={"dump_vars": [p]})', ir.ParserTypeError, "dump selection", None
    ),
    "a dependency edge outside a dummy task": (
        's = pl.exp(p, attrs={"manual_dep_edges": [q]})', ir.ParserSyntaxError, "'manual_dep_edges' is reserved", "task_dummy(deps="
    ),
    "a dummy-task marker on a function call": (
        'r = self.kernel(p, r, attrs={"dummy_task": True})', ir.ParserSyntaxError, "'dummy_task' is reserved", None
    ),
    "a bad value on a function call": (
        'r = self.kernel(p, r, attrs={"o": {"x": 1}})', ir.ParserTypeError, "attrs['o'] is a Dict", None
    ),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_attrs_are_located_errors_naming_the_key(case: str) -> None:
    line, error, message, hint = REJECTED[case]
    with pytest.raises(error) as info:
        program(line)
    assert message in info.value.message
    assert info.value.line == FIRST_LINE
    if hint is not None:
        assert info.value.hint is not None and hint in info.value.hint


def test_a_symbol_value_reads_as_the_enum_member_it_names_and_enums_build_symbols() -> None:
    prog = program(
        's = pl.exp(p, attrs={"layout": pl.TensorLayout.NZ, "pad": pl.PadValue.zero,'
        ' "dirs": [pl.adir.input, pl.adir.output_existing], "other": pl.Level.CORE_GROUP})'
    )
    (builtin,) = calls(prog)
    view = builtin.attrs
    assert view["layout"] is ir.TensorLayout.NZ and view["pad"] is ir.PadValue.zero
    assert view["dirs"] == [ir.ArgDirection.Input, ir.ArgDirection.OutputExisting]
    assert view["other"] is ir.Level.CORE_GROUP
    p = builtin.args[0]
    built = Call("exp", (p,), attr_items={"layout": ir.TensorLayout.NZ, "dirs": [pl.adir.input], "d": ir.DataType.FP16})
    assert str(built) == 'pl.exp(p, attrs={"layout": pl.TensorLayout.NZ, "dirs": [pl.adir.input], "d": pl.FP16})'
    assert built.attrs == {"layout": ir.TensorLayout.NZ, "dirs": [ir.ArgDirection.Input], "d": ir.DataType.FP16}


def _rebuilt(call: Call) -> Call:
    """A call built again in PyPTO's six-argument form from what it shows: `Call(op, args,
    kwargs, attrs, type, span)`, the idiom of a PyPTO mutator that changes one attribute."""
    kwargs = {k.name: k.value for k in call.kwargs}
    return Call(call.op, list(call.args), kwargs, dict(call.attrs), call.type, call.span)


def test_a_call_rebuilt_from_its_attrs_in_pyptos_six_argument_form_is_the_same_call() -> None:
    prog = program(
        's = pl.exp(p, attrs={"sync_with": [q], "layout": pl.TensorLayout.NZ})',
        'r = self.kernel(p, r, attrs={"dump_vars": [p], "arg_direction_overrides": [1]})',
    )
    for call in calls(prog):
        assert isinstance(call, Call)
        again = _rebuilt(call)
        ir.assert_structural_equal(again, call, enable_auto_mapping=False)
        assert again.span == call.span and again.dumps == call.dumps and again.function == call.function
        assert str(again) == str(call)


def test_a_dummy_task_rebuilt_from_its_attrs_keeps_its_deps_once() -> None:
    source = """import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self) -> pl.Scalar[pl.TASK_ID]:
        first = pl.system.task_invalid()
        barrier = pl.system.task_dummy(deps=[first], attrs={"marker": 7})
        return barrier
"""
    main = ir.parse_program(source).get_function("main")
    assert main is not None
    dummy = main.body.stmts[1].value
    again = _rebuilt(dummy)
    ir.assert_structural_equal(again, dummy, enable_auto_mapping=False)
    assert str(again) == 'pl.system.task_dummy(deps=[first], attrs={"marker": 7})'
    without_deps = Call(dummy.op, [], {}, dict(dummy.attrs), dummy.type, dummy.span)  # the edges from the attrs
    assert str(without_deps) == str(again)
    other = Var("other", ir.ScalarType(ir.DataType.TASK_ID))
    with pytest.raises(ValueError, match="disagrees with deps="):
        Call(dummy.op, [], {"deps": [other]}, dict(dummy.attrs), dummy.type, dummy.span)


X = Var("x", ir.TensorType([4], ir.DataType.FP32))


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"manual_dep_edges": [X]}, "a dependency edge exists only on a dummy task"),
        ({"dummy_task": True}, "a dependency edge exists only on a dummy task"),
    ],
)
def test_pyptos_attrs_that_nanopto_spells_otherwise_are_refused_on_an_op(attrs: dict[str, object], message: str) -> None:
    with pytest.raises(ir.IRInvariantError, match=message):  # a ValueError, refused where the call is made
        Call(ir.Op("exp"), [X], {}, attrs, X.type, ir.Span.unknown())
