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
from nanopto.passes.inlining import inline_program

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
    started = time.process_time()
    err = _error(_helper_program(joiner.join(["k"] * operands)))
    assert time.process_time() - started < 5
    assert err.line == HELPER_LINE and err.file == "hostile.py"
    assert "nesting too deep" in err.message and f"limit is {MAX_NESTING} levels" in err.message
    assert err.hint


def test_a_chain_inside_nested_blocks_counts_the_enclosing_levels() -> None:
    ifs = "".join("    " * (2 + d) + "if k > 0:\n" for d in range(60))
    body = ifs + "    " * 62 + "m = " + " < ".join(["k"] * 100) + "\n"
    source = _helper_program("k < k").replace("        m = k < k\n", body + "        m = k < k\n")
    err = _error(source)
    assert "a chain of 100 operands" in err.message and err.line == HELPER_LINE + 60


DEEP = 21_000


def _deep_chain(depth: int, last: Expr) -> Expr:
    k = Var("k", ScalarType(DataType.INDEX))
    expr: Expr = k
    for level in range(depth):
        expr = BinaryExpr(BinOp.Lt, expr, last if level == depth - 1 else k)
    return expr


def test_structural_equality_of_a_very_deep_tree_is_fast_and_small() -> None:
    """Built directly (the parser refuses it), a 21,000-deep tree is compared in bounded memory:
    paths are spelled out only for the mismatch (spelled for every node, they take 2.8 GB here).
    Deeper than the 20,000 frames nanopto ever lets Python recurse (`terms.encoding`), so a
    recursive comparison fails here too."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    k = Var("k", ScalarType(DataType.INDEX))
    a, b = _deep_chain(DEEP, k), _deep_chain(DEEP, k)
    assert structural_equal(a, b, enable_auto_mapping=True)  # each chain has its own free `k`
    assert structural_hash(a, enable_auto_mapping=True) == structural_hash(b, enable_auto_mapping=True)
    mismatch = first_difference(_deep_chain(DEEP, k), _deep_chain(DEEP, ConstInt(1)), enable_auto_mapping=True)
    assert mismatch is not None and mismatch.path == "rhs"
    deep = first_difference(
        BinaryExpr(BinOp.Add, _deep_chain(2, ConstInt(1)), k),
        BinaryExpr(BinOp.Add, _deep_chain(2, ConstInt(2)), k),
        enable_auto_mapping=True,
    )
    assert deep is not None and deep.path == "lhs.rhs.value"
    assert time.process_time() - started < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 500_000  # KiB


# ---------------------------------------------------------------------------------------------
# Huge literals
# ---------------------------------------------------------------------------------------------

_HEX = "0x" + "f" * 4301  # past Python's 4,300-digit int <-> str limit, which hex skips on parsing


def _literal_program(body: str, params: str = "k: pl.Scalar[pl.INDEX], a: pl.Tensor[[4], pl.FP32]", pre: str = "") -> str:
    return f"""import nanopto.language as pl
{pre}
@pl.program
class P:
    @pl.function
    def main(self, {params}):
        {body}
        return k
"""


_LITERAL_PLACES = {
    "expression": (_literal_program(f"m = k + {_HEX}"), 7, "17,204-bit integer does not fit pl.INDEX"),
    "negated": (_literal_program(f"m = k + -{_HEX}"), 7, "17,204-bit integer does not fit pl.INDEX"),
    "decimal": (_literal_program("m = k + 9223372036854775808"), 7, "integer 9223372036854775808 does not fit"),
    "shape": (
        _literal_program("m = k", params=f"k: pl.Scalar[pl.INDEX], a: pl.Tensor[[{_HEX}], pl.FP32]"),
        6,
        "does not fit pl.INDEX",
    ),
    "array size": (
        _literal_program("m = k", params=f"k: pl.Scalar[pl.INDEX], a: pl.Array[{_HEX}, pl.INT32]"),
        6,
        "does not fit pl.INDEX",
    ),
    "subscript": (_literal_program(f"m = a[{_HEX}]"), 7, "does not fit pl.INDEX"),
    "slice": (_literal_program(f"m = a[0:{_HEX}]"), 7, "does not fit pl.INDEX"),
    "tuple item": (_literal_program(f"t = (k, k)\n        m = t[{_HEX}]"), 8, "does not fit pl.INDEX"),
    "range bound": (_literal_program(f"for i in pl.range({_HEX}):\n            m = k"), 7, "does not fit pl.INDEX"),
    "module constant": (_literal_program("m = k", pre=f"C = {_HEX}\n"), 2, "integer too large"),
    "module constant use": (_literal_program("m = k + C", pre="C = 2 ** 100\n"), 8, "does not fit pl.INDEX"),
    "pl.const": (_literal_program("m = pl.const(300, pl.INT8)"), 7, "integer 300 does not fit pl.INT8 (-128 to 127)"),
    "pl.const huge": (_literal_program(f"m = pl.const({_HEX}, pl.UINT64)"), 7, "integer too large"),
}


@pytest.mark.parametrize(
    ("body", "pre"), [("m = k * 1e999", ""), ("m = k * -1e999", ""), ("m = k * BIG", "BIG = 1e308 * 10\n")]
)
def test_a_float_constant_past_the_finite_range_is_a_located_parser_error(body: str, pre: str) -> None:
    """Found by the pass soak (a token mutant): `1e999` parsed as infinity and printed as `inf`,
    which names no variable, so the printed program did not parse again."""
    err = _error(_literal_program(body, pre=pre))
    assert err.line == 7 + pre.count("\n") and "out of range" in err.message


@pytest.mark.parametrize("place", _LITERAL_PLACES)
def test_an_integer_past_the_ir_types_is_a_located_parser_error(place: str) -> None:
    source, line, message = _LITERAL_PLACES[place]
    err = _error(source)
    assert err.line == line and message in err.message
    assert len(str(err)) < 20_000  # the message never spells out the 4,301 digits


def test_integers_at_the_ends_of_the_ir_types_pass_through_the_pass_and_print() -> None:
    source = _literal_program(
        "m = k + -9223372036854775808 + 9223372036854775807\n"
        "        u = pl.const(18446744073709551615, pl.UINT64)\n"
        "        s = pl.const(-128, pl.INT8)"
    )
    program = parse_program(source)
    after = inline_program(program).program
    assert structural_equal(parse_program(python_print(after)), after)


# ---------------------------------------------------------------------------------------------
# Module-level static values
# ---------------------------------------------------------------------------------------------

_STATIC_VALUES = {
    "shared rows": ("A = [[0] * 65536] * 65536\nB = A", 2, "over 65,536 elements"),
    "concatenation": ("A = [0] * 60000\nB = A + A", 3, "over 65,536 elements"),
    "nesting a shared value": ("A = (1, 2) * 30000\nB = [A, A, A]", 3, "over 65,536 elements"),
    "string formatting": (
        "C = '%*d%*d%*d' % (1000000000, 1, 1000000000, 1, 1000000000, 1)",
        2,
        "string formatting is not supported",
    ),
    "nested one level per line": (
        "A0 = [0]\n" + "".join(f"A{i + 1} = [A{i}]\n" for i in range(200)),
        102,  # A100, the first with 101 levels
        "nested too deep",
    ),
}


@pytest.mark.parametrize("case", _STATIC_VALUES)
def test_a_module_constant_over_the_bounds_is_refused_before_it_is_computed(case: str) -> None:
    constants, line, message = _STATIC_VALUES[case]
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    err = _error(_literal_program("m = k", pre=constants))
    assert time.process_time() - started < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100_000  # KiB
    assert err.line == line and message in err.message and "compile-time constant" in err.message


def test_constants_within_the_bounds_still_work_and_shared_parts_are_measured_once() -> None:
    lines = "A = [[1, 2] * 64] * 64\n" + "".join(f"B{i} = A\n" for i in range(5000))
    program = parse_program(_literal_program("m = k", pre=lines))
    assert "main" in program.functions
    started = time.process_time()
    huge = [[0] * 65536] * 65536  # a closure value: not plain data the parser may use, found fast
    err = _error_with_closure(_literal_program("m = k + len(A)"), {"A": huge})
    assert "unknown" in err.message or "only" in err.message
    assert time.process_time() - started < 2


def _error_with_closure(source: str, closure: dict[str, object]) -> ParserError:
    with pytest.raises(ParserError) as info:
        parse_program(source, "hostile.py", closure=closure)
    return info.value


def test_copying_list_constants_into_the_program_is_bounded() -> None:
    uses = "m = A\n" + "        m = A\n" * 30
    started = time.process_time()
    err = _error(_literal_program(uses, pre="A = [0] * 60000"))
    assert time.process_time() - started < 10
    assert "expand to more than 262,144 elements" in err.message


def test_a_spliced_op_on_two_scalars_prints_and_parses_back_to_itself() -> None:
    """Found by the pass soak (a token mutant that dropped an annotation): an Inline helper's
    unannotated `x` in `pl.mul(x, x)`, given a scalar, was spliced as a `Call` on two scalars, which
    the parser reads back as the scalar operator `k * k` (as PyPTO does). The splice now reads it
    the same way (the `subst-scalar-*` rules)."""
    source = """
import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def square(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        r = self.square(k)
        return r
"""
    after = inline_program(parse_program(source)).program
    assert structural_equal(parse_program(python_print(after)), after)
