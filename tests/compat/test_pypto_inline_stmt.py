"""`ir.InlineStmt(body, InlineLanguage.Python, span)`: a verbatim body that passes keep as a leaf,
the printer writes back line for line, serialization keeps, and the interpreter refuses."""

from __future__ import annotations

import dataclasses

import pytest

from nanopto import ir, passes
from nanopto.verify.interpreter import InterpreterError, interpret

HEAD = "import nanopto.language as pl\n"
SOURCE = HEAD + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, v: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        w = v + 1
        return w

    @pl.function
    def main(self, x: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:
        y = self.helper(x)
        return y
"""


def _with_leading(fn: ir.Function, stmt: ir.Stmt) -> ir.Function:
    assert isinstance(fn.body, ir.SeqStmts)
    return dataclasses.replace(fn, body=ir.SeqStmts((stmt, *fn.body.stmts)))


def _program() -> ir.Program:
    parsed = ir.parse_program(SOURCE)
    helper, main = parsed.get_function("helper"), parsed.get_function("main")
    assert helper is not None and main is not None
    in_helper = ir.InlineStmt("note('helper')\nif ready:\n    go()", ir.InlineLanguage.Python, ir.Span.unknown())
    in_main = ir.InlineStmt("note('main')", ir.InlineLanguage.Python)
    return ir.Program([_with_leading(helper, in_helper), _with_leading(main, in_main)], "P")


def test_an_inline_stmt_is_a_leaf_compared_by_body_and_language() -> None:
    a = ir.InlineStmt("pass", ir.InlineLanguage.Python, ir.Span("a.py", 1, 0))
    b = ir.InlineStmt("pass", ir.InlineLanguage.Python, ir.Span("b.py", 9, 4))
    assert isinstance(a, ir.Stmt) and a.body == "pass" and a.language is ir.InlineLanguage.Python
    ir.assert_structural_equal(a, b)
    assert ir.structural_hash(a) == ir.structural_hash(b)
    assert not ir.structural_equal(a, ir.InlineStmt("other()", ir.InlineLanguage.Python))
    with pytest.raises(AttributeError):
        a.body = "changed"  # type: ignore[misc]
    restored = ir.deserialize(ir.serialize(a))
    assert isinstance(restored, ir.InlineStmt) and restored.body == "pass"


def test_the_printer_writes_the_body_verbatim_at_the_statement_indent() -> None:
    text = _program().as_python()
    assert "    def helper(self, v: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:\n        note('helper')\n" in text
    assert "        if ready:\n            go()\n        w = v + 1" in text


def test_inlining_splices_it_unchanged_and_the_interpreter_refuses_it() -> None:
    after = passes.PassManager.default().run(_program())
    main = after.get_function("main")
    assert main is not None and list(after.functions) == ["main"]
    leaves = [s for s in main.body.stmts if isinstance(s, ir.InlineStmt)]
    assert [s.body for s in leaves] == ["note('main')", "note('helper')\nif ready:\n    go()"]
    ir.assert_structural_equal(ir.deserialize(ir.serialize(after)), after)
    with pytest.raises(InterpreterError, match=r"InlineStmt .*not run by the reference interpreter"):
        interpret(after, "main", 3)
