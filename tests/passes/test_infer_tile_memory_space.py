"""`infer-tile-memory-space` (docs/architecture.md#infer-tile-memory-space): every tile of an InCore
function is placed in a memory space, an operand its op cannot read where it is gets a move, and
loops and `if`s carry the space of what they yield."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import nanopto.language as pl
from nanopto import ir, passes
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.passes.infer_tile_memory_space import verify_tile_memory_inferred
from nanopto.verify import interpret
from nanopto.verify.equivalence import assert_equivalent
from nanopto.verify.inputs import arguments_for
from nanopto.verify.properties import VerifyContext


def infer(program: ir.Program) -> ir.Program:
    return passes.infer_tile_memory_space()(program)


def test_matmul_operands_move_to_left_and_right_and_its_result_is_acc() -> None:
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 128], pl.BF16],
            y: pl.Tensor[[128, 64], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
        ) -> pl.Tensor[[16, 64], pl.FP32]:
            xt: pl.Tile[[16, 128], pl.BF16] = pl.load(x, [0, 0], [16, 128])
            yt: pl.Tile[[128, 64], pl.BF16] = pl.load(y, [0, 0], [128, 64])
            z: pl.Tile[[16, 64], pl.FP32] = pl.matmul(xt, yt)
            out: pl.Tensor[[16, 64], pl.FP32] = pl.store(z, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 128], pl.BF16],
            y: pl.Tensor[[128, 64], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
        ) -> pl.Tensor[[16, 64], pl.FP32]:
            xt: pl.Tile[[16, 128], pl.BF16, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [16, 128])
            yt: pl.Tile[[128, 64], pl.BF16, pl.MemorySpace.Vec] = pl.load(y, [0, 0], [128, 64])
            xt_Left: pl.Tile[[16, 128], pl.BF16, pl.MemorySpace.Left] = pl.move(xt, target_memory=pl.MemorySpace.Left)
            yt_Right: pl.Tile[[128, 64], pl.BF16, pl.MemorySpace.Right] = pl.move(
                yt, target_memory=pl.MemorySpace.Right
            )
            z: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xt_Left, yt_Right)
            out: pl.Tensor[[16, 64], pl.FP32] = pl.store(z, [0, 0], out)
            return out

    ir.assert_structural_equal(infer(Before), Expected)


def test_an_explicit_target_memory_is_kept_and_the_move_starts_from_it() -> None:
    """`target_memory=Mat` is honoured though the matmul wants `Left`: the load stays in `Mat` and
    a move takes it on. Storing a `Mat` tile needs it in `Vec`; a move to the flat `Vec` keeps the
    boxes it copies."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.BF16]],
            res: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            out: pl.Tensor[[16, 16], pl.BF16] = pl.store(xm, [0, 0], out)
            z: pl.Tile[[16, 16], pl.FP32] = pl.matmul(xm, xm)
            res: pl.Tensor[[16, 16], pl.FP32] = pl.store(z, [0, 0], res)
            return res

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.BF16]],
            res: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Mat] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat
            )
            xm_Vec: pl.Tile[
                [16, 16],
                pl.BF16,
                pl.MemorySpace.Vec,
                pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major),
            ] = pl.move(xm, target_memory=pl.MemorySpace.Vec)
            out: pl.Tensor[[16, 16], pl.BF16] = pl.store(xm_Vec, [0, 0], out)
            xm_Left: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.move(xm, target_memory=pl.MemorySpace.Left)
            xm_Right: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.move(
                xm, target_memory=pl.MemorySpace.Right
            )
            z: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xm_Left, xm_Right)
            res: pl.Tensor[[16, 16], pl.FP32] = pl.store(z, [0, 0], res)
            return res

    ir.assert_structural_equal(infer(Before), Expected)


def test_a_loop_accumulator_carries_acc_back_to_its_iter_arg_and_its_initial_value() -> None:
    """The accumulator is created without a space (so `Vec`), but the body yields `Acc`: the loop's
    result, its iter arg and the tile it starts from all become `Acc`, and the create says so."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            y: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0: pl.Tile[[16, 16], pl.FP32] = pl.tile.create([16, 16], dtype=pl.FP32)
            for k, (acc,) in pl.range(4, init_values=(acc0,)):
                xl: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, k], [16, 16], target_memory=pl.MemorySpace.Left)
                yr: pl.Tile[[16, 16], pl.BF16] = pl.load(y, [k, 0], [16, 16], target_memory=pl.MemorySpace.Right)
                nxt: pl.Tile[[16, 16], pl.FP32] = pl.matmul_acc(acc, xl, yr)
                total: pl.Tile[[16, 16], pl.FP32] = pl.yield_(nxt)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(total, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            y: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.tile.create(
                [16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Acc
            )
            for k, (acc,) in pl.range(4, init_values=(acc0,)):
                xl: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.load(
                    x, [0, k], [16, 16], target_memory=pl.MemorySpace.Left
                )
                yr: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.load(
                    y, [k, 0], [16, 16], target_memory=pl.MemorySpace.Right
                )
                nxt: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul_acc(acc, xl, yr)
                total: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.yield_(nxt)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(total, [0, 0], out)
            return out

    after = infer(Before)
    ir.assert_structural_equal(after, Expected)
    loop = after.functions["kernel"].body.stmts[1]
    assert isinstance(loop, ir.ForStmt)
    (carried,) = loop.iter_args
    assert carried.init_value is after.functions["kernel"].body.stmts[0].var  # remapped, not stale


def test_a_while_loop_carries_like_a_for_loop() -> None:
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0: pl.Tile[[16, 16], pl.FP32] = pl.tile.create([16, 16], dtype=pl.FP32)
            for n, acc in pl.while_(init_values=(0, acc0)):
                pl.cond(n < 3)
                xl: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
                xr: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right)
                nxt: pl.Tile[[16, 16], pl.FP32] = pl.matmul_acc(acc, xl, xr)
                _m, total = pl.yield_(n + 1, nxt)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(total, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            acc0: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.tile.create(
                [16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Acc
            )
            for n, acc in pl.while_(init_values=(0, acc0)):
                pl.cond(n < 3)
                xl: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.load(
                    x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left
                )
                xr: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.load(
                    x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right
                )
                nxt: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul_acc(acc, xl, xr)
                _m, total = pl.yield_(n + 1, nxt)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(total, [0, 0], out)
            return out

    ir.assert_structural_equal(infer(Before), Expected)


def test_an_if_result_takes_the_space_its_branches_yield() -> None:
    """Both branches yield a matmul result, so the `if`'s result is `Acc`; the `add` that reads it
    needs it in `Vec`, and the move out of the accumulator lands unboxed."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            flag: pl.Scalar[pl.INDEX],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xl: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left)
            xr: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right)
            if flag < 1:
                a: pl.Tile[[16, 16], pl.FP32] = pl.matmul(xl, xr)
                phi: pl.Tile[[16, 16], pl.FP32] = pl.yield_(a)
            else:
                b: pl.Tile[[16, 16], pl.FP32] = pl.matmul(xl, xl)
                phi: pl.Tile[[16, 16], pl.FP32] = pl.yield_(b)
            s: pl.Tile[[16, 16], pl.FP32] = pl.add(phi, phi)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(s, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            flag: pl.Scalar[pl.INDEX],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xl: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Left
            )
            xr: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Right
            )
            if flag < 1:
                a: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xl, xr)
                phi: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.yield_(a)
            else:
                xl_Right: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.move(
                    xl, target_memory=pl.MemorySpace.Right
                )
                b: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xl, xl_Right)
                phi: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.yield_(b)
            phi_Vec: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Vec] = pl.move(
                phi, target_memory=pl.MemorySpace.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box
            )
            s: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Vec] = pl.add(phi_Vec, phi_Vec)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(s, [0, 0], out)
            return out

    ir.assert_structural_equal(infer(Before), Expected)


def test_a_move_made_in_one_branch_is_not_reused_in_the_other() -> None:
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            flag: pl.Scalar[pl.INDEX],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xv: pl.Tile[[16, 16], pl.BF16] = pl.load(x, [0, 0], [16, 16])
            if flag < 1:
                a: pl.Tile[[16, 16], pl.FP32] = pl.matmul(xv, xv)
                r: pl.Tile[[16, 16], pl.FP32] = pl.yield_(a)
            else:
                b: pl.Tile[[16, 16], pl.FP32] = pl.matmul(xv, xv)
                r: pl.Tile[[16, 16], pl.FP32] = pl.yield_(b)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(r, [0, 0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self,
            x: pl.Tensor[[16, 16], pl.BF16],
            flag: pl.Scalar[pl.INDEX],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
        ) -> pl.Tensor[[16, 16], pl.FP32]:
            xv: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [16, 16])
            if flag < 1:
                xv_Left: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.move(
                    xv, target_memory=pl.MemorySpace.Left
                )
                xv_Right: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.move(
                    xv, target_memory=pl.MemorySpace.Right
                )
                a: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xv_Left, xv_Right)
                r: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.yield_(a)
            else:
                xv_Left2: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Left] = pl.move(
                    xv, target_memory=pl.MemorySpace.Left
                )
                xv_Right2: pl.Tile[[16, 16], pl.BF16, pl.MemorySpace.Right] = pl.move(
                    xv, target_memory=pl.MemorySpace.Right
                )
                b: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.matmul(xv_Left2, xv_Right2)
                r: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Acc] = pl.yield_(b)
            out: pl.Tensor[[16, 16], pl.FP32] = pl.store(r, [0, 0], out)
            return out

    ir.assert_structural_equal(infer(Before), Expected)


def test_a_demand_flows_back_through_a_view_to_a_retargetable_load() -> None:
    """The reshape's consumer wants `Vec`, the load says nothing, so it is `Vec`; had the load
    said `Mat`, the reshape would have inherited `Mat` and been moved."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[256], pl.FP32]]
        ) -> pl.Tensor[[256], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            flat: pl.Tile[[256], pl.FP32] = pl.tile.reshape(xm, [256])
            e: pl.Tile[[256], pl.FP32] = pl.exp(flat)
            out: pl.Tensor[[256], pl.FP32] = pl.store(e, [0], out)
            return out

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(
            self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[256], pl.FP32]]
        ) -> pl.Tensor[[256], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat
            )
            flat: pl.Tile[[256], pl.FP32, pl.MemorySpace.Mat] = pl.tile.reshape(xm, [256])
            flat_Vec: pl.Tile[
                [256],
                pl.FP32,
                pl.MemorySpace.Vec,
                pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major),
            ] = pl.move(flat, target_memory=pl.MemorySpace.Vec)
            e: pl.Tile[[256], pl.FP32, pl.MemorySpace.Vec] = pl.exp(flat_Vec)
            out: pl.Tensor[[256], pl.FP32] = pl.store(e, [0], out)
            return out

    ir.assert_structural_equal(infer(Before), Expected)


def test_functions_that_are_not_incore_pass_through_untouched() -> None:
    @pl.program
    class Before:
        @pl.function
        def helper(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tile[[16], pl.FP32] = pl.load(x, [0], [16], target_memory=pl.MemorySpace.Mat)
            out: pl.Tensor[[16], pl.FP32] = pl.store(t, [0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            out: pl.Tensor[[16], pl.FP32] = pl.create_tensor([16], dtype=pl.FP32)
            y: pl.Tensor[[16], pl.FP32] = self.helper(x, out)
            return y

    after = infer(Before)
    assert after is Before
    assert [f is g for f, g in zip(after.function_list, Before.function_list, strict=True)] == [True, True]


def test_the_verifier_names_a_tile_without_a_space_and_an_operand_in_the_wrong_one() -> None:
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tile[[16], pl.FP32] = pl.load(x, [0], [16])
            m: pl.Tile[[16], pl.FP32, pl.MemorySpace.Mat] = pl.move(t, target_memory=pl.MemorySpace.Mat)
            s: pl.Tile[[16], pl.FP32, pl.MemorySpace.Vec] = pl.add(m, m)
            out: pl.Tensor[[16], pl.FP32] = pl.store(s, [0], out)
            return out

    found = [d.message for d in verify_tile_memory_inferred(Before, VerifyContext())]
    assert found == [
        "in 'kernel', tile 't' has no memory space",
        "in 'kernel', operand 1 of 'add' ('m') is in Mat, but the op takes it in Vec",
        "in 'kernel', operand 2 of 'add' ('m') is in Mat, but the op takes it in Vec",
    ]
    assert verify_tile_memory_inferred(infer(Before), VerifyContext()) == []


def test_the_pass_is_registered_under_its_kebab_case_name() -> None:
    built = passes.get_pass("infer-tile-memory-space")
    assert isinstance(built, passes.InferTileMemorySpace)
    assert passes.IRProperty.TileMemoryInferred in built.produced


# ---------------------------------------------------------------------------------------------
# Property: on drawn straight-line and looping kernels the pass establishes its property and a
# second run changes nothing.
# ---------------------------------------------------------------------------------------------

_SPACES = ("", ", target_memory=pl.MemorySpace.Mat", ", target_memory=pl.MemorySpace.Vec")
_MOVES = ("Left", "Right", "Vec", "Mat")


@st.composite
def kernels(draw: st.DrawFn) -> str:
    """A kernel of [16, 16] FP32 tiles: loads, moves, vector ops and matmuls in any order, maybe
    inside a loop that carries one of them, its last tile stored."""
    lines = [f"t0: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16]{draw(st.sampled_from(_SPACES))})"]
    count = 1
    for _ in range(draw(st.integers(1, 6))):
        a, b = (f"t{draw(st.integers(0, count - 1))}" for _ in range(2))
        kind = draw(st.sampled_from(("load", "move", "add", "exp", "matmul")))
        value = {
            "load": f"pl.load(x, [0, 0], [16, 16]{draw(st.sampled_from(_SPACES))})",
            "move": f"pl.move({a}, target_memory=pl.MemorySpace.{draw(st.sampled_from(_MOVES))})",
            "add": f"pl.add({a}, {b})",
            "exp": f"pl.exp({a})",
            "matmul": f"pl.matmul({a}, {b})",
        }[kind]
        lines.append(f"t{count}: pl.Tile[[16, 16], pl.FP32] = {value}")
        count += 1
    last = f"t{count - 1}"
    if draw(st.booleans()):
        body = ["    " + line.replace("(t0", "(c").replace(" t0", " c") for line in lines[1:]]
        lines = [
            lines[0],
            "for i, (c,) in pl.range(2, init_values=(t0,)):",
            *body,
            f"    r: pl.Tile[[16, 16], pl.FP32] = pl.yield_({last})",
        ]
        last = "r"
    lines += [f"out: pl.Tensor[[16, 16], pl.FP32] = pl.store({last}, [0, 0], out)", "return out"]
    body_text = "\n".join(f"        {line}" for line in lines)
    return (
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]])"
        " -> pl.Tensor[[16, 16], pl.FP32]:\n" + body_text + "\n"
    )


@given(kernels(), st.data())
def test_the_pass_places_every_tile_keeps_the_meaning_and_a_second_run_changes_nothing(
    source: str, data: st.DataObject
) -> None:
    before = parse_program(source)
    once = infer(before)
    assert verify_tile_memory_inferred(once, VerifyContext()) == []
    ir.assert_structural_equal(infer(once), once)
    ir.assert_structural_equal(parse_program(python_print(once)), once)  # and it prints as it is
    args = data.draw(arguments_for(before.functions["kernel"]))
    assert_equivalent(before, once, args, "kernel")  # moves copy, so the values computed are the same


def test_a_consumer_that_is_a_body_by_itself_gets_its_move_in_a_block_of_its_own() -> None:
    """A loop body built as one bare statement (PyPTO's API allows it) still gets its move; the
    consumer here is a call kept for its effect."""

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            for _i in pl.range(2):
                pl.exp(xm)
            return x

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            xm: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat
            )
            for _i in pl.range(2):
                xm_Vec: pl.Tile[
                    [16, 16],
                    pl.FP32,
                    pl.MemorySpace.Vec,
                    pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major),
                ] = pl.move(xm, target_memory=pl.MemorySpace.Vec)
                pl.exp(xm_Vec)
            return x

    kernel = Before.functions["kernel"]
    loop = kernel.body.stmts[1]
    assert isinstance(loop, ir.ForStmt) and isinstance(loop.body, ir.SeqStmts)
    bare = dataclasses.replace(loop, body=loop.body.stmts[0])
    stmts = (kernel.body.stmts[0], bare, kernel.body.stmts[2])
    built = ir.Program("Before", (dataclasses.replace(kernel, body=ir.SeqStmts(stmts)),))
    ir.assert_structural_equal(infer(built), Expected)


def test_matmul_acc_adds_the_product_to_its_accumulator() -> None:
    """`pl.matmul_acc(acc, a, b)`, the op an accumulator loop is written with, means `acc + a @ b`."""

    @pl.program
    class Acc:
        @pl.function
        def main(
            self, acc: pl.Tensor[[2, 2], pl.FP32], a: pl.Tensor[[2, 3], pl.FP32], b: pl.Tensor[[3, 2], pl.FP32]
        ) -> pl.Tensor[[2, 2], pl.FP32]:
            r = pl.matmul_acc(acc, a, b)
            return r

    acc = np.ones((2, 2), dtype=np.float32)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(interpret(Acc, "main", acc, a, b), acc + a @ b)
    result = Acc.functions["main"].body.stmts[0]
    assert isinstance(result, ir.AssignStmt)
    ir.assert_structural_equal(result.var.type, ir.TensorType([2, 2], ir.DataType.FP32))


def test_a_move_keeps_the_boxes_into_a_flat_space_and_takes_the_boxes_of_a_boxed_one() -> None:
    """`tile.move`'s type rule, which the moves the pass inserts are typed by too."""

    @pl.program
    class Moves:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            xm = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            flat = pl.move(xm, target_memory=pl.MemorySpace.Vec)
            _left = pl.move(flat, target_memory=pl.MemorySpace.Left)
            _unboxed = pl.move(xm, target_memory=pl.MemorySpace.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
            return x

    stmts = Moves.functions["kernel"].body.stmts
    types = [stmt.var.type for stmt in stmts[1:4] if isinstance(stmt, ir.AssignStmt)]
    boxes = ir.TileView(blayout=ir.TileLayout.col_major, slayout=ir.TileLayout.row_major)
    expected = [
        ir.TileType([16, 16], ir.DataType.FP32, None, boxes, ir.MemorySpace.Vec),
        ir.TileType([16, 16], ir.DataType.FP32, ir.MemorySpace.Left),
        ir.TileType([16, 16], ir.DataType.FP32, ir.MemorySpace.Vec),
    ]
    for got, want in zip(types, expected, strict=True):
        ir.assert_structural_equal(got, want)


def test_a_tile_read_out_of_a_tuple_lives_where_the_element_does() -> None:
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            a: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            b: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            p = (a, b)
            c: pl.Tile[[16, 16], pl.FP32] = p[0]
            pl.exp(c)
            return x

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            a: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = pl.load(
                x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat
            )
            b: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [16, 16])
            p = (a, b)
            c: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Mat] = p[0]
            c_Vec: pl.Tile[
                [16, 16],
                pl.FP32,
                pl.MemorySpace.Vec,
                pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major),
            ] = pl.move(c, target_memory=pl.MemorySpace.Vec)
            pl.exp(c_Vec)
            return x

    ir.assert_structural_equal(infer(Before), Expected)
