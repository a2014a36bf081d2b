"""Plant a wrong argument-binding policy, to see what the oracles are for.

The book (chapter 3, the lab) and the property tests need the program a *wrong* InlineFunctions
would emit: one that substitutes the caller's variable at a def-site where the rebinding table
says to bind a fresh local. The staging driver takes its binding policy as a parameter
(`inline_program(binding_policy=...)`); this module names the two ways to use it:

- `inline_with_policy(program, policy)`: InlineFunctions deciding argument binding with `policy`.
  The whole pass runs, so its rebinding checker sees the result (and, for a wrong policy, refuses
  it with a RebindingCheckError).
- `splice_unchecked(program, policy)`: the spliced program such a pass would emit, without the
  checker, so the interpreter can run it.
"""

from __future__ import annotations

from nanopto.ir_terms.nodes import Expr, Program, Var
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining.call_sites import BindingPolicy
from nanopto.passes.inlining.driver import inline_program
from nanopto.passes.inlining.rebinding import RebindingRow


def never_bind(param: Var, row: RebindingRow, actual: Expr) -> tuple[bool, str]:
    """The classic wrong policy: substitute the caller's expression everywhere, def-sites included."""
    return False, "substituted at the def-site (wrong)"


def inline_with_policy(program: Program, policy: BindingPolicy) -> Program:
    """InlineFunctions (nested calls hoisted first) deciding argument binding with `policy`; its
    rebinding checker still runs."""
    return inline_program(hoist_program(program), binding_policy=policy).program


def splice_unchecked(program: Program, policy: BindingPolicy = never_bind) -> Program:
    """Every call site of `program` spliced under `policy`, unchecked; the Inline helpers dropped."""
    return inline_program(hoist_program(program), binding_policy=policy, check=False).program


__all__ = ["BindingPolicy", "inline_with_policy", "never_bind", "splice_unchecked"]
