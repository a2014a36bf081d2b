"""The one e-graph pipeline: load term rows, saturate rulesets, extract each root, decode.

Every user of egglog in nanopto goes through `EGraphRun.rewrite`: InlineFunctions' stages, user
rewrite passes, the stepper (with a per-iteration callback) and the lossless round trip (with no
rules). The engine is handed its declarations and rulesets; it knows nothing of inlining.

The schedule is

    (saturate (seq (run r0) (saturate (run r1)) ... (saturate (run rN))))

run one ruleset iteration at a time so that the limits are checked in between and a callback can
watch each iteration: each round runs the first ruleset once and every other ruleset until it stops
changing the e-graph, and rounds repeat until a whole round changes nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph.extraction import extract_frozen
from nanopto.egraph.selection import RulesText, split_rules_text
from nanopto.ir_terms import nodes as n
from nanopto.rules.ruleset import COST_TABLE, Ruleset
from nanopto.terms.encoding import DagRead, Decoder, cost_table_declarations
from nanopto.terms.term_rows import SPAN, TermRows, load_commands, load_rows, load_table, run_forms


class SaturationError(RuntimeError):
    """egglog rejected the rules or extraction failed: a bug in a rule, not in the user's input."""


class UnextractableError(SaturationError):
    """Extraction found no term for a function body: every form of it was retired (subsumed) or
    deleted. A rewrite pass of the user's reports it against its subsuming rules (a user error)."""


def _quiet_egglog() -> None:
    """egglog's own log lines (an extraction that failed, a warning about a global's name) never
    reach the terminal or a test's output: what went wrong reaches the user as nanopto's error,
    once. The loggers are egglog's (`egglog.*`), forwarded by its Rust core."""
    logger = logging.getLogger("egglog")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


_quiet_egglog()


@dataclass(frozen=True)
class SaturationLimits:
    """Bounds on one saturation run, so a pathological program or a looping rule cannot hang.

    `max_iterations` counts ruleset iterations (one `run` of one ruleset); `max_rows` is the total
    number of e-graph rows; `timeout` is wall-clock seconds. The defaults are far above what the
    inlining rules need (about 10 iterations per nesting level) and low enough to stop quickly.
    """

    max_iterations: int = 10_000
    max_rows: int = 20_000_000
    timeout: float = 300.0


class SaturationLimitError(RuntimeError):
    """A saturation run hit one of its limits before reaching a fixpoint."""

    def __init__(
        self, limit: str, value: float, still_matching: Sequence[str], option: str, rules: Sequence[str] = ()
    ) -> None:
        self.limit = limit
        self.still_matching = tuple(still_matching)
        self.rules = tuple(rules)
        """The rules that matched in the last iteration of those rulesets: the ones to look at."""
        matching = ", ".join(still_matching) or "none"
        firing = f" (rules: {', '.join(rules)})" if rules else ""
        super().__init__(
            f"saturation stopped at the {limit} limit ({value:g}) before reaching a fixpoint; "
            f"rulesets still matching: {matching}{firing}. If the rules are meant to terminate, raise the "
            f"limit ({option}); a ruleset that rewrites forever (e.g. commutativity with a growing "
            "term) never will."
        )


@dataclass
class StageReport:
    """What saturation did: rule matches, iterations, sizes and phase times (seconds)."""

    matches: dict[str, int] = field(default_factory=dict)
    iterations: int = 0
    sites: int = 0
    egraph_rows: int = 0
    times: dict[str, float] = field(default_factory=dict)

    def add(self, other: StageReport) -> None:
        for rule, count in other.matches.items():
            self.matches[rule] = self.matches.get(rule, 0) + count
        self.iterations += other.iterations
        self.sites += other.sites
        self.egraph_rows += other.egraph_rows
        for phase, seconds in other.times.items():
            self.times[phase] = self.times.get(phase, 0.0) + seconds


@dataclass(frozen=True)
class Iteration:
    """One egglog iteration of one ruleset: the rules that matched and whether anything changed."""

    ruleset: str
    matches: dict[str, int]
    updated: bool


IterationObserver = Callable[[eb.EGraph, Iteration], None]
"""Called after every ruleset iteration; it may extract (`extract_roots`) but must not change the e-graph."""
SaturationObserver = Callable[[eb.EGraph, StageReport], None]
"""Called once at saturation, before extraction; it must only read the e-graph."""


def schedule(rulesets: Sequence[Ruleset]) -> str:
    """The schedule `saturate` runs, written as the egglog command it is equivalent to."""
    first, *rest = rulesets
    inner = " ".join(f"(saturate (run {r.name}))" for r in rest)
    return f"(run-schedule (saturate (seq (run {first.name}) {inner})))"


def egraph_rows(egraph: eb.EGraph) -> int:
    sizes = egraph.run_program(eb.PrintSize(SPAN, None))[0]
    assert isinstance(sizes, eb.PrintAllFunctionsSize)
    return sum(size for _, size in sizes.sizes)


def saturate(
    egraph: eb.EGraph,
    rulesets: Sequence[Ruleset],
    limits: SaturationLimits,
    report: StageReport,
    each_iteration: IterationObserver | None = None,
) -> None:
    """Run `schedule(rulesets)` one ruleset iteration at a time, checking the limits in between."""
    if not rulesets:
        return
    started = time.perf_counter()
    first = rulesets[0]
    names = {rule.name for ruleset in rulesets for rule in ruleset.rules}
    owner: dict[str, str] = {}
    """egglog's rule name -> the rule's (the two halves of a birewrite count as one rule): read from
    the rules only for a name that is not a rule's own, since it parses every raw rule's text."""
    still_matching: dict[str, bool] = {}
    """Whether each ruleset's latest iteration changed the e-graph: what a limit error names."""
    last_rules: dict[str, list[str]] = {}
    """The rules each ruleset's latest iteration matched."""
    while True:
        changed = False
        for ruleset in rulesets:
            while True:
                out = egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(ruleset.name))))[0]
                assert isinstance(out, eb.RunScheduleOutput)
                run = out.report
                report.iterations += 1
                matches: dict[str, int] = {}
                for rule, count in sorted(run.num_matches_per_rule.items()):  # egglog's order varies by run
                    if count:
                        if rule not in names and not owner:
                            owner = {egglog: name for r in rulesets for egglog, name in r.egglog_names().items()}
                        name = rule if rule in names else owner.get(rule, rule)
                        matches[name] = matches.get(name, 0) + count
                for rule, count in matches.items():
                    report.matches[rule] = report.matches.get(rule, 0) + count
                if each_iteration is not None:
                    each_iteration(egraph, Iteration(ruleset.name, matches, run.updated))
                changed = changed or run.updated
                still_matching[ruleset.name] = run.updated
                # The ruleset that keeps changing the e-graph is the one to name; a ruleset that
                # only ran earlier in the round has already had its say.
                culprits = [ruleset.name] if run.updated else [k for k, on in still_matching.items() if on]
                last_rules[ruleset.name] = list(matches)
                _check(egraph, limits, report, started, culprits, [r for c in culprits for r in last_rules.get(c, ())])
                if not run.updated or ruleset is first:
                    break
        if not changed:
            return


def _check(
    egraph: eb.EGraph,
    limits: SaturationLimits,
    report: StageReport,
    started: float,
    matching: list[str],
    rules: list[str],
) -> None:
    if report.iterations >= limits.max_iterations:
        raise SaturationLimitError("iteration", limits.max_iterations, matching, "max_iterations=", rules)
    elapsed = time.perf_counter() - started
    if elapsed > limits.timeout:
        raise SaturationLimitError("time", limits.timeout, matching, "timeout= (seconds)", rules)
    if report.iterations % 8 == 0:
        rows = egraph_rows(egraph)
        if rows > limits.max_rows:
            raise SaturationLimitError("e-graph size", limits.max_rows, matching, "max_rows=", rules)


EXTRACTED = frozenset({"Root", "SOne", "SCat"})
"""The constructors extraction names (`extract_roots`, `extract_all_roots`' tree of roots): declared
in every prepared e-graph, whatever a run loads."""

FROZEN_EXTRACTION_ROWS = 8000
"""The e-graph size (rows of every table, at saturation) from which extraction reads the frozen
e-graph (`extraction.extract_frozen`); below it egglog extracts. Freezing copies every table and
the costing is set up per table, a few milliseconds that egglog's extraction of a small e-graph
does not take: on the bench's flat programs (CPU ms, extract + decode, this against egglog) 17.1
against 15.0 at 3,128 rows, 32.2 against 32.3 at 7,778, 1,228 against 1,608 at 310,028
(docs/architecture.md#extraction). Measured again after the numpy costing, as instructions of a
whole flat-program run (cachegrind, PYTHONHASHSEED=0), this less egglog: +17.9 M at 3,128 rows,
-1.8 M at 4,988, +6.1 M at 7,778, -8.0 M at 9,948, -11.2 M at 15,528: the crossover is still
about here."""


def extract_roots(egraph: eb.EGraph, count: int) -> list[eb.ExtractBest]:
    """Extract `(Root 0)` ... `(Root count-1)`: the cheapest term of each root's e-class."""
    commands = [
        eb.Extract(SPAN, eb.Call(SPAN, "Root", [eb.Lit(SPAN, eb.Int(i))]), eb.Lit(SPAN, eb.Int(0)))
        for i in range(count)
    ]
    outputs = egraph.run_program(*commands)
    return [o for o in outputs if isinstance(o, eb.ExtractBest)]


class Extracted(Protocol):
    """An extracted term: `term` in `termdag` (an `eb.ExtractBest` is one; so is a term chosen from
    the frozen e-graph, `extraction.ChosenTerm`, whose DAG is already read)."""

    @property
    def termdag(self) -> eb.TermDag | DagRead: ...

    @property
    def term(self) -> int: ...


@dataclass(frozen=True)
class ExtractedRoot:
    """One root's best term, in a term DAG it shares with the other roots (`extract_all_roots`). Not
    an `eb.ExtractBest`: that holds a copy of its DAG and makes another at every read of `termdag`,
    so 142 roots of one DAG took 560 MB."""

    termdag: eb.TermDag
    term: int


def extract_all_roots(egraph: eb.EGraph, count: int) -> list[Extracted]:
    """What `extract_roots` gives, from one extraction: for a run about to be popped only, since it
    adds a term to the e-graph.

    egglog computes the costs of the whole e-graph for every `extract`, so extracting each root
    apart takes time in their number times the e-graph's size: 4 s for the 142 roots of a 5 MB
    program, 0.1 s for one extraction of them all. That one extraction is of `(SCat (SOne (Root 0))
    (SOne (Root 1)))` (a balanced tree of `SOne`s for more roots): the best term of an `SOne`'s
    child is the best term of that root's e-class, the one `extract_roots` finds. When the
    extracted term is not that tree (a rule made a cheaper equal list) or the extraction fails, the
    roots are extracted one by one, which reports the failing root.
    """
    if count < 2:
        return list(extract_roots(egraph, count))

    def tree(low: int, high: int) -> eb.Call:
        if high - low == 1:
            return eb.Call(SPAN, "SOne", [eb.Call(SPAN, "Root", [eb.Lit(SPAN, eb.Int(low))])])
        middle = (low + high) // 2
        return eb.Call(SPAN, "SCat", [tree(low, middle), tree(middle, high)])

    try:
        (out,) = egraph.run_program(eb.Extract(SPAN, tree(0, count), eb.Lit(SPAN, eb.Int(0))))
    except eb.EggSmolError:
        return list(extract_roots(egraph, count))
    assert isinstance(out, eb.ExtractBest)
    dag, stack = out.termdag, [out.term]  # read once: each read of `termdag` copies it
    bodies: list[int] = []
    while stack:
        node = dag.get(stack.pop())
        if isinstance(node, eb.TermApp) and node.name == "SCat" and len(node.args) == 2:
            stack += reversed(node.args)
        elif isinstance(node, eb.TermApp) and node.name == "SOne" and len(bodies) < count:
            bodies.append(node.args[0])
        else:
            return list(extract_roots(egraph, count))
    if len(bodies) != count:
        return list(extract_roots(egraph, count))
    return [ExtractedRoot(dag, body) for body in bodies]


def extract_by_cost(egraph: eb.EGraph, count: int, tables: frozenset[str]) -> list[Extracted]:
    """Each root's cheapest term where rules set costs (egglog-python's `set_cost`): a term's cost
    is its own (the one a rule set on it, else 1) plus its children's, as egglog's own extraction
    adds them with every constructor costing 1 (docs/your-own-rules.md#costs)."""
    set_costs = {table.removeprefix(COST_TABLE) for table in tables}

    def enode_cost(name: str, args: list[eb.Value]) -> int:
        if name in set_costs:
            cost = egraph.lookup_function(COST_TABLE + name, args)
            if cost is not None:
                return egraph.value_to_i64(cost)
        return 1

    def fold(name: str, own: int, children: list[int]) -> int:
        return own + sum(children)

    # egglog-python's own default model counts in ints too; its stub's `_Cost` protocol rejects `int`.
    model = eb.CostModel(fold, enode_cost, lambda sort, value, elements: sum(elements), lambda sort, value: 1)  # type: ignore[type-var]
    extractor = eb.Extractor(None, egraph, model)  # type: ignore[type-var]
    termdag = eb.TermDag()
    extracted: list[Extracted] = []
    for i in range(count):
        sort, root = egraph.eval_expr(eb.Call(SPAN, "Root", [eb.Lit(SPAN, eb.Int(i))]))
        _, term = extractor.extract_best(egraph, termdag, root, sort)
        extracted.append(ExtractedRoot(termdag, term))
    return extracted


def decode_roots(functions: Sequence[n.Function], extracted: Sequence[Extracted], decoder: Decoder) -> list[n.Function]:
    """Each function with its body replaced by the decoding of its extracted root; params, types
    and attributes stay the very same objects."""
    return [
        dataclasses.replace(fn, body=decoder.decode(out.termdag, out.term))
        for fn, out in zip(functions, extracted, strict=True)
    ]


class PreparedEGraphs:
    """E-graphs with declarations and rules compiled, one per distinct rules text.

    Compiling the ~230 inlining rules costs 0.1-0.2 s; a run happens between `push` and `pop`, so
    the next run (the next stage, or the next pass run in a hypothesis loop) starts from the
    compiled rules with an empty e-graph. This is the one piece of process-wide state the engine
    keeps, on purpose: it is a cache of pure compilation results, bounded to `capacity` entries.
    The cache is per thread: an egglog e-graph may only be used by the thread that made it (the
    playground server runs passes on a worker thread while tests run them on the main one).

    The first run of a rules text compiles only the rules that can fire on the tables it loads
    (`nanopto.egraph.selection`: a third of the inlining rules for a typical program), and only
    the relations and constructors those use; a later run that needs one more compiles them all,
    once. Either way the rules and tables keep their order, and a rule or table left out could
    never have held a match or a row.

    An e-graph is compiled again after `max_uses` runs: egglog keeps about 35 KB per `push`/`pop`
    run that a fresh e-graph does not (the pass soak's RSS grew by 200 MB over 5,000 runs), so
    reuse is bounded; recompiling once per 200 runs costs under a millisecond a run.
    """

    def __init__(self, capacity: int = 8, max_uses: int = 200) -> None:
        self.capacity = capacity
        self.max_uses = max_uses
        self._local = threading.local()

    @property
    def _egraphs(self) -> dict[str, tuple[eb.EGraph, frozenset[int]]]:
        """Rules text -> its e-graph and the rule forms compiled into it."""
        egraphs: dict[str, tuple[eb.EGraph, frozenset[int]]] | None = getattr(self._local, "egraphs", None)
        if egraphs is None:
            egraphs = self._local.egraphs = {}
        return egraphs

    @property
    def _uses(self) -> dict[str, int]:
        uses: dict[str, int] | None = getattr(self._local, "uses", None)
        if uses is None:
            uses = self._local.uses = {}
        return uses

    def get(self, rules: str, populated: Iterable[str] | None = None) -> eb.EGraph:
        """The e-graph of `rules`, with at least the rules that can fire once the tables
        `populated` hold rows (every rule when None)."""
        program = split_rules_text(rules)
        needed = program.every_form if populated is None else program.firing(populated, EXTRACTED)
        uses = self._uses
        uses[rules] = uses.get(rules, 0) + 1
        entry = self._egraphs.get(rules)
        if entry is None:
            entry = self._compile(rules, program, needed)
        elif not needed <= entry[1]:
            uses[rules] = 1
            entry = self._compile(rules, program, program.every_form)
        elif uses[rules] > self.max_uses:
            uses[rules] = 1
            entry = self._compile(rules, program, entry[1])
        return entry[0]

    def _compile(self, rules: str, program: RulesText, chosen: frozenset[int]) -> tuple[eb.EGraph, frozenset[int]]:
        egraph = eb.EGraph()
        try:
            run_forms(egraph, program.kept(chosen))
        except eb.EggSmolError as exc:
            raise SaturationError(f"egglog rejected the rules: {' '.join(str(exc).split())}") from None
        egraphs = self._egraphs
        egraphs.pop(rules, None)
        if len(egraphs) >= self.capacity:
            evicted = next(iter(egraphs))
            del egraphs[evicted]
            self._uses.pop(evicted, None)
        entry = egraphs[rules] = (egraph, chosen)
        return entry


PREPARED = PreparedEGraphs()


@dataclass
class EGraphRun:
    """One configured pipeline: `declarations` (sorts, constructors, load tables) plus `rulesets`,
    run under `limits`; `label` says what for in an egglog error ("inlining", "ruleset(s) x")."""

    declarations: str
    rulesets: Sequence[Ruleset]
    limits: SaturationLimits = field(default_factory=SaturationLimits)
    label: str = "rewriting"
    at_saturation: SaturationObserver | None = None
    each_iteration: IterationObserver | None = None
    transcript: list[str] | None = None
    """When a list, each run appends the egglog program that replays it (`replay_text`)."""
    before_extraction: Sequence[Ruleset] = ()
    """Rulesets run once each after saturation (and after `at_saturation` has seen the e-graph),
    before extraction: they may delete only what extraction could never choose, which it would
    otherwise cost on each of its passes (the inlining stage's `retire`)."""
    may_load: frozenset[str] = frozenset()
    """Tables a later run of the same rules may load besides these rows (the inlining stage's
    statement groups, which grow with the bodies spliced): the first run compiles their rules too,
    so that the next run needs no second compilation (`PreparedEGraphs.get`)."""

    @property
    def cost_tables(self) -> frozenset[str]:
        """The cost tables the rules write (`set_cost`); with any, extraction honours them."""
        return frozenset(table for r in self.rulesets for table in r.cost_tables)

    def rules_text(self) -> str:
        tables = self.cost_tables
        costs = [cost_table_declarations(tables)] if tables else []
        rulesets = (*self.rulesets, *self.before_extraction)
        return "\n".join([self.declarations, *costs, *(r.commands() for r in rulesets)])

    def replay_text(self, rows: TermRows, roots: int) -> str:
        """One run as an egglog program of its own: the declarations and rules, the terms and
        facts, the schedule, and an `extract` per root. `egglog FILE.egg` (or
        `EGraph.parse_program`) replays it without nanopto."""
        parts = [
            f";; {self.label}: {sum(len(t) for t in rows.tables.values())} rows, {roots} root(s)",
            self.rules_text(),
            rows.as_actions(),
            load_commands(),
        ]
        if self.rulesets:
            parts.append(schedule(self.rulesets))
        parts += [f"(run {r.name} 1)" for r in self.before_extraction]
        parts += [f"(extract (Root {i}))" for i in range(roots)]
        return "\n".join(parts) + "\n"

    def rewrite(
        self, functions: Sequence[n.Function], rows: TermRows, decoder: Decoder, report: StageReport
    ) -> list[n.Function]:
        """Load `rows` (which hold each function's body as `(Root i)`), saturate, extract every root
        and decode it: each function with its body replaced, params and attributes untouched."""
        started = time.perf_counter()
        if self.transcript is not None:
            self.transcript.append(self.replay_text(rows, len(functions)))
        text = self.rules_text()
        egraph = PREPARED.get(text, {load_table(table) for table in (*rows.tables, *self.may_load)})
        egraph.run_program(eb.Push(1))
        try:
            load_rows(egraph, rows)
            started = _lap(report, "load", started)
            saturate(egraph, self.rulesets, self.limits, report, self.each_iteration)
            started = _lap(report, "saturate", started)
            size = egraph_rows(egraph)
            report.egraph_rows += size
            if self.at_saturation is not None:
                self.at_saturation(egraph, report)
                started = time.perf_counter()
            for ruleset in self.before_extraction:
                egraph.run_program(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(ruleset.name))))
            tables = self.cost_tables
            extracted = extract_by_cost(egraph, len(functions), tables) if tables else self._extract(egraph, text, len(functions), size)
            started = _lap(report, "extract", started)
        except eb.EggSmolError as exc:
            message = " ".join(str(exc).split())
            error = UnextractableError if "extraction failure" in message else SaturationError
            raise error(f"egglog failed while {self.label}: {message}") from None
        finally:
            egraph.run_program(eb.Pop(SPAN, 1))
        result = decode_roots(functions, extracted, decoder)
        for fn in result:
            if not isinstance(fn.body, n.Stmt):
                raise SaturationError(f"{self.label} turned the body of {fn.name!r} into a non-statement")
        _lap(report, "decode", started)
        return result

    def _extract(self, egraph: eb.EGraph, text: str, count: int, size: int) -> Sequence[Extracted]:
        """Each root's cheapest term, chosen from the frozen e-graph (`extraction`), or by egglog
        when the e-graph is small (`FROZEN_EXTRACTION_ROWS`) or that extractor leaves it to egglog."""
        chosen = extract_frozen(egraph, text, count) if size >= FROZEN_EXTRACTION_ROWS else None
        if chosen is None:
            return extract_all_roots(egraph, count)
        found = [term for term in chosen if term is not None]
        if len(found) < count:
            # egglog's own words for a root with no term, so that the error reads as it always has.
            raise UnextractableError(
                f"egglog failed while {self.label}: extraction failure: "
                '"Unable to find any valid extraction (likely due to subsume or delete)"'
            )
        return found


def _lap(report: StageReport, phase: str, since: float) -> float:
    now = time.perf_counter()
    report.times[phase] = report.times.get(phase, 0.0) + now - since
    return now
