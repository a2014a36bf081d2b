"""One InlineFunctions run as plain data and as text: the call sites with each parameter's
rebinding row, and the rules that fired. The `--trace` and `--json` output, the demo and the HTML
page all read the same records."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TextIO

from nanopto.ir_terms.nodes import Var
from nanopto.ir_terms.printer import print_expr, python_print
from nanopto.passes.hoist_nested_calls import Hoisted, HoistResult
from nanopto.passes.inlining import InlineResult
from nanopto.passes.inlining.call_sites import CallSite
from nanopto.passes.pass_base import Pass
from nanopto.passes.rewrite import RewriteResult, RewriteRules
from nanopto.rules import INLINE_RULESETS


def _fresh_local(result: InlineResult, site: CallSite, param: Var) -> str | None:
    """The name of the fresh local a parameter was bound to at `site` (the decoder's record)."""
    return result.copies.get((param.id, site.number))


def _site_line(site: CallSite) -> str:
    span = site.span
    return f"line {span.line}" if span is not None else "line ?"


@lru_cache(maxsize=4)
def _source_lines(source: str) -> tuple[str, ...]:
    """The lines of a source, split once for all its call sites (a program may have thousands)."""
    return tuple(source.splitlines())


def site_record(result: InlineResult, site: CallSite, source: str | None = None) -> dict[str, Any]:
    """One call site as plain data (the `--json` trace and the text explanation both use it).

    `statement` is the site's line as the user wrote it when `source` is given (the parser
    desugars `q, r = f(x)` into a temporary), else the printed IR statement.
    """
    span = site.span
    lines = _source_lines(source) if source is not None else ()
    if span is not None and 0 < span.line <= len(lines):
        statement = lines[span.line - 1].strip()
    else:
        statement = python_print(site.stmt).strip()
    bindings = []
    for b in site.bindings:
        bindings.append(
            {
                "param": b.param.name,
                "actual": print_expr(b.actual),  # python_print of an expression, without its set-up per call
                "row": b.row.name,
                "row_text": b.row.value,
                "bind_local": b.bind_local,
                "local": _fresh_local(result, site, b.param) if b.bind_local else None,
                "reason": b.reason,
            }
        )
    return {
        "number": site.number,
        "caller": site.caller,
        "helper": site.helper,
        "file": span.file if span is not None else None,
        "line": span.line if span is not None else None,
        "col": span.col + 1 if span is not None else None,
        "statement": statement,
        "form": site.form.name,
        "form_text": site.form.value,
        "bindings": bindings,
        "bound_returns": [{"index": i, "reason": reason} for i, reason in site.bound_returns],
    }


def explain_sites(result: InlineResult, out: TextIO, source: str | None = None) -> None:
    if not result.sites:
        out.write("no Inline call sites: the program is unchanged\n")
    for site in result.sites:
        record = site_record(result, site, source)
        out.write(
            f"site {site.number}: {site.caller} {_site_line(site)}: `{record['statement']}`"
            f" splices helper '{site.helper}'  [{site.form.value}]\n"
        )
        for b in record["bindings"]:
            if b["bind_local"]:
                local = b["local"] or "a fresh local"
                binding = f"bound to local {local} = {b['actual']}  ({b['reason']})"
            else:
                binding = f"replaced by {b['actual']}  ({b['reason']})"
            out.write(f'    {b["param"]}: row "{b["row_text"]}"; {binding}\n')
        for r in record["bound_returns"]:
            out.write(f"    returned value {r['index']}: bound to a fresh local at the call  ({r['reason']})\n")


def hoisted_record(hoisted: Hoisted) -> dict[str, Any]:
    """One binding `hoist-nested-calls` added, as plain data: where, what and why."""
    span = hoisted.stmt.span
    return {
        "function": hoisted.function,
        "file": span.file if span is not None else None,
        "line": span.line if span is not None else None,
        "col": span.col + 1 if span is not None else None,
        "binding": python_print(hoisted.stmt).strip(),
        "reason": hoisted.reason,
    }


def explain_hoisted(result: HoistResult, out: TextIO) -> None:
    """The `--trace` text of one `hoist-nested-calls` run."""
    if not result.hoisted:
        out.write("no nested Inline calls: nothing hoisted\n")
    for h in result.hoisted:
        record = hoisted_record(h)
        line = record["line"] if record["line"] is not None else "?"
        out.write(f"{record['function']} line {line}: {record['binding']}  ({record['reason']})\n")


def rule_counts(result: InlineResult) -> dict[str, int]:
    """Matches per rule, in ruleset order, fired rules only."""
    counts = result.report.matches
    ordered = {r.name: counts[r.name] for rs in INLINE_RULESETS for r in rs.rules if counts.get(r.name)}
    ordered.update({k: v for k, v in sorted(counts.items()) if k not in ordered and v})
    return ordered


def explain_rules(result: InlineResult, out: TextIO) -> None:
    counts = rule_counts(result)
    ruleset_of = {r.name: rs.name for rs in INLINE_RULESETS for r in rs.rules}
    if result.rulesets:
        out.write(f"rulesets run to saturation: {', '.join(result.rulesets)} (the subst rules copy the bodies)\n")
    out.write(f"rules fired ({sum(counts.values())} matches, {result.report.iterations} iterations):\n")
    width = max((len(name) for name in counts), default=0)
    for name, count in counts.items():
        out.write(f"    {ruleset_of.get(name, '?'):>9} {name:<{width}}  {count}\n")
    times = ", ".join(f"{phase} {seconds * 1000:.1f} ms" for phase, seconds in result.report.times.items())
    out.write(f"phase times: {times or 'none (no sites)'}\n")


def pass_rule_counts(pass_: Pass | None, trace: object) -> dict[str, int] | None:
    """Every rule of a pass's rulesets with its match count in `trace` (zero included), in ruleset
    order; None for a pass that runs no rules. What `--trace`, `--json` and the playground show
    per pass, and how they find a rule that never fired."""
    if isinstance(trace, InlineResult):
        counts = trace.report.matches
        return {r.name: counts.get(r.name, 0) for rs in INLINE_RULESETS for r in rs.rules}
    if isinstance(pass_, RewriteRules):
        counts = trace.report.matches if isinstance(trace, RewriteResult) else {}
        return {r.name: counts.get(r.name, 0) for rs in pass_.rulesets for r in rs.rules}
    return None
