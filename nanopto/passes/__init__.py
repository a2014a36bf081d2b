"""The pass framework: passes with declared IR properties, a context, a registry, a manager.

`from nanopto import passes; passes.inline_functions()(program)` mirrors PyPTO's Python API.
"""

from nanopto.passes.context import (
    CallbackInstrument,
    PassContext,
    PassInstrument,
    VerificationLevel,
    make_roundtrip_instrument,
)
from nanopto.passes.hoist_nested_calls import HoistNestedCalls
from nanopto.passes.infer_tile_memory_space import InferTileMemorySpace, infer_tile_memory_space
from nanopto.passes.inlining import InlineFunctions, inline_functions
from nanopto.passes.pass_base import Pass, PassOptionError, VerificationError
from nanopto.passes.pass_manager import (
    STRATEGY_PIPELINES,
    OptimizationStrategy,
    PassManager,
    PropertyRequirementError,
)
from nanopto.passes.pipeline_spec import PassSpec, PipelineSpecError, format_pipeline, parse_pipeline
from nanopto.passes.registry import (
    PASS_REGISTRY,
    PassRegistry,
    UnknownPassError,
    get_pass,
    list_passes,
    register_pass,
)
from nanopto.passes.rewrite import RewriteRules, rewrite
from nanopto.verify.diagnostics import Diagnostic, DiagnosticSeverity
from nanopto.verify.properties import IRProperty, IRPropertySet, PropertyVerifierRegistry

__all__ = [
    "PASS_REGISTRY",
    "STRATEGY_PIPELINES",
    "CallbackInstrument",
    "Diagnostic",
    "DiagnosticSeverity",
    "HoistNestedCalls",
    "IRProperty",
    "IRPropertySet",
    "InferTileMemorySpace",
    "InlineFunctions",
    "OptimizationStrategy",
    "Pass",
    "PassContext",
    "PassInstrument",
    "PassManager",
    "PassOptionError",
    "PassRegistry",
    "PassSpec",
    "PipelineSpecError",
    "PropertyRequirementError",
    "PropertyVerifierRegistry",
    "RewriteRules",
    "UnknownPassError",
    "VerificationError",
    "VerificationLevel",
    "format_pipeline",
    "get_pass",
    "infer_tile_memory_space",
    "inline_functions",
    "list_passes",
    "make_roundtrip_instrument",
    "parse_pipeline",
    "register_pass",
    "rewrite",
]
