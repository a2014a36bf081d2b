"""Diagnostics: what a verifier found, where, and under which rule.

Verifiers return diagnostics as values instead of raising, so a caller can collect every problem
of a program at once and decide what is fatal (the pass manager raises on errors only).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from nanopto.ir_terms.nodes import Span


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"

    # PyPTO spells the members `Error` and `Warning` (its `DiagnosticSeverity`); the aliases make
    # `d.severity == DiagnosticSeverity.Error` read the same in both.
    Error = "error"
    Warning = "warning"


DiagnosticSeverity = Severity
"""PyPTO's name for `Severity`."""


@dataclass(frozen=True)
class Diagnostic:
    """One finding: `rule` names the check (for a property verifier, the property's name)."""

    severity: Severity
    message: str
    span: Span | None
    rule: str
    in_the_input: bool = False
    """The finding is about the program the pass was given, fixable in its source (a call the
    specification leaves in place), not about what the pass did."""

    @property
    def rule_name(self) -> str:
        """PyPTO's name for `rule`."""
        return self.rule

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def line(self) -> int | None:
        return None if self.span is None else self.span.line

    def __str__(self) -> str:
        where = "<unknown location>" if self.span is None else str(self.span)
        return f"{where}: {self.severity.value}[{self.rule}]: {self.message}"
