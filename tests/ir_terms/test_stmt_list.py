"""`SeqStmts.stmts` reads as the list PyPTO's code walks, and stays as immutable as the IR."""

from __future__ import annotations

import copy
import pickle

import pytest

from nanopto import ir
from nanopto.ir_terms.nodes import FrozenList, StmtList
from nanopto.ir_terms.parser import parse_program

SOURCE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        b = pl.add(a, a)
        c = pl.mul(b, b)
        return c
"""


def body() -> ir.SeqStmts:
    seq = parse_program(SOURCE).functions["main"].body
    assert isinstance(seq, ir.SeqStmts)
    return seq


def test_the_statements_are_a_list_equal_to_the_same_list_or_tuple() -> None:
    seq = body()
    stmts = seq.stmts
    assert isinstance(stmts, list) and isinstance(stmts, StmtList)
    assert stmts == list(stmts) and stmts == tuple(stmts) and tuple(stmts) == stmts
    assert ir.SeqStmts(tuple(stmts)) == seq and hash(ir.SeqStmts(list(stmts))) == hash(seq)
    assert stmts[1:] == tuple(stmts)[1:] and isinstance(stmts[1:], tuple)
    assert stmts + (stmts[0],) == (*stmts, stmts[0])  # noqa: RUF005 (the concatenation is what is tested)


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.append(s[0]),
        lambda s: s.extend([]),
        lambda s: s.insert(0, s[0]),
        lambda s: s.pop(),
        lambda s: s.remove(s[0]),
        lambda s: s.clear(),
        lambda s: s.sort(),
        lambda s: s.reverse(),
        lambda s: s.__setitem__(0, s[1]),
        lambda s: s.__delitem__(0),
        lambda s: s.__iadd__([]),
        lambda s: s.__imul__(2),
    ],
)
def test_every_way_to_change_the_statements_is_refused(change: object) -> None:
    seq = body()
    before = tuple(seq.stmts)
    with pytest.raises(TypeError, match="cannot change"):
        change(seq.stmts)  # type: ignore[operator]
    assert tuple(seq.stmts) == before


def test_copies_and_pickles_keep_a_statement_list() -> None:
    seq = body()
    for again in (copy.deepcopy(seq), pickle.loads(pickle.dumps(seq)), ir.deserialize(ir.serialize(seq))):
        assert type(again.stmts) is StmtList
        ir.assert_structural_equal(again, seq, enable_auto_mapping=True)


def test_a_functions_return_types_read_as_a_list_that_cannot_change() -> None:
    # PyPTO's `fn.return_types` is a list: `== []` holds for a function that returns nothing.
    program = parse_program(SOURCE)
    main = program.functions["main"]
    returns = main.return_types
    assert type(returns) is FrozenList and returns == [ir.TensorType([4], ir.DataType.FP32)]
    assert returns == tuple(returns) and hash(returns) == hash(tuple(returns))
    with pytest.raises(TypeError, match="cannot change"):
        returns.append(returns[0])
    assert ir.Function("f", [], [], ir.ReturnStmt([])).return_types == []
    rebuilt = ir.Function("g", main.params, list(returns), main.body)
    assert type(rebuilt.return_types) is FrozenList
    ir.assert_structural_equal(rebuilt, main)
    for again in (copy.deepcopy(main), pickle.loads(pickle.dumps(main)), ir.deserialize(ir.serialize(main))):
        assert type(again.return_types) is FrozenList and again.return_types == returns
