"""`retire` (run once before extraction) deletes the `At` term of a call site a splice rule copied
a body for, and the statement that held it, and leaves every other site's."""

from __future__ import annotations

from nanopto.egglog_bindings import bindings as eb
from nanopto.passes.inlining.stage import inline_declarations
from nanopto.rules import RETIRE
from nanopto.terms.term_rows import SPAN, TermRows, load_rows, run_text


def _terms_left(egraph: eb.EGraph, table: str) -> list[str]:
    (out,) = egraph.run_program(eb.PrintFunction(SPAN, table, None, None, eb.DefaultPrintFunctionMode()))
    assert isinstance(out, eb.PrintFunctionOutput)
    dag = out.termdag
    return sorted(dag.to_string(term) for term, _ in out.terms)


def _sites_left(egraph: eb.EGraph) -> list[str]:
    return _terms_left(egraph, "At")


def test_retire_deletes_the_call_site_of_a_spliced_site_only() -> None:
    egraph = eb.EGraph()
    run_text(egraph, inline_declarations() + "\n" + RETIRE.commands())
    rows = TermRows()
    skip = rows.term("Skip")
    rows.term("At", 0, "helper", skip)
    rows.term("At", 1, "helper", skip)
    rows.term("At", 2, "other", skip)
    body = rows.term("Body", "helper")
    rows.term("SubSL", body, 0)  # what a splice at site 0 makes: the helper's body copied for it
    rows.term("SubSL", rows.term("Body", "other"), 1)  # another template's copy: not site 1's
    load_rows(egraph, rows)
    before = _sites_left(egraph)
    assert len(before) == 3
    egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(RETIRE.name))))
    assert _sites_left(egraph) == [s for s in before if not s.startswith("(At 0 ")]


def test_retire_deletes_the_statement_that_held_a_spliced_site_in_every_form() -> None:
    """Once its `At` term is gone such a statement has no term, so extraction could never choose
    it; an unspliced site's statement stays, whatever its form."""
    egraph = eb.EGraph()
    run_text(egraph, inline_declarations() + "\n" + RETIRE.commands())
    rows = TermRows()
    skip, unknown = rows.term("Skip"), rows.term("TUnknown")
    at = {k: rows.term("At", k, "helper", skip) for k in range(6)}
    for spliced in (0, 1, 2):
        rows.term("SubSL", rows.term("Body", "helper"), spliced)
    for k, name in ((0, "a"), (3, "d")):  # lhs = self.helper(...)
        rows.term("AssignStmt", rows.term("Var", name, unknown, k), at[k], "False", f"@{k}:1")
    for k in (1, 4):  # self.helper(...) with its value discarded
        rows.term("EvalStmt", at[k], f"@{k}:1")
    for k in (2, 5):  # return self.helper(...)
        rows.term("ReturnStmt", rows.term("ExCons", at[k], rows.term("ExNil")), f"@{k}:1")
    load_rows(egraph, rows)
    tables = ("AssignStmt", "EvalStmt", "ReturnStmt", "ExCons")
    before = {table: _terms_left(egraph, table) for table in tables}
    assert [len(before[t]) for t in tables] == [2, 2, 2, 2]
    egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(RETIRE.name))))
    left = {table: _terms_left(egraph, table) for table in tables}
    assert left == {table: [t for t in before[table] if not any(f"(At {k} " in t for k in (0, 1, 2))] for table in tables}
    assert [len(left[t]) for t in tables] == [1, 1, 1, 1]
