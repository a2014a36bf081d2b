"""The IR each scope form builds (docs/specification.md, "Statement forms"): the scopes and
statements the parser adds, the form the printer gives them back, and the forms it rejects."""

from __future__ import annotations

import textwrap
import warnings

import pytest

from nanopto import ir
from nanopto.ir_terms.nodes import AssignStmt, Call, ConstInt, ScopeKind, ScopeStmt, SeqStmts, Submit
from nanopto.ir_terms.parse_error import ParserError, ParserSyntaxError
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import walk

HEAD = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        out = pl.add(a, a)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
"""


def program(body: str) -> ir.Program:
    return parse_program(HEAD + textwrap.indent(textwrap.dedent(body).strip() + "\n", " " * 8))


def main_stmts(prog: ir.Program) -> tuple[ir.Stmt, ...]:
    body = prog.functions["main"].body
    return body.stmts if isinstance(body, SeqStmts) else (body,)


def test_the_for_form_is_a_spmd_scope_around_an_incore_scope_that_binds_the_block_index() -> None:
    loop = program(
        """
        for i in pl.spmd(4, name_hint="q", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            out = pl.add(a, a)
        return out
        """
    )
    written = program(
        """
        with pl.spmd(4, name_hint="q_spmd"):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="q", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
                i = pl.tile.get_block_idx()
                out = pl.add(a, a)
        return out
        """
    )
    ir.assert_structural_equal(loop, written)
    text = str(written)
    assert 'for i in pl.spmd(4, name_hint="q", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):' in text
    ir.assert_structural_equal(parse_program(text), loop)


def test_a_name_ending_in_spmd_names_the_spmd_scope_and_the_incore_scope_its_base() -> None:
    spmd = main_stmts(program('for i in pl.spmd(4, name_hint="gate_spmd"):\n    out = pl.add(a, a)\nreturn out'))[0]
    assert isinstance(spmd, ScopeStmt) and spmd.name_hint == "gate_spmd"
    incore = spmd.body.stmts[0]  # type: ignore[attr-defined]
    assert isinstance(incore, ScopeStmt) and incore.kind is ScopeKind.InCore and incore.name_hint == "gate"


def test_a_with_body_that_reads_the_block_index_is_wrapped_and_a_dispatch_body_is_not() -> None:
    inline, dispatch = main_stmts(
        program(
            """
            with pl.spmd(4, sync_start=True):
                b = pl.tile.get_block_idx()
                out = pl.add(a, a)
            with pl.spmd(4):
                out = self.kernel(a, out)
            return out
            """
        )
    )[:2]
    assert isinstance(inline, ScopeStmt) and inline.sync_start
    (wrapper,) = inline.body.stmts  # type: ignore[attr-defined]
    assert isinstance(wrapper, ScopeStmt) and wrapper.kind is ScopeKind.InCore
    assert isinstance(dispatch, ScopeStmt)
    assert not any(isinstance(s, ScopeStmt) for s in dispatch.body.stmts)  # type: ignore[attr-defined]


def test_optimizations_on_a_dispatch_body_wrap_it_and_move_to_the_incore_scope() -> None:
    on_line = program(
        """
        with pl.spmd(4, optimizations=[pl.cross_core_slot(slot_num=8)]):
            out = self.kernel(a, out)
        return out
        """
    )
    on_carrier = program(
        """
        with pl.spmd(4):
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=8)]):
                out = self.kernel(a, out)
        return out
        """
    )
    ir.assert_structural_equal(on_line, on_carrier)
    incore = main_stmts(on_line)[0].body.stmts[0]  # type: ignore[attr-defined]
    assert incore.attrs == {"slot_num": 8}
    ir.assert_structural_equal(parse_program(str(on_line)), on_line)  # no second carrier


def test_a_capture_is_defined_before_its_scope_and_printed_as_the_as_clause() -> None:
    prog = program(
        """
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="s1") as t1:
            out = pl.add(a, a)
        with pl.spmd(4, deps=[t1], allow_early_resolve=True) as t2:
            out = self.kernel(a, out)
        return out
        """
    )
    place1, scope1, place2, scope2 = main_stmts(prog)[:4]
    for place, scope in ((place1, scope1), (place2, scope2)):
        assert isinstance(place, AssignStmt) and place.value == Call("system.task_invalid", ())
        assert isinstance(scope, ScopeStmt) and scope.attrs["task_id_var"] is place.var
    assert isinstance(scope2, ScopeStmt)
    assert scope2.attrs["manual_dep_edges"] == [place1.var]  # type: ignore[attr-defined]
    assert scope2.attrs["allow_early_resolve"] is True and scope2.allow_early_resolve
    text = str(prog)
    assert "task_invalid" not in text and "as t1:" in text and "as t2:" in text
    ir.assert_structural_equal(parse_program(text), prog)


def test_the_deprecated_split_slot_count_warns_and_is_the_cross_core_slot_entry() -> None:
    with pytest.warns(DeprecationWarning, match="pl.cross_core_slot"):
        old = program(
            """
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN, slot_num=4)]):
                out = pl.add(a, a)
            return out
            """
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = program(
            """
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]):
                out = pl.add(a, a)
            return out
            """
        )
    ir.assert_structural_equal(old, new)


def test_a_spmd_submit_carries_its_launch_spec_as_fields() -> None:
    prog = program(
        """
        with pl.manual_scope():
            out, t = pl.spmd_submit(self.kernel, a, out, sync_start=False, core_num=4, allow_early_resolve=True)
        return out
        """
    )
    submit = next(n for n in walk(prog) if isinstance(n, Submit))
    assert submit.op == "kernel" and submit.core_num == ConstInt(4)
    assert not submit.sync_start and submit.allow_early_resolve and submit.deps == []
    built = Submit(
        ir.GlobalVar("kernel"), list(submit.args), [], {}, None, ir.ScalarType(ir.DataType.TASK_ID), None,
        core_num=4, allow_early_resolve=True,
    )
    ir.assert_structural_equal(built, submit)
    with pytest.raises(ValueError, match="sync_start"):
        Submit(ir.GlobalVar("kernel"), [], [], {}, None, ir.ScalarType(ir.DataType.TASK_ID), None, sync_start=True)


REJECTED = {
    "spmd body that neither reads nor dispatches": (
        "with pl.spmd(4):\n    out = pl.add(a, a)\nreturn out",
        "neither reads the per-block index",
    ),
    "two kernels in a dispatch body": (
        "with pl.spmd(4):\n    out = self.kernel(a, out)\n    out = self.kernel(out, out)\nreturn out",
        "launches 2 kernels",
    ),
    "optimizations on the spmd line of a carrier": (
        "with pl.spmd(4, optimizations=[pl.cross_core_slot(slot_num=2)]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n        out = self.kernel(a, out)\nreturn out",
        "belongs on the InCore scope",
    ),
    "allow_early_resolve inside a cluster": (
        "with pl.cluster():\n    for i in pl.spmd(4, allow_early_resolve=True):\n        out = pl.add(a, a)\nreturn out",
        "cannot be nested inside `pl.cluster()`",
    ),
    "a predicate inside a cluster": (
        "with pl.cluster():\n    with pl.spmd(4, predicate=(a[0] > 0)):\n        out = self.kernel(a, out)\nreturn out",
        "pl.spmd(predicate=...) cannot be nested inside `pl.cluster()`",
    ),
    "a capture inside a cluster": (
        "with pl.cluster():\n    with pl.spmd(4) as t:\n        out = self.kernel(a, out)\nreturn out",
        "cannot capture a TaskId when nested",
    ),
    "deps without a capture": ("with pl.spmd(4, deps=[]):\n    out = self.kernel(a, out)\nreturn out", "deps="),
    "a loop keyword on the for-form": ("for i in pl.spmd(4, chunk=2):\n    out = pl.add(a, a)\nreturn out", "chunk="),
    "a hand-placed pl.scope": ("with pl.scope():\n    out = pl.add(a, a)\nreturn out", "auto_scope=False"),
    "pl.graph without its name": ("with pl.graph():\n    out = pl.add(a, a)\nreturn out", "name"),
    "a block count given twice": ("for i in pl.spmd(4, core_num=4):\n    out = pl.add(a, a)\nreturn out", "multiple values"),
    "a zero block count": ("for i in pl.spmd(0):\n    out = pl.add(a, a)\nreturn out", "positive integer"),
    "optimizations off CORE_GROUP": (
        "with pl.at(level=pl.Level.HOST, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):\n    out = pl.add(a, a)\nreturn out",
        "CORE_GROUP",
    ),
    "role at CORE_GROUP": (
        "with pl.at(level=pl.Level.CORE_GROUP, role=pl.Role.SubWorker):\n    out = pl.add(a, a)\nreturn out",
        "role=",
    ),
    "the slot count twice": (
        "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN, slot_num=2), "
        "pl.cross_core_slot(slot_num=4)]):\n    out = pl.add(a, a)\nreturn out",
        "twice",
    ),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_forms_are_located_syntax_errors_with_a_hint(case: str) -> None:
    body, message = REJECTED[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ParserSyntaxError) as caught:
            program(body)
    error: ParserError = caught.value
    assert message in error.message
    assert error.hint
    assert error.line > len(HEAD.splitlines())  # at the offending line of the body, not the header


def test_an_auto_scope_inside_a_manual_one_is_rejected_however_the_manual_one_is_spelled() -> None:
    for manual in ("pl.manual_scope()", "pl.scope(mode=pl.ScopeMode.MANUAL)"):
        source = HEAD.replace(
            "@pl.function(type=pl.FunctionType.Orchestration)",
            "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)",
        ) + textwrap.indent(f"with {manual}:\n    with pl.scope():\n        out = self.kernel(a, out)\nreturn out\n", " " * 8)
        with pytest.raises(ParserSyntaxError, match="cannot be nested inside a MANUAL scope") as caught:
            parse_program(source)
        assert caught.value.hint
