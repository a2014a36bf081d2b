"""The `pld` module: `import nanopto.language.distributed as pld` (PyPTO's `pypto.language.distributed`).

As with `pl`, a program that uses it is parsed, never run: `pld.DistributedTensor[[64], pl.FP32]`
and `pld.CommCtx` are annotation placeholders, and `pld.<category>.<op>(...)` is read by the
parser from the source text (the ops are in the op registry, `nanopto.ir_terms.ops_distributed`).
The enums are the IR's own, so `pld.AtomicType.Add` is the member the IR stores
(docs/coming-from-pypto.md, "Distributed programs").
"""

from __future__ import annotations

from typing import Any

from nanopto.ir_terms.nodes import AtomicType, NotifyOp, WaitCmp
from nanopto.ir_terms.types import CommCtxType
from nanopto.language import _Inert

__all__ = [
    "AtomicType",
    "CommCtx",
    "CommCtxType",
    "DistributedTensor",
    "NotifyOp",
    "WaitCmp",
]

DistributedTensor = _Inert("pld.DistributedTensor")
CommCtx = _Inert("pld.CommCtx")


def __getattr__(name: str) -> Any:
    """`pld.tensor`, `pld.window`, ...: inert outside a parsed body, as `pl`'s ops are."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _Inert(f"pld.{name}")
