"""The decoder's body copies agree with the subst rules' (issue 7).

By default a spliced body is one `(Inst template site actuals)` term that the decoder copies out
(`rules/instantiate.py`); `body_copies="rules"` makes the subst/rename rules copy it inside the
e-graph. Both must give the same program, names included, on every program: the drawn ones (every
rebinding row and call-site form) and hand-written ones for what the drawing leaves out (loop
carries, if results, symbolic dimensions, dump tags, nested helpers, tuple actuals).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given

import tests.test_dynamic_dims as dynamic_dims
import tests.test_spliced_types as spliced_types
from nanopto.ir_terms.encoding import Decoder
from nanopto.ir_terms.nodes import ForStmt, Program, Var
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.call_sites import make_template
from nanopto.passes.inline_functions import InlineFunctions, InlineResult, inline_program
from nanopto.rules import INLINE_RULESETS, SPLICE, SPLICE_BY_INSTANCE, Ruleset
from nanopto.rules.engine import Stage
from nanopto.rules.instantiate import Instantiator, _Copy, compile_template
from nanopto.verify.strategies import programs

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "nanopto" / "examples").glob("*.py"))


def both(program: Program) -> tuple[InlineResult, InlineResult]:
    return inline_program(program, body_copies="instance"), inline_program(program, body_copies="rules")


def assert_agree(program: Program) -> InlineResult:
    by_instance, by_rules = both(program)
    text = python_print(by_instance.program)
    assert text == python_print(by_rules.program), f"by instance:\n{text}"
    # The same fresh locals for the same sites (the keys hold Var ids of expanded helpers, which
    # each run makes anew).
    assert sorted((name, site) for (_, site), name in by_instance.copies.items()) == sorted(
        (name, site) for (_, site), name in by_rules.copies.items()
    )
    assert sorted(by_instance.provenance.values()) == sorted(by_rules.provenance.values())
    return by_instance


@given(programs())
def test_instantiation_agrees_with_the_subst_rules_on_drawn_programs(program: Program) -> None:
    assert_agree(program)
    walked = python_print(inline_program(program).program)
    default, Instantiator.COMPILE_AFTER = Instantiator.COMPILE_AFTER, 1  # every copy compiled
    try:
        assert python_print(inline_program(program).program) == walked
    finally:
        Instantiator.COMPILE_AFTER = default


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_instantiation_agrees_on_every_shipped_example(path: Path, copies: str) -> None:
    assert_agree(parse_program(path.read_text(), str(path)))


HEADER = "import nanopto.language as pl\nN = pl.dynamic('N')\n\n@pl.program\nclass P:\n"


def in_program(methods: str) -> str:
    """`methods` (written at any indentation) as the body of a program class `P`."""
    return HEADER + textwrap.indent(textwrap.dedent(methods), "    ")

HAND_WRITTEN = {
    "loop carries and if results": spliced_types.SOURCE,
    "symbolic dimensions": dynamic_dims.SOURCE,
    "loop carries at three sites": spliced_types.SOURCE.replace(
        "        z = self.accumulate(a, k)\n",
        "        z = self.accumulate(a, k)\n        z2 = self.accumulate(z, k)\n        z3 = self.accumulate(z2, k)\n",
    ),
    "a helper's own identity assignment beside a projected site": in_program(
        """
        @pl.function(type=pl.FunctionType.Inline)
        def keep(self, t: pl.Tensor[[4], pl.FP32], s: pl.Scalar[pl.INDEX]) -> tuple[pl.Tensor[[4], pl.FP32], pl.Scalar[pl.INDEX]]:
            t = t
            return t, s

        @pl.function
        def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            y, m = self.keep(a, 0)
            return y
        """
    ),
    "while carry": in_program(
        """
        @pl.function(type=pl.FunctionType.Inline)
        def countdown(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for (k,) in pl.while_(init_values=(n,)):
                pl.cond(k > 0)
                k2 = k - 1
                k_out = pl.yield_(k2)
            return k_out

        @pl.function
        def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            b = self.countdown(a)
            c = self.countdown(b)
            return c
        """
    ),
    "nested helpers and a tuple return": in_program(
        """
        @pl.function(type=pl.FunctionType.Inline)
        def pair(self, x: pl.Tensor[[N], pl.FP32]) -> tuple[pl.Tensor[[N], pl.FP32], pl.Tensor[[N], pl.FP32]]:
            s: pl.Tensor[[N], pl.FP32] = pl.add(x, x)
            d: pl.Tensor[[N], pl.FP32] = pl.sub(s, x)
            return s, d

        @pl.function(type=pl.FunctionType.Inline)
        def twice(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
            t = self.pair(x)
            u = self.pair(t[1])
            return pl.mul(t[0], u[0])

        @pl.function
        def main(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
            r = self.twice(pl.add(a, a))
            q = self.pair(r)
            return q[0]
        """
    ),
}


@pytest.fixture(params=["walked", "compiled"])
def copies(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each case twice: copies made by walking the template, and by its compiled function from the
    first copy on (the pass compiles only templates copied `COMPILE_AFTER` times)."""
    if request.param == "compiled":
        monkeypatch.setattr(Instantiator, "COMPILE_AFTER", 1)
    return str(request.param)


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_instantiation_agrees_on_what_the_drawing_leaves_out(name: str, copies: str) -> None:
    assert_agree(parse_program(HAND_WRITTEN[name], f"<{name}>"))


def test_the_stock_rulesets_copy_by_instance_and_anything_else_by_rules() -> None:
    program = parse_program((EXAMPLES[0].parent / "twice.py").read_text())
    result = inline_program(program)
    assert result.report.matches["splice-assign"] and "subst-AssignStmt" not in result.report.matches
    assert "subst-AssignStmt" in inline_program(program, body_copies="rules").report.matches
    assert Stage([], {}, [], rulesets=(*INLINE_RULESETS,)).active_rulesets()[0] is SPLICE_BY_INSTANCE
    extra = Ruleset("mine", "a user's extra rules", ())
    assert Stage([], {}, [], rulesets=(*INLINE_RULESETS, extra)).active_rulesets()[0] is SPLICE
    assert Stage([], {}, [], body_copies="rules").active_rulesets()[0] is SPLICE


def test_a_tuple_literal_actual_is_copied_by_the_rules() -> None:
    """The project rule would rewrite `p[0]` inside the copy; the decoder does not project."""
    source = in_program(
        """
        @pl.function(type=pl.FunctionType.Inline)
        def first(self, p: tuple[pl.Scalar[pl.INDEX], pl.Scalar[pl.INDEX]]) -> pl.Scalar[pl.INDEX]:
            v = p[0] + 1
            return v

        @pl.function
        def main(self, a: pl.Scalar[pl.INDEX], b: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            r = self.first((a, b))
            return r
        """
    )
    result = assert_agree(parse_program(source))
    assert "subst-AssignStmt" in result.report.matches
    assert "[0]" not in python_print(result.program)


def test_a_compiled_template_copies_exactly_like_the_walk() -> None:
    """`compile_template` against `_Copy` on the same site: same statements, same names."""
    program = parse_program(HAND_WRITTEN["loop carries at three sites"])
    helper = program.functions["accumulate"]
    template = make_template(helper)
    actuals = {p.var.id: Var(f"actual_{p.var.name}") for p in helper.params}

    def copy() -> _Copy:
        return _Copy(Decoder(vars={}), 7, actuals, template.local_ids)

    walked, compiled = copy().stmts(template.body), compile_template(template.body)(copy())
    assert any(isinstance(s, ForStmt) for s in walked)
    assert [python_print(s) for s in walked] == [python_print(s) for s in compiled]


def test_only_the_callers_projected_reads_are_dropped_as_identities() -> None:
    """Found by the soak profile: the subst rules' copy of a helper's own `t = t` became `a = a`,
    which `writeback-tuple-identity` dropped because `a` was also a projected component; the
    decoder's copy kept it. The rule now applies only to the caller's `q = tmp[i]` statements."""
    result = assert_agree(parse_program(HAND_WRITTEN["a helper's own identity assignment beside a projected site"]))
    main = python_print(result.program.functions["main"])
    assert main.splitlines()[2:5] == ["    a = a", "    y = a", "    m = 0"]  # the helper's statement stays


def test_an_unknown_body_copies_value_is_refused_naming_the_choices() -> None:
    program = parse_program((EXAMPLES[0].parent / "twice.py").read_text())
    with pytest.raises(ValueError, match="body_copies must be 'instance' or 'rules', not 'fast'"):
        inline_program(program, body_copies="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="body_copies must be 'instance' or 'rules', not 'fast'"):
        InlineFunctions(body_copies="fast")  # type: ignore[arg-type]
