"""InlineFunctions one call site at a time, for `nanopto step` (egglog's slide mode, xdsl-gui's
single rewrite): watch each splice happen, with the rules it fired.

The staging is InlineFunctions' own driver (`driver.run_stages`): the same checks before any
splicing (`driver.inline_helpers`), helpers callee-first by call depth, each helper fully expanded
before anything that calls it, nested calls hoisted first, then the non-Inline functions, each step
held to the rebinding table (`driver.check_step`), and the same typing at the end (`driver.finish`).
The difference is granularity: where the pass saturates all sites of a batch in one e-graph, a
step is one `Stage` with one site. After each step the function is
re-scanned (`find_sites`), so the next site is classified against the program as it now is, which
is the program a reader sees printed. The fresh names can therefore be numbered differently from
`inline_program`'s, but the final program is the same up to alpha-renaming (`nanopto step` checks).

`rule_by_rule=True` goes finer: each step runs its rulesets one egglog iteration at a time and
records the matches of every iteration, and the function as extraction sees it then. Mid-way
through a splice the e-graph holds only helper terms (`SubSL`, `WireAssign`, ...), which are
`:unextractable`, so there is no program to show: `program` is None for such iterations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from nanopto import egraph
from nanopto.egraph import SaturationLimits, StageReport
from nanopto.ir_terms import nodes as n
from nanopto.passes.hoist_nested_calls import hoist_program
from nanopto.passes.inlining.call_graph import inline_functions_of
from nanopto.passes.inlining.call_sites import BindingPolicy, CallSite, bind_argument
from nanopto.passes.inlining.driver import Staging, check_step, finish, inline_helpers, run_stages
from nanopto.rules import INLINE_RULESETS, Ruleset

HOIST_STEP = "hoist nested Inline calls onto their own bindings (hoist-nested-calls)"


@dataclass
class Iteration:
    """One egglog iteration of one ruleset inside a step (`rule_by_rule` mode)."""

    ruleset: str
    matches: dict[str, int]
    updated: bool
    function: n.Function | None
    """The function being rewritten as extraction sees it now; None while only helper terms remain."""

    @classmethod
    def seen(cls, iteration: egraph.Iteration, functions: list[n.Function] | None) -> Iteration:
        return cls(iteration.ruleset, iteration.matches, iteration.updated, functions[0] if functions else None)


@dataclass
class Step:
    """One splice (`site` set) or the final clean-up (`site` None): what fired and the program after."""

    number: int
    site: CallSite | None
    report: StageReport
    program: n.Program
    iterations: list[Iteration] = field(default_factory=list)
    title: str | None = None
    """Overrides the description of a step that is not a splice (the hoisting step)."""

    @property
    def description(self) -> str:
        if self.title is not None:
            return self.title
        if self.site is None:
            return "drop the Inline helpers (every call site is spliced) and type the receivers"
        span = self.site.span
        line = f"line {span.line}" if span is not None else "line ?"
        return f"splice '{self.site.helper}' into '{self.site.caller}' at {line}"


def inline_steps(
    program: n.Program,
    rulesets: Sequence[Ruleset] = INLINE_RULESETS,
    limits: SaturationLimits | None = None,
    *,
    rule_by_rule: bool = False,
    binding_policy: BindingPolicy = bind_argument,
) -> Iterator[Step]:
    """Yield one Step per call site in callee-first order, then the final Step (site None).

    The steps are the pass's own staging driver (`driver.run_stages`) run one site at a time, and
    the last Step's program is what `driver.finish` makes of them: InlineFunctions' result up to the
    names of fresh locals. A program without Inline functions
    yields nothing.
    """
    if not inline_functions_of(program):
        return
    number = 0
    hoisted = hoist_program(program)
    inline = inline_helpers(hoisted)  # refused here as the pass refuses it, before any step
    if hoisted is not program:
        number += 1
        yield Step(number, None, StageReport(), hoisted, title=HOIST_STEP)
        program = hoisted
    current: dict[str, n.Function] = {f.name: f for f in program.function_list}

    def snapshot() -> n.Program:
        return n.Program(program.name, tuple(current[f.name] for f in program.function_list), span=program.span)

    state = Staging()
    stages = run_stages(
        program,
        inline,
        state,
        rulesets=rulesets,
        limits=limits,
        binding_policy=binding_policy,
        one_site_at_a_time=True,
        record_iterations=rule_by_rule,
    )
    while True:
        try:
            run = next(stages)
        except StopIteration as done:
            callers: list[n.Function] = done.value
            break
        (fn,) = run.functions
        before = snapshot()
        current[fn.name] = fn
        after = snapshot()
        # Each step is the pass applied to one site of the program as it now is, so the rebinding
        # table is checked step by step (docs/specification.md, "Argument binding").
        check_step(before, after, run.sites, state)
        number += 1
        iterations = [Iteration.seen(it, functions) for it, functions in run.iterations]
        yield Step(number, run.sites[0], run.report, after, iterations)
    final, _ = finish(program, callers, state, check=False)
    number += 1
    yield Step(number, None, StageReport(), final)


__all__ = ["HOIST_STEP", "Iteration", "Step", "inline_steps"]
