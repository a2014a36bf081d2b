"""The `pld` surface (`import nanopto.language.distributed as pld`): distributed tensor types,
window buffers, remote loads and stores, get/put, the world size and the communication context.
Each is parsed to the op the registry declares, prints back to itself, inlines through a helper
like any op, and means on one device what the reference interpreter says
(docs/coming-from-pypto.md, "Distributed programs")."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir, passes
from nanopto.ir_terms.parse_error import InvalidOperationError, ParserSyntaxError, ParserTypeError
from nanopto.verify import InterpreterError, interpret

HEADER = "import nanopto.language as pl\nimport nanopto.language.distributed as pld\n"

KERNEL = (
    HEADER
    + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, data: pld.DistributedTensor[[4, 8], pl.FP32], peer: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        t = pld.tile.remote_load(data, peer=peer, offsets=[0, 0], shape=[2, 8])
        pld.remote_store(t, target=data, peer=peer, offsets=[2, 0], atomic=pld.AtomicType.Add)
        ctx = pld.get_comm_ctx(data)
        return pld.rank(ctx) + pld.nranks(ctx)
"""
)


def _program(source: str) -> ir.Program:
    program = pl.parse_program(source)
    assert isinstance(program, ir.Program)
    return program


def test_a_distributed_op_lifts_its_keywords_to_positional_arguments() -> None:
    kernel = _program(KERNEL).functions["kernel"]
    load = kernel.body.stmts[0].value
    assert load.op.name == "pld.tile.remote_load" and len(load.args) == 4 and load.kwargs == {}
    ir.assert_structural_equal(load.type, ir.TileType([2, 8], ir.DataType.FP32, ir.MemorySpace.Vec))
    store = kernel.body.stmts[1].expr
    assert store.op.name == "pld.tile.remote_store" and len(store.args) == 4
    assert store.kwargs["atomic"] == ir.AtomicType.Add
    assert isinstance(kernel.params[0].type, ir.DistributedTensorType)
    assert isinstance(kernel.body.stmts[2].var.type, ir.CommCtxType)


def test_a_distributed_program_prints_with_the_pld_import_and_reads_back() -> None:
    program = _program(KERNEL)
    text = ir.python_print(program)
    assert "import nanopto.language.distributed as pld" in text
    assert "pld.tile.remote_store(t, data, peer, [2, 0], atomic=pl.AtomicType.Add)" in text
    ir.assert_structural_equal(program, _program(text))
    assert ir.python_print(_program(text)) == text


def test_the_window_buffer_takes_its_variable_name_and_a_window_views_it() -> None:
    program = _program(
        HEADER
        + """
@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer([4, 8], dtype=pl.FP32)
        data = pld.window(buf, [4, 8], dtype=pl.FP32)
        return data
"""
    )
    alloc, window = program.functions["host"].body.stmts[:2]
    assert alloc.value.args[0] == ir.ConstInt(128, ir.DataType.INT64)
    assert alloc.value.kwargs["name"] == "buf" and isinstance(alloc.var.type, ir.PtrType)
    ir.assert_structural_equal(window.var.type, ir.DistributedTensorType([4, 8], ir.DataType.FP32))
    assert "name=" not in ir.python_print(program)
    ir.assert_structural_equal(program, _program(ir.python_print(program)))


@pytest.mark.parametrize(
    ("body", "kind", "message"),
    [
        ("n = pld.world_size()", ParserSyntaxError, "HOST"),
        ("t = pld.tile.remote_load(x, peer=p, offsets=[0], shape=[4])", InvalidOperationError, "DistributedTensor"),
        ("t = pld.tile.remote_load(d, offsets=[0], shape=[4])", InvalidOperationError, "required positional argument: 'peer'"),
        ("t = pld.tile.no_such_op(d)", InvalidOperationError, r"pld\.tile"),
        ("pld.tensor.remote_store(x, d, p, [8])", InvalidOperationError, "push exceeds the peer's target region"),
        ("pld.system.defer_wait(d, offsets=[0], expected=1, cmp=pld.WaitCmp.Eq)", InvalidOperationError, "WaitCmp.Ge"),
        ("r = pld.rank(d)", InvalidOperationError, "CommCtx"),
        ("pld.alloc_window_buffer(8)", ParserSyntaxError, "HOST"),
    ],
)
def test_a_misused_distributed_op_is_a_located_error(body: str, kind: type[Exception], message: str) -> None:
    source = (
        HEADER
        + f"""
@pl.program
class P:
    @pl.function
    def f(self, x: pl.Tensor[[4], pl.FP32], d: pld.DistributedTensor[[8], pl.INT32], p: pl.Scalar[pl.INT32]):
        {body}
        return x
"""
    )
    with pytest.raises(kind, match=message) as caught:
        _program(source)
    assert caught.value.line == 8  # type: ignore[attr-defined]


def test_device_is_only_for_a_call_of_an_orchestrator() -> None:
    source = (
        HEADER
        + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, x: pl.Tensor[[4], pl.FP32]):
        return x

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[4], pl.FP32]):
        for r in pl.range(pld.world_size()):
            self.chip(x, device=r)
        return x
"""
    )
    program = _program(source)
    call = program.functions["host"].body.stmts[0].body.stmts[0].expr
    assert call.attrs["device"] is program.functions["host"].body.stmts[0].loop_var
    ir.assert_structural_equal(program, _program(ir.python_print(program)))
    with pytest.raises(ParserTypeError, match="'device'"):
        _program(source.replace("type=pl.FunctionType.Orchestration", "type=pl.FunctionType.InCore"))


INLINED_BEFORE = (
    HEADER
    + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def exchange(self, data: pld.DistributedTensor[[4, 8], pl.FP32], peer: pl.Scalar[pl.INT32]) -> pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]:
        t = pld.remote_load(data, peer=peer, offsets=[0, 0], shape=[2, 8])
        pld.remote_store(t, data, peer, [2, 0])
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, win: pld.DistributedTensor[[4, 8], pl.FP32], me: pl.Scalar[pl.INT32]) -> pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]:
        got = self.exchange(win, me)
        return got
"""
)

INLINED_EXPECTED = (
    HEADER
    + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, win: pld.DistributedTensor[[4, 8], pl.FP32], me: pl.Scalar[pl.INT32]) -> pl.Tile[[2, 8], pl.FP32, pl.Mem.Vec]:
        t_inline0 = pld.tile.remote_load(win, me, [0, 0], [2, 8])
        pld.tile.remote_store(t_inline0, win, me, [2, 0])
        got = t_inline0
        return got
"""
)


def test_a_helper_using_distributed_ops_inlines_like_any_other() -> None:
    after = passes.inline_functions()(_program(INLINED_BEFORE))
    ir.assert_structural_equal(after, _program(INLINED_EXPECTED))
    assert isinstance(after.functions["kernel"].params[0].type, ir.DistributedTensorType)


def test_on_one_device_a_remote_exchange_with_this_rank_is_local() -> None:
    data = np.arange(32, dtype=np.float32).reshape(4, 8)
    expected = data.copy()
    expected[2:4] += data[0:2]
    assert interpret(_program(KERNEL), "kernel", data, 0) == 0 + 1
    np.testing.assert_array_equal(data, expected)
    before, after = _program(INLINED_BEFORE), passes.inline_functions()(_program(INLINED_BEFORE))
    one, other = np.ones((4, 8), np.float32), np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(interpret(before, "kernel", one, 0), interpret(after, "kernel", other, 0))
    np.testing.assert_array_equal(one, other)


def test_another_rank_is_not_interpretable_and_says_where() -> None:
    with pytest.raises(InterpreterError, match=r"peer rank 1 does not exist in a one-device run") as caught:
        interpret(_program(KERNEL), "kernel", np.zeros((4, 8), np.float32), 1)
    assert str(caught.value).startswith("<string>:8:")


def test_a_window_is_the_buffer_s_memory_and_a_wait_that_cannot_be_met_is_an_error() -> None:
    program = _program(
        HEADER
        + """
@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, v: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        buf = pld.alloc_window_buffer(16)
        flags = pld.window(buf, [4], dtype=pl.INT32)
        alias = pld.window(buf, [4], dtype=pl.INT32)
        flags = pl.write(flags, [1], v)
        pld.system.wait(alias, [1], 7, cmp=pld.WaitCmp.Eq)
        return pl.read(alias, [1]) + pld.world_size()
"""
    )
    assert interpret(program, "host", 7) == 8
    with pytest.raises(InterpreterError, match="would wait forever"):
        interpret(program, "host", 6)
