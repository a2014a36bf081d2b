"""InlineFunctions as a package: the call graph, call sites and their rebinding rows, templates,
the facts each stage states, the stage driver, and the one-site-at-a-time stepper."""

from nanopto.passes.inlining.driver import (
    InlineFunctions,
    InlineResult,
    callee_first_stages,
    inline_functions,
    inline_program,
)

__all__ = ["InlineFunctions", "InlineResult", "callee_first_stages", "inline_functions", "inline_program"]
