"""Bind a helper's symbolic dimensions to the caller's extents, per call site.

docs/specification.md, "Dynamic dimensions and types", binding dynamic symbols to the argument shapes: a helper
written over `pl.Tensor[[N, 4], ...]` (with `N = pl.dynamic("N")`) is spliced with `N` replaced by
the extent of the argument actually passed, so a callee local of shape `[N, 4]` becomes `[8, 4]` in
the caller. Bindings are read per argument and never equate a shared placeholder across parameters:
when two arguments disagree on `N` (a logical and a padded buffer under one annotation), `N` is left
symbolic rather than choosing one global binding.
"""

from __future__ import annotations

from nanopto.ir_terms.infer import dimension_extents, type_of
from nanopto.ir_terms.nodes import Expr, Var
from nanopto.ir_terms.schema import walk
from nanopto.ir_terms.structural import structural_equal
from nanopto.passes.inlining.call_sites import CallSite, HelperTemplate


def _same(a: Expr, b: Expr) -> bool:
    """The same expression over the very same Vars (not merely printed alike)."""
    ids_a = [v.id for v in walk(a) if isinstance(v, Var)]
    ids_b = [v.id for v in walk(b) if isinstance(v, Var)]
    return ids_a == ids_b and structural_equal(a, b, enable_auto_mapping=True)


def dimension_bindings(template: HelperTemplate, site: CallSite) -> dict[int, Expr]:
    """Symbol id -> the caller's extent, for each symbol every argument agrees on."""
    if not template.free_ids:  # no symbol to bind (most helpers): the arguments' types go unread
        return {}
    pairs = ((binding.param.type, type_of(binding.actual)) for binding in site.bindings)
    candidates = dimension_extents(pairs, template.free_ids)
    return {
        symbol: extents[0]
        for symbol, extents in candidates.items()
        if all(_same(extents[0], other) for other in extents[1:])
    }
