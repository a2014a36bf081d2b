"""The fuzzer: hostile `pl` sources, and the one rule every one of them must keep.

A fuzzer's inputs, drawn from a seeded `random.Random` so a run is reproducible from its seed:

* mutants of a corpus of valid programs (the shipped examples), by token, line and byte;
* long chains: chained comparisons, boolean chains and binary operator chains, from a few operands
  to tens of thousands, in a helper or in `main`, under nested blocks;
* huge literals (decimal and hex, past Python's 4,300-digit limit) in expressions, shapes,
  subscripts, `pl.range` bounds, `pl.const` and module constants;
* module constants that would run away: shared rows, concatenation, deep nesting, `%` formatting;
* call-site families the pass must splice: a computed argument for a parameter the helper never
  reads, with static or `pl.dynamic` extents, as an assignment, a return or a discarded call.

The rule (`run_front_end`, `run_pass`): an input parses, or raises a `ParserError` located inside
the source; a parsed program goes through InlineFunctions (verifier included), or raises one of
the errors docs/errors.md lists as being about the input; its output prints, parses again to an
program that prints the same, and computes what the input computed when it can be run. Anything else is an
`Outcome` with `documented=False`: a finding.
"""

from __future__ import annotations

import io
import random
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

from nanopto.egraph import SaturationLimitError
from nanopto.ir_terms.nodes import FunctionType, Program
from nanopto.ir_terms.parser import ParserError, parse_program
from nanopto.ir_terms.printer import ConstantNotPrintableError, NestingTooDeepToPrintError, python_print
from nanopto.ir_terms.structural import first_difference
from nanopto.ir_terms.types import ScalarType, TensorType, UnknownType
from nanopto.passes import VerificationError, inline_functions
from nanopto.passes.inlining.call_graph import InlineCycleError
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.passes.inlining.expansion_size import ExpansionTooLargeError
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal

HEADER = "import nanopto.language as pl\n"


def corpus() -> list[str]:
    """The shipped examples: valid programs every mutator starts from."""
    files = resources.files("nanopto.examples").iterdir()
    return sorted(f.read_text(encoding="utf-8") for f in files if f.name.endswith(".py"))


# ---------------------------------------------------------------------------------------------
# Mutators
# ---------------------------------------------------------------------------------------------

PALETTE = (
    "pl.frobnicate", "self.nope", "x", "(", ")", "[", "]", ":", "0x" + "f" * 4301, "-1", "1e999",
    "pl.Tensor[[4], pl.FP32]", "pl.INDEX", "**", "<<", "lambda: 0", "yield", "await x", "*a", "**k",
    "'%*d' % (10**9, 1)", "\0", "\t", "\\", "import os", "@pl.program", "pl.range(10)", "...",
)  # fmt: skip
"""Token replacements: wrong types, undefined names, unknown ops, huge literals, stray syntax."""


def _token_spans(source: str) -> list[tuple[int, int]]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    skip = {tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT}
    try:
        return [
            (starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in skip
        ]
    except (tokenize.TokenError, SyntaxError, IndexError):
        return []


def token_mutant(rng: random.Random, source: str) -> str:
    """1-3 edits of whole tokens: delete, duplicate, swap, replace from `PALETTE`."""
    for _ in range(rng.randint(1, 3)):
        spans = _token_spans(source)
        if not spans:
            break
        start, end = rng.choice(spans)
        kind = rng.choice(("delete", "duplicate", "swap", "replace"))
        if kind == "delete":
            source = source[:start] + source[end:]
        elif kind == "duplicate":
            source = source[:end] + " " + source[start:end] + source[end:]
        elif kind == "replace":
            source = source[:start] + rng.choice(PALETTE) + source[end:]
        else:
            (a, b), (c, d) = sorted([(start, end), rng.choice(spans)])
            if b <= c:
                source = source[:a] + source[c:d] + source[b:c] + source[a:b] + source[d:]
    return source


def line_mutant(rng: random.Random, source: str) -> str:
    """1-3 edits of whole lines: delete, duplicate, swap, re-indent."""
    lines = source.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.choice(("delete", "duplicate", "swap", "indent", "dedent"))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i] * rng.choice((1, 2, 50)))
        elif kind == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "indent":
            lines[i] = "    " + lines[i]
        else:
            lines[i] = lines[i][4:] if lines[i].startswith("    ") else lines[i]
    return "".join(lines)


def byte_mutant(rng: random.Random, source: str) -> str:
    """Random bytes (as latin-1 text) inserted, overwritten, or the source cut short."""
    data = bytearray(source.encode("utf-8"))
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        kind = rng.choice(("insert", "overwrite", "truncate"))
        chunk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        if kind == "insert":
            data[at:at] = chunk
        elif kind == "overwrite":
            data[at : at + len(chunk)] = chunk
        else:
            del data[at:]
    return data.decode("latin-1")


# ---------------------------------------------------------------------------------------------
# Hostile generators
# ---------------------------------------------------------------------------------------------


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return int(low * (high / low) ** rng.random() + 0.5)


def _program(helper_body: str, main_body: str = "r = self.h(k)\nreturn r", pre: str = "") -> str:
    def indent(body: str) -> str:
        return "".join(f"        {line}\n" for line in body.splitlines())

    return (
        f"{HEADER}{pre}\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n"
        "    def h(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        f"{indent(helper_body)}"
        "\n    @pl.function\n"
        "    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        f"{indent(main_body)}"
    )


def long_chain(rng: random.Random, max_operands: int = 60_000) -> str:
    """`m = k < k < ...`, `k and k and ...` or `k + k + ...`, under 0-40 nested `if`s."""
    operands = _log_uniform(rng, 2, max_operands)
    joiner = rng.choice((" < ", " <= ", " == ", " and ", " or ", " + ", " * ", " - ", " & "))
    chain = joiner.join(rng.choice(("k", "1", "(k)", "-k")) for _ in range(operands))
    depth = rng.choice((0, 0, 1, 10, 40))
    lines = [" " * (4 * d) + "if k > 0:" for d in range(depth)]
    lines.append(" " * (4 * depth) + f"m = {chain}")
    body = "\n".join(["m = k", *lines, "return m"])
    return _program(body) if rng.random() < 0.5 else _program("return k", body)


def _huge_literal(rng: random.Random) -> str:
    digits = _log_uniform(rng, 1, 6000)
    if rng.random() < 0.5:
        return "0x" + "".join(rng.choice("0123456789abcdef") for _ in range(digits))
    return rng.choice("123456789") + "".join(rng.choice("0123456789") for _ in range(digits - 1))


def huge_literal(rng: random.Random) -> str:
    """A literal of 1 to 6,000 digits somewhere a literal may stand."""
    lit = ("-" if rng.random() < 0.2 else "") + _huge_literal(rng)
    dtype = rng.choice(("pl.INT8", "pl.UINT64", "pl.INT64", "pl.INDEX", "pl.FP32"))
    place = rng.choice(("expr", "shape", "subscript", "range", "const", "module", "array", "assert"))
    if place == "module":
        return _program("m = k + C\nreturn m", pre=f"C = {lit}\n")
    if place == "shape":
        return _program(f"t = pl.create_tensor([{lit}, 4], dtype=pl.FP32)\nreturn k")
    if place == "array":
        return _program(f"t = pl.array.create({lit}, pl.INT32)\nreturn k")
    if place == "subscript":
        return _program(f"t = pl.create_tensor([4], dtype=pl.FP32)\nu = t[{lit}]\nreturn k")
    if place == "range":
        return _program(f"m = k\nfor i in pl.range({lit}):\n    m = m + i\nreturn m")
    if place == "const":
        return _program(f"m = pl.const({lit}, {dtype})\nreturn k")
    if place == "assert":
        return _program(f"pl.static_assert({lit} > 0)\nreturn k")
    return _program(f"m = k + {lit}\nreturn m")


_STATIC_SHAPES = (
    "[[0] * {n}] * {n}",
    "[0] * {n} + [0] * {n}",
    "({n},) * {n}",
    "[A, A, A]",
    "'%*d' % ({big}, 1)",
    "'%s' % 'x'",
    "'ab' * {n}",
    "[[[A]]]",
    "2 ** {n}",
    "1 << {n}",
    "{big} * {big}",
)


def static_value(rng: random.Random) -> str:
    """Module constants built from one another, some small, some that would run away."""
    lines = ["A = [0]"]
    for i in range(rng.randint(1, 6)):
        shape = rng.choice(_STATIC_SHAPES)
        n = _log_uniform(rng, 1, 70_000)
        lines.append(f"A = {shape.format(n=n, big=10**9)}" if i % 2 else f"B{i} = {shape.format(n=n, big=10**9)}")
    if rng.random() < 0.3:  # one more level per line
        lines += ["A = [A]" for _ in range(rng.choice((10, 99, 101, 500)))]
    lines.append("B = A")
    return _program("return k", pre="\n".join(lines) + "\n")


_UNREAD_ARGUMENT = """{header}
N = pl.dynamic("N")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h(self, x: pl.Tensor[[4], pl.FP32], t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[{ret}], pl.FP32]:
{helper}
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y = self.h(a, a)
{last}
"""


def call_site_family(rng: random.Random) -> str:
    """A helper with a parameter it may never read, called with computed arguments in every form."""
    helper = rng.choice(("        return x\n", "        u = pl.add(x, t)\n        return u\n", "        t = x\n        return t\n"))
    argument = rng.choice(("pl.add(a, y)", "pl.mul(y, y)", "a", "y", "pl.add(pl.add(a, y), a)"))
    last = rng.choice(
        (
            f"        return self.h(a, {argument})\n",
            f"        z = self.h({argument}, {argument})\n        return z\n",
            f"        self.h(a, {argument})\n        return y\n",
            f"        z = self.h(y, {argument})\n        w = self.h(z, {argument})\n        return w\n",
        )
    )
    return _UNREAD_ARGUMENT.format(header=HEADER, ret=rng.choice(("N", "4")), helper=helper, last=last)


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "token": lambda rng: token_mutant(rng, rng.choice(corpus())),
    "line": lambda rng: line_mutant(rng, rng.choice(corpus())),
    "byte": lambda rng: byte_mutant(rng, rng.choice(corpus())),
    "chain": long_chain,
    "literal": huge_literal,
    "static": static_value,
    "call-site": call_site_family,
}
"""Front-end inputs by kind, each drawn from the `random.Random` given."""

PASS_GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "corpus": lambda rng: rng.choice(corpus()),
    "chain": lambda rng: long_chain(rng, max_operands=100),
    "call-site": call_site_family,
    "token": lambda rng: token_mutant(rng, rng.choice(corpus())),
    "line": lambda rng: line_mutant(rng, rng.choice(corpus())),
}
"""Pass inputs: mostly programs that parse (chains at lengths the parser accepts)."""


def draw(rng: random.Random, generators: dict[str, Callable[[random.Random], str]]) -> tuple[str, str]:
    kind = rng.choice(sorted(generators))
    return kind, generators[kind](rng)


# ---------------------------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one input did: `result` is "ok" or the error type's name."""

    result: str
    documented: bool
    detail: str = ""


def run_front_end(source: str, filename: str = "fuzz.py") -> tuple[Outcome, Program | None]:
    """Parse; the only exception allowed is a ParserError located inside the source (a bug in the
    parser is an `InternalParserError`, which is not one)."""
    try:
        program = parse_program(source, filename)
    except ParserError as err:
        lines = max(1, len(source.splitlines()))
        located = 1 <= err.line <= lines and err.col >= 0 and err.file == filename and bool(err.message)
        ok = located and len(str(err)) < 20_000
        return Outcome("ParserError", ok, "" if ok else str(err)[:300]), None
    except Exception as exc:
        return Outcome(type(exc).__name__, False, str(exc)[:300]), None
    return Outcome("ok", True), program


def run_pass(source: str, filename: str = "fuzz.py") -> Outcome:
    """Parse, inline (with the verifier), print, parse again, compare; run both when possible."""
    outcome, before = run_front_end(source, filename)
    if before is None:
        return outcome
    try:
        after = inline_functions(max_iterations=2_000, max_rows=2_000_000, timeout=20.0)(before)
    except VerificationError as err:
        return Outcome("VerificationError", err.in_the_input, "" if err.in_the_input else str(err)[:300])
    except InlineError as err:
        located = re.match(rf"{re.escape(filename)}:\d+:\d+: ", str(err)) is not None
        return Outcome("InlineError", located, "" if located else str(err)[:300])
    except (InlineCycleError, ExpansionTooLargeError, SaturationLimitError) as err:
        return Outcome(type(err).__name__, True)
    except Exception as exc:
        return Outcome(type(exc).__name__, False, str(exc)[:300])
    printed = reads_back(after)
    if printed is not None:
        return printed
    return _same_result(before, after)


def reads_back(program: Program) -> Outcome | None:
    """None when `program` prints as `pl` that parses back to a structurally equal program (what
    an exit 0 of `nanopto inline` promises), or when the printer refuses it with one of its
    documented errors; else the finding."""
    if not program.function_list:
        return None  # every function was Inline: the command line exits 2, located, printing nothing
    try:
        text = python_print(program)
    except (NestingTooDeepToPrintError, ConstantNotPrintableError):
        return None  # the command line exits 2 with this error, located: no exit-0 output
    except Exception as exc:
        return Outcome(f"print {type(exc).__name__}", False, str(exc)[:300])
    try:
        again = parse_program(text, "printed.py")
    except Exception as exc:
        return Outcome(f"exit-0 output does not parse: {type(exc).__name__}", False, f"{exc}"[:300] + "\n" + text[:300])
    difference = first_difference(again, program, enable_auto_mapping=True)
    if difference is None:
        return None
    # A variable the pass left untyped is typed when the text is read again: more known, nothing
    # changed, so the text must then print the same.
    if isinstance(difference.rhs, UnknownType) and python_print(again) == text:
        return None
    return Outcome("exit-0 output parses differently", False, f"{difference}"[:300])


def _same_result(before: Program, after: Program) -> Outcome:
    """For a `main` over FP32 tensors of shape [4] or INDEX scalars: the same value before and after.
    An Inline `main` is not compared: the pass drops every Inline function, so there is none after."""
    main = before.functions.get("main")
    if main is None or main.func_type is FunctionType.Inline:
        return Outcome("ok", True)
    args: list[object] = []
    for param in main.param_list:
        ty = param.var.type
        if isinstance(ty, TensorType) and python_print(ty) == "pl.Tensor[[4], pl.FP32]":
            args.append(np.arange(1, 5, dtype=np.float32))
        elif isinstance(ty, ScalarType) and ty.dtype.is_int:
            args.append(3)
        else:
            return Outcome("ok", True)
    try:
        expected = interpret(before, "main", *args)
    except InterpreterError:
        return Outcome("ok", True)  # not runnable as drawn (e.g. a loop bound): nothing to compare
    try:
        actual = interpret(after, "main", *args)
    except InterpreterError as exc:
        return Outcome("runs before, not after", False, str(exc)[:300])
    if not values_equal(expected, actual):
        return Outcome("computes differently", False, f"{expected!r} != {actual!r}")
    return Outcome("ok", True)


@dataclass
class Tally:
    """A fuzzing run's figures: inputs by kind and result, the slowest input, the findings."""

    counts: dict[tuple[str, str], int]
    findings: list[tuple[int, str, Outcome, str]]
    slowest: tuple[float, int, str] = (0.0, -1, "")

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def fuzz(
    seed: int,
    count: int,
    generators: dict[str, Callable[[random.Random], str]],
    run: Callable[[str], Outcome],
    clock: Callable[[], float],
) -> Tally:
    """Draw `count` inputs from `random.Random(seed)` and hold each to the rule; input `i` is
    reproduced by `draw(random.Random(seed), ...)` called `i + 1` times."""
    rng = random.Random(seed)
    tally = Tally({}, [])
    for index in range(count):
        kind, source = draw(rng, generators)
        started = clock()
        outcome = run(source)
        elapsed = clock() - started
        key = (kind, outcome.result)
        tally.counts[key] = tally.counts.get(key, 0) + 1
        if elapsed > tally.slowest[0]:
            tally.slowest = (elapsed, index, kind)
        if not outcome.documented:
            tally.findings.append((index, kind, outcome, source))
    return tally


def front_end_outcome(source: str) -> Outcome:
    """Parse; a program that parses must also print as text that parses back to it (the exit-0
    output of `nanopto inline` with an empty pipeline)."""
    outcome, program = run_front_end(source)
    if program is None:
        return outcome
    return reads_back(program) or outcome
