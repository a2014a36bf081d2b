"""A launch's `predicate=` reads its tensor when the launch is dispatched, so the launch that writes
that tensor must be in its `deps=` (docs/coming-from-pypto.md#statement-forms): the same task id
value, whether the writer is a `pl.spmd_submit` or a scope that captures `as tid`."""

from __future__ import annotations

import textwrap

import pytest

from nanopto import ir
from nanopto.ir_terms.parse_error import ParserSyntaxError
from nanopto.ir_terms.parser import parse_program

HEAD = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, g: pl.Out[pl.Tensor[[4, 4], pl.INT32]]) -> pl.Tensor[[4, 4], pl.INT32]:
        return g

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[4], pl.FP32],
        out: pl.Out[pl.Tensor[[4], pl.FP32]],
        rc: pl.Out[pl.Tensor[[4, 4], pl.INT32]],
        fb: pl.Out[pl.Tensor[[4, 4], pl.INT32]],
    ) -> pl.Tensor[[4], pl.FP32]:
"""


def program(body: str) -> ir.Program:
    return parse_program(HEAD + textwrap.indent(textwrap.dedent(body).strip() + "\n", " " * 8))


def rejected(body: str) -> ParserSyntaxError:
    with pytest.raises(ParserSyntaxError) as info:
        program(body)
    assert info.value.line is not None and info.value.hint
    return info.value


def test_a_launch_that_depends_on_the_writer_of_its_predicate_parses() -> None:
    program(
        """
        rc, g = pl.spmd_submit(self.gate, rc, core_num=1)
        out, _ = pl.spmd_submit(self.expert, x, out, core_num=1, deps=[g], predicate=(rc[0, 0] > 0))
        return out
        """
    )


def test_a_predicate_on_a_parameter_no_launch_wrote_needs_no_deps() -> None:
    program(
        """
        out, _ = pl.spmd_submit(self.expert, x, out, core_num=1, predicate=(rc[0, 0] > 0))
        return out
        """
    )


def test_a_launch_that_does_not_depend_on_the_writer_is_rejected_with_the_deps_to_add() -> None:
    error = rejected(
        """
        rc, g = pl.spmd_submit(self.gate, rc, core_num=1)
        out, _ = pl.spmd_submit(self.expert, x, out, core_num=1, deps=[], predicate=(rc[0, 0] > 0))
        return out
        """
    )
    assert "'rc', produced by the task 'g', which is not in deps=" in error.message
    assert error.hint is not None and "deps=[g]" in error.hint


def test_a_task_id_name_assigned_again_is_another_task() -> None:
    error = rejected(
        """
        rc, tid = pl.spmd_submit(self.gate, rc, core_num=1)
        fb, tid = pl.spmd_submit(self.gate, fb, core_num=1)
        out, _ = pl.spmd_submit(self.expert, x, out, core_num=1, deps=[tid], predicate=(rc[0, 0] > 0))
        return out
        """
    )
    assert "later task id" in error.message


def test_a_tensor_assigned_again_outside_a_launch_has_no_producer() -> None:
    program(
        """
        rc, g = pl.spmd_submit(self.gate, rc, core_num=1)
        rc = pl.tensor.create([4, 4], dtype=pl.INT32)
        out, _ = pl.spmd_submit(self.expert, x, out, core_num=1, predicate=(rc[0, 0] > 0))
        return out
        """
    )


def test_a_scope_that_captures_its_task_id_is_the_writer_of_what_its_body_assigns() -> None:
    accepted = """
        with pl.spmd(1) as g:
            rc = self.gate(rc)
        with pl.spmd(1, deps=[g], predicate=(rc[0, 0] > 0)) as t:
            out = self.expert(x, out)
        return out
        """
    program(accepted)
    error = rejected(accepted.replace("deps=[g], ", ""))
    assert "produced by the task 'g'" in error.message and error.hint is not None and "deps=[g]" in error.hint


def test_a_spmd_without_a_capture_is_told_to_capture_since_it_takes_no_deps() -> None:
    error = rejected(
        """
        with pl.spmd(1) as g:
            rc = self.gate(rc)
        with pl.spmd(1, predicate=(rc[0, 0] > 0)):
            out = self.expert(x, out)
        return out
        """
    )
    assert error.hint is not None and "does not accept deps=" in error.hint and "as tid" in error.hint
