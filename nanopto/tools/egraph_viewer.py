"""The e-graph picture that needs only the pip install: egglog's own interactive viewer, offline.

egglog's wheel ships its e-graph viewer as one self-contained ES module (`egglog/visualizer.js`,
with `visualizer.css`): `mount(element)` returns `{render(egraphs), unmount()}`, where `egraphs` is
a list of serialized e-graphs as JSON text. It lays the graph out in the browser, so no Graphviz is
needed. This module embeds it in a page with no network access: the module's text sits in a
non-executing `<script type="text/plain">` and is imported from a Blob URL.

What the viewer is given is made readable first (`fold_egraph`):

* literal values (strings, integers, source spans) are written into the e-node that uses them,
  `Var("t", ·, 14)`, instead of getting e-classes of their own;
* the list constructors (`SOne`, `SCat`, `ExCons`, `ExNil`, ...) of a class holding only that one
  list node are folded into their parent: a `Call` points at its arguments, a `SeqStmts` at its
  statements;
* the helper terms the rules reason with (`SubEx`, `Arg`, `Body`, `WireAssign`, ...; see
  `nanopto.terms.inlining`) and the fact relations (`Local`, `Projected`, ...) are hidden, together
  with the terms built on them that no rewrite has turned into IR yet; a switch on the page shows
  the e-graph unfolded, helpers included;
* every e-class a call site's rewriting made is typed `site N`, so the viewer colours the classes
  of one call site alike; the rest keep their sort (`Ex`, `St`, ...).

One picture per saturation (each InlineFunctions stage names its functions and call sites; each
rewrite pass of the user's is one picture of every function), chosen from a menu grouped by pass. `docs/reading-an-egraph.md` explains every constructor a picture can show.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from nanopto.terms.encoding import (
    ANALYSIS_FACTS,
    MAX_GROUP,
    args_constructor,
    group_constructor,
    ir_constructors,
)
from nanopto.terms.inlining import FACT_NAMES, HELPER_CONSTRUCTORS, HELPER_FACTS, INLINE_TERMS, SUBST
from nanopto.tools.egraph_dot import EGraphSnapshot, Selection, SerializedEGraph, select_classes

HIDDEN_OPS = frozenset({c.name for c in HELPER_CONSTRUCTORS} | set(FACT_NAMES))
"""Hidden by default: the `:unextractable` helper terms and the fact relations."""

LIST_OPS = frozenset(
    {"SOne", "SCat", "SCat3", "SNil", "Skip", "ExCons", "ExNil", "TyCons", "TyNil"}
    | {group_constructor(k) for k in range(2, MAX_GROUP + 1)}
    | {args_constructor(k) for k in range(2, MAX_GROUP + 1)}
)
"""List constructors, folded into the node that holds the list."""

SITE_OPS = frozenset({"At", "RVar", "RIterArg", "Arg", *SUBST.values()})
"""Constructors that name a call site (`At` and `Arg` first, the others last)."""

def constructor_notes() -> dict[str, tuple[str, str]]:
    """Every constructor a picture can show -> (group, one-line meaning), for the legend."""
    notes: dict[str, tuple[str, str]] = {}
    for c in ir_constructors():
        group = "list (folded)" if c.name in LIST_OPS else "IR"
        if c.name == "Root":
            group = "IR"
        doc = c.doc or f"the IR node {c.name} ({', '.join(c.args) or 'no fields'}) -> {c.sort}"
        notes[c.name] = (group, doc)
    for c in INLINE_TERMS:
        notes[c.name] = ("inlining", c.doc)
    for c in HELPER_CONSTRUCTORS:
        notes[c.name] = ("helper (hidden)", c.doc)
    for fact in (*HELPER_FACTS, *ANALYSIS_FACTS):
        notes[fact.name] = ("fact (hidden)", fact.doc.replace("`", ""))
    return notes


# ---------------------------------------------------------------------------------------------
# Folding
# ---------------------------------------------------------------------------------------------


def _literal(op: str) -> str:
    """A primitive as written in a label: a span `"15:12:file.py"` shortens to `@15:12`."""
    if op.startswith('"') and op.count(":") >= 2:
        head = op[1:].split(":")
        head[1] = head[1].split("+", 1)[0]  # `line:col+end_line+end_col:file`: the start
        if head[0].isdigit() and head[1].isdigit():
            return f"@{head[0]}:{head[1]}"
    return op if len(op) <= 24 else op[:21] + '..."'


def class_sites(egraph: SerializedEGraph) -> dict[str, int]:
    """E-class -> the call site whose rewriting made it (a class holding a node naming that site)."""
    sites: dict[str, int] = {}
    for node in egraph.nodes.values():
        if node.op not in SITE_OPS or not node.children:
            continue
        position = 0 if node.op in ("At", "Arg") else -1
        child = egraph.nodes[node.children[position]]
        if egraph.is_primitive(child.eclass) and child.op.lstrip("-").isdigit():
            sites.setdefault(node.eclass, int(child.op))
    return sites


def _sort(egraph: SerializedEGraph, eclass: str, sites: dict[str, int]) -> str:
    return f"site {sites[eclass]}" if eclass in sites else egraph.class_types.get(eclass, "?")


def _type_text(egraph: SerializedEGraph, eclass: str) -> str:
    """A type class written into its user's label: `Tensor[FP32]`, `INDEX`, `?` (unknown)."""
    nodes = [egraph.nodes[i] for i in egraph.classes[eclass] if egraph.nodes[i].op not in HIDDEN_OPS]
    if not nodes:
        return "·"
    node = nodes[0]
    names = [egraph.nodes[c].op.strip('"') for c in node.children if egraph.is_primitive(egraph.nodes[c].eclass)]
    if node.op == "TUnknown":
        return "?"
    if node.op == "TScalar":
        return names[0] if names else "Scalar"
    kind = node.op[1:] if node.op.startswith("T") else node.op
    return f"{kind}[{', '.join(names)}]" if names else kind


def full_egraph(egraph: SerializedEGraph, shown: Collection[str] | None = None) -> dict[str, Any]:
    """The e-graph as egglog serialized it (primitives kept as classes), typed by call site;
    `shown`: only these non-primitive classes (and the literals they use), edges out of them cut."""
    sites = class_sites(egraph)
    keep = None if shown is None else set(shown)

    def kept(eclass: str) -> bool:
        return keep is None or eclass in keep or egraph.is_primitive(eclass)

    nodes = {
        i: {"op": nd.op, "children": [c for c in nd.children if kept(egraph.nodes[c].eclass)], "eclass": nd.eclass, "subsumed": nd.subsumed}
        for i, nd in egraph.nodes.items()
        if kept(nd.eclass)
    }
    classes = {nd["eclass"] for nd in nodes.values()}
    return {"nodes": nodes, "class_data": {c: {"type": _sort(egraph, c, sites)} for c in egraph.classes if c in classes}}


def fold_egraph(egraph: SerializedEGraph, shown: Collection[str] | None = None) -> dict[str, Any]:
    """The readable picture: literals in labels, lists folded, helper terms hidden (module doc).

    `shown` limits the picture to those non-primitive e-classes (a cut picture, `viewer_stages`):
    an argument in a class left out is written `…` and gets no edge. Linear in the e-graph.
    """
    sites = class_sites(egraph)
    keep = None if shown is None else set(shown)
    inline_type = {c for c, t in egraph.class_types.items() if t in ("Ty", "TyL")}  # written into their users' labels

    def cut(eclass: str) -> bool:
        return keep is not None and eclass not in keep and not egraph.is_primitive(eclass)

    kept = {
        i
        for i, nd in egraph.nodes.items()
        if nd.op not in HIDDEN_OPS
        and not egraph.is_primitive(nd.eclass)
        and nd.eclass not in inline_type
        and not cut(nd.eclass)
    }
    # A term built on a hidden class is a rewrite still pending (or one that a rule replaced): it
    # goes too, until every kept node's children are in classes that keep a node. A worklist over
    # the reverse edges makes this one pass over the e-graph.
    live_count: dict[str, int] = {}
    for i in kept:
        eclass = egraph.nodes[i].eclass
        live_count[eclass] = live_count.get(eclass, 0) + 1
    users: dict[str, list[str]] = {}

    def needs(child_class: str) -> bool:
        return not egraph.is_primitive(child_class) and child_class not in inline_type and not cut(child_class)

    for i in kept:
        for c in egraph.nodes[i].children:
            child_class = egraph.nodes[c].eclass
            if needs(child_class):
                users.setdefault(child_class, []).append(i)
    dead = [c for c in users if live_count.get(c, 0) == 0]
    while dead:
        for user in users.get(dead.pop(), ()):
            if user in kept:
                kept.discard(user)
                eclass = egraph.nodes[user].eclass
                live_count[eclass] -= 1
                if live_count[eclass] == 0:
                    dead.append(eclass)
    by_class: dict[str, list[str]] = {}
    for i in egraph.nodes:  # in e-graph order, so each class's first member is its oldest
        if i in kept:
            by_class.setdefault(egraph.nodes[i].eclass, []).append(i)

    def foldable(eclass: str) -> bool:
        members = by_class.get(eclass, [])
        return len(members) == 1 and egraph.nodes[members[0]].op in LIST_OPS

    def flat_children(node_id: str, seen: frozenset[str]) -> tuple[list[str], list[str]]:
        """(child node ids to point at, literal labels) of a node, folding list classes."""
        targets: list[str] = []
        labels: list[str] = []
        for child in egraph.nodes[node_id].children:
            eclass = egraph.nodes[child].eclass
            if egraph.is_primitive(eclass):
                labels.append(_literal(egraph.nodes[child].op))
            elif eclass in inline_type:
                labels.append(_type_text(egraph, eclass))
            elif eclass not in by_class:  # cut from the picture
                labels.append("…")
            elif foldable(eclass) and eclass not in seen:
                more, _ = flat_children(by_class[eclass][0], seen | {eclass})
                targets += more
                labels.append("·" * min(len(more), 1) if more else "[]")
            else:
                targets.append(by_class[eclass][0])
                labels.append("·")
        return targets, labels

    nodes: dict[str, Any] = {}
    referenced: set[str] = set()
    for eclass, members in by_class.items():
        for i in members:
            node = egraph.nodes[i]
            targets, labels = flat_children(i, frozenset({eclass}))
            label = node.op if not labels else f"{node.op}({', '.join(labels)})"
            nodes[i] = {"op": label, "children": targets, "eclass": eclass, "subsumed": node.subsumed}
            referenced.update(egraph.nodes[t].eclass for t in targets)
    # A folded list class that something still points at stays; one nothing points at goes.
    for eclass in list(by_class):
        if foldable(eclass) and eclass not in referenced:
            for i in by_class.pop(eclass):
                nodes.pop(i)
    class_data = {c: {"type": _sort(egraph, c, sites)} for c in by_class}
    return {"nodes": nodes, "class_data": class_data}


def cut_note(snapshot: EGraphSnapshot, selection: Selection | None) -> str:
    """What a cut picture leaves out, said in the page (empty when it shows everything)."""
    if snapshot.rows is not None:
        return (
            f"cut: the e-graph has {snapshot.rows} rows; shown are e-nodes of the first few per "
            "constructor ([...] and … stand for the rest)"
        )
    if selection is not None and selection.cut:
        return f"cut: showing {selection.shown_nodes} of {selection.total_nodes} e-nodes, breadth-first from the functions"
    return ""


def viewer_stages(snapshots: Sequence[EGraphSnapshot], max_nodes: int | None = None) -> list[dict[str, Any]]:
    """Per saturation: its title and pass, the folded and the full e-graph (JSON text), the ops
    shown, and, when `max_nodes` (e-nodes per picture) cut it, a note saying so."""
    stages = []
    for snapshot in snapshots:
        egraph = snapshot.egraph
        selection = select_classes(egraph, max_nodes) if max_nodes is not None else None
        shown = selection.classes if selection is not None and selection.cut else None
        folded = fold_egraph(egraph, shown)
        full = full_egraph(egraph, shown)
        note = cut_note(snapshot, selection)
        stages.append(
            {
                "title": snapshot.title,
                "pass": snapshot.pass_name,
                "folded": json.dumps(folded),
                "full": json.dumps(full),
                "ops": sorted({nd.op for nd in egraph.nodes.values() if not nd.id.startswith("primitive-")}),
                "counts": [len(folded["nodes"]), len(full["nodes"])],
                "note": note,
            }
        )
    return stages


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


@cache
def viewer_module() -> tuple[str, str]:
    """(the viewer's JavaScript, its CSS) from egglog's installed wheel."""
    package = resources.files("egglog")
    return (package / "visualizer.js").read_text(encoding="utf-8"), (package / "visualizer.css").read_text(encoding="utf-8")


def _script_text(text: str) -> str:
    """`text` made safe inside a `<script>` element, reversibly (the loader undoes it)."""
    return text.replace("%", "%25").replace("</", "%3C/").replace("<!--", "%3C!--")


_UNESCAPE_JS = "t.replace(/%3C/g, '<').replace(/%25/g, '%')"

VIEWER_CSS = """
.np-eg .eg-bar { display: flex; flex-wrap: wrap; gap: 14px; align-items: center; margin: 6px 0 8px; font-size: 13.5px; }
.np-eg .eg-bar select { font: inherit; padding: 2px 6px; max-width: 60ch; }
.np-eg .eg-view { height: 640px; border: 1px solid #dde3ea; border-radius: 10px; background: #fff;
       resize: vertical; overflow: hidden; position: relative; }
.np-eg .eg-status { color: #66727f; font-size: 12.5px; }
.np-eg details.eg-legend { margin-top: 8px; font-size: 13px; }
.np-eg details.eg-legend table { border-collapse: collapse; }
.np-eg details.eg-legend td { padding: 2px 10px 2px 0; vertical-align: top; }
.np-eg details.eg-legend code { font: 12.5px ui-monospace, "DejaVu Sans Mono", monospace; }
"""

_LOADER = """
(async function () {
  var root = document.getElementById(%(id)s);
  var data = JSON.parse(document.getElementById(%(id)s + '-data').textContent);
  var status = root.querySelector('.eg-status');
  var select = root.querySelector('select');
  var helpers = root.querySelector('input[type=checkbox]');
  var view = root.querySelector('.eg-view');
  try {
    if (!window.__nanoptoViewer) {
      var t = document.getElementById('np-visualizer-js').textContent;
      var url = URL.createObjectURL(new Blob([%(unescape)s], {type: 'text/javascript'}));
      window.__nanoptoViewer = import(url);
    }
    var mod = await window.__nanoptoViewer;
    var mounted = mod.mount(view);
    var show = function () {
      var stage = data[Number(select.value)];
      if (!stage) { status.textContent = 'nothing was saturated'; return; }
      mounted.render([helpers.checked ? stage.full : stage.folded]);
      var n = helpers.checked ? stage.counts[1] : stage.counts[0];
      status.textContent = n + ' e-nodes shown (' + stage.counts[1] + ' unfolded)' + (stage.note ? '; ' + stage.note : '');
      root.dataset.rendered = String(Number(root.dataset.rendered || 0) + 1);
    };
    select.addEventListener('change', show);
    helpers.addEventListener('change', show);
    show();
  } catch (err) {
    status.textContent = 'the e-graph viewer could not start: ' + err;
    root.dataset.error = String(err);
  }
})();
"""


def _legend(ops: Iterable[str]) -> str:
    notes = constructor_notes()
    rows = []
    for op in sorted(set(ops), key=lambda o: (notes.get(o, ("~", ""))[0], o)):
        group, doc = notes.get(op, ("other", "a constructor of a user's rules"))
        rows.append(f"<tr><td><code>{escape(op)}</code></td><td>{escape(group)}</td><td>{escape(doc)}</td></tr>")
    return (
        '<details class="eg-legend"><summary>Legend: what the boxes mean</summary>'
        "<p>Each rounded frame is an e-class (terms proven equal); each box inside it an e-node; an arrow "
        "goes from an e-node to the e-class of each argument. Frames are coloured by the call site whose "
        "rewriting made them (<code>site N</code>) or else by sort (<code>Ex</code> expression, "
        "<code>St</code> statement, <code>SL</code> statement list, <code>ExL</code> expression list, "
        "<code>Ty</code> type). Literal arguments are written in the box (<code>@15:12</code> is a source "
        "line:column). A dimmed box is subsumed: extraction will not pick it. By default the list "
        "constructors are folded and the helper terms hidden; tick <i>show helper terms</i> for the raw "
        "e-graph. See the docs page <i>Reading an e-graph</i>.</p>"
        f"<table>{''.join(rows)}</table></details>"
    )


VIEWER_MAX_NODES = 500
"""E-nodes per picture in the viewer: the browser lays out a few hundred in about a second; a
larger e-graph is cut breadth-first from the functions, and the picture says so."""


def viewer_fragment(
    snapshots: Sequence[EGraphSnapshot],
    element_id: str = "np-egraph",
    *,
    with_module: bool = True,
    max_nodes: int | None = VIEWER_MAX_NODES,
) -> str:
    """The viewer as an HTML fragment: stage menu, helper switch, the picture and its legend.

    `with_module=False` leaves out the 3.7 MB module text, for a page that includes it once
    (`viewer_module_tag`) or loads it another way.
    """
    stages = viewer_stages(snapshots, max_nodes)
    options = _stage_options(stages)
    ops = {op for s in stages for op in s["ops"]}
    data = json.dumps(stages).replace("</", "<\\/").replace("<!--", "<\\u0021--")  # still JSON
    loader = _LOADER % {"id": json.dumps(element_id), "unescape": _UNESCAPE_JS}
    return (
        f'<div class="np-eg" id="{escape(element_id)}">'
        f'<div class="eg-bar"><label>pass and stage <select>{options}</select></label>'
        '<label><input type="checkbox"> show helper terms and lists (the raw e-graph)</label>'
        '<span class="eg-status">loading the e-graph viewer…</span></div>'
        '<div class="eg-view"></div>'
        f"{_legend(ops)}</div>"
        f'<script type="application/json" id="{escape(element_id)}-data">{data}</script>'
        + (viewer_module_tag() if with_module else "")
        + f'<script type="module">{loader}</script>'
    )


def _stage_options(stages: Sequence[dict[str, Any]]) -> str:
    """The stage menu: one group per pass of the pipeline (the user's rewrite passes included),
    the last saturation selected."""
    groups: list[tuple[str, list[str]]] = []
    for i, stage in enumerate(stages):
        selected = " selected" if i == len(stages) - 1 else ""
        option = f'<option value="{i}"{selected}>{escape(stage["title"])}</option>'
        if not groups or groups[-1][0] != stage["pass"]:
            groups.append((stage["pass"], []))
        groups[-1][1].append(option)
    return "".join(f'<optgroup label="{escape(name)}">{"".join(items)}</optgroup>' for name, items in groups)


def viewer_module_tag() -> str:
    """The viewer's module text in a non-executing script tag (imported from a Blob URL)."""
    return f'<script type="text/plain" id="np-visualizer-js">{_script_text(viewer_module()[0])}</script>'


def viewer_css() -> str:
    """The viewer's own CSS then ours: put it in `<head>` before the page's styles, since the
    viewer's stylesheet also styles `body`, which the page's later rules override."""
    return viewer_module()[1] + VIEWER_CSS


def viewer_page(snapshots: Sequence[EGraphSnapshot], title: str) -> str:
    """A standalone page holding only the e-graph viewer (`--egraph FILE.html`)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>e-graph · {escape(title)}</title>"
        f"<style>{viewer_css()}"
        "body { margin: 0; padding: 16px 24px; background: #fbfcfd; "
        "font: 15px/1.45 system-ui, sans-serif; color: #1f2933; } h1 { font-size: 20px; margin: 0 0 8px; }</style>"
        "</head><body>"
        f"<h1>E-graph at saturation <small>{escape(title)}</small></h1>"
        f"{viewer_fragment(snapshots)}</body></html>\n"
    )
