"""`ir.WindowBuffer` and a distributed tensor type's `window_buffer`: a back-reference only hand-built
IR holds (nanopto has no comm-collection pass), part of the type, shown by the printer only with
`explicit_layout=True`, kept by serialization, refused by the passes rather than dropped
(docs/coming-from-pypto.md, "Distributed programs")."""

from __future__ import annotations

import pytest

import nanopto.language as pl
from nanopto import ir, passes

I32 = ir.DataType.INT32
DIMS = [ir.ConstInt(128, I32), ir.ConstInt(64, I32)]


def _window(name: str = "wbuf") -> ir.WindowBuffer:
    return ir.WindowBuffer(ir.Var(name, ir.PtrType()), ir.ConstInt(4096, I32), True, False, ir.Span.unknown())


def test_a_window_buffer_is_a_ptr_var_named_after_its_allocation() -> None:
    base = ir.Var("wbuf", ir.PtrType())
    window = ir.WindowBuffer(base, ir.ConstInt(4096, I32))
    assert isinstance(window, ir.Var) and window.name == "wbuf" and window.id != base.id
    assert window.base is base and window.type == ir.PtrType()
    assert (window.load_from_host, window.store_to_host) == (False, False)
    assert ir.python_print(window) == "wbuf" and repr(window).startswith("WindowBuffer('wbuf'#")
    with pytest.raises(TypeError, match=r"pl\.Ptr Var"):
        ir.WindowBuffer(ir.Var("n", ir.ScalarType(I32)), ir.ConstInt(4, I32))


def test_a_window_buffer_is_part_of_the_type_and_printed_only_in_full() -> None:
    window = _window()
    plain = ir.DistributedTensorType(DIMS, ir.DataType.FP16)
    viewing = ir.DistributedTensorType(DIMS, ir.DataType.FP16, window)
    assert plain.window_buffer is None and viewing.window_buffer is window
    assert ir.python_print(viewing) == ir.python_print(plain) == "pld.DistributedTensor[[128, 64], pl.FP16]"
    assert ir.python_print(viewing, explicit_layout=True) == 'pld.DistributedTensor[[128, 64], pl.FP16, "window_buffer=wbuf"]'
    assert ir.python_print(plain, explicit_layout=True) == "pld.DistributedTensor[[128, 64], pl.FP16]"
    assert not ir.structural_equal(plain, viewing) and ir.structural_equal(viewing, viewing)
    assert not ir.structural_equal(viewing, ir.DistributedTensorType(DIMS, ir.DataType.FP16, _window()))
    assert ir.structural_hash(plain) != ir.structural_hash(viewing)


def test_serialization_keeps_the_window_buffer() -> None:
    viewing = ir.DistributedTensorType(DIMS, ir.DataType.FP16, _window())
    copy = ir.deserialize(ir.serialize(viewing))
    assert isinstance(copy.window_buffer, ir.WindowBuffer) and copy.window_buffer.load_from_host
    assert copy.window_buffer.base.name == "wbuf" and copy.window_buffer.size == ir.ConstInt(4096, I32)
    ir.assert_structural_equal(copy, viewing, enable_auto_mapping=True)


def test_the_parser_makes_a_plain_ptr_and_types_that_refer_to_no_window_buffer() -> None:
    program = pl.parse_program(
        """
import nanopto.language as pl
import nanopto.language.distributed as pld

@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(1024)
        data = pld.window(buf, [4, 8], dtype=pl.FP32)
        return data
"""
    )
    alloc, window = program.functions["host"].body.stmts[:2]
    assert type(alloc.var) is ir.Var and isinstance(alloc.var.type, ir.PtrType)
    assert isinstance(window.var.type, ir.DistributedTensorType) and window.var.type.window_buffer is None


def test_a_pass_refuses_a_type_that_refers_to_a_window_buffer_rather_than_drop_it() -> None:
    viewing = ir.DistributedTensorType(DIMS, ir.DataType.FP16, _window())
    x, data, y = ir.Var("x", viewing), ir.Var("data", viewing), ir.Var("y", viewing)
    helper = ir.Function("h", [x], [viewing], ir.ReturnStmt([x]), type=ir.FunctionType.Inline)
    call = ir.Call(ir.GlobalVar("h"), [data], viewing)
    main = ir.Function("main", [data], [viewing], ir.SeqStmts([ir.AssignStmt(y, call), ir.ReturnStmt([y])]))
    program = ir.Program([helper, main], "P")
    with pytest.raises(ValueError, match="window buffer 'wbuf'"):
        passes.inline_functions()(program)
