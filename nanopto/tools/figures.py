"""The book's figures, drawn from real runs: `python -m nanopto.tools.figures docs/figures`.

Each figure is Graphviz DOT made here from what nanopto computes, never typed in by hand: the
handles and storage of the `twice` trap are what the reference interpreter holds after each
statement of the real pass's output and of a planted wrong one; the decision diagram's leaves are
what `call_sites.bind_argument` answers for each row of the rebinding table; the e-graph pictures
are the serialized e-graph of the smallest example, loaded from the pass's own replay transcript and
saturated one ruleset iteration at a time; the pipeline figure reads each pass's declared required
and produced properties from the registry. The command writes `NAME.dot` and, where Graphviz `dot`
is installed, `NAME.svg`. Both are committed, so the book needs no Graphviz to read, and
tests/test_figures.py checks that the committed DOT is what the generator makes now.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph import Iteration, SaturationLimits, StageReport, saturate
from nanopto.ir_terms.nodes import AssignStmt, BinaryExpr, Call, Expr, ForStmt, IterArg, Program, Var
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import nodes_of
from nanopto.passes.hoist_nested_calls import HoistNestedCalls
from nanopto.passes.inlining import InlineFunctions, call_sites, inline_functions
from nanopto.passes.inlining.call_graph import inline_functions_of
from nanopto.passes.inlining.rebinding import RebindingRow
from nanopto.passes.inlining.stage import Stage
from nanopto.passes.pass_base import Pass
from nanopto.tools.egraph_dot import EGraphSnapshot, ENode, SerializedEGraph, egraph_dot, render_svg
from nanopto.tools.examples import example_source
from nanopto.tools.planting import never_bind, splice_unchecked
from nanopto.verify.interpreter import interpret

FONT = 'fontname="Helvetica"'


@dataclass(frozen=True)
class Figure:
    """One figure of the book: its file name (without suffix), what it shows, and its DOT text."""

    name: str
    caption: str
    dot: str


def _q(text: str) -> str:
    """A DOT string literal; a newline in `text` becomes DOT's centred line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------------------
# Handles and storage: the twice trap (3A against 4A)
# ---------------------------------------------------------------------------------------------

TWICE = example_source("twice")
"""The specification's `twice` example (docs/specification.md, "Rebinding a parameter"), as shipped."""

A_VALUES = (1.0, 2.0, 3.0, 4.0)


@dataclass(frozen=True)
class HandleState:
    """After one statement: the statement, and each storage (an array object) with the names
    bound to it and its contents; `caller` marks the storage the caller passed in as `a`."""

    statement: str
    storages: tuple[tuple[tuple[str, ...], str, bool], ...]


def _main_lines(program: Program) -> tuple[list[str], list[str], str]:
    """The printed program cut around `main`'s straight-line body: the lines before the body (the
    `def` line without its return annotation), the body's statements, and the returned name."""
    lines = python_print(program).splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def main("))
    head = [*lines[:at], re.sub(r"\) -> .*:$", "):", lines[at])]
    body = [line for line in lines[at + 1 :] if line.strip()]
    if any(not line.startswith(" " * 8) or line.startswith(" " * 9) for line in body):
        raise ValueError("the handle figure draws straight-line bodies only")
    *statements, ret = body
    return head, statements, ret.strip().removeprefix("return ")


def handle_states(program: Program) -> list[HandleState]:
    """Run `main`'s body statement by statement on the interpreter (one run per prefix, each
    returning every name bound so far) and record which names share which storage."""
    head, statements, _ = _main_lines(program)
    names: list[str] = ["a"]
    states: list[HandleState] = []
    for i, statement in enumerate(statements):
        target = re.match(r"\s*(\w+)", statement)
        assert target is not None
        if target.group(1) not in names:
            names.append(target.group(1))
        source = "\n".join([*head, *statements[: i + 1], f"        return {', '.join(names)}"]) + "\n"
        prefix = parse_program(source, "figure.py")
        a = np.array(A_VALUES, np.float32)
        values = interpret(prefix, "main", a)
        objects = values if isinstance(values, tuple) else (values,)
        groups: dict[int, list[str]] = {}
        held: dict[int, np.ndarray] = {}
        for name, obj in zip(names, objects, strict=True):
            groups.setdefault(id(obj), []).append(name)
            held[id(obj)] = obj
        if id(a) not in groups:  # the caller's storage outlives every name bound to it
            groups[id(a)], held[id(a)] = ["(no name)"], a
        storages = tuple(
            sorted(
                ((tuple(group), " ".join(f"{x:g}" for x in held[key]), held[key] is a) for key, group in groups.items()),
                key=lambda storage: not storage[2],  # the caller's storage first, then in binding order
            )
        )
        states.append(HandleState(statement.strip(), storages))
    return states


def handles_figure() -> Figure:
    before = parse_program(TWICE, "twice.py")
    panels = [
        ("planted wrong policy: t substituted by a at its def-site", splice_unchecked(before, never_bind)),
        ("the pass: t is rebound, so it is bound to a fresh local first", inline_functions()(before)),
    ]
    out = [
        "digraph handles {",
        f"  rankdir=LR; newrank=true; {FONT}; fontsize=13; labelloc=t; labeljust=l;",
        '  label="Handles and storage, statement by statement, for a = [1 2 3 4] (the interpreter\'s '
        'arrays; shaded: the caller\'s storage a)\\l";',
        f'  node [{FONT}, fontsize=11]; edge [color="#5f6b77", arrowsize=0.6];',
    ]
    for p, (title, program) in enumerate(panels):
        states = handle_states(program)
        result = interpret(program, "main", np.array(A_VALUES, np.float32))
        out.append(f"  subgraph cluster_p{p} {{")
        verdict = "3A" if np.allclose(result, 3 * np.array(A_VALUES)) else "not 3A"
        caption = f"{title}: main returns {' '.join(f'{x:g}' for x in result)} ({verdict})"
        out.append(f'    label={_q(caption)}; style="rounded"; color="#c0c6cc";')
        previous = None
        for s, state in enumerate(states):
            stmt = f"p{p}s{s}"
            out.append(f'    {stmt} [label={_q(state.statement)}, shape=plaintext, fontname="Courier", fontsize=12];')
            if previous is not None:
                out.append(f"    {previous} -> {stmt} [style=invis];")
            previous = stmt
            row = [stmt]
            for k, (group, contents, caller) in enumerate(state.storages):
                fill = "#fff3c4" if caller else "#ffffff"
                box = f"{stmt}b{k}"
                label = f"{', '.join(group)}\n[{contents}]"
                out.append(f'    {box} [label={_q(label)}, shape=box, style="rounded,filled", fillcolor="{fill}"];')
                row.append(box)
            out.append(f"    {{ rank=same; {'; '.join(row)}; }}")
            for a, b in itertools.pairwise(row):
                out.append(f"    {a} -> {b} [style=invis];")
        out.append("  }")
    out.append("}")
    return Figure(
        "handles-twice",
        "Handles and storage after each statement of the spliced `twice` example: the pass (3A) and a "
        "planted def-site substitution (4A).",
        "\n".join(out) + "\n",
    )


# ---------------------------------------------------------------------------------------------
# The argument-binding decision, with the rebinding table inside it
# ---------------------------------------------------------------------------------------------

DECISION_PROBE = """import nanopto.language as pl


@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32], k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        x = pl.exp(a)
        y = k + 1
        for i, (s,) in pl.range(4, init_values=(k,)):
            r = pl.yield_(s)
        return r
"""


def _probe_actuals() -> dict[str, tuple[Var, Expr]]:
    """One real argument of each kind, read from a parsed program: (a parameter to pair it with,
    the argument)."""
    main = parse_program(DECISION_PROBE, "probe.py").functions["main"]
    stmts = main.body.stmts  # type: ignore[attr-defined]
    a, k = main.param_list[0].var, main.param_list[1].var
    call, expr = stmts[0].value, stmts[1].value
    loop = stmts[2]
    assert isinstance(stmts[0], AssignStmt) and isinstance(call, Call) and isinstance(expr, BinaryExpr)
    assert isinstance(loop, ForStmt) and isinstance(loop.iter_args[0], IterArg)
    return {
        "a call (a[r], pl.exp(x))": (a, call),
        "a Var": (a, a),
        "an expression, a constant or an IterArg": (k, loop.iter_args[0]),
        "scalar expression": (k, expr),
    }


def decision_figure() -> Figure:
    probe = _probe_actuals()
    decide = call_sites.bind_argument

    def leaf(name: str, row: RebindingRow, actual: str) -> str:
        param, expr = probe[actual]
        bind, reason = decide(param, row, expr)
        verdict = "BIND FIRST: p_inline<k> = arg" if bind else "SUBSTITUTE the argument"
        colour = "#fde8e8" if bind else "#e6f4ea"
        return f'  {name} [label={_q(verdict + chr(10) + reason)}, shape=box, style="rounded,filled", fillcolor="{colour}"];'

    rows = {
        RebindingRow.READ_ONLY: "never assigned",
        RebindingRow.SELF_UPDATED_SHAPED: "Tensor / Tile, only proven self-updates\n(t = pl.tensor.assemble(t, ...))",
        RebindingRow.REBOUND_SHAPED: "Tensor / Tile, any other definition\n(t = pl.add(t, t), t = other, a branch or loop result)",
        RebindingRow.ARRAY: "Array",
        RebindingRow.OUT_SCALAR: "explicit pl.Out scalar",
        RebindingRow.REBOUND_SCALAR: "plain scalar that is assigned",
    }
    out = [
        "digraph decision {",
        f"  rankdir=TB; {FONT}; fontsize=13; labelloc=t; labeljust=l;",
        '  label="Argument binding at one call site: the order of the checks, with the rebinding table as '
        "the second one.\\lLeaves: what call_sites.bind_argument answers for that case (its reason, as --trace "
        'prints it).\\l";',
        f'  node [{FONT}, fontsize=11]; edge [{FONT}, fontsize=10, color="#5f6b77", arrowsize=0.6];',
        '  q1 [label="1. Is the argument a call?", shape=diamond, style=filled, fillcolor="#eaf2fb"];',
        '  q2 [label="2. The parameter\'s row: what does the helper\'s\\n(expanded) body do to it?", '
        'shape=diamond, style=filled, fillcolor="#eaf2fb"];',
        '  q3 [label="3. Is the argument an assignable Var\\n(not an expression, a constant or an IterArg)?", '
        'shape=diamond, style=filled, fillcolor="#eaf2fb"];',
        leaf("computed", RebindingRow.READ_ONLY, "a call (a[r], pl.exp(x))"),
        '  q1 -> computed [label="yes"];',
        '  q1 -> q2 [label="no"];',
    ]
    lands_on_caller = [r for r in rows if r.rebinds_caller_var]
    for row, text in rows.items():
        node = row.name.lower()
        out.append(f'  {node} [label={_q(row.name + chr(10) + text)}, shape=box, style="rounded"];')
        out.append(f"  q2 -> {node};")
        if row.binds_local:
            out.append(leaf(f"{node}_leaf", row, "a Var"))
            out.append(f"  {node} -> {node}_leaf;")
        elif row is RebindingRow.READ_ONLY:
            out.append(leaf(f"{node}_leaf", row, "scalar expression"))
            out.append(f"  {node} -> {node}_leaf;")
        else:
            out.append(f"  {node} -> q3;")
    first = lands_on_caller[0]
    out += [
        leaf("caller_var", first, "a Var"),
        leaf("not_assignable", first, "an expression, a constant or an IterArg"),
        '  q3 -> caller_var [label="yes: the rebinding lands on the caller\'s Var"];',
        '  q3 -> not_assignable [label="no: nothing to land on"];',
        '  note [label="Then, for every argument still substituted: is it read after the body may have written\\l'
        "what it reads? Then it is bound too (specification.md, Meaning under aliasing).\\l\", shape=note, "
        'style=filled, fillcolor="#fff8e1"];',
        '  read_only_leaf -> note [style=dashed, arrowhead=none];',
        '  caller_var -> note [style=dashed, arrowhead=none];',
        "}",
    ]
    return Figure(
        "binding-decision",
        "The argument-binding order and the rebinding table as one decision, each leaf as the pass decides it.",
        "\n".join(out) + "\n",
    )


# ---------------------------------------------------------------------------------------------
# The smallest example's e-graph, iteration by iteration
# ---------------------------------------------------------------------------------------------

SINGLE = example_source("single_site")
"""The specification's smallest example (docs/specification.md, "Purpose"), as shipped."""


@dataclass(frozen=True)
class IterationPicture:
    """The serialized e-graph after one ruleset iteration that changed it (index 0: as loaded)."""

    index: int
    title: str
    egraph: SerializedEGraph
    new_nodes: frozenset[str]


def egraph_iterations(source: str = SINGLE) -> list[IterationPicture]:
    """Replay the pass's own stage on `source` (its one caller stage): load its terms and facts,
    then saturate with the pass's rulesets, keeping the e-graph after every iteration that changed
    it. The replay text is the one `EGraphRun.transcript` records for the real run."""
    program = parse_program(source, "single.py")
    helpers = inline_functions_of(program)
    templates = {name: call_sites.make_template(fn) for name, fn in helpers.items()}
    main = program.functions["main"]
    transcript: list[str] = []
    stage = Stage([main], templates, call_sites.find_sites(main, templates, 0), transcript=transcript)
    stage.run(0)
    loading = [line for line in transcript[0].splitlines() if not line.startswith(("(run-schedule", "(extract"))]
    egraph = eb.EGraph()
    egraph.run_program(*egraph.parse_program("\n".join(loading)))

    # A Var's id is a process-wide counter, so the same program has other ids in another process.
    # The picture numbers the program's variables 1, 2, ... in parse order instead, so that it is
    # the same wherever it is made.
    ids = sorted({v.id for fn in program.function_list for v in (*(p.var for p in fn.param_list), *nodes_of(fn.body)) if isinstance(v, Var)})
    numbering = {str(var_id): str(k) for k, var_id in enumerate(ids, start=1)}

    def serialized() -> SerializedEGraph:
        graph = SerializedEGraph.from_json(egraph.serialize([]).to_json())
        nodes = {
            key: ENode(node.id, numbering.get(node.op, node.op), node.children, node.eclass, node.subsumed)
            if key.startswith("primitive-i64-")
            else node
            for key, node in graph.nodes.items()
        }
        return SerializedEGraph(nodes, graph.classes, graph.class_types)

    pictures = [IterationPicture(0, "as loaded: the caller's body, the helper's template and the site's facts", serialized(), frozenset())]
    count = 0

    def keep(graph: eb.EGraph, iteration: Iteration) -> None:
        nonlocal count
        count += 1
        if not iteration.updated:
            return
        now = serialized()
        matched = ", ".join(f"{rule} x{n}" for rule, n in sorted(iteration.matches.items()))
        title = f"after iteration {count} (ruleset {iteration.ruleset}): {matched}"
        new = frozenset(now.nodes) - frozenset(pictures[-1].egraph.nodes)
        pictures.append(IterationPicture(len(pictures), title, now, new))

    saturate(egraph, stage.rulesets, SaturationLimits(), StageReport(), keep)
    return pictures


def egraph_figures() -> list[Figure]:
    pictures = egraph_iterations()
    figures = []
    for picture in pictures:
        snapshot = EGraphSnapshot(picture.title, picture.egraph, new_nodes=picture.new_nodes)
        heading = (
            f"The e-graph of the smallest example, {picture.index} of {len(pictures) - 1}: one box per e-node, "
            "one cluster per e-class; dashed: helper terms, grey: subsumed, green: new in this iteration"
        )
        figures.append(
            Figure(f"egraph-single-{picture.index}", picture.title, egraph_dot([snapshot], heading=heading))
        )
    return figures


# ---------------------------------------------------------------------------------------------
# The pipeline around the pass: the language each pass takes and gives
# ---------------------------------------------------------------------------------------------

LANGUAGES = {
    "L0": (
        "L0: pl as parsed",
        [
            "Program ::= Function+",
            "Function ::= def f(Param*) Body   kind in {Opaque, InCore, Orchestration, Inline, ...}",
            "Stmt ::= x = Expr | Expr | return Expr* | if / for / while / with ... : Stmt+",
            "Expr ::= x | const | Expr op Expr | op(Expr*) | self.g(Expr*) | e[i]",
            "          self.h(Expr*) with h Inline: ANYWHERE an Expr may stand",
        ],
    ),
    "L1": (
        "L1: Inline calls hoisted (NestedCallsHoisted)",
        [
            "L0, except:",
            "Stmt ::= ... | x = self.h(Expr'*) | self.h(Expr'*) | return self.h(Expr'*) | t = self.h(Expr'*); a = t[0] ...",
            "Expr' ::= Expr without self.h(...) for an Inline h",
            "  (left in place: a while condition, init_values, a nested tuple-returning h)",
            "new statements: t__inline_arg_vN = self.h(...), placed before their statement",
        ],
    ),
    "L2": (
        "L2: no Inline (InlineFunctionsEliminated)",
        [
            "L0, except:",
            "Function ::= def f(Param*) Body   kind != Inline",
            "Expr ::= ... without self.h(...) for an Inline h",
            "new variables: <name>_inline<k>, p_inline<k> = arg bound before a copied body",
        ],
    ),
}


def _language_node(key: str) -> str:
    title, grammar = LANGUAGES[key]
    rows = "".join(f'<tr><td align="left"><font face="Courier" point-size="10">{_html(line)}</font></td></tr>' for line in grammar)
    return (
        f'  {key} [shape=plaintext, label=<<table border="1" cellborder="0" cellspacing="2" bgcolor="#f7f9fb" '
        f'color="#9aa5b1"><tr><td align="left"><b>{_html(title)}</b></td></tr>{rows}</table>>];'
    )


def _declared(cls: type[Pass]) -> str:
    required = ", ".join(sorted(p.value for p in cls.required)) or "nothing"
    produced = ", ".join(sorted(p.value for p in cls.produced)) or "nothing"
    return f"requires: {required}\\nproduces: {produced}"


def pipeline_figure() -> Figure:
    out = [
        "digraph pipeline {",
        f"  rankdir=TB; {FONT}; fontsize=13; labelloc=t; labeljust=l;",
        '  label="The passes around InlineFunctions, nanopass style: each pass is an edge from the language it '
        "takes to the language it gives\\l(required and produced properties as the passes declare them)\\l\";",
        f'  node [{FONT}, fontsize=11]; edge [{FONT}, fontsize=10, color="#5f6b77"];',
        _language_node("L0"),
        _language_node("L1"),
        _language_node("L2"),
        f'  L0 -> L1 [label="{HoistNestedCalls.name}\\n{_declared(HoistNestedCalls)}"];',
        *(
            [
                # A pass composed of passes: it runs the hoist itself, then splices.
                '  L1 -> L2 [label="splice every call site\\n(the second step of inline-functions)"];',
                f'  L0 -> L2 [label="{InlineFunctions.name}:\\n{HoistNestedCalls.name}, then splice\\n'
                f'{_declared(InlineFunctions)}", style=bold, color="#1565c0", fontcolor="#1565c0"];',
            ]
            if not InlineFunctions.required
            else [f'  L1 -> L2 [label="{InlineFunctions.name}: splice every call site\\n{_declared(InlineFunctions)}"];']
        ),
        '  later [label="later passes (PyPTO: UnrollLoops, OutlineIncoreScopes, ...)\\nnever see an Inline '
        'function", shape=box, style="rounded,dashed"];',
        "  L2 -> later;",
        "}",
    ]
    return Figure(
        "pipeline-languages",
        "The languages before and after hoist-nested-calls and inline-functions.",
        "\n".join(out) + "\n",
    )


# ---------------------------------------------------------------------------------------------
# All of them
# ---------------------------------------------------------------------------------------------


def figures() -> list[Figure]:
    """Every figure of the book, in the order the pages use them."""
    return [pipeline_figure(), handles_figure(), decision_figure(), *egraph_figures()]


def write_figures(directory: Path, render: bool = True) -> list[Path]:
    """Write each figure's `.dot`, and with `render` its `.svg` (needs Graphviz `dot`)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for figure in figures():
        dot_path = directory / f"{figure.name}.dot"
        dot_path.write_text(figure.dot, encoding="utf-8")
        written.append(dot_path)
        if render:
            svg_path = directory / f"{figure.name}.svg"
            svg_path.write_text(render_svg(figure.dot), encoding="utf-8")
            written.append(svg_path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nanopto.tools.figures", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="where to write NAME.dot and NAME.svg (the book's: docs/figures)")
    parser.add_argument("--dot-only", action="store_true", help="write the DOT text only (no Graphviz needed)")
    args = parser.parse_args(argv)
    for path in write_figures(args.directory, render=not args.dot_only):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Figure", "egraph_iterations", "figures", "handle_states", "write_figures"]
