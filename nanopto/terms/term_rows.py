"""Terms and facts as flat rows, loaded into egglog in bulk.

egglog 13.2 spends 30-50 µs on every node it is handed as an expression or an action, whether as
text or as command objects (a 60,000-node term takes 5 s; one command per term costs about the
same per node). Its `input` command, by contrast, reads a tab-separated file of primitive rows
straight into a table at about 1 µs a row, and rules then run over those rows in bulk.

So the encoder writes each distinct term once, as a row `(handle, child handles..., literals...)`
of a load table `Load_C` per constructor `C`; facts are rows too (`Load_union_Ex a b`,
`Load_Local id`, ...), and a fact table may build a few terms that always come together from one
row (`Load_SiteAssign`, a call site's statement). One generated `load` ruleset rebuilds every
term from its row, `(rule ((Load_C h a b)) ((union (Handle_Ex h) (C (Handle_Ex a) b))))`, in a
single iteration, and a `cleanup` ruleset then drops the handles, so the e-graph holds exactly
the terms, as if each had been written out by hand. This is the one module that loads through
egglog's `input`; the decoder in `encoding.py` reads extraction back as a term DAG's columns
(`DagRead`: from egglog's term DAG, or from the frozen e-graph, docs/architecture.md#extraction).
"""

from __future__ import annotations

import functools
import itertools
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nanopto.egglog_bindings import bindings as eb

Cell = int | float | str
"""A row cell: a handle or an i64 literal (int; a bool is 0 or 1), an f64 literal, or a String
literal."""

PRIMITIVES = frozenset({"i64", "f64", "String", "bool"})
_COLUMN = {"bool": "i64"}
"""egglog's `input` reads i64, f64 and String columns; a bool travels as 0 or 1 and the load rule
turns it back into a bool (`_BUILT`)."""
LOAD_RULESET = "load"
CLEANUP_RULESET = "load-cleanup"
SPAN = eb.RustSpan("nanopto", 0, 0)
"""The source location given to the command objects nanopto builds (they have no source text)."""


class ConstructorLike(Protocol):
    """What the loader needs of a constructor (`encoding.Constructor` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> tuple[str, ...]: ...
    @property
    def sort(self) -> str: ...


@dataclass(frozen=True)
class FactTable:
    """A fact that is not a term: its columns and the action each row performs."""

    name: str
    columns: tuple[str, ...]
    action: str
    """egglog action over the column variables c0, c1, ...; e.g. `(set (TupleForm c0) c1)`."""


def load_table(name: str) -> str:
    return f"Load_{name}"


def handle(sort: str) -> str:
    return f"Handle_{sort}"


def _union(sort: str) -> str:
    """The fact table of unions between terms of `sort`."""
    return f"union_{sort}"


def load_declarations(
    sorts: Sequence[str], constructors: Sequence[ConstructorLike], facts: Sequence[FactTable] = ()
) -> str:
    """The handle constructors, the load tables, and the `load`/`cleanup` rulesets that rebuild
    every term from its row (egglog text, compiled once per prepared e-graph)."""
    lines = [f"(ruleset {LOAD_RULESET})", f"(ruleset {CLEANUP_RULESET})"]
    for sort in sorts:
        lines.append(f"(constructor {handle(sort)} (i64) {sort} :unextractable)")
        lines.append(
            f"(rule ((= x ({handle(sort)} h))) ((delete ({handle(sort)} h))) :ruleset {CLEANUP_RULESET})"
        )
    unions = [FactTable(_union(sort), ("i64", "i64"), f"(union ({handle(sort)} c0) ({handle(sort)} c1))") for sort in sorts]
    for c in constructors:
        table = load_table(c.name)
        columns = " ".join(["i64", *(_COLUMN.get(a, a) if a in PRIMITIVES else "i64" for a in c.args)])
        names = [f"a{i}" for i in range(len(c.args))]
        built = " ".join(_built(x, a) for x, a in zip(names, c.args, strict=True))
        row = f"({table} h{''.join(' ' + x for x in names)})"
        lines.append(f"(relation {table} ({columns}))")
        lines.append(
            f"(rule ({row}) ((union ({handle(c.sort)} h) ({c.name}{' ' + built if built else ''}))"
            f" (delete {row})) :ruleset {LOAD_RULESET})"
        )
    for fact in (*unions, *facts):
        names = [f"c{i}" for i in range(len(fact.columns))]
        row = f"({load_table(fact.name)} {' '.join(names)})"
        lines.append(f"(relation {load_table(fact.name)} ({' '.join(fact.columns)}))")
        lines.append(f"(rule ({row}) ({fact.action} (delete {row})) :ruleset {LOAD_RULESET})")
    return "\n".join(lines)


def _built(name: str, sort: str) -> str:
    """How a load rule passes row column `name` of `sort` to the constructor."""
    if sort == "bool":
        return f"(bool-> {name} 0)"
    return name if sort in PRIMITIVES else f"({handle(sort)} {name})"


@dataclass
class TermRows:
    """Terms (hash-consed: each distinct term is one row) and facts, by load table."""

    tables: dict[str, list[tuple[Cell, ...]]] = field(default_factory=dict)
    _memo: dict[str, dict[tuple[Cell, ...], int]] = field(default_factory=dict)
    """Constructor -> its terms' cells -> their handle: keyed by the `args` tuple the call already
    made, not a new tuple with the constructor in front (called once per encoded node)."""
    _terms: int = 0
    """How many distinct terms there are: the next one's handle."""

    def term(self, constructor: str, *args: Cell) -> int:
        """The handle of `(constructor args...)`; child terms are given by their handles."""
        memo = self._memo.get(constructor)
        if memo is None:
            memo = self._memo[constructor] = {}
        found = memo.get(args)
        if found is not None:
            return found
        new = memo[args] = self._terms
        self._terms = new + 1
        table = self.tables.get(constructor)
        if table is None:
            table = self.tables[constructor] = []
        table.append((new, *args))
        return new

    def union(self, sort: str, a: int, b: int) -> None:
        """The fact that terms `a` and `b` (of `sort`) are equal."""
        self.fact(_union(sort), a, b)

    def fact(self, table: str, *cells: Cell) -> None:
        self.tables.setdefault(table, []).append(cells)

    def as_actions(self) -> str:
        """The rows as egglog actions on the load tables, `(Load_C 17 3 "x")`: what `load_rows`
        reads with `input`, written out so that a program text replays the load by itself."""
        return "\n".join(_actions_text(table, cells) for table, cells in self.tables.items())


def _actions_text(table: str, cells: list[tuple[Cell, ...]]) -> str:
    """One table's rows as egglog actions, one a line."""
    name = load_table(table)
    return "\n".join([f"({name} {' '.join(_literal(c) for c in row)})" for row in cells])


def _literal(cell: Cell) -> str:
    """A cell as an egglog literal: the String holds exactly what `input` would have read."""
    if isinstance(cell, int):
        return str(cell)
    if isinstance(cell, float):
        return str(eb.Lit(SPAN, eb.Float(cell)))
    text = _cell(cell).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r\ud800-\udfff]|^\s|\s$")
_ESCAPED = re.compile(r"\\(\\|u\{([0-9a-f]+)\})")
_ESCAPED_CHAR = re.compile(r"[\\\t\n\r\ud800-\udfff]")
"""The characters `escape` writes as escapes wherever they stand."""


def escape(text: str) -> str:
    """A String cell egglog's `input` reads back unchanged: it splits on tabs and newlines and trims
    whitespace, so backslashes, tabs, newlines, edge whitespace and lone surrogates (which UTF-8
    cannot hold) are written as `\\\\` and `\\u{hex}`."""
    if not _NEEDS_ESCAPE.search(text):
        return text
    out = text.replace("\\", "\\\\")
    out = re.sub(r"[\t\n\r\ud800-\udfff]", _hex, out)  # surrogates: not UTF-8 on their own
    body = out.strip()
    if not body:  # whitespace only
        return "".join(_hex(c) for c in out)
    lead = out.index(body)
    trail = len(out) - lead - len(body)
    return "".join(map(_hex, out[:lead])) + body + "".join(map(_hex, out[len(out) - trail :]))


def _hex(char: str | re.Match[str]) -> str:
    c = char if isinstance(char, str) else char.group()
    return f"\\u{{{ord(c):x}}}"


def unescape(text: str) -> str:
    """The inverse of `escape` (strings made by rules never contain a backslash)."""
    if "\\" not in text:
        return text
    return _ESCAPED.sub(lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(2), 16)), text)


def _cell(value: Cell) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # Rust's f64 parser reads Python's repr, inf and nan included
    return escape(value)


class RowsWriteError(OSError):
    """The rows could not be written where egglog's `input` reads them from."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(
            f"could not write the e-graph's rows to a temporary directory under {tempfile.gettempdir()}: "
            f"{cause}; point TMPDIR at a writable directory with free space"
        )


def _table_text(cells: list[tuple[Cell, ...]]) -> str:
    """One table as tab-separated text. Every row of a table has the same column kinds (one
    constructor's signature), so the first row decides: integer-only tables (most of them) need
    no escaping and take a `%`-format fast path, as do tables whose Strings need none; the others
    are converted column by column, each distinct String escaped once (names, spans and op names
    repeat down a column)."""
    if all(type(c) is int for c in cells[0]):
        line = "\t".join(["%d"] * len(cells[0])) + "\n"
        return "".join([line % row for row in cells])
    kinds = [type(c) for c in cells[0]]
    columns = list(zip(*cells, strict=True))
    strings = {value for kind, column in zip(kinds, columns, strict=True) if kind is str for value in column}
    if (
        all(kind in (int, str, float) for kind in kinds)
        and not _ESCAPED_CHAR.search("".join(strings))  # type: ignore[arg-type]
        and all(value == value.strip() for value in strings)  # type: ignore[union-attr]
    ):
        # One `%`-format per row costs less than converting column by column; `%s` writes an int
        # and a float as `_cell` does (a float's `str` is its `repr`).
        line = "\t".join(["%s"] * len(kinds)) + "\n"
        return "".join([line % row for row in cells])
    text = functools.cache(escape)
    converted: list[list[str]] = []
    for column in columns:
        kind = type(column[0])
        if kind is int:
            converted.append(list(map(str, column)))
        elif kind is str:
            converted.append([text(value) for value in column])  # type: ignore[arg-type]
        else:
            converted.append(list(map(_cell, column)))
    return "\n".join(map("\t".join, zip(*converted, strict=True))) + "\n"


def load_commands() -> str:
    """The commands that rebuild the terms once the load tables hold their rows."""
    return f"(run {LOAD_RULESET} 1)\n(run {CLEANUP_RULESET} 1)"


SMALL_TABLE = 16
"""Tables of at most this many rows are inserted by a rule, not read from a file: `input` costs
about 0.2 ms a file (and the temporary directory about a millisecond), a row of the rule about
35 µs, and most tables of a small stage hold a handful of rows."""

INSERTS_RULESET = "load-rows-"
"""The prefix of the rulesets `load_rows` inserts small tables with, numbered by `_INSERTS`: each
is run once, and a later load into the same e-graph (outside a `push`) must not run it again."""
_INSERTS = itertools.count()


def load_rows(egraph: eb.EGraph, rows: TermRows) -> None:
    """Read every table into the e-graph (with `input`, or by one rule when small), then rebuild
    the terms and drop the handles.

    The e-graph must have been given `load_declarations` for every constructor the rows use.
    """
    commands: list[object] = []
    large: list[tuple[str, list[tuple[Cell, ...]]]] = []
    actions: list[eb._Action] = []
    for table, cells in rows.tables.items():
        if len(cells) > SMALL_TABLE:
            large.append((table, cells))
            continue
        # Parsed from text: building the same actions as command objects costs ~100 µs a row
        # (each span converted again at every level), parsing them ~10 µs.
        for command in egraph.parse_program(_actions_text(table, cells)):
            assert isinstance(command, eb.ActionCommand)
            actions.append(command.action)
    if actions:
        # One rule with no query, run once: egglog compiles and runs a top-level action as a
        # command of its own (~70 µs a row); in one rule each row costs about half of that.
        inserts = f"{INSERTS_RULESET}{next(_INSERTS)}"
        commands += [
            eb.AddRuleset(SPAN, inserts),
            eb.RuleCommand(eb.Rule(SPAN, actions, [], inserts, inserts)),
            eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(inserts))),
        ]
    commands.append(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(LOAD_RULESET))))
    commands.append(eb.RunSchedule(eb.Run(SPAN, eb.RunConfig(CLEANUP_RULESET))))
    if not large:
        egraph.run_program(*commands)  # type: ignore[arg-type]
        return
    try:
        tmp_dir = tempfile.TemporaryDirectory(prefix="nanopto-rows-")
    except OSError as exc:
        raise RowsWriteError(exc) from None
    with tmp_dir as tmp:
        inputs: list[object] = []
        for i, (table, cells) in enumerate(large):
            path = Path(tmp) / f"{i}.tsv"
            try:
                path.write_text(_table_text(cells), encoding="utf-8")
            except OSError as exc:
                raise RowsWriteError(exc) from None
            inputs.append(eb.Input(SPAN, load_table(table), str(path)))
        egraph.run_program(*inputs, *commands)  # type: ignore[arg-type]


STRING_OR_COMMENT = r'"(?:[^"\\]|\\.)*"?|;[^\n]*'
"""An egglog string literal (to its closing quote, or the end of an unclosed one) or `;` comment:
what a scan of program text for its parentheses must step over (with `re.DOTALL`)."""
_TOKEN = re.compile(STRING_OR_COMMENT + "|[()]", re.DOTALL)
"""What `top_level_forms` stops at: a string, a comment, a parenthesis."""


def top_level_forms(text: str) -> list[str]:
    """Split egglog program text into its top-level forms (strings and `;` comments respected)."""
    forms: list[str] = []
    depth, start = 0, -1
    # Token by token, not character by character: the inlining program is about 50,000 characters.
    for token in _TOKEN.finditer(text):
        char = token.group()
        if char == "(":
            if depth == 0:
                start = token.start()
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                forms.append(text[start : token.end()])
    if depth != 0:
        raise ValueError("unbalanced parentheses in egglog program text")
    return forms


def run_text(egraph: eb.EGraph, text: str) -> list[object]:
    """Parse and run egglog program text (`run_forms` of its top-level forms)."""
    return run_forms(egraph, top_level_forms(text))


def run_forms(egraph: eb.EGraph, forms: Sequence[str]) -> list[object]:
    """Parse egglog program text one top-level form at a time, then run all the commands at once.

    egglog 13.2 gives every parsed node a span holding the whole text, and copies it when the
    commands cross into Python and back: the 154 load declarations took 0.6 s as one text and
    0.05 s form by form. Running the parsed commands in one call saves a crossing per form.
    """
    return list(egraph.run_program(*[command for form in forms for command in egraph.parse_program(form)]))
