"""Element types and memory spaces of the `pl` language.

Kept apart from the node classes because the parser, the printer, the op registry and the
interpreter all need them and none of them should import the others to get them.
"""

from __future__ import annotations

import enum

import numpy as np


class DataType(enum.Enum):
    """An element type, spelled as in `pl` (`pl.FP32`, `pl.INDEX`, ...)."""

    INT4 = "INT4"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    UINT4 = "UINT4"
    UINT8 = "UINT8"
    UINT16 = "UINT16"
    UINT32 = "UINT32"
    UINT64 = "UINT64"
    FP4 = "FP4"
    FP8 = "FP8"
    FP16 = "FP16"
    FP32 = "FP32"
    BF16 = "BF16"
    HF4 = "HF4"
    HF8 = "HF8"
    BOOL = "BOOL"
    INDEX = "INDEX"
    TASK_ID = "TASK_ID"

    @property
    def is_float(self) -> bool:
        return self.name.startswith(("FP", "BF", "HF"))

    @property
    def is_int(self) -> bool:
        return self.name.startswith(("INT", "UINT")) or self in (DataType.INDEX, DataType.TASK_ID)

    @property
    def int_range(self) -> tuple[int, int]:
        """The smallest and largest value of an integer type (INDEX and TASK_ID are 64-bit signed).
        Looked up: the parser bounds every integer literal by its dtype's range."""
        found = _INT_RANGES.get(self)
        if found is None:
            raise ValueError(f"{self.name} is not an integer type")
        return found

    def _int_range(self) -> tuple[int, int]:
        if self in (DataType.INDEX, DataType.TASK_ID):
            return -(1 << 63), (1 << 63) - 1
        bits = int(self.name.lstrip("UINT"))
        if self.name.startswith("U"):
            return 0, (1 << bits) - 1
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def numpy(self) -> np.dtype[np.generic]:
        """The numpy dtype the reference interpreter computes in (narrow floats widen)."""
        return np.dtype(_NUMPY[self])

    @property
    def bits(self) -> int:
        """How many bits one element takes in memory (a 4-bit type 4, `BOOL` 8, `INDEX` 64)."""
        if self in (DataType.INDEX, DataType.TASK_ID):
            return 64
        if self is DataType.BOOL:
            return 8
        return int(self.name.lstrip("UINTFPBH"))


_NUMPY: dict[DataType, str] = {
    DataType.INT4: "int8",
    DataType.INT8: "int8",
    DataType.INT16: "int16",
    DataType.INT32: "int32",
    DataType.INT64: "int64",
    DataType.UINT4: "uint8",
    DataType.UINT8: "uint8",
    DataType.UINT16: "uint16",
    DataType.UINT32: "uint32",
    DataType.UINT64: "uint64",
    DataType.FP4: "float16",
    DataType.FP8: "float16",
    DataType.FP16: "float16",
    DataType.FP32: "float32",
    DataType.BF16: "float32",
    DataType.HF4: "float16",
    DataType.HF8: "float16",
    DataType.BOOL: "bool",
    DataType.INDEX: "int64",
    DataType.TASK_ID: "int64",
}


_INT_RANGES: dict[DataType, tuple[int, int]] = {dtype: dtype._int_range() for dtype in DataType if dtype.is_int}
"""Each integer dtype's `int_range`."""


class MemorySpace(enum.Enum):
    """Where a tile lives (`pl.Mem.Vec`, ...); `pl.Mem` is an alias of `pl.MemorySpace`."""

    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"


class TensorLayout(enum.Enum):
    """A tensor's storage layout, as an attribute value names it (`pl.TensorLayout.ND`)."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"


class PadValue(enum.Enum):
    """What a read outside a view's valid region gives (`pl.PadValue.zero`)."""

    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class ArgDirection(enum.Enum):
    """How a dispatch hands one argument to the runtime (`pl.adir.input`, ...): PyPTO's per-call
    `arg_directions`. The value is the `pl.adir` spelling."""

    Input = "input"
    Output = "output"
    InOut = "inout"
    OutputExisting = "output_existing"
    NoDep = "no_dep"
    Scalar = "scalar"


_SYMBOL_ENUMS: dict[str, type[enum.Enum]] = {
    "Mem": MemorySpace,
    "MemorySpace": MemorySpace,
    "TensorLayout": TensorLayout,
    "PadValue": PadValue,
}


def register_symbol_enum(prefix: str, cls: type[enum.Enum]) -> None:
    """Let attribute values spelled `pl.<prefix>.<member>` read as members of `cls`."""
    _SYMBOL_ENUMS[prefix] = cls


NAME_TO_DIRECTION: dict[str, ArgDirection] = {direction.value: direction for direction in ArgDirection}
"""`pl.adir.<name>` -> the direction it names (PyPTO's table name)."""
DIRECTION_TO_NAME: dict[ArgDirection, str] = {direction: name for name, direction in NAME_TO_DIRECTION.items()}
"""A direction -> its `pl.adir` name, as the printer writes it."""


def enum_of_symbol(path: str) -> enum.Enum | None:
    """The enum member a `pl` symbol path names (`Mem.Vec`, `FP16`, `adir.input`), or None."""
    prefix, _, name = path.rpartition(".")
    if not prefix:
        return DataType.__members__.get(name)
    if prefix == "adir":
        return NAME_TO_DIRECTION.get(name)
    cls = _SYMBOL_ENUMS.get(prefix)
    return None if cls is None else cls.__members__.get(name)


def symbol_of_enum(member: enum.Enum) -> str:
    """The `pl` symbol path of an enum member, as `enum_of_symbol` reads it back."""
    if isinstance(member, DataType):
        return member.name
    if isinstance(member, MemorySpace):
        return f"Mem.{member.name}"  # spelled as tile annotations spell it
    if isinstance(member, ArgDirection):
        return f"adir.{member.value}"
    return f"{type(member).__name__}.{member.name}"
