"""The `deps=` forms of a launch (docs/coming-from-pypto.md#statement-forms): task ids and whole
arrays stay as written; single entries of an array, written out or by a comprehension, become one
fresh array filled just before the launch; what cannot be unrolled while parsing is rejected."""

from __future__ import annotations

import textwrap

import pytest

from nanopto import ir, passes
from nanopto.ir_terms.nodes import SeqStmts, Submit
from nanopto.ir_terms.parse_error import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    UnsupportedFeatureError,
)
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import walk

HEAD = """
import nanopto.language as pl

SKIP = 1
PICKED = [0, 2]

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return a

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        tids = pl.array.create(4, pl.TASK_ID)
        for n in pl.parallel(4):
            r, t = pl.submit(self.kernel, a)
            tids[n] = t
        s, first = pl.submit(self.kernel, a)
"""


def program(body: str) -> ir.Program:
    return parse_program(HEAD + textwrap.indent(textwrap.dedent(body).strip() + "\n", " " * 8))


def launched(prog: ir.Program) -> Submit:
    """The last launch in `main`."""
    return [n for n in walk(prog.functions["main"]) if isinstance(n, Submit)][-1]


FILLED = """
_submit_deps_buf = pl.array.create(3, pl.TASK_ID)
_submit_deps_buf = pl.array.update_element(_submit_deps_buf, 0, tids[0])
_submit_deps_buf = pl.array.update_element(_submit_deps_buf, 1, tids[2])
_submit_deps_buf = pl.array.update_element(_submit_deps_buf, 2, tids[3])
b, _ = pl.submit(self.kernel, a, deps=[_submit_deps_buf])
return b
"""


@pytest.mark.parametrize(
    "deps",
    [
        "[tids[0], tids[2], tids[3]]",
        "[tids[k] for k in range(4) if k != SKIP]",
        "[tids[k] for k in (0, 2, 3)]",
        "[tids[0], [tids[k] for k in range(2, 4)]]",  # a comprehension inside a list unrolls in place
    ],
)
def test_single_entries_become_one_array_filled_before_the_launch(deps: str) -> None:
    before = program(f"b, _ = pl.submit(self.kernel, a, deps={deps})\nreturn b")
    ir.assert_structural_equal(before, program(FILLED))
    (edge,) = launched(before).deps
    assert isinstance(edge, ir.Var) and isinstance(edge.type, ir.ArrayType) and edge.type.dtype is ir.DataType.TASK_ID
    ir.assert_structural_equal(parse_program(ir.python_print(before)), before)


def test_a_module_list_is_a_comprehension_iterable() -> None:
    before = program("b, _ = pl.submit(self.kernel, a, deps=[tids[k] for k in PICKED])\nreturn b")
    expected = program(
        """
        _submit_deps_buf = pl.array.create(2, pl.TASK_ID)
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 0, tids[0])
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 1, tids[2])
        b, _ = pl.submit(self.kernel, a, deps=[_submit_deps_buf])
        return b
        """
    )
    ir.assert_structural_equal(before, expected)


def test_task_ids_and_whole_arrays_stay_as_written() -> None:
    prog = program("b, _ = pl.submit(self.kernel, a, deps=[first, None])\nc, _ = pl.submit(self.kernel, a, deps=[tids])\nreturn c")
    assert not any(isinstance(n, ir.Var) and n.name == "_submit_deps_buf" for n in walk(prog.functions["main"]))
    assert [v.name for v in launched(prog).deps] == ["tids"]


def test_a_scope_header_fills_its_array_before_the_scope() -> None:
    prog = program(
        """
        with pl.at(level=pl.Level.CORE_GROUP, deps=[tids[1], first]):
            b = pl.add(a, a)
        return b
        """
    )
    body = prog.functions["main"].body
    assert isinstance(body, SeqStmts)
    scope = body.stmts[-2]
    assert isinstance(scope, ir.ScopeStmt)
    (edge,) = scope.attrs["manual_dep_edges"]
    assert isinstance(edge, ir.Var) and edge.name == "_submit_deps_buf"
    fills = [s for s in body.stmts if isinstance(s, ir.AssignStmt) and s.var is edge]
    assert len(fills) == 3 and all(body.stmts.index(f) < body.stmts.index(scope) for f in fills)


def test_inlining_splices_a_helper_whose_launch_fills_a_deps_array() -> None:
    source = HEAD.replace(
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        """    @pl.function(type=pl.FunctionType.Inline)
    def after_all(self, x: pl.Tensor[[64], pl.FP32], ids: pl.Array[4, pl.TASK_ID]) -> pl.Tensor[[64], pl.FP32]:
        y, _ = pl.submit(self.kernel, x, deps=[ids[k] for k in range(2)])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)""",
    )
    before = parse_program(source + "        b = self.after_all(a, tids)\n        return b\n")
    expected = program(
        """
        _submit_deps_buf = pl.array.create(2, pl.TASK_ID)
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 0, tids[0])
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 1, tids[1])
        y, _ = pl.submit(self.kernel, a, deps=[_submit_deps_buf])
        b = y
        return b
        """
    )
    after = passes.inline_functions()(before)
    ir.assert_structural_equal(after.functions["main"], expected.functions["main"])


REJECTED: dict[str, tuple[str, type[ParserError], str]] = {
    "a pl loop as the iterable": ("deps=[tids[k] for k in pl.range(4)]", ParserTypeError, "DSL loop (pl.range)"),
    "an IR variable in the filter": ("deps=[tids[k] for k in range(4) if k != n]", ParserTypeError, "IR variable 'n'"),
    "an IR variable as the iterable": ("deps=[tids[k] for k in range(n)]", ParserTypeError, "IR variable 'n'"),
    "a whole array, then an entry": ("deps=[tids, tids[0]]", ParserTypeError, "cannot mix"),
    "an entry, then a whole array": ("deps=[tids[0], tids]", ParserTypeError, "cannot mix"),
    "two for clauses": ("deps=[tids[k] for k in range(2) for j in range(2)]", ParserSyntaxError, "one `for"),
    "a non-integer iterable": ("deps=[tids[k] for k in [0.5]]", ParserTypeError, "iterates integers"),
    "a computed list": ("deps=ids", ParserTypeError, "takes a list of task ids"),
    "a comprehension bound to a name": ("", UnsupportedFeatureError, "ListComp"),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_deps_that_cannot_be_unrolled_while_parsing_are_located_errors(case: str) -> None:
    deps, error, message = REJECTED[case]
    lines = ["n = pl.tile.get_block_idx()", "ids = [tids[k] for k in range(4)]" if not deps else "ids = tids"]
    line = f"b, _ = pl.submit(self.kernel, a, {deps or 'deps=ids'})"
    with pytest.raises(error) as info:
        program("\n".join([*lines, line, "return b"]))
    assert message in info.value.message
    assert info.value.line is not None and info.value.hint


def test_a_dependency_edge_in_a_dispatch_attrs_is_a_type_error_pointing_at_deps() -> None:
    with pytest.raises(ParserTypeError) as info:
        program('b = self.kernel(a, attrs={"manual_dep_edges": [first]})\nreturn b')
    assert "manual_dep_edges" in info.value.message and info.value.hint and "deps=" in info.value.hint


def test_a_dummy_task_takes_the_same_deps_forms_and_requires_them() -> None:
    waited = program("j = pl.system.task_dummy(deps=[tids[k] for k in range(2)])\nreturn a")
    expected = program(
        """
        _submit_deps_buf = pl.array.create(2, pl.TASK_ID)
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 0, tids[0])
        _submit_deps_buf = pl.array.update_element(_submit_deps_buf, 1, tids[1])
        j = pl.system.task_dummy(deps=[_submit_deps_buf])
        return a
        """
    )
    ir.assert_structural_equal(waited, expected)
    with pytest.raises(ParserTypeError) as info:
        program("j = pl.system.task_dummy()\nreturn a")
    assert "requires keyword argument 'deps'" in info.value.message and info.value.hint and "deps=[]" in info.value.hint


def test_task_id_is_the_scalar_task_id_annotation() -> None:
    import nanopto.language as pl

    assert pl.TaskId.dtype is ir.DataType.TASK_ID
    short = program("j: pl.TaskId = pl.system.task_dummy(deps=[first])\nreturn a")
    ir.assert_structural_equal(short, program("j: pl.Scalar[pl.TASK_ID] = pl.system.task_dummy(deps=[first])\nreturn a"))


def test_a_launch_carries_the_type_read_off_its_kernel_through_inlining_and_by_hand() -> None:
    task_id = ir.ScalarType(ir.DataType.TASK_ID)
    prog = program("b, t = pl.submit(self.kernel, a)\nreturn b")
    submit = launched(prog)
    assert submit.type == ir.TupleType((prog.functions["kernel"].return_types[0], task_id))
    source = HEAD.replace(
        "    @pl.function(type=pl.FunctionType.Orchestration)",
        """    @pl.function(type=pl.FunctionType.Inline)
    def launch(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y, _ = pl.submit(self.kernel, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)""",
    )
    after = passes.inline_functions()(parse_program(source + "        b = self.launch(a)\n        return b\n"))
    assert launched(after).type == submit.type
    built = ir.Submit(ir.GlobalVar("kernel"), [submit.args[0]], [], submit.type, None)
    assert built.type == submit.type and built == ir.Submit(ir.GlobalVar("kernel"), [submit.args[0]], [], task_id, None)


def test_under_strict_ssa_each_fill_of_the_deps_array_has_its_own_name_and_reads_back() -> None:
    source = HEAD.replace(
        "@pl.function(type=pl.FunctionType.Orchestration)", "@pl.function(type=pl.FunctionType.Orchestration, strict_ssa=True)"
    ).replace(
        "        for n in pl.parallel(4):\n            r, t = pl.submit(self.kernel, a)\n            tids[n] = t\n", ""
    )
    prog = parse_program(source + "        b, _ = pl.submit(self.kernel, a, deps=[tids[0], tids[1]])\n        return b\n")
    text = ir.python_print(prog)
    assert "_submit_deps_buf_2 = pl.array.update_element(_submit_deps_buf_1, 1," in text
    assert "deps=[_submit_deps_buf_2]" in text
    ir.assert_structural_equal(parse_program(text), prog)
