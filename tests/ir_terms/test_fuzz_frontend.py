"""Hostile input (issue 9, "Bad input"): mutated programs give a documented error or a result.

Two fuzzers. The first mutates valid programs at the token level (delete, duplicate, swap,
replace with a token from a palette of wrong types, undefined names and unknown ops) and as raw
text; the only exception `parse_program` may raise is `ParserError`, located inside the source.
The second edits programs so they still parse but are wrong at a call site (type, dtype, shape,
arity, keywords, unknown callee) and runs InlineFunctions on them: it may only raise the errors
documented in docs/errors.md, and an `InlineError` starts with the call site's file:line:col.

Both run a bounded, derandomized profile by default (they are part of CI: ~150 examples each,
well under a minute); `HYPOTHESIS_PROFILE=soak` runs the conftest's large profile instead.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanopto.egraph import SaturationLimitError, SaturationLimits
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes import VerificationError
from nanopto.passes.inlining import inline_program
from nanopto.passes.inlining.call_graph import InlineCycleError
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.passes.inlining.expansion_size import ExpansionTooLargeError
from nanopto.verify.strategies import program_descs

_SOAK = os.environ.get("HYPOTHESIS_PROFILE") == "soak"
FUZZ = settings(
    max_examples=2000 if _SOAK else 150,
    derandomize=not _SOAK,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""CI: the same 150 inputs every run. The seeds of any failure are in the assertion output."""

EXAMPLES = sorted(
    (f.name, f.read_text()) for f in resources.files("nanopto.examples").iterdir() if f.name.endswith(".py")
)
EXTRA = [
    (
        "tile_helper.py",
        """import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def scale(self, x: pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec], n: pl.Scalar[pl.INDEX]) -> pl.Tile[[4, 4], pl.FP32]:
        y = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[4, 4], pl.FP32], out: pl.Out[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:
        t = pl.load(a, [0, 0], [4, 4])
        u = self.scale(t, 2)
        out = pl.store(u, [0, 0], out)
        return out
""",
    ),
    (
        "array_helper.py",
        """import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def put(self, arr: pl.Array[4, pl.INT64], i: pl.Scalar[pl.INDEX], v: pl.Scalar[pl.INT64]):
        arr[i] = v
        return arr

    @pl.function
    def main(self, arr: pl.Array[4, pl.INT64], k: pl.Scalar[pl.INDEX]) -> pl.Array[4, pl.INT64]:
        arr = self.put(arr, k, 7)
        return arr
""",
    ),
]
CORPUS = [src for _, src in EXAMPLES + EXTRA]

PALETTE = (
    "pl.FP32", "pl.INT32", "pl.Scalar[pl.INDEX]", "pl.Tensor[[4], pl.FP32]", "pl.Tile[[4, 4], pl.FP16]",
    "pl.Tensor[[-1], pl.FP32]", "pl.Tensor[4]", "pl.Tensor", "pl.Array[4, pl.INT64]", "pl.Mem.Acc",
    "undefined_name", "self.no_such_helper", "pl.no_such_op", "pl.tensor.nope", "self", "pl",
    "(", ")", "[", "]", ",", ":", "=", "@", "**", "*", "-", "not", "lambda: 0", "...", "None", "True",
    "1", "-1", "1.5", "1e999", "10**100", "0x10", "'s'", "b''", "f'{x}'", "return", "if", "for", "while",
    "pl.range", "pl.yield_", "pl.Out", "pl.InOut", "pl.dynamic('N')", "pl.FunctionType.Inline",
    "pl.function", "pl.program", "yield", "await x", "*args", "del x", "global x", "import os",
    "pl.TileView(pad=pl.PadValue.zero)", "pl.TileView(fractal=-1)", "pl.TileLayout.col_major",
    'pl.MemRef("m", 0, 8)', "pl.MemRef(0, 8)", "pl.AtomicType.Add",
)


def token_spans(source: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the significant tokens of `source`."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    skip = {tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT}
    return [
        (starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type not in skip
    ]


@st.composite
def token_mutants(draw: st.DrawFn) -> str:
    """A corpus program or a drawn one, with 1-3 token edits (or raw-text insertions)."""
    if draw(st.booleans()):
        source = draw(st.sampled_from(CORPUS))
    else:
        source = draw(program_descs(max_helpers=2)).source
    for _ in range(draw(st.integers(1, 3))):
        try:
            spans = token_spans(source)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            spans = []
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "raw"] if spans else ["raw"]))
        if kind == "raw":
            at = draw(st.integers(0, len(source)))
            text = draw(st.sampled_from(PALETTE) | st.text(max_size=8))
            source = source[:at] + text + source[at:]
            continue
        start, end = spans[draw(st.integers(0, len(spans) - 1))]
        if kind == "delete":
            source = source[:start] + source[end:]
        elif kind == "duplicate":
            source = source[:end] + " " + source[start:end] + source[end:]
        elif kind == "replace":
            source = source[:start] + draw(st.sampled_from(PALETTE)) + source[end:]
        else:
            other_start, other_end = spans[draw(st.integers(0, len(spans) - 1))]
            (a, b), (c, d) = sorted([(start, end), (other_start, other_end)])
            if b <= c:
                source = source[:a] + source[c:d] + source[b:c] + source[a:b] + source[d:]
    return source


def assert_located(err: ParserError, source: str) -> None:
    lines = max(1, len(source.splitlines()))
    assert 1 <= err.line <= lines, f"error line {err.line} outside the source (1..{lines}): {err}"
    assert err.col >= 0


@FUZZ
@given(token_mutants())
def test_token_mutants_parse_or_raise_a_located_parser_error(source: str) -> None:
    try:
        parse_program(source, "mutant.py")
    except ParserError as err:
        assert_located(err, source)


@FUZZ
@given(st.text(max_size=300) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_raw_text_parses_or_raises_a_located_parser_error(source: str) -> None:
    try:
        parse_program(source, "raw.py")
    except ParserError as err:
        assert_located(err, source)


# -- regressions found by the fuzzer ----------------------------------------------------------

_PROGRAM = """import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a, b):
        c = {expr}
        return c
"""


def test_matrix_multiply_operator_is_a_located_parser_error() -> None:
    """Was `internal parser error (KeyError): <class 'ast.MatMult'>` at line 0."""
    with pytest.raises(ParserError, match="`@`") as info:
        parse_program(_PROGRAM.format(expr="a @ b"), "m.py")
    assert (info.value.line, info.value.col) == (7, 12)


def test_huge_constant_sequence_is_rejected_before_it_is_built() -> None:
    """Was a MemoryError reported as an internal parser error at line 0."""
    source = "import nanopto.language as pl\nX = [0] * 4096 * 4096 * 4096\n" + _PROGRAM[len("import nanopto.language as pl\n") :]
    with pytest.raises(ParserError, match="sequence too long") as info:
        parse_program(source.format(expr="a"), "m.py")
    assert info.value.line == 2


def test_doubling_constant_sequence_is_rejected() -> None:
    constants = "".join(f"X{i + 1} = X{i} + X{i}\n" for i in range(40))
    source = "import nanopto.language as pl\nX0 = 'ab'\n" + constants + _PROGRAM[len("import nanopto.language as pl\n") :]
    with pytest.raises(ParserError, match="sequence too long"):
        parse_program(source.format(expr="a"), "m.py")


def test_errors_without_a_node_point_into_the_source() -> None:
    """A whole-file error (no class at all) was reported at line 0."""
    with pytest.raises(ParserError) as info:
        parse_program("import nanopto.language as pl\n", "m.py")
    assert info.value.line == 1


# -- programs that parse but are wrong: the pass raises documented errors only ----------------

DOCUMENTED = (
    ParserError,
    InlineError,
    InlineCycleError,
    VerificationError,
    SaturationLimitError,
    ExpansionTooLargeError,
)

_WRONG = (
    (r"pl\.FP32", "pl.INT32"),
    (r"pl\.FP32", "pl.FP16"),
    (r"\[\[4\], ", "[[8], "),
    (r"\[\[4\], ", "[[4, 4], "),
    (r"\[\[4, 4\], ", "[[4, 8], "),
    (r"pl\.Mem\.Vec", "pl.Mem.Acc"),
    (r"pl\.Scalar\[pl\.INDEX\]", "pl.Tensor[[4], pl.FP32]"),
    (r"pl\.Tensor\[\[4\], pl\.FP32\]", "pl.Scalar[pl.INDEX]"),
    (r"pl\.Array\[4, pl\.INT64\]", "pl.Array[8, pl.INT64]"),
    (r"self\.(\w+)\(", r"self.\1(k, "),  # one argument too many
    (r"self\.(\w+)\((\w+), ", r"self.\1("),  # one argument too few
    (r"self\.(\w+)\((\w+)", r"self.\1(x=\2"),  # a keyword argument
    (r"self\.(\w+)\((\w+), (\w+)", r"self.\1(\3, \2"),  # two arguments swapped
    (r"self\.(\w+)\(", r"self.no_such_helper("),
    (r"return (\w+)\n", r"return self.main(\1)\n"),  # recursion through the entry
    (r"def (\w+)\(self, (\w+)", r"def \1(self, \2: pl.Scalar[pl.INDEX]"),
)


@st.composite
def wrong_programs(draw: st.DrawFn) -> str:
    """A corpus or drawn program with 1-2 edits that usually keep it parseable but wrong."""
    source = draw(st.sampled_from(CORPUS)) if draw(st.booleans()) else draw(program_descs(max_helpers=3)).source
    for _ in range(draw(st.integers(1, 2))):
        applicable = [(p, r) for p, r in _WRONG if re.search(p, source)]
        if not applicable:
            break
        pattern, replacement = draw(st.sampled_from(applicable))
        matches = list(re.finditer(pattern, source))
        m = matches[draw(st.integers(0, len(matches) - 1))]
        source = source[: m.start()] + m.expand(replacement) + source[m.end() :]
    return source


PASS_FUZZ = settings(FUZZ, max_examples=2000 if _SOAK else 100)
"""Fewer: an example that reaches egglog takes about 0.1-0.5 s."""

_LIMITS = SaturationLimits(max_iterations=2_000, max_rows=2_000_000, timeout=20.0)


@PASS_FUZZ
@given(wrong_programs())
def test_wrong_programs_raise_only_documented_errors(source: str) -> None:
    try:
        program = parse_program(source, "wrong.py")
    except ParserError as err:
        assert_located(err, source)
        return
    try:
        inline_program(program, limits=_LIMITS)
    except InlineError as err:
        assert re.match(r"wrong\.py:\d+:\d+: ", str(err)), f"InlineError without a call-site location: {err}"
    except DOCUMENTED:
        pass


CHECKER_FALSE_POSITIVE = """import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h1(self, t0: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return t0

    @pl.function(type=pl.FunctionType.Inline)
    def h2(self, t0: pl.Tensor[[4], pl.FP32], t2: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y1 = self.h1(pl.maximum(t0, t2))
        return t0

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], c: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y1 = self.h2(a, c)
        y2 = self.h2(pl.maximum(a, c), a)
        return a
"""


def test_equal_computed_arguments_from_different_sites_are_not_double_evaluations() -> None:
    """Found by the fuzzer: site 1's inner argument `pl.maximum(t0, t2)` becomes `pl.maximum(a, c)`
    after substitution, textually equal to site 2's own computed argument; a checker counting
    evaluations by text saw two evaluations of site 2's argument. Each is evaluated once."""
    after = inline_program(parse_program(CHECKER_FALSE_POSITIVE, "fp.py")).program
    assert python_print(after).count("pl.maximum(a, c)") == 2


@pytest.mark.parametrize("index", range(len(_WRONG)))
def test_each_wrong_edit_applies_to_the_corpus(index: int) -> None:
    """The edits above are not vacuous: each one matches somewhere in the corpus."""
    pattern, _ = _WRONG[index]
    assert any(re.search(pattern, src) for src in CORPUS), pattern
