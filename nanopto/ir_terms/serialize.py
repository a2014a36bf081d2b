"""`serialize`/`deserialize`: any IR node (or type) to bytes and back, spans included.

The format is JSON (UTF-8), derived from `schema.fields_of` like the egglog encoding, so a node
added to `nodes.py` serializes without touching this module. A Var is written in full at its first
occurrence and by reference after that, named by its order of occurrence (so equal inputs give
equal bytes); deserializing gives each Var of the data one fresh Var
(a new id), shared by all its occurrences, so the result is structurally equal to the input with
auto-mapping (as PyPTO's round trip is) and never aliases a Var of the running process.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Any

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms import types as t
from nanopto.ir_terms.dtypes import DataType, MemorySpace, PadValue, TensorLayout
from nanopto.ir_terms.schema import NODE_CLASSES, fields_of

FORMAT = "nanopto-ir/1"

_NODES: dict[str, type[n.Node]] = {cls.__name__: cls for cls in NODE_CLASSES}
_TYPES: dict[str, type] = {cls.__name__: cls for cls in t.TYPE_DATACLASSES}
_ENUMS: dict[str, type[enum.Enum]] = {
    cls.__name__: cls
    for cls in (
        DataType,
        MemorySpace,
        n.BinOp,
        n.UnOp,
        n.ForKind,
        n.FunctionType,
        n.ParamDirection,
        n.InlineLanguage,
        t.TileLayout,
        PadValue,
        t.CompactMode,
        TensorLayout,
    )
}

Json = Any
"""A JSON value (what `json.loads` returns)."""


def serialize(node: n.Node | t.Type) -> bytes:
    """`node` as bytes that `deserialize` reads back."""
    return json.dumps({"format": FORMAT, "root": _Writer().value(node)}, separators=(",", ":")).encode()


def deserialize(data: bytes | str) -> Any:
    """The node (or type) that `serialize` wrote, with fresh Vars."""
    document = json.loads(data)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a serialized nanopto IR node (expected format {FORMAT!r})")
    return _Reader().value(document["root"])


def serialize_to_file(node: n.Node | t.Type, path: str | Path) -> None:
    Path(path).write_bytes(serialize(node))


def deserialize_from_file(path: str | Path) -> Any:
    return deserialize(Path(path).read_bytes())


def _span(span: n.Span | None) -> Json:
    return None if span is None else [span.file, span.line, span.col, span.end_line, span.end_col]


class _Writer:
    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        """Var id -> its index in order of first occurrence (what the data names it by)."""

    def value(self, value: object) -> Json:
        if value is None:
            return None
        if isinstance(value, n.Var):
            return self.var(value)
        if isinstance(value, n.Node):
            return self.node(value)
        if type(value).__name__ in _TYPES and dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return {"$type": type(value).__name__, **{k: self.value(v) for k, v in fields.items()}}
        if isinstance(value, (tuple, n.StmtList)):
            return [self.value(v) for v in value]
        if isinstance(value, enum.Enum):
            return {"$enum": type(value).__name__, "name": value.name}
        if isinstance(value, (bool, int, float, str)):
            return str(value) if type(value) is n.OpName else value
        raise TypeError(f"cannot serialize {type(value).__name__}")

    def var(self, var: n.Var) -> Json:
        index = self.seen.get(var.id)
        if index is not None:
            return {"$ref": index}
        index = self.seen[var.id] = len(self.seen)
        out = {"$var": type(var).__name__, "id": index, "name": var.name, "ty": self.value(var.type)}
        if isinstance(var, n.IterArg):
            out["init_value"] = self.value(var.init_value)
        elif isinstance(var, n.WindowBuffer):
            out["base"], out["size"] = self.value(var.base), self.value(var.size)
            out["load_from_host"], out["store_to_host"] = var.load_from_host, var.store_to_host
        out["span"] = _span(var.span)
        return out

    def node(self, node: n.Node) -> Json:
        out: dict[str, Json] = {"$node": type(node).__name__}
        for spec in fields_of(type(node)):
            out[spec.name] = self.value(getattr(node, spec.name))
        out["span"] = _span(node.span)
        if isinstance(node, n.Stmt) and node.comments:
            out["comments"] = list(node.comments)
        if isinstance(node, n.Call) and node.result_type is not None:
            out["result_type"] = self.value(node.result_type)
        return out


class _Reader:
    def __init__(self) -> None:
        self.vars: dict[int, n.Var] = {}

    def value(self, data: Json) -> Any:
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):
            return tuple(self.value(v) for v in data)
        if "$ref" in data:
            return self.vars[data["$ref"]]
        if "$var" in data:
            return self.var(data)
        if "$node" in data:
            return self.node(data)
        if "$type" in data:
            cls = _TYPES[data["$type"]]
            return cls(**{k: self.value(v) for k, v in data.items() if k != "$type"})
        if "$enum" in data:
            return _ENUMS[data["$enum"]][data["name"]]
        raise ValueError(f"unreadable serialized value: {data!r}")

    def var(self, data: Json) -> n.Var:
        ty, span = self.value(data["ty"]), _read_span(data["span"])
        var: n.Var
        if data["$var"] == "IterArg":
            # The init value is read first: a Var it mentions is defined before the IterArg.
            var = n.IterArg(data["name"], ty, self.value(data["init_value"]), span)
        elif data["$var"] == "WindowBuffer":
            base, size = self.value(data["base"]), self.value(data["size"])
            var = n.WindowBuffer(base, size, data["load_from_host"], data["store_to_host"], span)
        else:
            var = n.Var(data["name"], ty, span=span)
        self.vars[data["id"]] = var
        return var

    def node(self, data: Json) -> n.Node:
        cls = _NODES[data["$node"]]
        fields: dict[str, Any] = {spec.name: self.value(data[spec.name]) for spec in fields_of(cls)}
        if "comments" in data:
            fields["comments"] = tuple(data["comments"])
        if "result_type" in data:
            fields["result_type"] = self.value(data["result_type"])
        return cls(**fields, span=_read_span(data["span"]))  # type: ignore[call-arg]


def _read_span(data: Json) -> n.Span | None:
    return None if data is None else n.Span(*data)
