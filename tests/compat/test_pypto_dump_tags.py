"""`pl.dump_tag` as PyPTO's parser reads it: consumed, leaving dump selections on the dispatches
after it (docs/specification.md, "Dump tags")."""

from __future__ import annotations

import numpy as np
import pytest

from nanopto import ir, passes
from nanopto.ir_terms.nodes import Call, ScopeStmt, Submit, Var
from nanopto.ir_terms.schema import walk
from nanopto.verify import interpret

SOURCE = """import nanopto.language as pl

@pl.program
class Tags:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[8], pl.FP32], y: pl.Tensor[[8], pl.FP32], out: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        t = pl.tile.load(x, [0], [8])
        out = pl.tile.store(t, [0], out)
        return out

    @pl.function(type={kind})
    def main(self, p: pl.Tensor[[8], pl.FP32], q: pl.Tensor[[8], pl.FP32], r: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
{body}        return r
"""
FIRST_LINE = 13


def program(*lines: str, kind: str = "pl.FunctionType.Orchestration") -> ir.Program:
    body = "".join(f"        {line}\n" for line in lines)
    return ir.parse_program(SOURCE.format(body=body, kind=kind))


def dispatches(prog: ir.Program) -> list[Call | Submit]:
    main = prog.get_function("main")
    assert main is not None
    return [n for n in walk(main.body) if isinstance(n, Submit) or (isinstance(n, Call) and n.function)]


def names(vars_: tuple[Var, ...] | list[Var]) -> list[str]:
    return [v.name for v in vars_]


def test_the_tag_leaves_no_statement_and_marks_the_later_dispatches_in_argument_order() -> None:
    prog = program("r = self.copy(q, p, r)", "pl.dump_tag(p)", "pl.dump_tag(q)", "pl.dump_tag(p)", "r = self.copy(p, q, r)")
    first, second = dispatches(prog)
    assert first.attrs == {} and names(second.attrs["dump_vars"]) == ["p", "q"]
    text = prog.as_python()
    assert "pl.dump_tag" not in text
    assert 'r = self.copy(p, q, r, attrs={"dump_vars": [p, q]})' in text


def test_a_reassigned_name_is_a_new_value_without_the_tag() -> None:
    prog = program("pl.dump_tag(p)", "pl.dump_tag(r)", "r = self.copy(p, q, r)", "p = pl.add(p, q)", "r = self.copy(p, q, r)")
    first, second = dispatches(prog)
    assert names(first.attrs["dump_vars"]) == ["p", "r"]
    assert second.attrs == {}


def test_a_write_through_the_name_keeps_the_tag_and_an_else_branch_sees_the_old_value() -> None:
    prog = program(
        "pl.dump_tag(p)",
        "p[0:4] = q[0:4]",
        "if q[0] > 0.0:",
        "    p = pl.add(p, q)",
        "else:",
        "    r = self.copy(p, q, r)",
        "r = self.copy(p, q, r)",
    )
    in_else, after = dispatches(prog)
    assert names(in_else.attrs["dump_vars"]) == ["p"]
    assert after.attrs == {}  # `p` may be the new value here


def test_submits_and_at_scopes_carry_the_selection_as_dumps() -> None:
    prog = program(
        "pl.dump_tag(q)",
        "tid = pl.submit(self.copy, p, q, r, dumps=[p])",
        "with pl.at(level=pl.Level.CORE_GROUP):",
        "    s = pl.add(p, p)",
    )
    (submit,) = dispatches(prog)
    assert isinstance(submit, Submit) and names(submit.dumps) == ["p", "q"] == names(submit.attrs["dump_vars"])
    repeated = program("tid = pl.submit(self.copy, p, q, r, dumps=[q, p, q])")
    assert names(dispatches(repeated)[0].dumps) == ["p", "q"]  # argument order, each once
    main = prog.get_function("main")
    assert main is not None
    (scope,) = [n for n in walk(main.body) if isinstance(n, ScopeStmt)]
    assert names(scope.dumps) == ["q"]  # what is tagged when the scope opens
    text = prog.as_python()
    assert "pl.submit(self.copy, p, q, r, dumps=[p, q])" in text
    assert "with pl.at(level=pl.Level.CORE_GROUP, dumps=[q]):" in text


def test_the_printed_selection_parses_back_to_the_same_program() -> None:
    prog = program(
        "pl.dump_tag(p)",
        "r = self.copy(p, q, r)",
        "tid = pl.submit(self.copy, p, q, r)",
        "with pl.at(level=pl.Level.CORE_GROUP):",
        "    s = pl.add(p, p)",
    )
    again = ir.parse_program(prog.as_python())
    ir.assert_structural_equal(prog, again)
    assert again.as_python() == prog.as_python()


def test_the_selection_does_not_change_what_the_program_computes() -> None:
    plain = program("r = self.copy(p, q, r)")
    tagged = program("pl.dump_tag(p)", "r = self.copy(p, q, r)")
    args = [np.arange(8, dtype=np.float32), np.ones(8, dtype=np.float32), np.zeros(8, dtype=np.float32)]
    want = interpret(plain, "main", *[a.copy() for a in args])
    np.testing.assert_array_equal(interpret(tagged, "main", *[a.copy() for a in args]), want)


def test_a_call_site_selection_moves_onto_what_the_helper_dispatches() -> None:
    prog = ir.parse_program(
        SOURCE.format(kind="pl.FunctionType.Inline", body="        r = self.copy(p, q, r)\n").replace(
            "class Tags:", "class Tags:\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
            "    def top(self, a: pl.Tensor[[8], pl.FP32], b: pl.Tensor[[8], pl.FP32], c: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:\n"
            "        pl.dump_tag(b)\n        c = self.main(a, b, c)\n        return c\n"
        )
    )
    top = prog.get_function("top")
    assert top is not None and 'self.main(a, b, c, attrs={"dump_vars": [b]})' in top.as_python()
    after = passes.inline_functions()(prog)
    assert 'self.copy(a, b, r_inline0, attrs={"dump_vars": [b]})' in str(after)


REJECTED = {
    "in a kernel": (["pl.dump_tag(p)"], "pl.FunctionType.InCore", ir.ParserSyntaxError, "only valid inside an Orchestration", "orchestration function"),
    "two arguments": (["pl.dump_tag(p, q)"], None, ir.ParserSyntaxError, "exactly one positional argument", "pl.dump_tag(t)"),
    "no argument": (["pl.dump_tag()"], None, ir.ParserSyntaxError, "exactly one positional argument", "pl.dump_tag(t)"),
    "a keyword": (["pl.dump_tag(t=p)"], None, ir.ParserSyntaxError, "exactly one positional argument", "pl.dump_tag(t)"),
    "an expression": (["pl.dump_tag(self.copy)"], None, ir.ParserSyntaxError, "bare variable name", "bind the value"),
    "an unbound name": (["pl.dump_tag(nothing)"], None, ir.ParserSyntaxError, "not bound", "after it is assigned"),
    "a scalar": (["n: pl.Scalar[pl.INT32] = 3", "pl.dump_tag(n)"], None, ir.ParserTypeError, "not a tensor", "only tensors"),
    "a dumps entry that is no argument": (
        ["tid = pl.submit(self.copy, p, p, r, dumps=[q])"], None, ir.ParserTypeError, "not an argument", "tensors it is passed"
    ),
    "a pl.at dumps entry listed twice": (
        ["with pl.at(level=pl.Level.CORE_GROUP, dumps=[p, p]):", "    s = pl.add(p, p)"], None, ir.ParserTypeError, "listed twice", "once"
    ),
    "a scalar in dumps": (
        ["n: pl.Scalar[pl.INT32] = 3", "with pl.at(level=pl.Level.CORE_GROUP, dumps=[n]):", "    s = pl.add(p, p)"],
        None, ir.ParserTypeError, "not a tensor", "only tensors",
    ),
    "dumps on a plain call": (["r = self.copy(p, q, r, dumps=[p])"], None, ir.ParserTypeError, "does not accept keyword argument 'dumps'", "pl.dump_tag(x)"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_tags_are_located_errors_with_a_hint(case: str) -> None:
    lines, kind, error, message, hint = REJECTED[case]
    with pytest.raises(error) as info:
        program(*lines, kind=kind or "pl.FunctionType.Orchestration")
    assert message in info.value.message
    assert info.value.line == FIRST_LINE + len([line for line in lines if not line.startswith("    ")]) - 1
    if hint is not None:
        assert info.value.hint is not None and hint in info.value.hint
