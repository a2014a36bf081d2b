"""Plant a wrong argument-binding policy, to see what the oracles are for.

The book (chapter 3, the lab) and the property tests need the program a *wrong* InlineFunctions
would emit: one that substitutes the caller's variable at a def-site where the rebinding table
says to bind a fresh local. This module is the one place that reaches into the pass to do it, so
that readers use a named, tested hook instead of patching internals themselves.

- `planted_binding_policy(policy)`: while active, InlineFunctions asks `policy` instead of
  `call_sites.bind_argument` whether to bind each argument first. The whole pass still runs, so its
  rebinding checker sees the result (and, for a wrong policy, refuses it).
- `inline_with_policy(program, policy)`: that whole pass (nested calls hoisted first) as one call,
  returning the program, or raising the checker's RebindingCheckError for a wrong policy.
- `splice_unchecked(program, policy)`: the spliced program such a pass would emit, read straight
  from the e-graph without the checker or the produced-property verifier, so the interpreter can
  run it. Only for programs whose helpers call no other helper (one stage).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

from nanopto.ir_terms.nodes import Expr, Function, FunctionType, Program, Var
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining import call_sites
from nanopto.passes.inlining.call_graph import calls_in, inline_functions_of
from nanopto.passes.inlining.driver import inline_program
from nanopto.passes.inlining.rebinding import RebindingRow
from nanopto.passes.inlining.stage import Stage

BindingPolicy = Callable[[Var, RebindingRow, Expr], tuple[bool, str]]
"""`(param, row, actual) -> (bind a fresh local first?, the reason --trace shows)`."""


def never_bind(param: Var, row: RebindingRow, actual: Expr) -> tuple[bool, str]:
    """The classic wrong policy: substitute the caller's expression everywhere, def-sites included."""
    return False, "substituted at the def-site (wrong)"


@contextmanager
def planted_binding_policy(policy: BindingPolicy) -> Iterator[None]:
    """Within the block, InlineFunctions decides argument binding with `policy` (not thread-safe:
    it replaces the module-level decision for the whole process while active)."""
    with mock.patch.object(call_sites, "bind_argument", policy):
        yield


def inline_with_policy(program: Program, policy: BindingPolicy) -> Program:
    """InlineFunctions (nested calls hoisted first) deciding argument binding with `policy`; its
    rebinding checker still runs and refuses what breaks the table."""
    with planted_binding_policy(policy):
        return inline_program(hoist_program(program)).program


def splice_unchecked(program: Program, policy: BindingPolicy = never_bind) -> Program:
    """Every call site of `program` spliced under `policy`, unchecked; the Inline helpers dropped.

    Raises ValueError when a helper calls another helper: that needs callee-first stages, which
    the pass proper (`inline_program`) runs.
    """
    helpers = inline_functions_of(program)
    for helper in helpers.values():
        nested = [call.op for call in calls_in(helper.body) if call.op in helpers]
        if nested:
            raise ValueError(f"splice_unchecked: helper '{helper.name}' calls the helper '{nested[0]}'")
    templates = {name: call_sites.make_template(fn) for name, fn in helpers.items()}
    callers = [fn for fn in program.function_list if fn.func_type is not FunctionType.Inline]
    out: list[Function] = []
    counter = numbered = 0
    with planted_binding_policy(policy):
        for fn in callers:
            sites = call_sites.find_sites(fn, templates, numbered)
            if not sites:
                out.append(fn)
                continue
            numbered += len(sites)
            (spliced,), decoder, _ = Stage([fn], templates, sites).run(counter)
            counter = decoder.counter
            out.append(spliced)
    return Program(program.name, tuple(out))
