"""PassContext: the configuration every pass reads while it runs (verification level, instruments).

Configuration lives in a context rather than in pass arguments so that a test fixture or the CLI
can turn on printing or turn off verification around code it does not control. The stack is a
`ContextVar`, so each thread (and each asyncio task) sees its own nesting.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from nanopto.ir_terms.nodes import Program

if TYPE_CHECKING:
    from nanopto.passes.pass_base import Pass


class VerificationLevel(enum.Enum):
    """How much a pass checks its own output."""

    NONE = "none"
    """Trust every pass: no property verification, no requirement checks."""

    BASIC = "basic"
    """Verify each produced property that has a verifier; check requirements in a pipeline."""


class PassInstrument(Protocol):
    """A callback pair run around every pass (print-after-all, timing, round-trip checks)."""

    def before_pass(self, pass_: Pass, program: Program) -> None: ...

    def after_pass(self, pass_: Pass, program: Program) -> None: ...


PassCallback = Callable[["Pass", Program], None]


class CallbackInstrument:
    """An instrument made of plain functions, for ad-hoc hooks without a class."""

    def __init__(self, before: PassCallback | None = None, after: PassCallback | None = None) -> None:
        self._before = before
        self._after = after

    def before_pass(self, pass_: Pass, program: Program) -> None:
        if self._before is not None:
            self._before(pass_, program)

    def after_pass(self, pass_: Pass, program: Program) -> None:
        if self._after is not None:
            self._after(pass_, program)


def make_roundtrip_instrument() -> CallbackInstrument:
    """An instrument that prints the program after every pass, parses the text back and asserts
    the two are structurally equal: a pass whose output cannot be written as `pl` source, or reads
    back as another program, fails there. PyPTO's name."""
    from nanopto.ir_terms.parser import parse_program
    from nanopto.ir_terms.printer import python_print
    from nanopto.ir_terms.structural import assert_structural_equal

    def check(pass_: Pass, program: Program) -> None:
        assert_structural_equal(parse_program(python_print(program), f"<after {pass_.name}>"), program)

    return CallbackInstrument(after=check)


_STACK: ContextVar[tuple[PassContext, ...]] = ContextVar("nanopto_pass_context_stack", default=())


class PassContext:
    """`with PassContext([...], VerificationLevel.NONE):` configures passes run inside.

    The arguments are PyPTO's, in its order: the instruments, then the verification level.

    The innermost context wins; outside any `with`, `current()` is the process's root context
    (BASIC, no instruments), so a trace recorded there is kept: `PassContext.root().traces`.
    """

    def __init__(
        self,
        instruments: Iterable[PassInstrument] = (),
        verification_level: VerificationLevel = VerificationLevel.BASIC,
        *,
        egraph_observer: Callable[..., None] | None = None,
        transcript: list[str] | None = None,
    ) -> None:
        if isinstance(instruments, VerificationLevel):
            raise TypeError(
                "PassContext takes the instruments first, then the verification level: "
                f"PassContext([], {instruments}) or PassContext(verification_level={instruments})"
            )
        self.verification_level = verification_level
        self.instruments: tuple[PassInstrument, ...] = tuple(instruments)
        self.traces: list[tuple[str, object]] = []
        """What passes run with `trace=true` recorded here: (pass name, its trace object)."""
        self.egraph_observer = egraph_observer
        """Shown each e-graph at saturation by the passes that saturate one (the CLI's pictures)."""
        self.transcript = transcript
        """When a list, every e-graph run appends the egglog program that replays it (`--emit-egglog`)."""
        self._tokens: list[Token[tuple[PassContext, ...]]] = []

    def __enter__(self) -> PassContext:
        self._tokens.append(_STACK.set((*_STACK.get(), self)))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _STACK.reset(self._tokens.pop())

    @staticmethod
    def current() -> PassContext:
        """The innermost active context, or the root context outside any `with`."""
        stack = _STACK.get()
        return stack[-1] if stack else _ROOT

    @staticmethod
    def root() -> PassContext:
        """The context passes see outside any `with` (one per process, on purpose: it is where a
        trace asked for without a context is kept)."""
        return _ROOT

    def __repr__(self) -> str:
        return f"PassContext({list(self.instruments)!r}, {self.verification_level})"


_ROOT = PassContext()
