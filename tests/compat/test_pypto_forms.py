"""Statement forms PyPTO accepts (docs/specification.md, "Statement forms"): parse, print, round
trip and, where the form has a meaning, the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from nanopto import ir
from nanopto.ir_terms.schema import walk
from nanopto.verify import interpret
from nanopto.verify.interpreter import InterpreterError

HEAD = "import nanopto.language as pl\n\n"

SPMD_SUBMIT = HEAD + '''
@pl.program
class Grid:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        out = pl.tensor.assemble(out, pl.add(x, x), [0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        out, tid = pl.spmd_submit(self.fill, x, out, core_num=4)
        return out
'''


def test_spmd_submit_yields_the_results_then_the_task_id() -> None:
    program = ir.parse_program(SPMD_SUBMIT)
    text = ir.python_print(program)
    assert "pl.spmd_submit(self.fill, x, out, core_num=4)" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    submit = next(n for n in walk(program) if isinstance(n, ir.Submit))
    assert submit.spmd
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, dtype=np.float32)
    result = interpret(program, "main", x, out)
    assert np.array_equal(result, 2 * x) and np.array_equal(out, 2 * x)


def test_spmd_submit_without_core_num_is_a_located_error() -> None:
    with pytest.raises(ir.ParserSyntaxError) as info:
        ir.parse_program(SPMD_SUBMIT.replace(", core_num=4", ""))
    assert info.value.line == 13
    assert info.value.hint is not None and "core_num=N" in info.value.hint


def program_with(lines: list[str], params: str = "a: pl.Tensor[[4], pl.FP32]") -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return HEAD + (
        "@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        f"    def main(self, {params}):\n{body}"
    )


def round_trip(source: str) -> ir.Program:
    program = ir.parse_program(source)
    ir.assert_structural_equal(ir.parse_program(ir.python_print(program)), program)
    return program


@pytest.mark.parametrize(
    "header",
    [
        "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):",
        "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=4)]):",
        "with pl.at(level=pl.Level.CORE_GROUP, "
        "optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=3)]):",
        "for i in pl.spmd(4, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):",
    ],
)
def test_scope_optimizations(header: str) -> None:
    program = round_trip(program_with([header, "    b = pl.add(a, a)", "return a"]))
    assert "optimizations=[" in ir.python_print(program)


def test_ellipsis_after_a_statement_is_a_placeholder() -> None:
    program = round_trip(program_with(["b = pl.add(a, a)", "...", "return b"]))
    assert "..." not in ir.python_print(program.functions["main"].body)


def test_default_tile_view_in_a_tile_annotation() -> None:
    viewed = program_with(
        ["t: pl.Tile[[4], pl.FP32, pl.MemorySpace.Vec, pl.TileView()] = pl.tile.load(a, [0], [4])", "return a"]
    )
    plain = viewed.replace(", pl.TileView()", "")
    ir.assert_structural_equal(round_trip(viewed), ir.parse_program(plain))
    with pytest.raises(ir.ParserTypeError, match=r"blayout takes a pl\.TileLayout member"):
        ir.parse_program(viewed.replace("pl.TileView()", "pl.TileView(blayout=1)"))


def test_func_attr_is_a_function_attribute() -> None:
    program = round_trip(program_with(['pl.func_attr({"stage": 2})', "b = pl.add(a, a)", "return b"]))
    main = program.functions["main"]
    assert [(k.name, k.value) for k in main.attr_items] == [("stage", ir.ConstInt(2))]
    assert main.attrs == {"stage": 2}
    with pytest.raises(ir.ParserSyntaxError, match="first statement") as info:
        ir.parse_program(program_with(["b = pl.add(a, a)", 'pl.func_attr({"stage": 2})', "return b"]))
    assert info.value.line == 8


OPS_PROGRAM = HEAD + """
@pl.program
class Ops:
    @pl.function
    def main(self, a: pl.Tensor[[2, 2], pl.FP32]) -> pl.Tensor[[2, 2], pl.FP16]:
        n: pl.Scalar[pl.INDEX] = pl.tensor.dim(a, 1)
        first: pl.Scalar[pl.FP32] = pl.read(a, [0, 1])
        row: pl.Tensor[[1, 2], pl.FP32] = pl.slice(a, [1, 2], [1, 0])
        sq: pl.Tensor[[2, 2], pl.FP32] = pl.matmul(a, a)
        filled: pl.Tile[[2, 2], pl.FP32, pl.Mem.Vec] = pl.tile.full([2, 2], pl.FP32, 1.0)
        half: pl.Tensor[[2, 2], pl.FP16] = pl.cast(sq, pl.FP16)
        return half
"""


def test_ops_have_type_rules_and_semantics() -> None:
    from nanopto.ir_terms.infer import type_of

    program = round_trip(OPS_PROGRAM)
    body = program.functions["main"].body
    assert isinstance(body, ir.SeqStmts)
    inferred = [ir.python_print_type(type_of(s.value)) for s in body.stmts if isinstance(s, ir.AssignStmt)]
    assert inferred == [
        "pl.Scalar[pl.INDEX]",
        "pl.Scalar[pl.FP32]",
        "pl.Tensor[[1, 2], pl.FP32]",
        "pl.Tensor[[2, 2], pl.FP32]",
        "pl.Tile[[2, 2], pl.FP32, pl.Mem.Vec]",
        "pl.Tensor[[2, 2], pl.FP16]",
    ]
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    result = interpret(program, "main", a)
    assert result.dtype == np.float16 and np.array_equal(result, (a @ a).astype(np.float16))


DEPS = HEAD + """
@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        tids = pl.array.create(2, pl.TASK_ID)
        with pl.spmd(4, deps=[tids[j] for j in range(2)]) as tid:
            b = self.kern(a)
        return a
"""


def test_deps_comprehension_unrolls_to_the_list() -> None:
    comprehension = round_trip(DEPS)
    spelled = ir.parse_program(DEPS.replace("[tids[j] for j in range(2)]", "[tids[0], tids[1]]"))
    ir.assert_structural_equal(comprehension, spelled)
    with pytest.raises(ir.ParserTypeError, match="reads the IR variable 'a'"):
        ir.parse_program(DEPS.replace("range(2)", "range(a)"))


def test_split_with_slot_num_is_the_deprecated_alias() -> None:
    header = "with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN, slot_num=4)]):"
    with pytest.warns(DeprecationWarning, match="cross_core_slot"):
        round_trip(program_with([header, "    b = pl.add(a, a)", "return a"]))


def test_pipeline_loop_keeps_its_stage() -> None:
    from nanopto import passes

    source = HEAD + """
@pl.program
class Staged:
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y: pl.Tensor[[4], pl.FP32] = pl.add(x, x)
        return y

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        for i, (acc,) in pl.pipeline(4, stage=2, init_values=(a,)):
            nxt = self.twice(acc)
            out = pl.yield_(nxt)
        return out
"""
    program = round_trip(source)
    loop = program.functions["main"].body.stmts[0]
    assert loop.kind is ir.ForKind.Pipeline and [k.name for k in loop.attrs] == ["stage"]
    after = passes.inline_functions()(program)
    assert "pl.pipeline(4, stage=2, init_values=(a,))" in ir.python_print(after)
    a = np.ones(4, dtype=np.float32)
    assert np.array_equal(interpret(program, "main", a), interpret(after, "main", a))
    with pytest.raises(ir.ParserError, match="does not take the keyword 'stage'"):
        ir.parse_program(source.replace("pl.pipeline(4,", "pl.range(4,"))


PIPE_SYNC = HEAD + '''
@pl.program
class Synced:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, src: pl.Tensor[[8], pl.FP16], dst: pl.Out[pl.Tensor[[8], pl.FP16]]) -> pl.Tensor[[8], pl.FP16]:
        staged: pl.Tile[[8], pl.FP16] = pl.load(src, [0], [8])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=3)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=3)
        doubled: pl.Tile[[8], pl.FP16] = pl.add(staged, staged)
        pl.system.bar_v()
        pl.system.bar_m()
        pl.system.bar_all()
        dst = pl.store(doubled, [0], dst)
        return dst
'''


def test_pipe_sync_ops_are_statements_that_change_no_value() -> None:
    program = ir.parse_program(PIPE_SYNC)
    text = ir.python_print(program)
    assert "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=3)" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    syncs = [s for s in walk(program) if isinstance(s, ir.EvalStmt)]
    assert [s.expr.op.name for s in syncs] == [f"system.{n}" for n in ("sync_src", "sync_dst", "bar_v", "bar_m", "bar_all")]
    src, dst = np.arange(8, dtype=np.float16), np.zeros(8, dtype=np.float16)
    assert np.array_equal(interpret(program, "main", src, dst), 2 * src)


def test_a_sync_op_built_by_hand_prints_its_pipes() -> None:
    built = ir.create_op_call("system.sync_dst", [], {"set_pipe": ir.PipeType.FIX, "wait_pipe": ir.PipeType.S, "event_id": 0})
    barrier = ir.create_op_call("system.bar_all", [], ir.Span("b.py", 2, 0))  # keywords left out
    assert barrier.span == ir.Span("b.py", 2, 0) and barrier.kwargs == ()
    stmt = ir.EvalStmt(barrier)
    assert stmt.expr.same_as(barrier) and not stmt.expr.same_as(ir.create_op_call("system.bar_all", []))
    assert built.as_python() == "pl.system.sync_dst(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.S, event_id=0)"
    assert {ir.CoreType.CUBE, ir.CoreType.VECTOR} == set(ir.CoreType)
    ir.assert_structural_equal(ir.deserialize(ir.serialize(stmt)), stmt)


ARRAY_ELEMENTS = HEAD + '''
@pl.program
class Slots:
    @pl.function
    def main(self, seed: pl.Scalar[pl.INT16]) -> pl.Scalar[pl.INT16]:
        slots = pl.array.create(3, pl.INT16)
        slots[0] = 40
        slots[2] = seed
        first = slots[0]
        last: pl.Scalar[pl.INT16] = pl.array.get_element(slots, 2)
        total: pl.Scalar[pl.INT16] = first - last
        return total
'''


def test_array_elements_are_read_with_get_element_and_literals_take_the_array_dtype() -> None:
    program = ir.parse_program(ARRAY_ELEMENTS)
    text = ir.python_print(program)
    assert "slots = pl.array.update_element(slots, 0, pl.const(40, pl.INT16))" in text
    assert "slots = pl.array.update_element(slots, 2, seed)" in text
    assert "first = pl.array.get_element(slots, 0)" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    reads = [n for n in walk(program) if isinstance(n, ir.Call) and n.op.name == "array.get_element"]
    assert [ir.python_print_type(r.type) for r in reads] == ["pl.Scalar[pl.INT16]"] * 2
    assert interpret(program, "main", 15) == 25


def test_array_element_reads_are_checked() -> None:
    with pytest.raises(ir.ParserError, match="one index"):
        ir.parse_program(ARRAY_ELEMENTS.replace("first = slots[0]", "first = slots[0, 1]"))
    with pytest.raises(ir.ParserError, match=r"does not fit pl\.INT16"):
        ir.parse_program(ARRAY_ELEMENTS.replace("slots[0] = 40", "slots[0] = 40000"))
    with pytest.raises(InterpreterError, match="out of bounds"):
        interpret(ir.parse_program(ARRAY_ELEMENTS.replace("slots[0]\n", "slots[5]\n")), "main", 1)


TASK_BARRIER = HEAD + '''
@pl.program
class Joined:
    @pl.function(type=pl.FunctionType.InCore)
    def triple(self, x: pl.Tensor[[2], pl.INT32], out: pl.Out[pl.Tensor[[2], pl.INT32]]) -> pl.Tensor[[2], pl.INT32]:
        out = pl.tensor.assemble(out, pl.add(pl.add(x, x), x), [0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2], pl.INT32], out: pl.Out[pl.Tensor[[2], pl.INT32]]) -> pl.Scalar[pl.TASK_ID]:
        with pl.manual_scope():
            out, launched = pl.submit(self.triple, x, out)
            pending = pl.array.create(1, pl.TASK_ID)
            pending[0] = launched
            joined = pl.system.task_dummy(deps=[pending])
            idle = pl.system.task_dummy(deps=[])
        return joined
'''


def test_task_dummy_is_a_task_that_waits_for_its_deps() -> None:
    program = ir.parse_program(TASK_BARRIER)
    text = ir.python_print(program)
    assert "joined = pl.system.task_dummy(deps=[pending])" in text
    assert "idle = pl.system.task_dummy(deps=[])" in text
    ir.assert_structural_equal(ir.parse_program(text), program)
    dummy = next(n for n in walk(program) if isinstance(n, ir.Call) and n.op.name == "system.task_dummy")
    assert ir.python_print_type(dummy.type) == "pl.Scalar[pl.TASK_ID]"
    x, out = np.array([1, 5], dtype=np.int32), np.zeros(2, dtype=np.int32)
    assert interpret(program, "main", x, out) == 1  # the launch took task id 0
    assert np.array_equal(out, 3 * x)


PREDICATED = HEAD + '''
@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def gate(self, g: pl.Out[pl.Tensor[[4, 4], pl.INT32]]) -> pl.Tensor[[4, 4], pl.INT32]:
        return g

    @pl.function(type=pl.FunctionType.InCore)
    def expert(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]]) -> pl.Tensor[[4], pl.FP32]:
        out = pl.tensor.assemble(out, pl.add(x, x), [0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.FP32], out: pl.Out[pl.Tensor[[4], pl.FP32]], rc: pl.Out[pl.Tensor[[4, 4], pl.INT32]]) -> pl.Tensor[[4], pl.FP32]:
        with pl.manual_scope():
            rc, g = pl.spmd_submit(self.gate, rc, core_num=1)
            out, t = pl.spmd_submit(self.expert, x, out, core_num=1, deps=[g], predicate=PREDICATE)
        return out
'''


@pytest.mark.parametrize(("predicate", "op", "target_first"), [("rc[1, 2] > 0", ir.Gt, False), ("-5 <= rc[1, 2]", ir.Le, True)])
def test_a_launch_predicate_is_a_comparison_of_one_element_read(predicate: str, op: type, target_first: bool) -> None:
    program = ir.parse_program(PREDICATED.replace("PREDICATE", predicate))
    submits = [n for n in walk(program) if isinstance(n, ir.Submit)]
    assert submits[0].predicate is None
    pred = submits[1].predicate
    assert isinstance(pred, op)
    read, target = (pred.right, pred.left) if target_first else (pred.left, pred.right)  # type: ignore[attr-defined]
    assert isinstance(read, ir.Call) and read.op.name == ir.get_op("tensor.read").name
    assert [i.value for i in read.args[1].elements] == [1, 2] and target == ir.ConstInt(-5 if target_first else 0)
    text = program.as_python()
    assert "predicate=(" in text and "pl.read(rc, [1, 2])" in text
    ir.assert_structural_equal(ir.parse_program(text), program)


@pytest.mark.parametrize(
    ("predicate", "kind", "message"),
    [
        ("rc", ir.ParserSyntaxError, "single comparison"),
        ("0 < rc[0, 0] < 8", ir.ParserSyntaxError, "Only simple comparisons supported"),
        ("rc[0, 0] in x", ir.UnsupportedFeatureError, "Unsupported comparison"),
        ("rc[0] > 0", ir.ParserSyntaxError, "1 index(es) of a rank-2 tensor"),
        ("rc > 0", ir.ParserSyntaxError, "'rc' is a whole tensor"),
        ("rc[x, 0] > 0", ir.ParserSyntaxError, "index element 0 must be ScalarType"),
        ("rc[0, 0] > 1.5", ir.ParserSyntaxError, "integer literal"),
        ("rc[-1, 0] > 0", ir.ParserTypeError, "non-negative"),
        ("x[0] > 0", ir.ParserTypeError, "signed 8/16/32/64-bit integers"),
    ],
)
def test_a_predicate_that_is_not_one_element_against_a_literal_is_rejected(predicate: str, kind: type, message: str) -> None:
    with pytest.raises(ir.ParserError) as info:
        ir.parse_program(PREDICATED.replace("PREDICATE", predicate))
    assert isinstance(info.value, kind) and message in info.value.message and info.value.line == 19
