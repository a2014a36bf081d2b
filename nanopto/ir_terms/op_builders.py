"""Building op calls from Python, as PyPTO's `ir.op` module does: `op.tile.load(t, [0, 0], [4, 4])`.

Each builder makes the `Call` the parser makes for the same `pl` call, so its type is what the op
registry's type rule infers and its printed form is the `pl` source. The namespaces (`tile`,
`tensor`, `array`, ...) only select among the registry's spellings: `op.tile.add` is the op
spelled `pl.tile.add`. Python values become IR constants: an int a `ConstInt`, a list a list
argument, an enum member its `pl` constant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nanopto.ir_terms.nodes import Call, Expr, Keyword, OpName, Span, _literal, keyword_value
from nanopto.ir_terms.ops import OPS

_POSITIONAL: dict[str, tuple[str, ...]] = {
    "tile.load": ("tensor", "offsets", "shapes"),
    "tile.store": ("tile", "offsets", "output_tensor"),
}
"""The positional parameter names of the ops PyPTO's builders also take by keyword."""


def get_op(name: str) -> OpName:
    """The op spelled `name` (any of its spellings), as a call's callee; its `.name` is the
    registry's canonical name. An unknown op is a `ValueError`."""
    op = OPS.lookup(name)
    if op is None:
        raise ValueError(f"unknown op {name!r}")
    return OpName(op.name)


def create_op_call(
    name: str, args: Sequence[Any], kwargs: Mapping[str, Any] | Span | None = None, span: Span | None = None
) -> Call:
    """A call of the op spelled `name` on `args` (Python values become constants). As in PyPTO,
    the keywords may be left out: `create_op_call(name, args, span)`. The call keeps the spelling
    it was given (`tile.and` prints `pl.tile.and_`), as the parser keeps the one the source wrote."""
    if isinstance(kwargs, Span):
        kwargs, span = None, kwargs
    op = get_op(name)
    positional = list(args)
    keywords = dict(kwargs or {})
    for index, param in enumerate(_POSITIONAL.get(op, ())):
        if param in keywords and index == len(positional):
            positional.append(keywords.pop(param))
    return Call(
        OpName(OPS.ir_name(name)),
        tuple(_literal(a) for a in positional),
        tuple(Keyword(k, keyword_value(k, v)) for k, v in keywords.items()),
        span=span,
    )


class _Namespace:
    """The builders of the ops spelled `pl.<prefix>.<name>`."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix

    def __getattr__(self, name: str) -> Callable[..., Call]:
        spelling = f"{self._prefix}.{name.rstrip('_')}"
        if spelling not in OPS:
            raise AttributeError(f"no op 'pl.{spelling}'")

        def builder(*args: Any, span: Span | None = None, **kwargs: Any) -> Call:
            return create_op_call(spelling, args, kwargs, span)

        builder.__name__ = name
        return builder

    def __repr__(self) -> str:
        return f"<op builders pl.{self._prefix}.*>"


tile = _Namespace("tile")
tensor = _Namespace("tensor")
array = _Namespace("array")
system = _Namespace("system")

from nanopto.ir_terms import system_ops  # noqa: E402 - PyPTO's `ir.op.system_ops`, beside the namespaces

__all__ = ["Expr", "array", "create_op_call", "get_op", "system", "system_ops", "tensor", "tile"]
