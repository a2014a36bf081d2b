"""The collector pause (nanopto/gc_pause.py): cyclic garbage made inside pauses is still collected,
and a single large pause pays no full collection."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from nanopto import gc_pause
from nanopto.gc_pause import gc_paused


class _Cyclic:
    """An object that refers to itself: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def full_collections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The generation-2 collections that start while the test runs, from a clean count."""
    started: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            started.append(1)

    monkeypatch.setattr(gc_pause._Moved, "since_full", 0)
    gc.collect()
    gc.callbacks.append(note)
    try:
        yield started
    finally:
        gc.callbacks.remove(note)


def test_cyclic_garbage_made_in_pauses_is_collected_once_the_moved_objects_pass_the_budget(
    monkeypatch: pytest.MonkeyPatch, full_collections: list[int]
) -> None:
    monkeypatch.setattr(gc_pause._Moved, "budget", 5_000)
    made_before: list[weakref.ref[_Cyclic]] = []
    pauses = 0
    while pauses < 100 and not full_collections:  # each pause leaves 100 cycles (300 objects with their dicts and refs)
        pauses += 1
        with gc_paused():
            made = [_Cyclic() for _ in range(100)]
            made_before += map(weakref.ref, made)
            del made
    assert full_collections, "no full collection ran: the pauses' cyclic garbage would stay"
    assert 5_000 // 300 <= pauses <= 5_000 // 100 + 1
    assert all(ref() is None for ref in made_before), "cycles made in the pauses outlived the collection"
    assert gc_pause._Moved.since_full == 0 and gc_pause._Moved.budget >= gc_pause.FULL_COLLECTION_FLOOR
    assert gc.isenabled()


def test_one_pause_under_the_floor_runs_no_full_collection(full_collections: list[int]) -> None:
    assert gc_pause._Moved.budget >= gc_pause.FULL_COLLECTION_FLOOR
    with gc_paused():
        kept = [(i, str(i)) for i in range(200_000)]
    assert not full_collections
    assert len(kept) == 200_000


def test_a_nested_pause_leaves_the_collector_to_the_outermost(full_collections: list[int]) -> None:
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_parsing_inlining_and_printing_every_example_leaves_no_cyclic_garbage() -> None:
    """What the pauses make is freed by reference counting alone: no parser, decoder or typer
    keeps a bound method of its own, and no nested function calls itself (each would hold all it
    reaches until a full collection)."""
    from nanopto.cli import example_names, example_source
    from nanopto.ir_terms.parser import parse_program
    from nanopto.ir_terms.printer import python_print
    from nanopto.passes.hoist_nested_calls import hoist_program
    from nanopto.passes.inlining import inline_program

    for name in example_names():
        source = example_source(name)
        python_print(inline_program(hoist_program(parse_program(source, name))).program)  # caches warm
        gc.collect()
        python_print(inline_program(hoist_program(parse_program(source, name))).program)
        assert gc.collect() == 0, f"{name}: the pipeline left cyclic garbage"
