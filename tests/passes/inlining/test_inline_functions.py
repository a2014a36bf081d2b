"""InlineFunctions, seed 000: every worked example as a Before/Expected pair, plus the edge cases.

Expected programs are compared with `ir.assert_structural_equal` (alpha-equivalence: names are
ignored), and the naming rules separately by printing.
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.egraph import SaturationError
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import Mutator, walk
from nanopto.passes.inlining import InlineResult, inline_program
from nanopto.passes.inlining.call_graph import InlineCycleError
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.rules import INLINE_RULESETS, PROJECT, SPLICE, WRITEBACK
from nanopto.verify.equivalence import assert_equivalent


def pl(src: str) -> ir.Program:
    return parse_program("import nanopto.language as pl\n" + textwrap.dedent(src))


def inline(program: ir.Program) -> ir.Program:
    return passes.inline_functions()(program)


def body_text(program: ir.Program, fn: str = "main") -> str:
    """The printed body of one function, dedented, for naming assertions."""
    lines = python_print(program.functions[fn]).splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    return textwrap.dedent("\n".join(lines[start + 1 :])).strip()


SINGLE_BEFORE = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, a):
        z = self.helper(a)
        return z
"""


def test_single_call_site() -> None:
    after = inline(pl(SINGLE_BEFORE))
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                y_inline0 = pl.mul(a, a)
                z = y_inline0
                return z
        """
    )
    ir.assert_structural_equal(after, expected)
    assert body_text(after) == "y_inline0 = pl.mul(a, a)\nz = y_inline0\nreturn z"


def test_multiple_call_sites_get_independent_copies() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def square(self, x):
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a, b):
                a2 = self.square(a)
                b2 = self.square(b)
                return pl.add(a2, b2)
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a, b):
                y_inline0 = pl.mul(a, a)
                a2 = y_inline0
                y_inline1 = pl.mul(b, b)
                b2 = y_inline1
                return pl.add(a2, b2)
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert "y_inline0" in body_text(after) and "y_inline1" in body_text(after)


def test_twice_rebinds_a_local_not_the_callers_tensor() -> None:
    """Seed: `t = pl.add(t, t)` must not rebind the caller's `a` (3A, not 4A)."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def twice(self, t):
                t = pl.add(t, t)
                return t

            @pl.function
            def main(self, a):
                u = self.twice(a)
                w = pl.add(a, u)
                return w
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                t_inline0 = a
                t_inline0 = pl.add(t_inline0, t_inline0)
                u = t_inline0
                w = pl.add(a, u)
                return w
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert body_text(after).splitlines()[0] == "t_inline0 = a"


def test_bump_binds_a_temporary_for_a_rebound_scalar() -> None:
    """Seed: `n = n + 1` on a scalar param leaves the caller's k readable (k + (k + 1))."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def bump(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                n = n + 1
                return n

            @pl.function
            def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                m: pl.Scalar[pl.INDEX] = self.bump(k)
                s: pl.Scalar[pl.INDEX] = k + m
                return s
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                n_inline0: pl.Scalar[pl.INDEX] = k
                n_inline0 = n_inline0 + 1
                m: pl.Scalar[pl.INDEX] = n_inline0
                s: pl.Scalar[pl.INDEX] = k + m
                return s
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert body_text(after).splitlines()[0] == "n_inline0: pl.Scalar[pl.INDEX] = k"


def test_self_update_rebinds_the_callers_var() -> None:
    """A proven self-update (`out = pl.tensor.assemble(out, ...)`) lands on the caller's Var."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def fill(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
                out = pl.tensor.assemble(out, x, [0])
                return out

            @pl.function
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
                o = self.fill(a, o)
                return o
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[4], pl.FP32], o: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
                o = pl.tensor.assemble(o, a, [0])
                return o
        """
    )
    ir.assert_structural_equal(inline(before), expected)


def test_computed_arguments_are_bound_once_at_the_call_site() -> None:
    """docs/specification.md, "Argument binding": `f(a[r], c[r])` binds each computed argument
    once at the call site; `a[r]` is a `tensor.slice` Call (a view), so `x_inline0` and `c_inline1`
    are bound to the slices and the helper's write lands on the view of the caller's `c`."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def f(self, x: pl.Tensor[[4], pl.FP32], c: pl.Tensor[[4, 4], pl.FP32], j: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 4], pl.FP32]:
                v = pl.exp(x)
                c[0:4, j] = v
                return c

            @pl.function
            def main(self, a: pl.Tensor[[8, 4], pl.FP32], c: pl.Tensor[[8, 4, 4], pl.FP32], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 4], pl.FP32]:
                z = self.f(a[r], c[r], r)
                return z
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a: pl.Tensor[[8, 4], pl.FP32], c: pl.Tensor[[8, 4, 4], pl.FP32], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 4], pl.FP32]:
                x_inline0: pl.Tensor[[4], pl.FP32] = pl.tensor.slice(a, [1, 4], [r, 0], [], [0])
                c_inline1: pl.Tensor[[4, 4], pl.FP32] = pl.tensor.slice(c, [1, 4, 4], [r, 0, 0], [], [0])
                v_inline2 = pl.exp(x_inline0)
                c_inline1 = pl.tensor.assemble(c_inline1, pl.tensor.reshape(v_inline2, [4, 1]), [0, r])
                z = c_inline1
                return z
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 4)).astype(np.float32)
    c = rng.standard_normal((8, 4, 4)).astype(np.float32)
    assert_equivalent(before, after, [a, c, 3])


def test_multi_return_projects_without_a_tuple_binding_and_drops_identity_writeback() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def helper(self, x, q):
                r = pl.add(x, x)
                return q, r

            @pl.function
            def main(self, x, q):
                q, ready = self.helper(x, q)
                return pl.add(q, ready)
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, x, q):
                r_inline0 = pl.add(x, x)
                ready = r_inline0
                return pl.add(q, ready)
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert not any(type(node).__name__ == "MakeTuple" for node in walk(after)) and "q = q" not in body_text(after)


def test_helper_returning_a_tuple_variable_works_the_same() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def pair(self, x):
                a = pl.add(x, x)
                b = pl.mul(x, x)
                tmp = (a, b)
                return tmp

            @pl.function
            def main(self, x):
                s, p = self.pair(x)
                return pl.add(s, p)
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, x):
                a_inline0 = pl.add(x, x)
                b_inline1 = pl.mul(x, x)
                s = a_inline0
                p = b_inline1
                return pl.add(s, p)
        """
    )
    ir.assert_structural_equal(inline(before), expected)


def test_return_of_an_inline_call_becomes_a_return_of_the_cloned_values() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def helper(self, x):
                y = pl.mul(x, x)
                return y

            @pl.function
            def main(self, a):
                return self.helper(a)
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                y_inline0 = pl.mul(a, a)
                return y_inline0
        """
    )
    ir.assert_structural_equal(inline(before), expected)


def test_discarded_store_survives_as_an_eval_stmt() -> None:
    """Seed "Discarding a return value": the write IS the return expression."""
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def writeout(self, t, out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
                return pl.tile.store(t, [0, 0], out)

            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
                t = pl.tile.load(a, [0, 0], [64, 64])
                self.writeout(t, out)
                return out
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
                t = pl.tile.load(a, [0, 0], [64, 64])
                pl.tile.store(t, [0, 0], out)
                return out
        """
    )
    ir.assert_structural_equal(inline(before), expected)


def test_discarded_var_and_constant_are_dropped_calls_kept_in_return_order() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def many(self, x, out):
                y = pl.add(x, x)
                return y, pl.system.set_ffts(x), 3, pl.tensor.assemble(out, y, [0])

            @pl.function
            def main(self, a, o):
                self.many(a, o)
                return o
        """
    )
    assert body_text(inline(before)) == textwrap.dedent(
        """\
        y_inline0 = pl.add(a, a)
        pl.system.set_ffts(a)
        pl.tensor.assemble(o, y_inline0, [0])
        return o"""
    )


def test_discarding_a_value_that_wraps_a_call_is_an_error() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def bump(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
                return pl.tile.get_block_idx() + n

            @pl.function
            def main(self, k: pl.Scalar[pl.INDEX]):
                self.bump(k)
                return k
        """
    )
    with pytest.raises(ValueError, match="wraps a call") as info:
        inline(before)
    message = str(info.value)
    assert "Return that call directly" in message and "bind the helper's result" in message
    assert ":11:" in message  # the call site's line


def test_scopes_and_loops_inside_a_helper_are_spliced_verbatim() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def kernel(self, x: pl.Tensor[[4], pl.FP32], n: pl.Scalar[pl.INDEX]):
                with pl.at(level=pl.Level.CORE_GROUP):
                    y = pl.exp(x)
                for i in pl.range(n):
                    y = pl.add(y, x)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], k: pl.Scalar[pl.INDEX]):
                r = self.kernel(a, k)
                return r
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[4], pl.FP32], k: pl.Scalar[pl.INDEX]):
                with pl.at(level=pl.Level.CORE_GROUP):
                    y_inline0 = pl.exp(a)
                for i_inline1 in pl.range(k):
                    y_inline0 = pl.add(y_inline0, a)
                r = y_inline0
                return r
        """
    )
    ir.assert_structural_equal(inline(before), expected)


def test_transitive_inline_is_fully_expanded_callee_first() -> None:
    before = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def sq(self, x):
                y = pl.mul(x, x)
                return y

            @pl.function(type=pl.FunctionType.Inline)
            def quad(self, x):
                a = self.sq(x)
                b = self.sq(a)
                return b

            @pl.function
            def main(self, v):
                r = self.quad(v)
                return r
        """
    )
    expected = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, v):
                y1 = pl.mul(v, v)
                a1 = y1
                y2 = pl.mul(a1, a1)
                b1 = y2
                r = b1
                return r
        """
    )
    after = inline(before)
    ir.assert_structural_equal(after, expected)
    assert list(after.functions) == ["main"]


def test_inline_function_without_callers_is_removed_and_no_inline_means_unchanged() -> None:
    program = pl(SINGLE_BEFORE.replace("z = self.helper(a)", "z = pl.exp(a)"))
    after = inline(program)
    assert list(after.functions) == ["main"]
    plain = pl(
        """
        @pl.program
        class P:
            @pl.function
            def main(self, a):
                return pl.exp(a)
        """
    )
    assert inline(plain) is plain


@pytest.mark.parametrize(
    ("helpers", "cycle"),
    [
        ({"f": "self.f(x)"}, "f -> f"),
        ({"a": "self.b(x)", "b": "self.a(x)"}, "a -> b -> a"),
    ],
)
def test_recursive_inline_is_rejected_naming_the_cycle(helpers: dict[str, str], cycle: str) -> None:
    methods = "".join(
        f"""
    @pl.function(type=pl.FunctionType.Inline)
    def {name}(self, x):
        y = {call}
        return y
"""
        for name, call in helpers.items()
    )
    src = f"""
@pl.program
class P:{methods}
    @pl.function
    def main(self, a):
        r = self.{next(iter(helpers))}(a)
        return r
"""
    with pytest.raises(InlineCycleError, match="Cycle detected") as info:
        inline(pl(src))
    assert cycle in str(info.value)


class _ExtraArgument(Mutator):
    """Passes `helper` its argument twice: IR the parser refuses, built by hand."""

    def leave(self, node: Any) -> Any:
        if isinstance(node, ir.Call) and node.op == "helper":
            return dataclasses.replace(node, args=(*node.args, *node.args))
        return node


def test_arity_mismatch_names_the_call_site() -> None:
    src = SINGLE_BEFORE.replace("self.helper(a)", "self.helper(a, a)")
    with pytest.raises(ir.ParserTypeError, match=r"'helper' expects 1 argument\(s\), got 2"):
        pl(src)
    built = _ExtraArgument().visit(pl(SINGLE_BEFORE))
    with pytest.raises(InlineError, match=r"takes 1 argument\(s\), this call in 'main' passes 2"):
        inline(built)


def test_the_rules_do_the_splicing() -> None:
    """Without the splice ruleset every Inline call survives, and the verifier names each one."""
    program = pl(SINGLE_BEFORE)
    rulesets = tuple(r for r in INLINE_RULESETS if r is not SPLICE)
    result = inline_program(program, rulesets=(SPLICE.without(*(r.name for r in SPLICE.rules)), *rulesets))
    assert "self.helper(a)" in python_print(result.program)
    assert result.report.matches.get("splice-assign") is None


def test_the_projection_rule_does_the_projection() -> None:
    program = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def pair(self, x):
                a = pl.add(x, x)
                return a, x

            @pl.function
            def main(self, x):
                s, p = self.pair(x)
                return pl.add(s, p)
        """
    )
    crippled = tuple(PROJECT.without("project-tuple-item") if r is PROJECT else r for r in INLINE_RULESETS)
    without = inline_program(program, rulesets=crippled).program
    assert sum(isinstance(node, ir.TupleGetItemExpr) for node in walk(without)) == 2
    ok = inline_program(program)
    assert not any(isinstance(node, ir.TupleGetItemExpr) for node in walk(ok.program))
    assert ok.report.matches["project-tuple-item"] == 2


def test_identity_writeback_rule_is_what_removes_x_equals_x() -> None:
    program = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def fill(self, x, out):
                out = pl.tensor.assemble(out, x, [0])
                return out

            @pl.function
            def main(self, a, o):
                o = self.fill(a, o)
                return o
        """
    )
    assert body_text(inline(program)) == "o = pl.tensor.assemble(o, a, [0])\nreturn o"
    crippled = tuple(WRITEBACK.without("writeback-identity") if r is WRITEBACK else r for r in INLINE_RULESETS)
    with pytest.raises(RuntimeError):
        inline_program(program, rulesets=crippled)


def test_discard_rules_keep_the_store() -> None:
    program = pl(
        """
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.Inline)
            def w(self, t, out):
                return pl.tile.store(t, [0, 0], out)

            @pl.function
            def main(self, t, out):
                self.w(t, out)
                return out
        """
    )
    result = inline_program(program)
    assert result.report.matches["discard-keep-Call"] == 1


def test_input_program_is_not_mutated() -> None:
    program = pl(SINGLE_BEFORE)
    text = python_print(program)
    inline(program)
    assert python_print(program) == text


def test_without_the_subst_rules_the_pass_cannot_splice() -> None:
    """The subst rules copy the helper bodies: with them removed no extractable spliced program
    exists, so the pass stops instead of printing one that Python made."""
    program = pl(SINGLE_BEFORE)
    without_subst = tuple(rs for rs in INLINE_RULESETS if rs.name != "subst")
    with pytest.raises(SaturationError, match="egglog failed while inlining"):
        inline_program(program, rulesets=without_subst)
    result = inline_program(program)
    assert result.report.matches["subst-AssignOp2"] >= 1 and result.rulesets[1] == "subst"


def test_a_trace_asked_for_outside_a_pass_context_is_kept() -> None:
    program = pl(SINGLE_BEFORE)
    root = passes.PassContext.root()
    before = len(root.traces)
    passes.inline_functions(trace=True)(program)
    assert len(root.traces) == before + 1
    name, result = root.traces.pop()
    assert name == "inline-functions" and isinstance(result, InlineResult) and len(result.sites) == 1
