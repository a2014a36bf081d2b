"""PyPTO's IR class names: the scope statement classes, SplitMode, `Call.op.name`."""

from __future__ import annotations

from nanopto import ir
from nanopto.ir_terms.schema import walk

SOURCE = """
import nanopto.language as pl

@pl.program
class Regions:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="blk"):
            b: pl.Tensor[[4], pl.FP32] = pl.add(a, a)
        with pl.manual_scope():
            c: pl.Tensor[[4], pl.FP32] = pl.mul(b, a)
        with pl.graph("g"):
            d: pl.Tensor[[4], pl.FP32] = pl.add(c, a)
        with pl.cluster():
            e: pl.Tensor[[4], pl.FP32] = pl.add(d, a)
        return e
"""


def scopes() -> list[ir.ScopeStmt]:
    program = ir.parse_program(SOURCE)
    return [s for s in walk(program) if isinstance(s, ir.ScopeStmt)]


def test_scope_classes_are_kinds_of_scope_stmt() -> None:
    at, manual, graph, cluster = scopes()
    assert isinstance(at, ir.InCoreScopeStmt) and not isinstance(at, ir.HierarchyScopeStmt)
    assert isinstance(manual, ir.RuntimeScopeStmt) and manual.manual
    assert isinstance(graph, ir.GraphScopeStmt) and isinstance(cluster, ir.ClusterScopeStmt)
    assert not isinstance(cluster, ir.SpmdScopeStmt)
    assert [s.name_hint for s in (at, manual, graph, cluster)] == ["blk", "", "g", ""]


def test_scope_classes_build_the_parsed_form() -> None:
    at = scopes()[0]
    built = ir.InCoreScopeStmt(name_hint="blk", body=at.body)
    ir.assert_structural_equal(built, at)
    assert isinstance(built, ir.InCoreScopeStmt)
    spmd = ir.SpmdScopeStmt(core_num=ir.ConstInt(8), name_hint="", body=at.body)
    assert isinstance(spmd, ir.SpmdScopeStmt) and spmd.core_num == ir.ConstInt(8)
    assert "with pl.spmd(8):" in ir.python_print(spmd)
    runtime = ir.RuntimeScopeStmt(manual=True, body=at.body)
    assert ir.python_print(runtime).startswith("with pl.manual_scope():")


def test_split_mode_and_op_name() -> None:
    assert ir.SplitMode.NONE is not ir.SplitMode.UP_DOWN
    program = ir.parse_program(SOURCE)
    calls = [n for n in walk(program) if isinstance(n, ir.Call)]
    assert [c.op.name for c in calls] == ["add", "mul", "add", "add"]
    assert calls[0].op == "add"  # still the string nanopto's own code compares


def test_level_aliases_name_the_same_level() -> None:
    assert ir.Level.NODE is ir.Level.HOST and ir.Level.CLOS2 is ir.Level.CLUSTER_2
    assert [level.name for level in ir.Level][-1] == "GLOBAL"  # aliases are not extra members
    numbers = {level.name: ir.level_to_linqu_level(level) for level in ir.Level}
    assert numbers == {
        "AIV": 0, "AIC": 0, "CORE_GROUP": 0, "CHIP_DIE": 1, "CHIP": 2,
        "HOST": 3, "CLUSTER_0": 4, "CLUSTER_1": 5, "CLUSTER_2": 6, "GLOBAL": 7,
    }  # fmt: skip
    host = ir.HierarchyScopeStmt(level=ir.Level.NODE, role=ir.Role.SubWorker, body=[])
    assert host.level is ir.Level.HOST


def test_an_aliased_level_parses_as_its_member() -> None:
    def program(level: str) -> ir.Program:
        return ir.parse_program(SOURCE.replace("pl.Level.CORE_GROUP", f"pl.Level.{level}"))

    aliased = program("UMA")
    assert "pl.Level.CHIP," in ir.python_print(aliased)
    ir.assert_structural_equal(aliased, program("CHIP"))
    region = next(s for s in walk(aliased) if isinstance(s, ir.ScopeStmt) and s.constructor == "at")
    assert ir.level_to_linqu_level(region.level) == 2
