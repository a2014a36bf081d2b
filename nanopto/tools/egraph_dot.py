"""Draw the inlining e-graph at saturation: Graphviz DOT from egglog's serialized e-graph.

egglog's `EGraph.serialize(...).to_json()` is the source: every e-node with its op, its children
(e-node ids) and its e-class. We draw it the way the egglog papers do: one cluster per e-class,
one box per e-node, an edge from an e-node to each child's e-class. Primitive values (strings,
integers) are written inside the e-node that uses them instead of getting clusters of their own,
the `:unextractable` helper terms (`SubEx`, `Body`, `Arg`, ...) are dimmed and dashed, and a
subsumed e-node (a spliced call, a projected `tmp[i]`) is greyed out, so the picture shows what
extraction may still choose.

A large e-graph is cut to `max_nodes` e-nodes per stage, whole e-classes at a time in breadth-first
order from the roots; the picture then says so in red ("showing N of M e-nodes ..."), never
silently. `render_svg` runs Graphviz `dot` offline.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph import StageReport
from nanopto.passes.inlining import InlineFunctions
from nanopto.passes.inlining.stage import Stage
from nanopto.passes.pass_base import Pass
from nanopto.terms.inlining import HELPER_CONSTRUCTORS
from nanopto.tools.files import write_whole_file

DEFAULT_MAX_NODES = 300
"""E-nodes drawn per stage by default: enough for every shipped example (the largest stage has
about 130), small enough that `dot` lays the picture out in about a second."""

HELPER_OPS = frozenset(c.name for c in HELPER_CONSTRUCTORS)
"""The `:unextractable` helper constructors; drawn dimmed because extraction never picks them."""

CUT_HINT = "pass --egraph-max-nodes to raise"


class EGraphOutputError(Exception):
    """The e-graph picture cannot be written as asked (unknown suffix, no Graphviz, dot failed)."""


@dataclass(frozen=True)
class ENode:
    id: str
    op: str
    children: tuple[str, ...]
    eclass: str
    subsumed: bool


@dataclass(frozen=True)
class SerializedEGraph:
    """egglog's serialized e-graph, checked and typed: e-nodes by id, e-classes in first-seen order."""

    nodes: dict[str, ENode]
    classes: dict[str, list[str]]
    class_types: dict[str, str]
    _primitive: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    """`is_primitive`'s answers so far: the views ask once per edge."""

    @staticmethod
    def from_json(text: str) -> SerializedEGraph:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
            raise ValueError("not an egglog serialized e-graph: expected an object with a 'nodes' map")
        nodes: dict[str, ENode] = {}
        classes: dict[str, list[str]] = {}
        for node_id, raw in data["nodes"].items():
            try:
                node = ENode(
                    node_id,
                    str(raw["op"]),
                    tuple(str(c) for c in raw["children"]),
                    str(raw["eclass"]),
                    bool(raw.get("subsumed", False)),
                )
            except (KeyError, TypeError) as exc:
                raise ValueError(f"e-node {node_id!r} of the serialized e-graph lacks {exc}") from None
            nodes[node_id] = node
            classes.setdefault(node.eclass, []).append(node_id)
        for node in nodes.values():
            for child in node.children:
                if child not in nodes:
                    raise ValueError(f"e-node {node.id!r} has child {child!r}, which is not in the e-graph")
        class_data = data.get("class_data") or {}
        types = {c: str((class_data.get(c) or {}).get("type", "?")) for c in classes}
        return SerializedEGraph(nodes, classes, types)

    def is_primitive(self, eclass: str) -> bool:
        """A class of literal values (egglog names their e-nodes `primitive-...`): drawn inline."""
        known = self._primitive.get(eclass)
        if known is None:
            known = all(self.nodes[i].id.startswith("primitive-") and not self.nodes[i].children for i in self.classes[eclass])
            self._primitive[eclass] = known
        return known


@dataclass(frozen=True)
class EGraphSnapshot:
    """One saturation's e-graph, with a title saying which pass, functions and sites it holds."""

    title: str
    egraph: SerializedEGraph
    pass_name: str = "inline-functions"
    """The pass whose saturation this is (the views group the pictures by pass)."""
    new_nodes: frozenset[str] = frozenset()
    """E-nodes drawn as new (green), such as those one iteration added (the book's figures)."""
    rows: int | None = None
    """Set when the e-graph was too large to serialize whole: its rows; egglog then kept a few
    e-nodes per constructor and stood `[...]` for the rest (`EGraphCollector.max_rows`)."""


@dataclass
class EGraphCollector:
    """A PassContext `egraph_observer` that keeps every saturation's serialized e-graph: each
    InlineFunctions stage (shown as `(stage, egraph, report)`) and each rewrite pass of the
    user's (shown as `(pass, egraph, report)`), in the order the pipeline ran them."""

    snapshots: list[EGraphSnapshot] = field(default_factory=list)
    max_rows: int | None = None
    """An e-graph of more rows is serialized cut, `calls_when_cut` e-nodes per constructor: its
    whole serialization would take longer than the run (seconds per 100,000 rows), and a picture
    shows a few hundred e-nodes anyway. None: always whole."""
    calls_when_cut: int = 60

    def __call__(self, source: Stage | Pass, egraph: eb.EGraph, report: StageReport) -> None:
        cut = self.max_rows is not None and report.egraph_rows > self.max_rows
        calls = self.calls_when_cut if cut else None
        serialized = SerializedEGraph.from_json(egraph.serialize([], max_calls_per_function=calls).to_json())
        rows = report.egraph_rows if cut else None
        if isinstance(source, Stage):
            functions = ", ".join(fn.name for fn in source.functions)
            numbers = [site.number for site in source.sites]
            sites = f"site {numbers[0]}" if len(numbers) == 1 else f"sites {numbers[0]}-{numbers[-1]}"
            number = 1 + sum(s.pass_name == InlineFunctions.name for s in self.snapshots)
            title = f"stage {number}: {functions} ({sites}, {report.iterations} iterations)"
            self.snapshots.append(EGraphSnapshot(title, serialized, rows=rows))
            return
        matches = sum(report.matches.values())
        title = f"pass {source.name}: every function ({matches} matches, {report.iterations} iterations)"
        self.snapshots.append(EGraphSnapshot(title, serialized, source.name, rows=rows))


# ---------------------------------------------------------------------------------------------
# Choosing what to draw
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """The e-classes drawn for one snapshot and what was left out."""

    classes: list[str]
    shown_nodes: int
    total_nodes: int
    total_classes: int

    @property
    def cut(self) -> bool:
        return len(self.classes) < self.total_classes

    def note(self) -> str:
        return (
            f"showing {self.shown_nodes} of {self.total_nodes} e-nodes "
            f"({len(self.classes)} of {self.total_classes} e-classes); {CUT_HINT}"
        )


def _class_children(egraph: SerializedEGraph, eclass: str) -> Iterable[str]:
    for node_id in egraph.classes[eclass]:
        for child in egraph.nodes[node_id].children:
            yield egraph.nodes[child].eclass


def select_classes(egraph: SerializedEGraph, max_nodes: int) -> Selection:
    """Whole non-primitive e-classes, breadth-first from the roots, until one does not fit `max_nodes`.

    Roots first are the `Root` classes (the functions being rewritten), then every other class no
    e-node points at (the helper templates), then the rest in e-graph order (cycles), so a cut
    picture keeps the part of the program nearest the top.
    """
    drawn = [c for c in egraph.classes if not egraph.is_primitive(c)]
    pointed = {child for c in drawn for child in _class_children(egraph, c) if child != c}
    roots = [c for c in drawn if any(egraph.nodes[i].op == "Root" for i in egraph.classes[c])]
    is_root = set(roots)
    order = roots + [c for c in drawn if c not in pointed and c not in is_root] + drawn
    seen: set[str] = set()
    queue: deque[str] = deque()
    chosen: list[str] = []
    shown = 0
    total = sum(len(egraph.classes[c]) for c in drawn)
    for start in order:
        if start in seen:
            continue
        seen.add(start)
        queue.append(start)
        while queue:
            eclass = queue.popleft()
            size = len(egraph.classes[eclass])
            if shown + size > max_nodes:  # the picture is a prefix of this order: stop at the first miss
                return Selection(chosen, shown, total, len(drawn))
            chosen.append(eclass)
            shown += size
            for child in _class_children(egraph, eclass):
                if child not in seen and not egraph.is_primitive(child):
                    seen.add(child)
                    queue.append(child)
    return Selection(chosen, shown, total, len(drawn))


# ---------------------------------------------------------------------------------------------
# Writing DOT
# ---------------------------------------------------------------------------------------------

_SPAN_STRING = re.compile(r'^"(\d+):(\d+)(?:\+\d+\+\d+)?:.*"$')


def _quote(*lines: str, left: bool = False) -> str:
    """A DOT string literal; several lines are joined with DOT's `\\n` (centred) or `\\l` (left)."""
    escaped = [line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") for line in lines]
    if left:
        return '"' + "".join(line + "\\l" for line in escaped) + '"'
    return '"' + "\\n".join(escaped) + '"'


def _literal(op: str) -> str:
    """A primitive as it appears in a label; source spans `"15:12:file.py"` shorten to `@15:12`."""
    match = _SPAN_STRING.match(op)
    if match:
        return f"@{match.group(1)}:{match.group(2)}"
    return op if len(op) <= 24 else op[:21] + '..."'


def node_label(egraph: SerializedEGraph, node: ENode) -> str:
    """`Var("t", ·, 1)`: primitives written in place, other children as `·` (an edge each)."""
    if not node.children:
        return node.op
    args = []
    for child in node.children:
        child_node = egraph.nodes[child]
        args.append(_literal(child_node.op) if egraph.is_primitive(child_node.eclass) else "·")
    return f"{node.op}({', '.join(args)})"


def _node_style(node: ENode, new: bool = False) -> str:
    if new:
        return 'style="rounded,filled,bold", fillcolor="#dff5e1", color="#2e7d32", tooltip="new in this iteration"'
    if node.subsumed:
        return 'style="rounded,filled,dotted", fillcolor="#e8e8e8", fontcolor="#8a8a8a", tooltip="subsumed"'
    if node.op == "Root":  # helper too, but it names the function being rewritten
        return 'style="rounded,filled,bold", fillcolor="#fff3c4", tooltip="the body of a function being rewritten"'
    if node.op in HELPER_OPS:
        return 'style="rounded,dashed", color="#9aa5b1", fontcolor="#6b7785", tooltip="unextractable helper"'
    return 'style="rounded,filled", fillcolor="#ffffff"'


_CLASS_FILL = {"St": "#eaf2fb", "SL": "#e6f4ea", "Ex": "#fdf0e6", "ExL": "#f6eafa", "Ty": "#f0f0f0"}


def _snapshot_lines(index: int, snapshot: EGraphSnapshot, max_nodes: int) -> tuple[list[str], Selection]:
    egraph = snapshot.egraph
    selection = select_classes(egraph, max_nodes)
    chosen = set(selection.classes)
    prefix = f"s{index}_"
    title = [snapshot.title, selection.note()] if selection.cut else [snapshot.title]
    lines = [
        f"  subgraph cluster_{prefix}stage {{",
        f"    label={_quote(*title, left=True)};",
        '    labeljust="l"; fontsize=13; style="rounded"; color="#c0c6cc";',
    ]
    if selection.cut:
        lines.append('    fontcolor="#c62828";')
    elided = False
    edges: list[str] = []
    for eclass in selection.classes:
        ctype = egraph.class_types.get(eclass, "?")
        cid = _cluster_id(prefix, eclass)
        lines.append(f"    subgraph {cid} {{")
        fill = _CLASS_FILL.get(ctype, "#f4f4f4")
        lines.append(
            f'      label={_quote(eclass)}; fontsize=9; fontcolor="#7a8590"; '
            f'style="rounded,filled"; fillcolor="{fill}"; color="#b8c0c8";'
        )
        for node_id in egraph.classes[eclass]:
            node = egraph.nodes[node_id]
            lines.append(f"      {_quote(prefix + node_id)} [label={_quote(node_label(egraph, node))}, {_node_style(node, node_id in snapshot.new_nodes)}];")
            for position, child in enumerate(node.children):
                target = egraph.nodes[child].eclass
                if egraph.is_primitive(target):
                    continue
                attrs = [f'label="{position}"'] if len(node.children) > 1 else []
                if target not in chosen:
                    elided = True
                    head = _quote(prefix + "elided")
                    attrs += ["style=dashed", 'color="#c62828"']
                else:
                    head = _quote(prefix + egraph.classes[target][0])
                    if target != eclass:  # an edge into its own cluster cannot be clipped to it
                        attrs.append(f"lhead={_cluster_id(prefix, target)}")
                edges.append(f"  {_quote(prefix + node_id)} -> {head} [{', '.join(attrs)}];")
        lines.append("    }")
    if elided:
        lines.append(
            f'    {_quote(prefix + "elided")} [label={_quote("e-classes not shown", f"({CUT_HINT})")}, '
            'shape=note, style=filled, fillcolor="#ffebee", color="#c62828", fontcolor="#c62828"];'
        )
    lines.append("  }")
    return lines + edges, selection


def _cluster_id(prefix: str, eclass: str) -> str:
    return "cluster_" + prefix + re.sub(r"\W", "_", eclass)


def cut_notes(snapshots: Sequence[EGraphSnapshot], max_nodes: int) -> list[str]:
    """One line per stage whose picture `max_nodes` cuts (empty when everything is drawn)."""
    notes = []
    for index, snapshot in enumerate(snapshots):
        selection = select_classes(snapshot.egraph, max_nodes)
        if selection.cut:
            notes.append(f"stage {index + 1}: {selection.note()}")
    return notes


def egraph_dot(
    snapshots: Sequence[EGraphSnapshot], max_nodes: int = DEFAULT_MAX_NODES, heading: str | None = None
) -> str:
    """The DOT text of every stage's e-graph, each cut to `max_nodes` e-nodes with a visible note;
    `heading` replaces the picture's default title."""
    if max_nodes < 1:
        raise ValueError(f"--egraph-max-nodes must be at least 1, got {max_nodes}")
    body: list[str] = []
    for index, snapshot in enumerate(snapshots):
        body += _snapshot_lines(index, snapshot, max_nodes)[0]
    notes = cut_notes(snapshots, max_nodes)
    if not snapshots:
        heading = "no Inline call sites: nothing was saturated"
    else:
        heading = heading or (
            "e-graph at saturation (one box per e-node, one cluster per e-class; dashed: helper terms, grey: subsumed)"
        )
    header = [
        "digraph egraph {",
        "  compound=true; rankdir=TB; newrank=true;",
        f'  label={_quote(heading, *notes, left=True)}; labelloc="t"; labeljust="l"; fontsize=14;',
        f'  fontname="Helvetica"; fontcolor="{"#c62828" if notes else "#222222"}";',
        '  node [shape=box, fontname="Helvetica", fontsize=11, height=0.3];',
        '  edge [color="#5f6b77", arrowsize=0.6, fontsize=8, fontcolor="#8a95a0"];',
    ]
    if not snapshots:
        header.append('  empty [label="(empty)", shape=plaintext];')
    return "\n".join([*header, *body, "}"]) + "\n"


# ---------------------------------------------------------------------------------------------
# Rendering and writing
# ---------------------------------------------------------------------------------------------


def dot_available() -> bool:
    return shutil.which("dot") is not None


def dot_executable() -> str:
    exe = shutil.which("dot")
    if exe is None:
        raise EGraphOutputError(
            "Graphviz 'dot' is not installed, so the e-graph cannot be rendered as SVG; "
            "write FILE.html (egglog's interactive viewer, no Graphviz needed) or FILE.dot instead "
            "(--egraph out.html, --egraph out.dot), or install Graphviz (apt-get install graphviz)"
        )
    return exe


def render_svg(dot_text: str, timeout: float = 120.0) -> str:
    """Run Graphviz `dot -Tsvg` (offline); a missing or failing `dot` is an EGraphOutputError."""
    exe = dot_executable()
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise EGraphOutputError(
            f"Graphviz 'dot' took more than {timeout:g} s; lower --egraph-max-nodes or write FILE.dot"
        ) from None
    if done.returncode != 0:
        raise EGraphOutputError(f"Graphviz 'dot' failed: {done.stderr.strip() or f'exit code {done.returncode}'}")
    return done.stdout


def check_egraph_path(path: str) -> None:
    """Refuse an `--egraph` file that could not be written, before any work is done."""
    lower = path.lower()
    if lower.endswith((".html", ".htm")):
        return  # egglog's own viewer (tools.egraph_viewer): needs nothing beyond the pip install
    if not lower.endswith((".svg", ".dot", ".gv")):
        raise EGraphOutputError(f"--egraph {path}: the file name must end in .html, .svg or .dot")
    if lower.endswith(".svg"):
        dot_executable()


def write_egraph(path: str, snapshots: Sequence[EGraphSnapshot], max_nodes: int = DEFAULT_MAX_NODES) -> None:
    """Write `path` as DOT (`.dot`, `.gv`) or SVG (`.svg`, rendered with Graphviz)."""
    check_egraph_path(path)
    text = egraph_dot(snapshots, max_nodes)
    if path.lower().endswith(".svg"):
        text = render_svg(text)
    try:
        write_whole_file(path, text)
    except OSError as exc:
        raise EGraphOutputError(f"--egraph {path}: cannot write: {exc.strerror or exc}") from None


def svg_body(svg: str) -> str:
    """The `<svg>` element of a Graphviz SVG document, for embedding in HTML (no XML prolog)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg

