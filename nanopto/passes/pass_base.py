"""The Pass base class: a Program -> Program function that declares the properties it relies on
and establishes, and checks the latter on its own output.

Nanopass: a pass names its input and output language. Here the "language" is a set of
`IRProperty`s, and `Pass.__call__` runs the registered verifier of every produced property, so a
pass that claims more than it does fails loudly at the pass, not three passes later.
"""

from __future__ import annotations

import difflib
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from nanopto.ir_terms.nodes import Program
from nanopto.passes.context import PassContext, VerificationLevel
from nanopto.verify.diagnostics import Diagnostic
from nanopto.verify.properties import IRProperty, VerifyContext, verify_properties

PASS_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
"""Pass names are kebab-case verb phrases: `inline-functions`, `fold-mul-one`."""


class VerificationError(ValueError):
    """A pass returned IR that violates a property it claims to produce."""

    def __init__(self, pass_name: str, diagnostics: Sequence[Diagnostic]) -> None:
        self.pass_name = pass_name
        self.diagnostics = tuple(diagnostics)
        lines = "\n".join(f"  {d}" for d in self.diagnostics)
        headline = (
            f"pass '{pass_name}' cannot process this program as written"
            if self.in_the_input
            else f"pass '{pass_name}' broke the properties it produces"
        )
        super().__init__(f"{headline} ({len(self.diagnostics)} error(s)):\n{lines}")

    @property
    def in_the_input(self) -> bool:
        """Every error is about the input program (fix the source), none about the pass."""
        errors = [d for d in self.diagnostics if d.is_error]
        return bool(errors) and all(d.in_the_input for d in errors)


class PassOptionError(ValueError):
    """A pass option that does not exist or has a value the pass cannot take.

    Options reach a pass from a pipeline spec (`inline-functions{timeout=5}`), a command-line
    flag (`--timeout 5`) or Python (`InlineFunctions(timeout=5)`); all three build the pass, so
    checking in the pass itself gives every route the same rules and the same message."""


def unknown_option_message(pass_name: str, unknown: Sequence[str], known: Sequence[str], origin: str = "") -> str:
    """`pass 'p' has no option 'max_iteration'; did you mean 'max_iterations'? (options: ...)`:
    the option names as the pipeline spec and `nanopto passes` spell them."""
    parts = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    has = ", ".join(sorted(known)) or "none"
    return f"pass {pass_name!r}{origin} has no option {', '.join(parts)}; its options: {has}"


_POSITIVE_INTS = ("max_iterations", "max_rows", "max_output_statements")


def check_limit_options(pass_: Pass) -> None:
    """The checks shared by the passes that take saturation limits (whichever fields they have):
    `trace` a bool, counts positive integers, `timeout` a positive number of seconds."""

    def bad(option: str, wanted: str, value: object) -> PassOptionError:
        return PassOptionError(
            f"bad option for pass '{pass_.name}': {option} must be {wanted}, got {value!r}"
        )

    fields = vars(pass_)
    if "trace" in fields and not isinstance(fields["trace"], bool):
        raise bad("trace", "true or false", fields["trace"])
    for option in _POSITIVE_INTS:
        value = fields.get(option, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise bad(option, "a positive integer", value)
    timeout = fields.get("timeout", 1.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise bad("timeout", "a positive number of seconds", timeout)


@dataclass(frozen=True)
class Pass(ABC):
    """Base of every pass. A subclass is a frozen dataclass whose fields are its options.

    Class-level declarations: `name` (kebab-case), `required` (properties the input must have),
    `produced` (properties the output is verified to have), `invalidated` (properties the pass may
    break; a pipeline stops assuming them). `run` must return a new program and leave its input
    untouched (the IR is immutable, so that is the default).
    """

    name: ClassVar[str] = ""
    required: ClassVar[frozenset[IRProperty]] = frozenset()
    produced: ClassVar[frozenset[IRProperty]] = frozenset()
    invalidated: ClassVar[frozenset[IRProperty]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("name")
        if declared is not None and not PASS_NAME.match(declared):
            raise ValueError(f"pass name {declared!r} of {cls.__qualname__} is not kebab-case")

    @abstractmethod
    def run(self, program: Program) -> Program:
        """The transformation itself, without instruments or verification."""

    def __call__(self, program: Program) -> Program:
        """Run the pass under the active PassContext: instruments around it, then verification."""
        context = PassContext.current()
        for instrument in context.instruments:
            instrument.before_pass(self, program)
        result = self.run(program)
        for instrument in context.instruments:
            instrument.after_pass(self, result)
        if context.verification_level is not VerificationLevel.NONE:
            self.verify_output(program, result)
        return result

    def verify_output(self, before: Program, after: Program) -> None:
        """Raise VerificationError if `after` violates a produced property with a verifier."""
        diagnostics = verify_properties(after, self.produced, context=VerifyContext.between(before, after))
        errors = [d for d in diagnostics if d.is_error]
        if errors:
            raise VerificationError(self.name or type(self).__name__, errors)
