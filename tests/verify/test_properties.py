"""Property-based tests of InlineFunctions against the reference interpreter (issue 4).

Programs come from `nanopto.verify.strategies.programs()`; the hypothesis profile (tests/conftest.py)
sets the budget: `ci` is fixed and derandomized, `soak` runs thousands of programs.

1. Semantic equivalence: the inlined program computes the same return value and leaves every
   argument buffer (In, Out, InOut tensors and arrays) the same as the original.
2. Nothing Inline survives, and inlining is idempotent.
3. Parse/print and encode/decode round-trips.
4. The properties have teeth: planted wrong variants of the pass are caught within the CI budget
   (without shrinking, which would cost more than the search).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from egglog import String, eq, rule, union
from hypothesis import Phase, given, note, reject, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

import nanopto.passes.evaluation_order as evaluation_order
import nanopto.passes.inlining.call_sites as call_sites
import nanopto.passes.inlining.rebinding as rebinding_module
import nanopto.passes.inlining.tuple_results as tuple_results
from nanopto.egraph import roundtrip_program
from nanopto.ir_terms.nodes import AssignStmt, Call, ForStmt, IterArg, MakeTuple, Program, Var, WhileStmt
from nanopto.ir_terms.ops import OPS
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk, walk_stmts
from nanopto.ir_terms.structural import assert_structural_equal
from nanopto.passes import PassManager, inline_functions
from nanopto.passes.inlining.rebinding import RebindingRow, classify_params
from nanopto.rules import DISCARD, INLINE_RULESETS, Ruleset, declare, var
from nanopto.rules.patterns import sort_class
from nanopto.terms import language as T
from nanopto.terms.encoding import ir_constructors
from nanopto.tools.planting import splice_unchecked
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal
from nanopto.verify.properties import IRProperty, verify_properties
from nanopto.verify.strategies import ENTRY, inputs_for, programs

# `nanopto.passes.inlining` the attribute is the pass factory; the module is needed here.
inline_module = sys.modules["nanopto.passes.inlining.driver"]
hoist_module = sys.modules["nanopto.passes.hoist_nested_calls"]

Inline = Callable[[Program], Program]


def programs_with_inputs(
    *, out_scalars: bool = True, writing_discards: bool = False, aliasing: bool = False
) -> st.SearchStrategy[tuple[Program, tuple[Any, ...]]]:
    drawn = programs(out_scalars=out_scalars, writing_discards=writing_discards, aliasing=aliasing)
    return drawn.flatmap(lambda p: st.tuples(st.just(p), inputs_for(p)))


STEPS = 100_000
"""The interpreter's step budget per run: a drawn program takes a few hundred steps, and a planted
pass that makes a loop run forever (a `while` condition read before its loop) is caught in a
fraction of a second rather than at the default budget's ten million."""


def differences(original: Program, transformed: Program, args: tuple[Any, ...]) -> list[str]:
    """What differs between running `original` and `transformed` on (separate copies of) `args`."""
    before, after = copy.deepcopy(args), copy.deepcopy(args)
    try:
        expected = interpret(original, ENTRY, *before, max_steps=STEPS)
    except InterpreterError as error:
        # A drawn program that is merely long (nested loops over a counter) cannot be judged
        # within the budget: the case is dropped, as `nanopto soak` reports "input does not run".
        # Only the original gets this leniency; a transformed program that runs away still fails.
        if error.reason.startswith("step budget of"):
            reject()
        raise
    actual = interpret(transformed, ENTRY, *after, max_steps=STEPS)
    problems = []
    if not values_equal(expected, actual):
        problems.append(f"return value: expected {expected!r}, got {actual!r}")
    params = original.functions[ENTRY].param_list
    for param, x, y in zip(params, before, after, strict=True):
        if not values_equal(x, y):
            problems.append(f"argument '{param.var.name}' afterwards: expected {x!r}, got {y!r}")
    return problems


# ---------------------------------------------------------------------------------------------
# 1-3: the properties
# ---------------------------------------------------------------------------------------------


@given(programs_with_inputs())
def test_inlining_preserves_meaning_eliminates_inline_functions_and_is_idempotent(case: tuple[Program, tuple[Any, ...]]) -> None:
    """Properties 1 and 2 on the same drawn programs: each draw and each run of the pass serves
    both (drawing and inlining are most of a case's cost)."""
    program, args = case
    inlined = inline_functions()(program)
    note(f"inlined:\n{python_print(inlined)}")
    assert differences(program, inlined, args) == []
    assert verify_properties(inlined, {IRProperty.InlineFunctionsEliminated}) == []
    assert_structural_equal(inline_functions()(inlined), inlined)


def test_inlining_preserves_meaning_under_aliasing_and_most_programs_are_not_refused() -> None:
    """Property 1 on programs drawn to alias and to depend on evaluation order (nested calls
    included, so the default pipeline hoists them first); a refusal passes only as a documented
    hazard. If most drawn programs were refused, the property would test little: the generator is
    steered so that about one in a hundred is (an Array parameter rebound where a later use may
    see either array, one time in eight that trap is drawn; bench/aliasing_soak.py measures the
    rate). Hypothesis draws a program again with other inputs, and a randomized (`dev`) draw
    mutates programs it drew before, a refused one too: refusals come in clusters. So each
    different program counts once, and at most a fifth of those this draw judged may be refused
    (the most seen in 28 `dev` runs: 3 of 30; by draws, 5 of 40 failed the old bound of
    one draw in ten about one run in ten)."""
    refused: dict[str, bool] = {}

    @given(programs_with_inputs(aliasing=True))
    def preserves_meaning(case: tuple[Program, tuple[Any, ...]]) -> None:
        program, args = case
        source = python_print(program)
        try:
            inlined = PassManager.default().run(program)
        except call_sites.InlineError as error:
            assert_documented_refusal(error)
            refused[source] = True
            return
        note(f"inlined:\n{python_print(inlined)}")
        assert differences(program, inlined, args) == []
        # The printed result is a program too: parsed again, it computes the same.
        assert differences(program, parse_program(python_print(inlined)), args) == []
        refused[source] = False

    preserves_meaning()
    count = sum(refused.values())
    assert count <= len(refused) // 5, f"{count} of {len(refused)} different drawn programs refused"


def assert_documented_refusal(error: call_sites.InlineError) -> None:
    """A refusal passes only where the meaning cannot be kept: a hazard of docs/specification.md,
    "Meaning under aliasing" (`error.hazard`), located at its line. Any other refusal of a drawn
    program fails the property."""
    assert error.hazard is not None, f"refused, but not for a documented hazard: {error}"
    assert re.match(r"\S+:\d+:\d+: ", str(error)), f"a refusal without a location: {error}"


LONG = """
import nanopto.language as pl


@pl.program
class Long:
    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        acc = 0
        for i in pl.range(n):
            acc = acc + i
        return acc
"""


def test_a_case_whose_original_runs_out_of_steps_is_dropped_and_a_runaway_result_is_not() -> None:
    """A drawn program that is merely long cannot be judged within `STEPS`: hypothesis drops the
    case. The leniency is the original's alone: a result that runs away where the original did
    not is an error of the pass."""
    long = parse_program(LONG)

    @settings(max_examples=5, database=None, deadline=None)
    @given(st.just((STEPS,)))
    def judged(args: tuple[int]) -> None:
        differences(long, long, args)

    with pytest.raises(Unsatisfiable):
        judged()
    runaway = parse_program(LONG.replace("range(n)", "range(n * 100000)"))
    with pytest.raises(InterpreterError, match="step budget"):
        differences(long, runaway, (10,))


def test_only_a_located_hazard_is_a_documented_refusal() -> None:
    hazard = call_sites.Hazard.ARRAY_REBOUND
    assert_documented_refusal(call_sites.InlineError("p.py:3:9: Inline function 'g' rebinds ...", hazard))
    with pytest.raises(AssertionError, match="not for a documented hazard"):
        assert_documented_refusal(call_sites.InlineError("p.py:3:9: argument 1 of the call ... does not fit"))
    with pytest.raises(AssertionError, match="without a location"):
        assert_documented_refusal(call_sites.InlineError("Inline function 'g' rebinds ...", hazard))


@given(programs())
def test_print_parse_and_encode_decode_roundtrip(program: Program) -> None:
    assert_structural_equal(parse_program(python_print(program)), program)
    assert_structural_equal(roundtrip_program(program), program)


class _EveryRowSeen(Exception):
    """Ends the draw once every row has been seen: the programs after it cannot change the answer."""


def test_programs_cover_every_rebinding_row() -> None:
    """The strategy reaches every row of the table (the Out-scalar row only when asked for) within
    150 programs; the draw stops at the program that completes the set."""
    seen: set[RebindingRow] = set()

    @settings(max_examples=150, derandomize=True, database=None, phases=[Phase.generate], print_blob=False)
    @given(programs(out_scalars=True))
    def collect(program: Program) -> None:
        for fn in program.function_list:
            if fn.name != ENTRY:
                seen.update(classify_params(fn))
        if seen == set(RebindingRow):
            raise _EveryRowSeen

    with contextlib.suppress(_EveryRowSeen):
        collect()
    assert seen == set(RebindingRow)


# ---------------------------------------------------------------------------------------------
# 4: teeth — planted bugs that property 1 must find within the CI budget
# ---------------------------------------------------------------------------------------------

# No shrinking: the test only needs *a* counterexample, and shrinking one costs more than finding it.
TEETH_BUDGET = settings(
    max_examples=40, derandomize=True, database=None, deadline=None, phases=[Phase.generate]
)


class Counterexample(Exception):
    def __init__(self, program: Program, args: tuple[Any, ...]) -> None:
        super().__init__(python_print(program))
        self.program, self.args = program, args


def _reparsed(program: Program) -> Program | None:
    """`program` printed and parsed again; None when the text does not parse."""
    try:
        return parse_program(python_print(program))
    except ValueError:
        return None


def counterexample(
    inline: Inline,
    *,
    errors_count: bool,
    writing_discards: bool = False,
    aliasing: bool = False,
    draws: int | None = None,
) -> tuple[Program, tuple[Any, ...]]:
    """The first drawn (program, inputs) on which `inline` changes meaning: property 1 run under
    the CI budget with `inline` in place of the pass, expected to fail. With `errors_count`, a
    pass that raises counts as a failure of the property too. `draws` seeds another fixed stream of
    programs than the derandomized one (the same every run either way)."""

    @TEETH_BUDGET
    @given(programs_with_inputs(out_scalars=aliasing, writing_discards=writing_discards, aliasing=aliasing))
    def property_1(case: tuple[Program, tuple[Any, ...]]) -> None:
        program, args = case
        try:
            inlined = inline(program)
        except Exception:
            if errors_count:
                raise Counterexample(program, args) from None
            return
        try:
            changed = bool(differences(program, inlined, args))
            if aliasing and not changed:  # the printed result must say the same
                reparsed = _reparsed(inlined)
                changed = reparsed is None or bool(differences(program, reparsed, args))
        except InterpreterError:
            changed = True  # the inlined program no longer runs (a read before any binding, ...)
        if changed:
            raise Counterexample(program, args)

    if draws is not None:  # not a decorator above: their text seeds the derandomized stream
        property_1 = seed(draws)(property_1)
    with pytest.raises(Counterexample) as found:
        property_1()
    return found.value.program, found.value.args


@pytest.fixture
def no_rebinding_checker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The pass checks its own output against the rebinding table; a planted bug must be found by
    the interpreter comparison alone, so that check is switched off."""
    monkeypatch.setattr(inline_module, "check_rebinding", lambda *args: [], raising=False)
    monkeypatch.setattr(hoist_module, "check_hoisted_operands", lambda *args: [], raising=False)
    yield


def test_property_finds_caller_var_substituted_at_def_sites(no_rebinding_checker: None) -> None:
    """Planted bug: every Var argument is substituted for its formal, def-sites included, so a
    helper's `n = n + 1` or `t = pl.add(t, t)` rebinds the caller's name (seed 000's `bump`)."""

    def never_bind_vars(param: Var, row: RebindingRow, actual: Any) -> tuple[bool, str]:
        if isinstance(actual, Var) and not isinstance(actual, IterArg):
            return False, "planted bug: substituted directly"
        return True, "not a Var: bound at the call site"

    program, _ = counterexample(lambda p: splice_unchecked(p, never_bind_vars), errors_count=False)
    print(python_print(program))  # shown with `pytest -s`: the counterexample that was found


def _dropping_discarded_calls() -> Ruleset:
    keep = next(r for r in DISCARD.rules if r.name == "discard-keep-Call")
    d, x, rest, sp = var("d", T.SL), var("x"), var("rest", T.ExL), var("sp", String)
    fields = [var(f"a{i}", sort_class(sort)) for i, sort in enumerate(next(c for c in ir_constructors() if c.name == "Call").args)]
    drop = declare(
        "discard-drop-Call",
        rule(eq(d).to(T.Discard(T.ExCons(x, rest), sp)), eq(x).to(T.Call(*fields))).then(union(d).with_(T.Discard(rest, sp))),
        "planted bug: the call is deleted",
    )
    return Ruleset(DISCARD.name, DISCARD.doc, (*DISCARD.without(keep.name).rules, drop))


def _with_discard(discard: Ruleset) -> Inline:
    rulesets = tuple(discard if rs.name == DISCARD.name else rs for rs in INLINE_RULESETS)
    return lambda program: inline_module.inline_program(program, rulesets=rulesets).program


def test_property_finds_a_deleted_discarded_call(no_rebinding_checker: None) -> None:
    """Planted bug: a discarded `Call` return value is deleted instead of kept as an EvalStmt
    (seed 000, "Discarding a return value"); a helper returning `pl.tensor.assemble(...)` loses
    its write."""
    program, _ = counterexample(_with_discard(_dropping_discarded_calls()), errors_count=False, writing_discards=True)
    print(python_print(program))


def test_property_reports_a_missing_discard_rule(no_rebinding_checker: None) -> None:
    """Without any rule for a discarded Call the e-graph has no extractable body for the site, so
    the pass raises rather than miscompiling; property 1 reports that as a failure."""
    counterexample(_with_discard(DISCARD.without("discard-keep-Call")), errors_count=True)


# The old behaviours under aliasing and evaluation order (docs/08-aliasing-traps.md), planted back.
def _substitute_as_specified(template: Any, bindings: list[Any], *aliases: Any) -> list[Any]:
    return bindings


def _points_of_holders(fn: Any, reads: Any, caller: Any) -> list[Any]:
    """The old placement: a read in a `while` condition taken to be at the `while` statement."""
    holder: dict[int, Any] = {}
    for stmt in walk_stmts(fn.body):
        for node in walk(stmt):
            if id(node) in {id(r) for r in reads} and id(stmt) in caller.points:
                holder[id(node)] = caller.points[id(stmt)]
    return [holder[id(r)] for r in reads]


def _project_at_the_return(stmts: Any, returns: Any, by_reference: Any = ()) -> Any:
    """A returned tuple temporary's elements read at the return, after later statements."""
    if len(returns) == 1 and isinstance(returns[0], Var):
        made = [s for s in stmts if isinstance(s, AssignStmt) and s.var == returns[0] and isinstance(s.value, MakeTuple)]
        if len(made) == 1:
            return tuple(s for s in stmts if s is not made[0]), made[0].value.elements
    return stmts, returns


def _a_view_counts(stmt: AssignStmt) -> bool:
    """The old self-update: an op whose result aliases its argument, written or not (a slice)."""
    value = stmt.value
    if isinstance(value, Call) and not value.function:
        op = OPS.lookup(value.op)
        if op is not None and op.aliases_arg is not None and op.aliases_arg < len(value.args):
            return value.args[op.aliases_arg] == stmt.var
    return REAL_IS_SELF_UPDATE(stmt)


REAL_IS_SELF_UPDATE = rebinding_module.is_self_update


def _without_stand_ins(fn: Any, sites: Any) -> Any:
    return {n: dataclasses.replace(r, stand_in=None) for n, r in _receiver_reads(fn, sites).items()}


_receiver_reads = tuple_results.receiver_reads

OLD_BEHAVIOURS: dict[str, tuple[Any, str, Any]] = {
    "argument-substituted-after-a-write": (call_sites, "bind_disturbed_arguments", _substitute_as_specified),
    "operand-moved-after-a-hoisted-call": (hoist_module, "disturbs_by_helpers", lambda *args: None),
    "returned-value-evaluated-at-its-reads": (tuple_results, "bound_returns", lambda *args: ()),
    "one-receiver-for-two-sites": (tuple_results, "receiver_reads", _without_stand_ins),
    "tuple-temporary-read-at-the-return": (call_sites, "_project_returned_tuple", _project_at_the_return),
    "a-view-counted-as-a-self-update": (rebinding_module, "is_self_update", _a_view_counts),
    "array-rebound-to-another-array": (call_sites, "_rename_rebound_arrays", lambda fn: fn),
    "spmd-body-taken-to-run-once": (evaluation_order, "is_loop", lambda stmt: isinstance(stmt, ForStmt | WhileStmt)),
    "while-condition-read-before-its-loop": (tuple_results, "_read_points", _points_of_holders),
    "out-scalars-distinct-inside-a-helper": (evaluation_order, "may_alias_params", lambda fn: {}),
    "branch-result-left-on-a-loop-name": (inline_module, "write_back_templates", lambda *args: None),
}

DRAWS: dict[str, int] = {
    "spmd-body-taken-to-run-once": 5,
    "while-condition-read-before-its-loop": 2,
}
"""A seeded stream for the two behaviours the derandomized one finds late (at its 29th and 12th
program: 5.4 and 3.9 CPU-s); of the seeds tried (0-11, 0-4), these find them at the 4th program
(0.4 s) and the 4th (2.3 s: its programs loop). The CI budget of 40 programs is unchanged."""


def plant(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, planted: Any) -> list[str]:
    """Replace `module.name` by `planted` wherever nanopto uses it: in `module` and in every module
    that imported it by name (`from ... import name` binds a reference of its own, which patching
    `module` alone would leave in place). Returns the modules patched."""
    original = getattr(module, name)
    patched = []
    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__name__", "").startswith("nanopto") and vars(loaded).get(name) is original:
            monkeypatch.setattr(loaded, name, planted)
            patched.append(loaded.__name__)
    return patched


def test_a_plant_reaches_every_module_that_imported_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    patched = plant(monkeypatch, evaluation_order, "may_alias_params", lambda fn: {})
    assert {"nanopto.passes.evaluation_order", "nanopto.passes.inlining.call_sites", "nanopto.passes.hoist_nested_calls"} <= set(patched)
    assert call_sites.may_alias_params is hoist_module.may_alias_params is evaluation_order.may_alias_params


@pytest.mark.parametrize("behaviour", sorted(OLD_BEHAVIOURS))
def test_property_finds_the_old_aliasing_behaviours(
    behaviour: str, monkeypatch: pytest.MonkeyPatch, no_rebinding_checker: None
) -> None:
    """Each old behaviour, planted back, is found on the aliasing programs within the CI budget."""
    module, name, planted = OLD_BEHAVIOURS[behaviour]
    plant(monkeypatch, module, name, planted)
    program, _ = counterexample(PassManager.default().run, errors_count=False, aliasing=True, draws=DRAWS.get(behaviour))
    print(python_print(program))
