"""`nanopto.language`, the `pl` module: inert at class creation, refused as a runtime value."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

import nanopto.language as pl

_RUNTIME_USES: dict[str, Callable[[], object]] = {
    # `iter`, not a loop: before the fix, iterating went through `__getitem__` and never ended
    "iterate pl.range": lambda: iter(pl.range(10)),
    "iterate a subscript": lambda: list(itertools.islice(pl.Tensor[[4], pl.FP32], 3)),
    "truth value": lambda: bool(pl.range(3)),
    "arithmetic": lambda: pl.add(1, 2) + 1,
    "reflected arithmetic": lambda: 1 - pl.Scalar,
    "comparison": lambda: pl.range(3) < 2,
    "length": lambda: len(pl.Tensor),
    "membership": lambda: 3 in pl.Tile,
    "conversion": lambda: int(pl.const(1, pl.INT32)),
    "index": lambda: [0, 1][pl.Level.CORE_GROUP],  # type: ignore[index]
}


@pytest.mark.parametrize("use", _RUNTIME_USES)
def test_a_placeholder_used_as_a_runtime_value_raises_type_error(use: str) -> None:
    with pytest.raises(TypeError, match=r"`pl` programs are parsed by @pl.program \(or parse_program\), never run"):
        _RUNTIME_USES[use]()


def test_placeholders_still_evaluate_in_annotations_and_decorators() -> None:
    assert repr(pl.Tensor[[4], pl.FP32]) == "pl.Tensor[...]"
    assert repr(pl.Out[pl.Tile[[4, 4], pl.FP32, pl.Mem.Vec]]) == "pl.Out[...]"
    assert repr(pl.Level.CORE_GROUP) == "pl.Level.CORE_GROUP"
    assert repr(pl.range(4, init_values=(0,))) == "pl.range(...)"

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.Inline)
        def h(self, x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            return x

        @pl.function
        def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
            for i in pl.range(2):
                a = self.h(pl.add(a, i))
            return a

    assert sorted(P.functions) == ["h", "main"]  # type: ignore[attr-defined]
