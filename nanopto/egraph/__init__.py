"""The e-graph engine: load term rows, saturate the rulesets it is handed, extract, decode."""

from nanopto.egraph.engine import (
    EGraphRun,
    Iteration,
    IterationObserver,
    SaturationError,
    SaturationLimitError,
    SaturationLimits,
    SaturationObserver,
    StageReport,
    UnextractableError,
    decode_roots,
    egraph_rows,
    extract_roots,
    saturate,
    schedule,
)
from nanopto.egraph.roundtrip import roundtrip_program

__all__ = [
    "EGraphRun",
    "Iteration",
    "IterationObserver",
    "SaturationError",
    "SaturationLimitError",
    "SaturationLimits",
    "SaturationObserver",
    "StageReport",
    "UnextractableError",
    "decode_roots",
    "egraph_rows",
    "extract_roots",
    "roundtrip_program",
    "saturate",
    "schedule",
]
