"""`retire` (run once before extraction) deletes the `At` term of a call site a splice rule copied
a body for, and leaves every other site's."""

from __future__ import annotations

from nanopto.egglog_bindings import bindings as eb
from nanopto.passes.inlining.stage import inline_declarations
from nanopto.rules import RETIRE
from nanopto.terms.term_rows import SPAN, TermRows, load_rows, run_text


def _sites_left(egraph: eb.EGraph) -> list[str]:
    (out,) = egraph.run_program(eb.PrintFunction(SPAN, "At", None, None, eb.DefaultPrintFunctionMode()))
    assert isinstance(out, eb.PrintFunctionOutput)
    dag = out.termdag
    return sorted(dag.to_string(term) for term, _ in out.terms)


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
