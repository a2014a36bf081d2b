"""Where each printed line of the inlined program came from: which call site, which helper line.

Two facts make this possible without extra bookkeeping in the pass. A spliced statement keeps the
source span of the helper statement it was copied from (the encoding carries spans through the
rewrite), and every fresh local maps to the site it was made for (`InlineResult.provenance`). So
a line of the output is

* **spliced** from a helper when its span is a line of an Inline function; its site is the site
  of the fresh locals it defines or reads (or, for a statement that touches none, the site of the
  spliced statement before it, since one site's statements are contiguous);
* **bound** when it sits on a call-site line and defines a fresh local: a parameter bound to a
  local first (rebinding table, "bind a fresh local" rows);
* **wired** when it sits on a call-site line otherwise: the receiver taking the returned value,
  or (**discarded**) the returned expression kept as a statement for its effect.

Printed lines are matched to statements by printing each statement on its own and finding it, in
order, in the program's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.printer import print_expr, python_print
from nanopto.ir_terms.schema import walk
from nanopto.passes.inlining.call_sites import CallSite


class LineKind(Enum):
    SPLICED = "spliced from the helper"
    BOUND = "parameter bound to a fresh local"
    WIRED = "returned value wired to the receiver"
    DISCARDED = "returned value kept for its effect (result discarded)"


@dataclass(frozen=True)
class LineOrigin:
    """One output line's provenance: the site that produced it and the input line it stems from."""

    site: int | None
    kind: LineKind
    source_line: int
    """1-based line of the input file: the helper statement (spliced) or the call site (bound, wired)."""
    helper: str | None
    """The helper spliced: the Inline function owning `source_line`, or the site's callee."""


def _statements(body: n.Stmt) -> Iterator[n.Stmt]:
    for node in walk(body):
        if isinstance(node, n.Stmt) and not isinstance(node, n.SeqStmts):
            yield node


def _matches(line: str, stmt: n.Stmt, key: str) -> bool:
    text = line.strip()
    if text == key or text.endswith(f"= {key}"):  # `x = pl.yield_(...)` prints its targets first
        return True
    # `q, r = f(x)` is printed back from the parser's `tmp = f(x); q = tmp[0]; r = tmp[1]`.
    return isinstance(stmt, n.AssignStmt) and text.endswith(f" = {print_expr(stmt.value)}")


def statement_lines(program: n.Program, text: str) -> dict[int, n.Stmt]:
    """1-based line of `text` (= `python_print(program)`) -> the statement printed there.

    Statements the printer folds into another line (the element reads of a tuple unpacking) have
    no line of their own and are left out.
    """
    lines = text.splitlines()
    found: dict[int, n.Stmt] = {}
    cursor = 0
    for fn in program.function_list:
        header = f"def {fn.name}("
        while cursor < len(lines) and header not in lines[cursor]:
            cursor += 1
        end = cursor + 1
        while end < len(lines) and not lines[end].lstrip().startswith(("def ", "@pl.function")):
            end += 1
        for stmt in _statements(fn.body):
            printed = python_print(stmt).strip()
            key = printed.splitlines()[0] if printed else ""
            for row in range(cursor + 1, end):
                if row + 1 not in found and _matches(lines[row], stmt, key):
                    found[row + 1] = stmt
                    cursor = row
                    break
        cursor = end
    return found


def span_lines(program: n.Program, text: str) -> dict[int, int]:
    """Source line (from spans) -> 1-based line of `text`, for showing a *printed* input program.

    Used when the original file is not at hand (a notebook): links that name a source line are
    redirected to where that statement, or that function's `def`, was printed.
    """
    result: dict[int, int] = {}
    for row, stmt in statement_lines(program, text).items():
        if stmt.span is not None:
            result.setdefault(stmt.span.line, row)
    lines = text.splitlines()
    for fn in program.function_list:
        for row, line in enumerate(lines, start=1):
            if fn.span is not None and f"def {fn.name}(" in line:
                result.setdefault(fn.span.line, row)
                break
    return result


def _helper_lines(before: n.Program) -> dict[tuple[str, int], str]:
    """(file, line) of every statement of an Inline function -> that function's name."""
    lines: dict[tuple[str, int], str] = {}
    for fn in before.function_list:
        if fn.func_type is n.FunctionType.Inline:
            for stmt in _statements(fn.body):
                if stmt.span is not None:
                    lines[(stmt.span.file, stmt.span.line)] = fn.name
    return lines


def _fresh_site(stmt: n.Stmt, provenance: dict[int, int], define_only: bool) -> int | None:
    if isinstance(stmt, n.AssignStmt) and stmt.var.id in provenance:
        return provenance[stmt.var.id]
    if define_only:
        return None
    for node in walk(stmt):
        if isinstance(node, n.Var) and node.id in provenance:
            return provenance[node.id]
    return None


def line_origins(
    before: n.Program,
    after: n.Program,
    after_text: str,
    sites: list[CallSite],
    provenance: dict[int, int],
) -> dict[int, LineOrigin]:
    """1-based line of `after_text` -> its origin, for every line inlining produced."""
    helpers = _helper_lines(before)
    inline_names = {fn.name for fn in before.function_list if fn.func_type is n.FunctionType.Inline}
    site_at: dict[tuple[str, int], list[int]] = {}
    callee = {s.number: s.helper for s in sites}
    for s in sites:
        if s.caller not in inline_names and s.span is not None:
            site_at.setdefault((s.span.file, s.span.line), []).append(s.number)
    origins: dict[int, LineOrigin] = {}
    previous: int | None = None
    for row, stmt in sorted(statement_lines(after, after_text).items()):
        span = stmt.span
        if span is None:
            continue
        where = (span.file, span.line)
        if where in site_at and where not in helpers:
            fresh = _fresh_site(stmt, provenance, define_only=True)
            candidates = site_at[where]
            at_site = fresh if fresh is not None and fresh in candidates else candidates[0]
            kind = LineKind.BOUND if fresh is not None else LineKind.WIRED
            if isinstance(stmt, n.EvalStmt):
                kind = LineKind.DISCARDED
            origins[row] = LineOrigin(at_site, kind, span.line, callee[at_site])
            previous = at_site
        elif where in helpers:
            spliced = _fresh_site(stmt, provenance, define_only=False)
            spliced = spliced if spliced is not None else previous
            origins[row] = LineOrigin(spliced, LineKind.SPLICED, span.line, helpers[where])
            previous = spliced
        else:
            previous = None
    # A block's first spliced statements may touch no fresh local (a write through a parameter the
    # caller's variable replaced): they belong to the site of the statements that follow them.
    for row in sorted(origins, reverse=True):
        following = origins.get(row + 1)
        if origins[row].site is None and following is not None and following.site is not None:
            origins[row] = replace(origins[row], site=following.site)
    return origins
