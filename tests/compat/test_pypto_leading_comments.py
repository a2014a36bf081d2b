"""Leading comments: the `#` lines (and string statements) above a statement ride on it as
metadata, print back above it, are ignored by equality and hashing, and survive inlining where
the statement survives."""

from __future__ import annotations

import dataclasses

import pytest

from nanopto import ir, passes

HEAD = "import nanopto.language as pl\n"
I64 = ir.ScalarType(ir.DataType.INT64)


def _assign() -> ir.AssignStmt:
    x, y = ir.Var("x", I64), ir.Var("y", I64)
    return ir.AssignStmt(x, y, ir.Span("c.py", 1, 0))


def test_attach_sets_the_comments_in_place_and_returns_the_statement() -> None:
    stmt = _assign()
    assert stmt.leading_comments == [] and stmt.comments == ()
    assert ir.attach_leading_comments(stmt, ["one", "two"]) is stmt
    assert stmt.leading_comments == ["one", "two"]
    stmt.leading_comments.append("not kept")  # a fresh list each read
    assert stmt.leading_comments == ["one", "two"]
    ir.attach_leading_comments(stmt, ["three"])
    assert stmt.leading_comments == ["three"]
    ir.attach_leading_comments(stmt, [])
    assert stmt.leading_comments == []
    with pytest.raises(AttributeError):
        stmt.leading_comments = ["no"]  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        stmt.comments = ("no",)  # type: ignore[misc]
    with pytest.raises(ValueError, match="SeqStmts"):
        ir.attach_leading_comments(ir.SeqStmts([stmt]), ["c"])


def test_comments_are_ignored_by_equality_and_hashing() -> None:
    plain = _assign()
    commented = ir.AssignStmt(plain.var, plain.value, plain.span)
    ir.attach_leading_comments(commented, ["note"])
    ir.assert_structural_equal(plain, commented)
    assert ir.structural_hash(plain) == ir.structural_hash(commented)
    same = dataclasses.replace(plain, comments=("note",))
    assert same == plain and hash(same) == hash(plain)


SHARED = HEAD + """
@pl.program
class Shared:
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, v: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        w = v + v
        return w

    @pl.function
    def main(self, x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        y = x * 2.0
        z = self.twice(y)
        return z
"""


def test_a_statement_shared_by_a_pass_input_and_output_shows_new_comments_in_both() -> None:
    # No cache keeps a statement's printed text or encoding: printing, serializing and running
    # the pass again after an attach all see the new comments (docs/coming-from-pypto.md,
    # "Leading comments and InlineStmt").
    before = ir.parse_program(SHARED)
    after = passes.inline_functions()(before)
    shared = before.get_function("main").body.stmts[0]
    assert after.get_function("main").body.stmts[0] is shared  # the pass kept it, as PyPTO's do
    assert "# scaled" not in after.as_python()
    ir.attach_leading_comments(shared, ["scaled"])
    for program in (before, after):
        assert "        # scaled\n        y = x * 2.0" in program.as_python()
        assert ir.deserialize(ir.serialize(program)).get_function("main").body.stmts[0].leading_comments == ["scaled"]
    helper_stmt = before.get_function("twice").body.stmts[0]
    ir.attach_leading_comments(helper_stmt, ["doubled"])
    again = passes.inline_functions()(before)
    assert "        # doubled\n        w_inline0 = y + y" in again.as_python()
    ir.assert_structural_equal(again, after)
    ir.attach_leading_comments(helper_stmt, ["changed"])
    assert "# changed" in passes.inline_functions()(before).as_python()


SOURCE = HEAD + '''
@pl.program
class Commented:
    # not a statement's: above a function
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, v: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        # add it to itself
        w = v + v  # on the same line
        return w

    @pl.function
    def main(self, x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        """entry point"""
        # the loop
        for i in pl.range(4):  # four times
            x = x + 1.0
        # test the sign
        if x > 0.0:
            y = x
        # otherwise
        else:
            y = -x
        "a string statement"
        z = self.twice(y)
        return z
'''


def test_the_parser_attaches_comments_and_the_printer_prints_them() -> None:
    program = ir.parse_program(SOURCE)
    main = program.get_function("main")
    assert main is not None
    loop, branch, call, _ = main.body.stmts
    assert loop.leading_comments == ["entry point", "the loop", "four times"]
    assert branch.leading_comments == ["test the sign"]
    assert isinstance(branch, ir.IfStmt) and branch.else_body is not None
    assert branch.else_body.stmts[0].leading_comments == ["otherwise"]
    assert call.leading_comments == ["a string statement"]
    twice = program.get_function("twice")
    assert twice is not None and twice.body.stmts[0].leading_comments == ["add it to itself", "on the same line"]
    text = program.as_python()
    assert "        # entry point\n        # the loop\n        # four times\n        for i in pl.range(4):" in text
    assert "        else:\n            # otherwise\n            y = -x" in text
    assert "above a function" not in text and '"""' not in text
    reparsed = ir.parse_program(text)
    assert ir.python_print(reparsed) == text  # the printed comments parse back to the same places


def test_comments_survive_inlining_where_their_statement_does() -> None:
    after = passes.PassManager.default().run(ir.parse_program(SOURCE))
    text = after.as_python()
    assert "# add it to itself\n        # on the same line\n        w_inline0 = y + y" in text
    assert "# a string statement\n        z = w_inline0" in text  # the site's comments: on the result's binding
    assert "# four times\n        for i in pl.range(4):" in text


def test_a_comment_after_a_blocks_last_statement_is_dropped_with_a_warning() -> None:
    source = HEAD + """
@pl.program
class Tail:
    @pl.function
    def main(self, x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        for i in pl.range(2):
            x = x + 1.0
            # nothing follows in the loop
        return x
"""
    with pytest.warns(UserWarning, match="tail-of-block comment"):
        program = ir.parse_program(source)
    assert "nothing follows" not in program.as_python()


def test_serialization_keeps_comments() -> None:
    stmt = ir.attach_leading_comments(_assign(), ["kept"])
    restored = ir.deserialize(ir.serialize(stmt))
    assert restored.leading_comments == ["kept"]


TAILS = HEAD + """
@pl.program
class Tails:
    @pl.function
    def helper(self, x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        return x
        # after the return

    # above main: no statement's
    @pl.function
    def main(self, x: pl.Scalar[pl.FP32]) -> pl.Scalar[pl.FP32]:
        if x > 0.0:
            y = x
            # end of the then branch
        else:
            y = -x
        for i in pl.range(
            4,
            # inside the header
        ):
            y = y + 1.0  # trailing, kept
        return y
"""


def test_tail_comments_of_a_function_body_and_a_branch_are_dropped_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="tail-of-block comment") as caught:
        program = ir.parse_program(TAILS)
    assert sorted(str(w.message).split(":")[1] for w in caught) == ["15", "8"]
    text = program.as_python()
    for dropped in ("after the return", "end of the then branch", "above main"):
        assert dropped not in text


def test_a_comment_inside_a_loop_header_is_the_loops() -> None:
    with pytest.warns(UserWarning):
        program = ir.parse_program(TAILS)
    main = program.get_function("main")
    assert main is not None
    loop = main.body.stmts[1]
    assert isinstance(loop, ir.ForStmt) and loop.leading_comments == ["inside the header"]
    assert loop.body.stmts[0].leading_comments == ["trailing, kept"]
