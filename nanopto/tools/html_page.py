"""The `--html` page and the notebook views: inlining shown before/after, line by line.

One self-contained HTML document (inline CSS and JavaScript, the e-graph viewer's module text
included; no network), for people learning how inlining by rewriting works:

* before and after side by side; every line inlining produced is coloured by its call site and
  links to the input line it came from (a helper statement, or the call-site line itself for a
  parameter binding or the receiver wiring); hovering it highlights that line;
* the call sites with the rebinding-table row each parameter took;
* the rule trace (matches per rule in schedule order, iterations, phase times);
* the e-graph at saturation, in egglog's own interactive viewer (`egraph_viewer`).

The notebook views (`Program._repr_html_`, `InlineResult._repr_html_`) are fragments of the same
page without script, so they work in untrusted notebooks too.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.printer import python_print
from nanopto.ir_terms.schema import walk
from nanopto.passes.hoist_nested_calls import HoistResult
from nanopto.passes.inlining import InlineResult
from nanopto.passes.inlining.call_sites import CallSite
from nanopto.rules import INLINE_RULESETS
from nanopto.tools.highlight import TOKEN_CSS, highlight_lines, highlighted_block
from nanopto.tools.inline_report import hoisted_record, rule_counts, site_record
from nanopto.tools.line_origins import LineKind, LineOrigin, line_origins, span_lines

if TYPE_CHECKING:
    from nanopto.tools.pipeline_run import PassRun, PipelineRun

PALETTE: tuple[tuple[str, str], ...] = (
    ("#fff1d6", "#e08e00"),
    ("#dcf5e0", "#2b9348"),
    ("#dcecff", "#1f6fd1"),
    ("#f1e2ff", "#8e44ad"),
    ("#ffe0e8", "#d6336c"),
    ("#d6f5f1", "#0f8a80"),
    ("#fde6d5", "#d9480f"),
    ("#e6e8ff", "#4c5fd5"),
)
"""(background, accent) per call site, cycled: light enough to read code on, distinct side by side."""


def site_colours(number: int) -> tuple[str, str]:
    return PALETTE[number % len(PALETTE)]


VIEW_CSS = """
.np { --ink: #1f2933; --muted: #66727f; --rule: #dde3ea; color: var(--ink);
      font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.np * { box-sizing: border-box; }
.np h2 { font-size: 17px; margin: 26px 0 8px; }
.np .legend { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0 4px; }
.np .chip { display: inline-flex; align-items: center; gap: 6px; padding: 3px 10px; border-radius: 999px;
       font-size: 13px; border: 1px solid; cursor: default; white-space: nowrap; }
.np .chip b { font-weight: 650; }
.np .panes { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; }
.np .pane { background: #fff; border: 1px solid var(--rule); border-radius: 10px; overflow: hidden; }
.np .pane h3 { margin: 0; padding: 8px 14px; font-size: 14px; font-weight: 600; background: #f3f6f9;
       border-bottom: 1px solid var(--rule); }
.np .pane h3 small { color: var(--muted); font-weight: 400; margin-left: 6px; }
.np .code { font: 13px/1.55 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; overflow-x: auto;
       padding: 6px 0; }
.np .line { display: flex; white-space: pre; border-left: 4px solid transparent; padding-right: 10px;
       scroll-margin-top: 40vh; transition: background .15s; }
.np .line .no { flex: none; width: 3.2em; text-align: right; padding-right: 12px; color: #a3adb8;
       user-select: none; text-decoration: none; }
.np .line code { font: inherit; flex: 1; white-space: pre !important; background: none; padding: 0; }
.np .line code span, pre.nanopto-code, pre.nanopto-code span { white-space: pre !important; }
.np .line .from { flex: none; margin-left: 14px; font-size: 11.5px; color: var(--muted); text-decoration: none;
       border-bottom: 1px dotted var(--muted); align-self: center; }
.np .line .from:hover { color: var(--ink); }
.np .line.helper { background: #f7f8fa; }
.np .line.helper .no { color: #8a96a3; }
.np .line.hl, .np .line:target { outline: 2px solid #f5b301; outline-offset: -2px; background: #fff6d1 !important; }
.np .line.dim { opacity: .35; }
.np .chunk { content-visibility: auto; min-width: max-content; }
.np .badge { flex: none; margin-left: 12px; font-size: 11px; padding: 0 7px; border-radius: 999px;
       align-self: center; color: #fff; }
.np table { border-collapse: collapse; background: #fff; border: 1px solid var(--rule); border-radius: 8px;
       font-size: 13.5px; }
.np th, .np td { padding: 5px 12px; border-bottom: 1px solid #eef1f4; text-align: left; vertical-align: top; }
.np th { background: #f3f6f9; font-weight: 600; }
.np td code { font: 12.5px ui-monospace, "DejaVu Sans Mono", monospace; background: #f4f6f8; padding: 1px 5px;
       border-radius: 4px; }
.np td.num { text-align: right; font-variant-numeric: tabular-nums; }
.np .bar { display: inline-block; height: 9px; border-radius: 5px; background: #7aa7e0; vertical-align: middle; }
.np .muted { color: var(--muted); }
.np .rows { display: flex; gap: 28px; flex-wrap: wrap; align-items: flex-start; }
.np .egraph { background: #fff; border: 1px solid var(--rule); border-radius: 10px; padding: 8px;
       overflow: auto; max-height: 85vh; }
.np h3.pass { font-size: 14.5px; margin: 16px 0 6px; font-weight: 600; }
.np h3.pass small { color: var(--muted); font-weight: 400; margin-left: 8px; }
.np tr.unfired td { color: #9a3412; background: #fff7ed; }
.np .note ul { margin: 4px 0; padding-left: 20px; }
.np .note { color: #9a3412; background: #fff7ed; border: 1px solid #fed7aa; padding: 8px 12px;
       border-radius: 8px; display: inline-block; }
"""
VIEW_CSS += "".join(
    f".np .chip.c{i} {{ background: {bg}; border-color: {fg}; }} .np .chip.c{i} b {{ color: {fg}; }}\n"
    f".np td.site.c{i} {{ background: {bg}; border-left: 4px solid {fg}; }} .np td.site.c{i} b {{ color: {fg}; }}\n"
    for i, (bg, fg) in enumerate(PALETTE)
)
"""Styles of the views shared by the page and notebook cells, all under `.np`; a site's colours
(its chip, its cell in the sites table) are its class `c<number % 8>`, eight rules rather than
two style attributes a site, which the browser parses one by one (a legend of 10,000 chips)."""

PAGE_CSS = """
body { margin: 0; background: #fbfcfd; }
.nanopto-page header { padding: 18px 28px 10px; border-bottom: 1px solid var(--rule); background: #fff; }
.nanopto-page h1 { margin: 0; font-size: 22px; font-weight: 650; }
.nanopto-page h1 .file { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 500;
       color: var(--muted); font-size: 18px; margin-left: 8px; }
.nanopto-page .summary { margin: 6px 0 0; color: var(--muted); }
.nanopto-page main { padding: 14px 28px 40px; }
.nanopto-page footer { color: var(--muted); font-size: 12.5px; padding: 0 28px 24px; }
"""
"""Styles of the standalone page only (a notebook keeps its own body, header and footer)."""

PAGE_SCRIPT = """
document.querySelectorAll('.line[data-from]').forEach(function (line) {
  var origin = document.getElementById(line.dataset.from);
  if (!origin) return;
  line.addEventListener('mouseenter', function () { origin.classList.add('hl'); });
  line.addEventListener('mouseleave', function () { origin.classList.remove('hl'); });
});
document.querySelectorAll('.chip[data-site]').forEach(function (chip) {
  var lines = document.querySelectorAll('.line');
  chip.addEventListener('mouseenter', function () {
    lines.forEach(function (l) { if (l.dataset.site !== chip.dataset.site) l.classList.add('dim'); });
  });
  chip.addEventListener('mouseleave', function () {
    lines.forEach(function (l) { l.classList.remove('dim'); });
  });
});
document.documentElement.dataset.linked = String(document.querySelectorAll('.line[data-from]').length);
"""
"""Hover an output line to light up its origin; hover a site chip to dim every other site. The
`data-linked` attribute records that the script ran (the browser test reads it)."""


@dataclass(frozen=True)
class InlinePage:
    """What one page shows. `before_text` is the input as shown; `line_of` maps an input-file line
    (as spans give it) to the line of `before_text` showing it (identity when it is the file)."""

    title: str
    before_text: str
    before: n.Program
    after: n.Program
    after_label: str
    result: InlineResult | None
    source: str | None
    egraph_html: str | None
    """The e-graph picture as HTML (`egraph_viewer.viewer_fragment`), or None."""
    egraph_note: str | None
    line_of: Callable[[int], int | None] = lambda line: line
    row_label: Callable[[int], str] = str
    """The number shown beside a row of the before pane: the input-file line it shows, so the
    notebook's printed input is numbered like the file the CLI reads (blank: no statement there)."""
    prefix: str = ""
    head_css: str = ""
    """CSS that must come before the page's own (the e-graph viewer's stylesheet styles `body`)."""
    passes: Sequence[PassRun] | None = None
    """Every pass of the run, for the rule trace of each; None shows `result`'s alone."""


def _shown_line(page: InlinePage, line: int | None) -> str:
    """A source line as every view numbers it: the line of the input file (as the CLI does), also
    in a notebook, whose before pane is the printed input numbered with those lines."""
    return str(line) if line is not None else "?"


def _site_title(page: InlinePage, site: CallSite) -> str:
    line = _shown_line(page, site.span.line if site.span is not None else None)
    return f"site {site.number}: {site.caller} line {line} calls {site.helper}"


def _chip(page: InlinePage, site: CallSite) -> str:
    line = _shown_line(page, site.span.line if site.span is not None else None)
    return (
        f'<span class="chip c{site.number % len(PALETTE)}" data-site="{site.number}">'
        f"<b>site {site.number}</b> {escape(site.caller)}:{line} → {escape(site.helper)}</span>"
    )


def _outer_sites(page: InlinePage) -> list[CallSite]:
    """The sites in the functions that survive (the ones the after pane shows)."""
    if page.result is None:
        return []
    inline = {fn.name for fn in page.before.function_list if fn.func_type is n.FunctionType.Inline}
    return [s for s in page.result.sites if s.caller not in inline]


def _helper_source_lines(before: n.Program) -> set[int]:
    """Input lines of Inline functions (from the def to the last statement), shaded in the before pane."""
    lines: set[int] = set()
    for fn in before.function_list:
        if fn.func_type is not n.FunctionType.Inline or fn.span is None:
            continue
        last = max((x.span.line for x in walk(fn.body) if isinstance(x, n.Stmt) and x.span), default=fn.span.line)
        lines.update(range(fn.span.line, last + 1))
    return lines


PANE_BLOCK_LINES = 200
"""Lines per block of a before/after pane. Each block is laid out only when it scrolls into view
(`content-visibility: auto`): the browser took seconds to lay out thousands of lines at once
(60,000 in the plain panes of a 10,000-site program; 3.4 s for the 4,500 detailed lines of a
900-site one), most of them never looked at."""

LINE_PX = 13 * 1.55
"""The height of one line of a pane (`.np .code`: 13px/1.55), the size a block not yet laid out
takes, so the scroll bar is right before the user gets there."""


def _later(classes: str, height_px: float) -> str:
    """The opening tag of a block after the first: laid out when it scrolls into view
    (`.np .chunk`), `height_px` tall until then. The first block of a pane or legend is laid out
    at once, as everything was: it is where the user looks first, and a script reading the page
    right after it changed finds its text."""
    return f'<div class="{classes}chunk" style="contain-intrinsic-size:auto none auto {height_px:.0f}px">'


def _blocks(rows: Sequence[str]) -> str:
    """A pane's lines (one element each): the first `PANE_BLOCK_LINES` as they are, the rest in
    blocks of that many, each laid out when it scrolls into view (`_later`)."""
    head = "\n".join(rows[:PANE_BLOCK_LINES])
    return head + "".join(
        _later("", len(rows[first : first + PANE_BLOCK_LINES]) * LINE_PX)
        + "\n".join(rows[first : first + PANE_BLOCK_LINES])
        + "</div>"
        for first in range(PANE_BLOCK_LINES, len(rows), PANE_BLOCK_LINES)
    )


def _before_pane(page: InlinePage) -> str:
    p = page.prefix
    texts = highlight_lines(page.before_text)
    outer = {s.number for s in _outer_sites(page)}
    site_rows: dict[int, CallSite] = {}
    for each in page.result.sites if page.result is not None else []:
        at = page.line_of(each.span.line) if each.span is not None else None
        if at is not None:
            site_rows.setdefault(at, each)
    helper_rows = {r for line in _helper_source_lines(page.before) if (r := page.line_of(line)) is not None}
    out = []
    for row, text in enumerate(texts, start=1):
        attrs = f'id="{p}b-L{row}"'
        classes = ["line"]
        extra = ""
        style = ""
        site = site_rows.get(row)
        if site is not None:
            bg, fg = site_colours(site.number)
            attrs += f' data-site="{site.number}" title="{escape(_site_title(page, site))}"'
            extra = f'<span class="badge" style="background:{fg}">site {site.number}</span>'
        if site is not None and site.number in outer:
            style = f' style="background:{bg};border-left-color:{fg}"'
        elif row in helper_rows:
            classes.append("helper")
            attrs += ' title="an Inline function: its lines are copied into each call site"'
        out.append(
            f'<div class="{" ".join(classes)}" {attrs}{style}><a class="no" href="#{p}b-L{row}">{page.row_label(row)}</a>'
            f"<code>{text}</code>{extra}</div>"
        )
    return _blocks(out)


def _origin_text(page: InlinePage, origin: LineOrigin, sites: dict[int, CallSite]) -> str:
    site = sites.get(origin.site) if origin.site is not None else None
    where = _site_title(page, site) if site is not None else "an inlined call site"
    if origin.kind is LineKind.SPLICED:
        return f"{where}: spliced from {origin.helper} line {_shown_line(page, origin.source_line)}"
    return f"{where}: {origin.kind.value}"


def _after_pane(page: InlinePage, after_text: str) -> str:
    p = page.prefix
    texts = highlight_lines(after_text)
    origins: dict[int, LineOrigin] = {}
    sites: dict[int, CallSite] = {}
    if page.result is not None:
        origins = line_origins(page.before, page.after, after_text, page.result.sites, page.result.provenance)
        sites = {s.number: s for s in page.result.sites}
    out = []
    for row, text in enumerate(texts, start=1):
        origin = origins.get(row)
        if origin is None:
            out.append(f'<div class="line" id="{p}a-L{row}"><span class="no">{row}</span><code>{text}</code></div>')
            continue
        target = page.line_of(origin.source_line)
        bg, fg = site_colours(origin.site if origin.site is not None else 0)
        style = f"background:{bg};border-left-color:{fg}" if origin.site is not None else ""
        site_attr = f' data-site="{origin.site}"' if origin.site is not None else ""
        kind = origin.kind.name.lower()
        shown = _shown_line(page, origin.source_line)
        label = f"{origin.helper}:{shown}" if origin.kind is LineKind.SPLICED else f"{kind} @ {shown}"
        link = ""
        from_attr = ""
        if target is not None:
            from_attr = f' data-from="{p}b-L{target}"'
            link = f'<a class="from" href="#{p}b-L{target}">← {escape(label)}</a>'
        out.append(
            f'<div class="line {kind} s{origin.site}" id="{p}a-L{row}"{site_attr}{from_attr} style="{style}" '
            f'title="{escape(_origin_text(page, origin, sites))}"><span class="no">{row}</span>'
            f"<code>{text}</code>{link}</div>"
        )
    return _blocks(out)


def _panes(page: InlinePage, after_text: str | None = None) -> str:
    after_text = python_print(page.after) if after_text is None else after_text
    return (
        '<section class="panes">'
        f'<div class="pane" id="{page.prefix}before"><h3>before<small>{escape(page.title)}</small></h3>'
        f'<div class="code">{_before_pane(page)}</div></div>'
        f'<div class="pane" id="{page.prefix}after"><h3>after<small>{escape(page.after_label)}</small></h3>'
        f'<div class="code">{_after_pane(page, after_text)}</div></div>'
        "</section>"
    )


def _hoisted_table(page: InlinePage) -> str:
    """The bindings hoist-nested-calls added, each with its reason (nothing when there are none)."""
    hoisted = [
        hoisted_record(h) for run in page.passes or () if isinstance(run.trace, HoistResult) for h in run.trace.hoisted
    ]
    if not hoisted:
        return ""
    rows = []
    for h in hoisted:
        line = h["line"]
        target = page.line_of(line) if line is not None else None
        where = f'<a href="#{page.prefix}b-L{target}">line {line}</a>' if target is not None else f"line {line}"
        rows.append(
            f"<tr><td>{escape(h['function'])}, {where}</td><td><code>{escape(h['binding'])}</code></td>"
            f'<td class="muted">{escape(h["reason"])}</td></tr>'
        )
    return (
        f'<h2 id="{page.prefix}hoisted">Nested calls hoisted</h2>'
        "<table><tr><th>where</th><th>binding added</th><th>why</th></tr>" + "".join(rows) + "</table>"
    )


def _sites_table(page: InlinePage) -> str:
    """Each call site with its form and each parameter's rebinding-table row (the playground's page
    builds the same table from the site records: `sitesTable` in playground/playground.js)."""
    result = page.result
    if result is None or not result.sites:
        return '<p class="muted">No Inline call sites: the program is unchanged.</p>'
    # The sites table of a large program repeats a few names and reasons tens of thousands of times.
    escaped = functools.cache(escape)
    rows = []
    for site in result.sites:
        record = site_record(result, site, page.source)
        line = record["line"]
        target = page.line_of(line) if line is not None else None
        where = f'<a href="#{page.prefix}b-L{target}">line {line}</a>' if target is not None else f"line {line}"
        bindings = []
        for b in record["bindings"]:
            if b["bind_local"]:
                how = f"bound to fresh local <code>{escaped(b['local'] or '?')}</code> = <code>{escaped(b['actual'])}</code>"
            else:
                how = f"replaced by <code>{escaped(b['actual'])}</code>"
            bindings.append(
                f"<tr><td><code>{escaped(b['param'])}</code></td><td>{escaped(b['row_text'])}</td>"
                f"<td>{how}</td><td class=\"muted\">{escaped(b['reason'])}</td></tr>"
            )
        for r in record["bound_returns"]:
            bindings.append(
                f"<tr><td>returned value {r['index']}</td><td></td><td>bound to a fresh local at the call</td>"
                f"<td class=\"muted\">{escaped(r['reason'])}</td></tr>"
            )
        table = (
            "<table><tr><th>parameter</th><th>rebinding-table row</th><th>binding</th><th>why</th></tr>"
            + "".join(bindings)
            + "</table>"
            if bindings
            else '<span class="muted">no parameters</span>'
        )
        rows.append(
            f'<tr><td class="site c{site.number % len(PALETTE)}"><b>{site.number}</b></td>'
            f"<td>{escaped(site.caller)}, {where}</td><td><code>{escaped(record['statement'])}</code></td>"
            f"<td><code>{escaped(site.helper)}</code></td><td>{escaped(record['form_text'])}</td><td>{table}</td></tr>"
        )
    return (
        "<table><tr><th>site</th><th>caller</th><th>statement</th><th>helper</th><th>form</th>"
        "<th>parameters</th></tr>" + "".join(rows) + "</table>"
    )


def _rules_tables(result: InlineResult | None) -> str:
    if result is None or not result.sites:
        return '<p class="muted">No rule ran: there was nothing to inline.</p>'
    counts = rule_counts(result)
    rules = {r.name: (rs.name, r) for rs in INLINE_RULESETS for r in rs.rules}
    top = max(counts.values(), default=1)
    rows = []
    for name, count in counts.items():
        ruleset, rule = rules.get(name, ("?", None))
        shape = f"{rule.before}  ⇒  {rule.after}" if rule is not None else ""
        width = max(2, round(160 * count / top))
        rows.append(
            f'<tr title="{escape(shape)}"><td class="muted">{escape(ruleset)}</td><td><code>{escape(name)}</code></td>'
            f'<td class="num">{count}</td><td><span class="bar" style="width:{width}px"></span></td></tr>'
        )
    report = result.report
    phases = "".join(
        f'<tr><td>{escape(phase)}</td><td class="num">{seconds * 1000:.1f} ms</td></tr>'
        for phase, seconds in report.times.items()
    )
    return (
        '<div class="rows"><table><tr><th>ruleset</th><th>rule</th><th>matches</th><th></th></tr>'
        + "".join(rows)
        + f'</table><table><tr><th>phase</th><th>time</th></tr>{phases}'
        f'<tr><td>iterations</td><td class="num">{report.iterations}</td></tr>'
        f'<tr><td>e-graph rows</td><td class="num">{report.egraph_rows}</td></tr></table></div>'
    )


def _rewrite_rules_table(run: PassRun) -> str:
    """Every rule of a rewrite pass with its matches; one that never matched is marked."""
    shapes = {r.name: (rs.name, f"{r.before}  ⇒  {r.after}") for rs in run.rulesets for r in rs.rules}
    counts = run.rules or {}
    top = max(counts.values(), default=0) or 1
    rows = []
    for name, count in counts.items():
        ruleset, shape = shapes.get(name, ("?", ""))
        if count:
            bar = f'<span class="bar" style="width:{max(2, round(160 * count / top))}px"></span>'
            rows.append(
                f'<tr title="{escape(shape)}"><td class="muted">{escape(ruleset)}</td><td><code>{escape(name)}</code></td>'
                f'<td class="num">{count}</td><td>{bar}</td></tr>'
            )
        else:
            rows.append(
                f'<tr class="unfired" title="{escape(shape)}"><td class="muted">{escape(ruleset)}</td>'
                f'<td><code>{escape(name)}</code></td><td class="num">0</td><td>never matched</td></tr>'
            )
    return "<table><tr><th>ruleset</th><th>rule</th><th>matches</th><th></th></tr>" + "".join(rows) + "</table>"


def _unfired_note(run: PassRun) -> str:
    from nanopto.tools.pipeline_run import unfired_warning

    if not (run.user and run.never_fired):
        return ""
    lines = "".join(f"<li>{escape(unfired_warning(run.name, rule))}</li>" for rule in run.never_fired)
    return (
        f'<div class="note unfired-note"><b>warning:</b><ul>{lines}</ul>'
        "A rule that never matched usually has a pattern that does not say what was meant "
        "(compare it with the program after the pass before it).</div>"
    )


def _rule_trace(page: InlinePage) -> str:
    """The rule trace of every pass that ran rules, the user's passes included."""
    if page.passes is None:
        return _rules_tables(page.result)
    parts = []
    for run in page.passes:
        if run.rules is None:
            continue
        yours = " · your rules" if run.user else ""
        parts.append(
            f'<h3 class="pass" id="{page.prefix}rules-{escape(run.name)}">pass <code>{escape(run.name)}</code>'
            f"<small>{run.matches} matches · {run.iterations} iterations{yours}</small></h3>"
        )
        parts.append(_rules_tables(run.trace) if isinstance(run.trace, InlineResult) else _rewrite_rules_table(run))
        parts.append(_unfired_note(run))
    return "".join(parts) or '<p class="muted">No pass of the pipeline ran rules.</p>'


def _warnings(page: InlinePage) -> str:
    """The user rules that never matched, said once at the top of the page."""
    from nanopto.tools.pipeline_run import unfired_warning

    found = [unfired_warning(r.name, rule) for r in page.passes or () if r.user for rule in r.never_fired]
    if not found:
        return ""
    return f'<p class="note" id="{page.prefix}warnings">warning: ' + escape("; ".join(found)) + ' (see the <a href="#' + page.prefix + 'rules">rule trace</a>)</p>'


def _summary(result: InlineResult | None) -> str:
    if result is None or not result.sites:
        return "no Inline call sites"
    matches = sum(result.report.matches.values())
    seconds = sum(result.report.times.values())
    sites = len(result.sites)
    return (
        f"{sites} call site{'s' if sites != 1 else ''} · {matches} rule matches · "
        f"{result.report.iterations} iterations · {seconds * 1000:.0f} ms"
    )


def _egraph_section(page: InlinePage) -> str:
    note = f'<p class="note">{escape(page.egraph_note)}</p>' if page.egraph_note else ""
    picture = f'<div class="egraph">{page.egraph_html}</div>' if page.egraph_html else ""
    return note + picture


def _body(page: InlinePage) -> str:
    chips = "".join(_chip(page, s) for s in _outer_sites(page))
    legend = f'<div class="legend">{chips}</div>' if chips else ""
    return (
        f"{_warnings(page)}{legend}{_panes(page)}{_hoisted_table(page)}"
        f'<h2 id="{page.prefix}sites">Call sites and the rebinding table</h2>{_sites_table(page)}'
        f'<h2 id="{page.prefix}rules">Rule trace</h2>{_rule_trace(page)}'
    )


def render_page(page: InlinePage) -> str:
    """The whole `--html` document."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>nanopto inline · {escape(page.title)}</title>"
        f"<style>{page.head_css}{VIEW_CSS}{PAGE_CSS}{TOKEN_CSS}</style></head>\n"
        '<body class="nanopto-page np">'
        f'<header><h1>InlineFunctions<span class="file">{escape(page.title)}</span></h1>'
        f'<p class="summary">{escape(_summary(page.result))} · {escape(page.after_label)}</p></header>\n'
        f"<main>{_body(page)}"
        f'<h2 id="egraph">E-graph at saturation</h2>{_egraph_section(page)}</main>\n'
        "<footer>Written by <code>nanopto inline --html</code>. Hover an inlined line to see where it "
        "came from; hover a site to pick out its lines.</footer>\n"
        f"<script>{PAGE_SCRIPT}</script></body></html>\n"
    )


def page_for_file(
    path: str,
    source: str,
    before: n.Program,
    after: n.Program,
    after_label: str,
    result: InlineResult | None,
    egraph_html: str | None,
    egraph_note: str | None,
    head_css: str = "",
    *,
    passes: Sequence[PassRun] | None = None,
) -> str:
    """The `--html` page for an input file: the before pane is the file itself, as written;
    `passes` gives the rule trace of every pass (else `result`'s alone)."""
    page = InlinePage(
        path, source, before, after, after_label, result, source, egraph_html, egraph_note, head_css=head_css, passes=passes
    )
    return render_page(page)


# ---------------------------------------------------------------------------------------------
# Notebooks
# ---------------------------------------------------------------------------------------------

_views = itertools.count()


def inline_result_html(result: InlineResult) -> str:
    """`InlineResult._repr_html_`: before/after panes, the sites and the rule trace, no script."""
    before = result.before if result.before is not None else result.program
    return _notebook_view(before, result.program, "after inline-functions", result, None)


def pipeline_run_html(run: PipelineRun) -> str:
    """`PipelineRun._repr_html_`: the same view for a whole pipeline: the final program, the
    sites of its InlineFunctions run, and the rules of every pass, the user's included, with a
    warning for each user rule that never matched."""
    label = "after " + ",".join(run.pipeline)
    return _notebook_view(run.before, run.after, label, run.shown_inline(), run.passes)


def _notebook_view(
    before: n.Program, after: n.Program, label: str, result: InlineResult | None, passes: Sequence[PassRun] | None
) -> str:
    before_text = python_print(before)
    rows = span_lines(before, before_text)
    file_line = {row: line for line, row in rows.items()}
    page = InlinePage(
        title="input (printed)",
        before_text=before_text,
        before=before,
        after=after,
        after_label=label,
        result=result,
        source=None,
        egraph_html=None,
        egraph_note=None,
        line_of=rows.get,
        row_label=lambda row: str(file_line[row]) if row in file_line else "",
        prefix=f"np{next(_views)}-",
        passes=passes,
    )
    return f'<style>{VIEW_CSS}{TOKEN_CSS}</style><div class="np">{_body(page)}</div>'


def program_html(program: n.Program) -> str:
    """`Program._repr_html_`: the program printed as `pl` source, highlighted."""
    return highlighted_block(python_print(program))



# ---------------------------------------------------------------------------------------------
# The playground
# ---------------------------------------------------------------------------------------------


CHIP_BLOCK = 500
"""Site chips per block of the playground's legend, each block laid out when it scrolls into view
(a legend of 10,000 chips took the browser seconds to lay out, as the panes did). A legend of up to
this many is one block, as it always was; a longer one starts a new row at each block."""

CHIP_BLOCK_PX = 2000
"""The height a block of chips not yet laid out takes (40 to 100 rows, by the names' lengths)."""

PLAIN_CSS = """
.np .legend.chunk { min-width: 0; margin-top: 8px; }
.np .lines { display: flex; white-space: pre; border-left: 4px solid transparent; padding-right: 10px; }
.np .lines .no { flex: none; width: 3.2em; text-align: right; padding-right: 12px; color: #a3adb8;
       user-select: none; }
"""
"""Styles of the playground's blocks: plain panes (`_plain_panes`), each block a column of line
numbers beside its lines, as the detailed panes' lines look, and the legend of site chips
(`_chip_blocks`)."""


def _chip_blocks(page: InlinePage) -> str:
    """The playground's legend: the chip of every site of the functions that survive, the first
    `CHIP_BLOCK` in one legend as ever, the rest in legends of that many, each laid out when it
    scrolls into view (`_later`); each block wraps as one legend does."""
    chips = [_chip(page, s) for s in _outer_sites(page)]
    return "".join(
        ('<div class="legend">' if not first else _later("legend ", CHIP_BLOCK_PX))
        + "".join(chips[first : first + CHIP_BLOCK])
        + "</div>"
        for first in range(0, len(chips), CHIP_BLOCK)
    )


def detailed_panes(after_text: str, max_detail_lines: int | None) -> bool:
    """Whether the panes of an `after` printed as `after_text` are highlighted, with line origins,
    or plain (`_plain_panes`): a program longer than `max_detail_lines` gets plain ones."""
    return max_detail_lines is None or after_text.count("\n") <= max_detail_lines


def _plain_panes(page: InlinePage, after_text: str, limit: int) -> str:
    """Before and after as plain numbered lines: what a program too long for the detailed panes
    gets (no highlighting, no line origins), so that it still shows at once. The lines come in
    blocks of `PANE_BLOCK_LINES`, each laid out by the browser when it is scrolled to, each two
    elements (its numbers and its lines): the browser took seconds to build three for each of the
    60,000 lines of a 10,000-site program."""

    def lines(text: str) -> str:
        # escaped whole, then split: `escape` neither makes nor removes a line break
        rows = escape(text).splitlines()
        blocks = []
        for first in range(0, len(rows), PANE_BLOCK_LINES):
            block = rows[first : first + PANE_BLOCK_LINES]
            numbers = "\n".join(map(str, range(first + 1, first + len(block) + 1)))
            texts = "\n".join(block)
            opening = '<div class="lines">' if not first else _later("lines ", len(block) * LINE_PX)
            blocks.append(f'{opening}<div class="no">{numbers}</div><div>{texts}</div></div>')
        return "".join(blocks)

    return (
        f'<p class="muted">The program after the pipeline has {after_text.count(chr(10))} lines: highlighting and '
        f"line origins are shown for programs of up to {limit} lines.</p>"
        '<section class="panes">'
        f'<div class="pane" id="{page.prefix}before"><h3>before<small>{escape(page.title)}</small></h3>'
        f'<div class="code">{lines(page.before_text)}</div></div>'
        f'<div class="pane" id="{page.prefix}after"><h3>after<small>{escape(page.after_label)}</small></h3>'
        f'<div class="code">{lines(after_text)}</div></div>'
        "</section>"
    )


def inline_sections(
    path: str,
    source: str,
    before: n.Program,
    after: n.Program,
    after_label: str,
    result: InlineResult | None,
    *,
    after_text: str | None = None,
    max_detail_lines: int | None = None,
) -> dict[str, str]:
    """The page's parts as fragments, for the playground: site chips (`_chip_blocks`), before/after
    panes, the InlineFunctions rule trace, the summary line, and the CSS they need. An `after`
    printed to more than `max_detail_lines` lines gets plain panes (`_plain_panes`). The sites
    table is not among them: the playground's page builds it from the answer's site records
    (docs/playground.md#what-the-page-shows), which it has anyway, rather than receive both."""
    page = InlinePage(path, source, before, after, after_label, result, source, None, None)
    after_text = python_print(after) if after_text is None else after_text
    detailed = detailed_panes(after_text, max_detail_lines)
    return {
        "chips": _chip_blocks(page),
        "panes": _panes(page, after_text) if detailed else _plain_panes(page, after_text, max_detail_lines or 0),
        "inline_rules": _rules_tables(result),
        "summary": _summary(result),
        "css": VIEW_CSS + TOKEN_CSS + PLAIN_CSS,
    }
