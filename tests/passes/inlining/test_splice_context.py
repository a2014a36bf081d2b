"""Where a spliced form may stand (docs/10-the-rest-of-the-specification.md, "Where a spliced
scope may stand"): a helper's statements are valid where the helper stands and may not be where a
call puts them. The pass refuses such a call, located, because the literal splice is text the
parser rejects (each test shows that too); a `pl.spmd` body reads through the Inline calls in it,
so the form the parser picks for it is the same before and after the pass."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.ir_terms.parse_error import ParserError
from nanopto.ir_terms.parser import parse_program
from nanopto.passes.inlining.call_sites import InlineError
from nanopto.verify.interpreter import interpret, values_equal

KERNEL = """
@pl.function(type=pl.FunctionType.InCore)
def kernel(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    y = pl.add(x, x)
    return y
"""


def _program(*functions: str) -> str:
    members = "\n".join(textwrap.indent(textwrap.dedent(f).strip(), "    ") + "\n" for f in (KERNEL, *functions))
    return f"import nanopto.language as pl\n\n@pl.program\nclass P:\n{members}"


def _helper(body: str, *, auto_scope: bool = True) -> str:
    flag = "" if auto_scope else ", auto_scope=False"
    return f"""
@pl.function(type=pl.FunctionType.Inline{flag})
def h(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
{textwrap.indent(textwrap.dedent(body).strip(), "    ")}
    return y
"""


def _main(header: str, call_line: str = "w = self.h(a)", *, auto_scope: bool = True) -> str:
    flag = "" if auto_scope else "(auto_scope=False)"
    return f"""
@pl.function{flag}
def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    {header}
        {call_line}
    return w
"""


CLUSTER_FORBIDS = {
    "spmd-capture": (
        """
        with pl.spmd(4) as tid:
            b = pl.tile.get_block_idx()
            y = pl.exp(x)
        """,
        r"`with pl.spmd\(\.\.\.\) as tid:` cannot capture a TaskId inside pl.cluster\(\)",
        """
        with pl.spmd(4) as tid_inline0:
            b_inline1 = pl.tile.get_block_idx()
            y_inline2 = pl.exp(a)
        w = y_inline2
        """,
    ),
    "spmd-early-resolve": (
        """
        with pl.spmd(4, allow_early_resolve=True):
            b = pl.tile.get_block_idx()
            y = pl.exp(x)
        """,
        r"pl.spmd\(allow_early_resolve=\.\.\.\) cannot be nested inside pl.cluster\(\)",
        """
        with pl.spmd(4, allow_early_resolve=True):
            b_inline0 = pl.tile.get_block_idx()
            y_inline1 = pl.exp(a)
        w = y_inline1
        """,
    ),
    "submit-deps": (
        """
        y, t = pl.submit(self.kernel, x)
        y, u = pl.submit(self.kernel, y, deps=[t])
        """,
        r"pl.submit\(\.\.\., deps=\.\.\.\) cannot carry per-task dispatch metadata inside pl.cluster\(\)",
        """
        y_inline0, t_inline1 = pl.submit(self.kernel, a)
        y_inline0, u_inline2 = pl.submit(self.kernel, y_inline0, deps=[t_inline1])
        w = y_inline0
        """,
    ),
    "spmd-submit": (
        """
        y, t = pl.spmd_submit(self.kernel, x, core_num=4)
        """,
        r"pl.spmd_submit\(\.\.\., core_num=\.\.\.\) cannot carry per-task dispatch metadata inside pl.cluster\(\)",
        """
        y_inline0, t_inline1 = pl.spmd_submit(self.kernel, a, core_num=4)
        w = y_inline0
        """,
    ),
}
"""Forms valid in a helper and forbidden inside `pl.cluster()`: the helper's body, the refusal,
and the splice written by hand inside the cluster (which the parser rejects)."""


def _spliced_by_hand(header: str, spliced: str, *, auto_scope: bool = True) -> str:
    lines = textwrap.indent(textwrap.dedent(spliced).strip(), " " * 4)
    flag = "" if auto_scope else "(auto_scope=False)"
    main = f"""
@pl.function{flag}
def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    {header}
{textwrap.indent(lines, " " * 4)}
    return w
"""
    return _program(main)


@pytest.mark.parametrize("form", sorted(CLUSTER_FORBIDS))
def test_a_form_a_cluster_forbids_is_refused_where_a_call_would_put_it_there(form: str) -> None:
    body, reason, spliced = CLUSTER_FORBIDS[form]
    source = _program(_helper(body), _main("with pl.cluster():"))
    before = parse_program(source, "p.py")  # the helper is valid where it stands
    call_line = source.splitlines().index("            w = self.h(a)") + 1
    with pytest.raises(InlineError, match=rf"p.py:{call_line}:\d+: cannot inline 'h' into 'main' here: {reason}"):
        passes.inline_functions()(before)
    with pytest.raises(ParserError, match="cluster"):  # the literal splice is not valid pl
        parse_program(_spliced_by_hand("with pl.cluster():", spliced))


@pytest.mark.parametrize("form", sorted(CLUSTER_FORBIDS))
def test_the_same_helper_outside_the_cluster_splices_and_reads_back(form: str) -> None:
    body, _, spliced = CLUSTER_FORBIDS[form]
    before = parse_program(_program(_helper(body), _main("with pl.graph('g'):")))
    after = passes.inline_functions()(before)
    expected = parse_program(_spliced_by_hand("with pl.graph('g'):", spliced))
    ir.assert_structural_equal(after.functions["main"], expected.functions["main"])
    ir.assert_structural_equal(parse_program(str(after)), after)


HAND_SCOPE = """
with pl.scope():
    y = pl.exp(x)
"""


def test_an_auto_scope_is_refused_inside_a_manual_scope() -> None:
    source = _program(_helper(HAND_SCOPE, auto_scope=False), _main("with pl.manual_scope():", auto_scope=False))
    with pytest.raises(InlineError, match=r"an AUTO pl.scope\(\) cannot be nested inside a MANUAL scope"):
        passes.inline_functions()(parse_program(source))
    spliced = "with pl.scope():\n    y_inline0 = pl.exp(a)\nw = y_inline0"
    with pytest.raises(ParserError, match="MANUAL"):
        parse_program(_spliced_by_hand("with pl.manual_scope():", spliced, auto_scope=False))


def test_a_hand_placed_scope_needs_a_caller_that_places_none_itself() -> None:
    helper = _helper(HAND_SCOPE, auto_scope=False)
    caller = _main("with pl.graph('g'):")
    with pytest.raises(InlineError, match=r"declare 'main' @pl.function\(\.\.\., auto_scope=False\)"):
        passes.inline_functions()(parse_program(_program(helper, caller)))
    before = parse_program(_program(helper, _main("with pl.graph('g'):", auto_scope=False)))
    after = passes.inline_functions()(before)
    spliced = "with pl.scope():\n    y_inline0 = pl.exp(a)\nw = y_inline0"
    expected = parse_program(_spliced_by_hand("with pl.graph('g'):", spliced, auto_scope=False))
    ir.assert_structural_equal(after.functions["main"], expected.functions["main"])
    a = np.arange(4, dtype=np.float32)
    assert values_equal(interpret(after, "main", a), interpret(before, "main", a))


def test_a_helper_that_puts_a_forbidden_form_in_its_own_cluster_is_refused_there() -> None:
    """`outer` calls `h` inside its own `pl.cluster()`: the splice into `outer` is refused, wherever
    `outer` is called from."""
    outer = """
    @pl.function(type=pl.FunctionType.Inline)
    def outer(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        with pl.cluster():
            y = self.h(x)
        return y
    """
    body, reason, _ = CLUSTER_FORBIDS["spmd-capture"]
    main = _main("with pl.graph('g'):", "w = self.outer(a)")
    with pytest.raises(InlineError, match=f"cannot inline 'h' into 'outer' here: {reason}"):
        passes.inline_functions()(parse_program(_program(_helper(body), outer, main)))


BLOCK_HELPERS = """
@pl.function(type=pl.FunctionType.Inline)
def block(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    b = pl.tile.get_block_idx()
    y = pl.exp(x)
    return y

@pl.function(type=pl.FunctionType.Inline)
def outer(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    y = self.block(x)
    return y

@pl.function(type=pl.FunctionType.Inline)
def launch(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    y = self.kernel(x)
    return y

@pl.function(type=pl.FunctionType.Inline)
def plain(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
    y = pl.exp(x)
    return y
"""


def test_an_spmd_body_reads_the_block_index_through_inline_calls() -> None:
    """`outer` calls `block`, which reads the block index: the body is a per-block body, so the
    parser gives it the InCore scope before the pass, as it does for the spliced body after."""
    before = parse_program(_program(BLOCK_HELPERS, _main("with pl.spmd(4):", "w = self.outer(a)")))
    after = passes.inline_functions()(before)
    expected = parse_program(
        _spliced_by_hand(
            "with pl.spmd(4):",
            """
            b_inline2 = pl.tile.get_block_idx()
            y_inline3 = pl.exp(a)
            y_inline4 = y_inline3
            w = y_inline4
            """,
        )
    )
    ir.assert_structural_equal(after.functions["main"], expected.functions["main"])
    ir.assert_structural_equal(parse_program(str(after)), after)
    a = np.arange(4, dtype=np.float32)
    assert values_equal(interpret(after, "main", a), interpret(before, "main", a))


def test_an_spmd_body_launches_the_kernels_its_helpers_launch() -> None:
    before = parse_program(_program(BLOCK_HELPERS, _main("with pl.spmd(4):", "w = self.launch(a)")))
    after = passes.inline_functions()(before)
    expected = parse_program(
        _spliced_by_hand("with pl.spmd(4):", "y_inline0 = self.kernel(a)\nw = y_inline0")
    )
    ir.assert_structural_equal(after.functions["main"], expected.functions["main"])
    ir.assert_structural_equal(parse_program(str(after)), after)


@pytest.mark.parametrize(
    ("call_line", "message"),
    [
        ("w = self.plain(a)", "neither reads the per-block index"),
        ("w = self.launch(self.launch(a))", "launches 2 kernels"),
    ],
)
def test_an_spmd_body_whose_helpers_do_no_block_work_is_rejected_as_written(call_line: str, message: str) -> None:
    """A helper call is not a kernel launch: a body that, spliced, would be rejected is rejected
    before the pass, at the `pl.spmd` scope."""
    with pytest.raises(ParserError, match=message):
        parse_program(_program(BLOCK_HELPERS, _main("with pl.spmd(4):", call_line)))
