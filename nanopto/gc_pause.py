"""Pausing Python's cyclic garbage collector around allocation-heavy whole-program work.

Parsing, splicing and decoding build hundreds of thousands of small immutable nodes that never form
cycles. Each allocation burst makes the collector rescan the growing young heap, and at 10,000 call
sites that rescanning took 70% of decode time. Reference counting still frees everything.

On the way out the objects made meanwhile are moved, unscanned, to the oldest generation
(`gc.freeze()` then `gc.unfreeze()`: two constant-time list splices). Left in the youngest
generation, they would all be scanned by the very next collection (0.3 s after a 10,000-site
pass).

CPython starts a full collection, the only one that looks at the oldest generation, when the
objects that reached it by surviving younger collections outnumber a quarter of those already
there; objects moved by `gc.unfreeze()` are not counted, so without more a process that runs
many pauses (a soak, the playground, a notebook) would almost never collect in full, and any cyclic
garbage made in a pause would stay: a worker of the front-end fuzz soak grew to 2.3 GB. So the
pauses count the objects they move, and the end of a pause runs a full collection once they
outnumber `FULL_COLLECTION_FLOOR` and the objects that survived the previous one: its cost, a scan
of the heap, stays proportional to what the pauses made, and a single large run (676,000 objects
moved at 10,000 sites) pays none.

The collector is one per interpreter, so this is process-wide state by nature: the pause is
scoped to a `with` block, and re-entrant.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FULL_COLLECTION_FLOOR = 1_000_000
"""The fewest objects the pauses move to the oldest generation between two full collections."""


class _Moved:
    """The objects moved since the last full collection the pauses ran, and how many may be."""

    since_full = 0
    budget = FULL_COLLECTION_FLOOR


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (re-entrant: only the outermost block restores it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # The young generation's count, which grows while the collector is off: the objects
            # made (and still alive) since its last collection, at least those of this block.
            _Moved.since_full += gc.get_count()[0]
            gc.freeze()
            gc.unfreeze()
            if _Moved.since_full > _Moved.budget:
                gc.collect()
                _Moved.since_full = 0
                _Moved.budget = max(FULL_COLLECTION_FLOOR, len(gc.get_objects()))
            gc.enable()
