"""Hostile inputs: each either goes through the whole pass or is refused early with a located error.

A long chain is one Python node that becomes a tall IR tree; a huge literal fits no integer
type of the IR; a module constant can describe gigabytes in a few bytes. None of them may reach a
RecursionError, an unbounded computation or an unlocated error.
"""

from __future__ import annotations

import resource
import time

import pytest

from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import BinaryExpr, BinOp, ConstInt, Expr, Var
from nanopto.ir_terms.parse_exprs import MAX_NESTING
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk
from nanopto.ir_terms.structural import first_difference, structural_equal, structural_hash
from nanopto.ir_terms.types import ScalarType
from nanopto.passes.inline_functions import inline_program

HELPER_LINE = 7  # the line of `m = ...` in `_helper_program`


def _helper_program(expr: str, result: str = "pl.Scalar[pl.BOOL]") -> str:
    return f"""import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h(self, k: pl.Scalar[pl.INDEX]) -> {result}:
        m = {expr}
        return m

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> {result}:
        r = self.h(k)
        return r
"""


def _error(source: str) -> ParserError:
    with pytest.raises(ParserError) as info:
        parse_program(source, "hostile.py")
    return info.value


# ---------------------------------------------------------------------------------------------
# Long chains
# ---------------------------------------------------------------------------------------------

_CHAINS = {"compare": " < ", "and": " and ", "or": " or ", "plus": " + "}


@pytest.mark.parametrize("joiner", _CHAINS.values(), ids=_CHAINS.keys())
def test_the_longest_accepted_chain_goes_through_the_whole_pass(joiner: str) -> None:
    operands = MAX_NESTING - 2  # the statement's block and the expression take the other levels
    result_type = "pl.Scalar[pl.INDEX]" if joiner == " + " else "pl.Scalar[pl.BOOL]"
    program = parse_program(_helper_program(joiner.join(["k"] * operands), result_type), "hostile.py")
    result = inline_program(program)
    text = python_print(result.program)
    assert structural_equal(parse_program(text), result.program)
    assert not structural_equal(program, result.program)
    assert sum(1 for _ in walk(result.program)) > operands


@pytest.mark.parametrize("operands", [MAX_NESTING, 350, 3_000, 50_000])
@pytest.mark.parametrize("joiner", _CHAINS.values(), ids=_CHAINS.keys())
def test_a_longer_chain_is_a_located_parser_error_naming_the_limit(joiner: str, operands: int) -> None:
    started = time.perf_counter()
    err = _error(_helper_program(joiner.join(["k"] * operands)))
    assert time.perf_counter() - started < 5
    assert err.line == HELPER_LINE and err.file == "hostile.py"
    assert "nesting too deep" in err.message and f"limit is {MAX_NESTING} levels" in err.message
    assert err.hint


def test_a_chain_inside_nested_blocks_counts_the_enclosing_levels() -> None:
    ifs = "".join("    " * (2 + d) + "if k > 0:\n" for d in range(60))
    body = ifs + "    " * 62 + "m = " + " < ".join(["k"] * 100) + "\n"
    source = _helper_program("k < k").replace("        m = k < k\n", body + "        m = k < k\n")
    err = _error(source)
    assert "a chain of 100 operands" in err.message and err.line == HELPER_LINE + 60


def _deep_chain(depth: int, last: Expr) -> Expr:
    k = Var("k", ScalarType(DataType.INDEX))
    expr: Expr = k
    for level in range(depth):
        expr = BinaryExpr(BinOp.Lt, expr, last if level == depth - 1 else k)
    return expr


def test_structural_equality_of_a_very_deep_tree_is_fast_and_small() -> None:
    """Built directly (the parser refuses it), a 50,000-deep tree is compared in bounded memory:
    paths are spelled out only for the mismatch (they used to take gigabytes)."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    k = Var("k", ScalarType(DataType.INDEX))
    a, b = _deep_chain(50_000, k), _deep_chain(50_000, k)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    mismatch = first_difference(_deep_chain(50_000, k), _deep_chain(50_000, ConstInt(1)))
    assert mismatch is not None and mismatch.path == "rhs"
    deep = first_difference(
        BinaryExpr(BinOp.Add, _deep_chain(2, ConstInt(1)), k), BinaryExpr(BinOp.Add, _deep_chain(2, ConstInt(2)), k)
    )
    assert deep is not None and deep.path == "lhs.rhs.value"
    assert time.perf_counter() - started < 20
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 500_000  # KiB
