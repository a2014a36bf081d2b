"""PassManager: runs an ordered list of passes and checks that each one's requirements hold.

Nanopass: each pass names its input language. Before a pass runs, every property it requires must
be established, either produced by an earlier pass (and verified there) or verified on the
current program; a pipeline that feeds a pass the wrong language fails naming both.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from nanopto.ir_terms.nodes import Program
from nanopto.passes.context import PassContext, VerificationLevel
from nanopto.passes.pass_base import Pass
from nanopto.passes.pipeline_spec import parse_pipeline
from nanopto.passes.registry import PASS_REGISTRY, PassRegistry
from nanopto.verify.diagnostics import Diagnostic
from nanopto.verify.properties import IRProperty, has_verifier, verify_properties


class OptimizationStrategy(enum.Enum):
    Default = "default"


STRATEGY_PIPELINES: dict[OptimizationStrategy, tuple[str, ...]] = {
    # InlineFunctions runs first so later passes never see Inline functions (docs/specification.md,
    # "Purpose"); it hoists nested calls itself, as its first step.
    OptimizationStrategy.Default: ("inline-functions",),
}
"""Each strategy as registered pass names, resolved when the strategy is built."""


class PropertyRequirementError(ValueError):
    """A pass was scheduled where a property it requires is not established."""

    def __init__(
        self, pass_name: str, prop: IRProperty, reason: str, diagnostics: Sequence[Diagnostic] = ()
    ) -> None:
        self.pass_name = pass_name
        self.property = prop
        self.diagnostics = tuple(diagnostics)
        details = "".join(f"\n  {d}" for d in self.diagnostics)
        super().__init__(f"pass '{pass_name}' requires {prop.name}, but {reason}{details}")


class PassManager:
    """An ordered pipeline of passes; `run` returns the final program, the input is untouched."""

    def __init__(self, passes: Iterable[Pass]) -> None:
        self.passes: tuple[Pass, ...] = tuple(passes)

    @classmethod
    def get_strategy(
        cls,
        strategy: OptimizationStrategy = OptimizationStrategy.Default,
        registry: PassRegistry = PASS_REGISTRY,
    ) -> PassManager:
        """The pipeline of `strategy`, built from the registry now (not at import time)."""
        return cls(registry.get(name) for name in STRATEGY_PIPELINES[strategy])

    @classmethod
    def default(cls) -> PassManager:
        return cls.get_strategy(OptimizationStrategy.Default)

    @classmethod
    def from_pipeline(cls, spec: str, registry: PassRegistry = PASS_REGISTRY) -> PassManager:
        """A manager for a textual spec such as `inline-functions{trace=true},fold-mul-one`."""
        return cls(registry.get(name, **options) for name, options in parse_pipeline(spec))

    @property
    def pass_names(self) -> list[str]:
        return [p.name for p in self.passes]

    def run(self, program: Program) -> Program:
        """Run every pass in order and return the final program."""
        history = self.run_with_history(program)
        return history[-1][1] if history else program

    def run_passes(self, program: Program) -> Program:
        """PyPTO's name for `run`."""
        return self.run(program)

    def run_with_history(self, program: Program) -> list[tuple[str, Program]]:
        """Run every pass; return `(pass name, program after it)` for each pass, in order."""
        checking = PassContext.current().verification_level is not VerificationLevel.NONE
        established: set[IRProperty] = set()
        history: list[tuple[str, Program]] = []
        current = program
        for pass_ in self.passes:
            if checking:
                self._establish(pass_, current, established)
            current = pass_(current)
            established -= pass_.invalidated
            established |= pass_.produced
            history.append((pass_.name, current))
        return history

    @staticmethod
    def _establish(pass_: Pass, program: Program, established: set[IRProperty]) -> None:
        """Make sure each required property holds, verifying the program for the missing ones."""
        for prop in sorted(pass_.required - established, key=lambda p: p.value):
            if not has_verifier(prop):
                raise PropertyRequirementError(
                    pass_.name,
                    prop,
                    "no earlier pass produces it and it has no verifier to establish it",
                )
            errors = [d for d in verify_properties(program, [prop]) if d.is_error]
            if errors:
                raise PropertyRequirementError(
                    pass_.name, prop, "no earlier pass produces it and the program violates it:", errors
                )
            established.add(prop)
