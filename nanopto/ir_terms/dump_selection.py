"""Where a `pl.dump_tag` selection lands, stated once for the parser and for InlineFunctions.

A tag follows a value, not a name (docs/specification.md, "Dump tags"): a carrier scope lists in
`dumps=` every value tagged and still bound at its entry (as PyPTO's parser does; an entry the
kernel never consumes is dropped when the scope is outlined), and a dispatch lists each tagged
value it is passed. The parser applies this to the source as written; InlineFunctions applies the
same rule to a spliced helper body, so a program inlined by the pass and the same program inlined
by hand carry the same selections.
"""

from __future__ import annotations

from collections.abc import Iterable

from nanopto.ir_terms.nodes import Var

DUMP_CARRIERS = frozenset({"at", "cluster", "spmd", "graph"})
"""The scope constructors that carry a selection: those that become (or group) kernel dispatches.
Runtime scopes (`pl.scope`, `pl.manual_scope`) do not, and neither does a `pl.split_aiv` region."""


def seeded(written: Iterable[Var], live: Iterable[Var]) -> tuple[Var, ...]:
    """A carrier's selection: the values written in its `dumps=`, then the live tagged ones, each
    value once."""
    out: dict[int, Var] = {}
    for var in (*written, *live):
        out.setdefault(var.id, var)
    return tuple(out.values())
