"""The hostile-input fuzzer (`nanopto.tools.fuzz`), a derandomized slice of it for CI.

The same inputs every run (fixed seeds): front-end inputs (token, line and byte mutants of the
examples, long chains, huge literals, runaway module constants, call-site families) must parse or
raise a located ParserError; pass inputs must inline or raise an error docs/errors.md lists about
the input, print and parse back, and compute what they computed before. The soak profile is
`python bench/fuzz_soak.py` (100,000 front-end and 10,000 pass inputs by default).
"""

from __future__ import annotations

import random
import time

import pytest

from nanopto.tools import fuzz

FRONT_END_INPUTS = 1_000
PASS_INPUTS = 150


def _report(tally: fuzz.Tally) -> str:
    lines = [f"{len(tally.findings)} finding(s) in {tally.total} inputs:"]
    for index, kind, outcome, source in tally.findings[:5]:
        lines.append(f"  input #{index} ({kind}): {outcome.result}: {outcome.detail}\n{source[:600]}")
    return "\n".join(lines)


def test_front_end_slice() -> None:
    tally = fuzz.fuzz(0, FRONT_END_INPUTS, fuzz.GENERATORS, fuzz.front_end_outcome, time.process_time)
    assert not tally.findings, _report(tally)
    assert tally.slowest[0] < 10, tally.slowest
    kinds = {kind for kind, _ in tally.counts}
    assert kinds == set(fuzz.GENERATORS)  # every generator drew inputs
    assert any(result == "ParserError" for _, result in tally.counts)
    assert any(result == "ok" for _, result in tally.counts)


def test_pass_slice() -> None:
    tally = fuzz.fuzz(1, PASS_INPUTS, fuzz.PASS_GENERATORS, fuzz.run_pass, time.process_time)
    assert not tally.findings, _report(tally)
    assert tally.slowest[0] < 10, tally.slowest
    assert sum(n for (_, result), n in tally.counts.items() if result == "ok") > PASS_INPUTS // 2


@pytest.mark.parametrize("generator", sorted(fuzz.GENERATORS))
def test_each_generator_is_reproducible_from_its_seed(generator: str) -> None:
    make = fuzz.GENERATORS[generator]
    assert make(random.Random(7)) == make(random.Random(7))


def test_a_finding_is_reported_with_the_input_that_made_it() -> None:
    def broken(source: str) -> fuzz.Outcome:
        return fuzz.Outcome("RecursionError", False, "boom")

    tally = fuzz.fuzz(3, 2, {"chain": fuzz.long_chain}, broken, time.process_time)
    assert [(i, kind, outcome.result) for i, kind, outcome, _ in tally.findings] == [
        (0, "chain", "RecursionError"),
        (1, "chain", "RecursionError"),
    ]
    assert tally.findings[0][3] == fuzz.draw(random.Random(3), {"chain": fuzz.long_chain})[1]


def test_an_inline_main_is_not_run_after_the_pass_that_drops_it() -> None:
    """The pass soak's one finding (seed 1000, input 4190, a line mutant): `main` itself was an
    Inline function, so the pass dropped it as the specification says, and the fuzzer's before and
    after comparison found no `main` to run after ("runs before, not after")."""
    source = (
        f"{fuzz.HEADER}\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Inline)\n"
        "    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        return k\n"
    )
    assert fuzz.run_pass(source) == fuzz.Outcome("ok", True)


def test_the_rule_finds_an_exit_0_output_that_does_not_parse_back() -> None:
    """What the printer wrote for `pl.const(1e999, pl.FP32)` before the parser refused it: text
    that does not read back. A hand-built INDEX constant past 64 bits still prints so."""
    from nanopto.ir_terms import nodes as n
    from nanopto.ir_terms.dtypes import DataType
    from nanopto.ir_terms.types import ScalarType

    k = n.Var("k", ScalarType(DataType.INDEX))
    body = n.SeqStmts((n.AssignStmt(n.Var("m", ScalarType(DataType.INDEX)), n.ConstInt(2**64)), n.ReturnStmt((k,))))
    fn = n.Function("main", (n.Param(k),), (ScalarType(DataType.INDEX),), body)
    finding = fuzz.reads_back(n.Program("P", (fn,)))
    assert finding is not None and not finding.documented
    assert finding.result.startswith("exit-0 output does not parse: Parser")


@pytest.mark.parametrize(
    ("helper", "caller", "result"),
    [
        ("m = pl.const(1e999, pl.FP32)\nreturn k", "r = self.h(k)\nreturn r", "ParserError"),
        (
            "m = k\n" + "".join("    " * d + "if k > 0:\n" for d in range(50)) + "    " * 50 + "m = m + 1\nreturn m",
            "r = k\n" + "".join("    " * d + "if k > 0:\n" for d in range(50)) + "    " * 50 + "r = self.h(k)\nreturn r",
            "ok",  # the printer refuses the result (NestingTooDeepToPrintError): no exit-0 output
        ),
    ],
)
def test_the_soak_findings_of_unparsable_output_are_gone(helper: str, caller: str, result: str) -> None:
    source = fuzz._program(helper, caller)
    assert fuzz.front_end_outcome(source).documented
    assert fuzz.run_pass(source) == fuzz.Outcome(result, True)
