"""Choosing each root's cheapest term from the frozen e-graph, at egglog's own costs.

egglog's `extract` costs every extractable row of every table reachable from the root's sort in
Bellman-Ford passes (about 2.7 us per row, whatever the root), then builds a `TermDag` that the
decoder reads again node by node through egglog's bindings. Here the rows are read once from
`EGraph.freeze()`, costed with numpy (every row at once per pass), and the terms the roots hold
are handed to the decoder as the very columns it reads (`DagRead`), with no `TermDag` at all
(docs/architecture.md#extraction, nanopto's choice).

The costs are egglog's default ones (`TreeAdditiveCostModel`): a row of a constructor table costs
its constructor's `:cost` (1 when none is declared) plus the costs of its children, a primitive
child costing 1; an e-class costs the least of its rows, the least fixpoint over cycles and
classes with no finite term. Only constructors that are not `:unextractable` are chosen: never a
relation, a function, a let-binding or a subsumed row. Where a class has one row of least cost,
egglog chooses it too. Where two rows tie, egglog takes the first in its scan order whose children
reached their costs before the class did, an order of its own passes; so a tie in the chosen terms,
like declarations this extractor does not read (a container sort, a `datatype`, a cost below 1, a
flag it does not know), a term deeper than `MAX_PASSES` or a cost too large for a float's exact
integers, makes `extract_frozen` answer None, and the engine extracts with egglog instead.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph.selection import form_keyword, split_rules_text
from nanopto.terms.encoding import NOT_LITERAL, DagRead
from nanopto.terms.term_rows import SPAN, unescape

_SORT = re.compile(r"\(\s*sort\s+([^\s()]+)\s*\)\s*\Z")
_CONSTRUCTOR = re.compile(r"\(\s*constructor\s+([^\s()]+)\s*\(([^()]*)\)\s*([^\s()]+)((?:\s+[^\s()]+)*)\s*\)\s*\Z")
_UNSUPPORTED = frozenset({"datatype", "datatype*"})
"""Declaring forms whose constructors this extractor does not read: with one, egglog extracts."""

_PRIMITIVES: dict[str, Callable[[eb.EGraph, eb.Value], Any]] = {
    "i64": eb.EGraph.value_to_i64,
    "String": lambda egraph, value: unescape(egraph.value_to_string(value)),
    "bool": eb.EGraph.value_to_bool,
    "f64": eb.EGraph.value_to_f64,
}
"""A primitive sort -> its value as the decoder reads it from a term DAG's literal (a String unescaped)."""


@dataclass(frozen=True)
class Table:
    """An extractable constructor: its children's sorts and the cost of a row before its
    e-class children's (its own cost plus 1 per primitive child)."""

    name: str
    sorts: tuple[str, ...]
    base: int
    classes: tuple[int, ...]
    """The positions of its e-class children, in order."""


@functools.lru_cache(maxsize=16)
def extractable_tables(text: str) -> tuple[Table, ...] | None:
    """The extractable constructors `text` declares, in declaration order (egglog's scan order);
    None when it declares something `extract_frozen` does not handle."""
    sorts: set[str] = set()
    tables: list[Table] = []
    for form in split_rules_text(text).forms:
        keyword = form_keyword(form)
        if keyword in _UNSUPPORTED:
            return None
        if keyword == "sort":
            declared = _SORT.match(form)
            if declared is None:  # a container sort, `(sort IntVec (Vec i64))`
                return None
            sorts.add(declared.group(1))
        elif keyword == "constructor":
            constructor = _CONSTRUCTOR.match(form)
            if constructor is None:
                return None
            name, args, sort, flags = constructor.groups()
            table = _table(name, tuple(args.split()), sort, flags.split(), sorts)
            if table is None:
                return None
            if table.name:
                tables.append(table)
    return tuple(tables)


def _table(name: str, args: tuple[str, ...], sort: str, flags: list[str], sorts: set[str]) -> Table | None:
    """The table of a constructor declaration (a nameless one when `:unextractable`), or None."""
    cost = 1
    while flags:
        flag = flags.pop(0)
        if flag == ":unextractable":
            return Table("", (), 0, ())
        if flag == ":cost" and flags and flags[0].isdigit() and int(flags[0]) >= 1:
            cost = int(flags.pop(0))
        else:  # a zero cost allows a cycle of equal costs, which egglog breaks by its update order
            return None
    if sort not in sorts or any(a not in sorts and a not in _PRIMITIVES for a in args):
        return None
    classes = tuple(i for i, a in enumerate(args) if a in sorts)
    return Table(name, args, cost + len(args) - len(classes), classes)


@dataclass(frozen=True)
class ChosenTerm:
    """A root's cheapest term: `term` in `termdag`, the chosen terms of every root read as the
    decoder reads a term DAG (what `decode_roots` takes, like an `eb.ExtractBest`)."""

    termdag: DagRead
    term: int
    cost: int
    """The term's cost, as egglog's `ExtractBest.cost` gives it."""


def extract_frozen(egraph: eb.EGraph, text: str, count: int) -> list[ChosenTerm | None] | None:
    """The cheapest term of each of `(Root 0)` ... `(Root count-1)` in `egraph`, whose rules and
    declarations are `text`: None for a root with no finite term, and None instead of the list
    when egglog's extraction must decide (declarations this extractor does not read, a tie, a term
    deeper than `MAX_PASSES` or a cost past a float's exact integers)."""
    tables = extractable_tables(text)
    if tables is None:
        return None
    roots = [egraph.eval_expr(eb.Call(SPAN, "Root", [eb.Lit(SPAN, eb.Int(i))]))[1] for i in range(count)]
    rows = _Rows(egraph.freeze().functions, tables)
    classes = [rows.ids.get(root, rows.none) for root in roots]
    costed = rows.cost()
    if costed is None:
        return None
    cost, row_cost = costed
    choice = rows.choose(cost, row_cost, classes)
    if choice is None:
        return None
    read = rows.read(egraph, choice)
    return [None if choice[c] < 0 else ChosenTerm(read, c, int(cost[c])) for c in classes]


MAX_PASSES = 400
"""The most relaxation passes `_Rows.cost` makes (a pass per level of the deepest cheapest term):
a deeper e-graph (a 20,000-level expression) is left to egglog, whose passes scan in an order that
needs fewer."""

_EXACT = float(2**53)
"""Costs are float64s in the relaxation (numpy sums them in C); below this they are exact integers."""

_SUBSUMED = operator.attrgetter("subsumed")
_OUTPUT = operator.attrgetter("output")
_INPUTS = operator.attrgetter("inputs")


def _known(classes: list[int | None], none: int) -> list[int]:
    """`classes` with `none` for each class that has no extractable row (which is not numbered)."""
    return cast(list[int], classes) if None not in classes else [none if c is None else c for c in classes]


class _Rows:
    """The extractable rows of a frozen e-graph, read table by table into columns; e-classes are
    numbered 0, 1, ... in the order met, and the rows in scan order (tables in declaration order).
    The costing runs on numpy arrays of those numbers, every row at once."""

    def __init__(self, functions: dict[str, eb.FrozenFunction], tables: Sequence[Table]) -> None:
        self.tables: list[Table] = []
        self.ids: dict[eb.Value, int] = {}
        """An e-class's Value -> its number: a Value is hashed and compared through egglog's
        bindings, so each is looked up once and the costing runs on ints."""
        self.first: list[int] = []
        """The number of each table's first row (rows are numbered table after table)."""
        self.inputs: list[list[eb.Value]] = []
        """Each table's input Values, row after row: row r's child i is at r * arity + i."""
        base: list[int] = []
        # Each column is read with map over C-level getters, no bytecode per row (flat-10000:
        # 150,000 extractable rows, each read through egglog's bindings).
        outputs: list[eb.Value] = []
        for table in tables:
            function = functions.get(table.name)
            if function is None or function.is_let_binding:
                continue
            kept = list(itertools.filterfalse(_SUBSUMED, function.rows))
            if not kept:
                continue
            self.tables.append(table)
            self.first.append(len(outputs))
            outputs += map(_OUTPUT, kept)
            self.inputs.append(list(itertools.chain.from_iterable(map(_INPUTS, kept))))
            base += [table.base] * len(kept)
        self.first.append(len(outputs))
        setdefault = self.ids.setdefault
        self.row_class: list[int] = [setdefault(value, len(self.ids)) for value in outputs]  # a Value's first row numbers it
        """Each row's e-class."""
        self.none = none = len(self.ids)
        """The number standing for every e-class with no extractable row (it costs infinity)."""
        get = self.ids.get
        self.children: list[list[list[int]]] = [
            [_known(list(map(get, self.column(t, i))), none) for i in table.classes] for t, table in enumerate(self.tables)
        ]
        """Each table's e-class children: position among its e-class children -> their classes."""
        self.base = np.array(base, dtype=np.float64)
        """Each row's cost before its e-class children's."""
        spans = [(t, i) for t, table in enumerate(self.tables) for i in range(len(table.classes))]
        self.child_columns = {(t, i): np.array(self.children[t][i], dtype=np.int64) for t, i in spans}
        """The children as arrays: (table, position among its e-class children) -> their classes."""

    def column(self, t: int, i: int) -> list[eb.Value]:
        """Table `t`'s input column `i`: child `i` of each of its rows (a slice, no Value touched)."""
        return self.inputs[t][i :: len(self.tables[t].sorts)]

    def cost(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Each e-class's cost (inf where it has no term, `none`'s too) and each row's, the least
        fixpoint: Bellman-Ford from infinity, every row relaxed at once per pass, until a pass
        changes nothing. None when that takes more than `MAX_PASSES` or a cost is past `_EXACT`."""
        row_class = self.row_class_array = np.array(self.row_class, dtype=np.int64)
        # A class's least cost is its first row's, lowered by its other rows' (few: most classes
        # have one row). Every class 0 .. none-1 has a first row.
        first_row = np.unique(row_class, return_index=True)[1]
        others = np.ones(len(row_class), dtype=bool)
        others[first_row] = False
        others = np.flatnonzero(others)
        others_class = row_class[others]
        columns = [(self.first[t], self.first[t + 1], column) for (t, _), column in self.child_columns.items()]
        cost = np.full(self.none + 1, np.inf)
        for _ in range(MAX_PASSES):
            row_cost = self.base.copy()
            for start, end, column in columns:  # a row's children, column by column
                row_cost[start:end] += cost[column]
            lowest = row_cost[first_row]
            np.minimum.at(lowest, others_class, row_cost[others])
            if np.array_equal(lowest, cost[: self.none]):
                finite = lowest[np.isfinite(lowest)]
                if finite.size and finite.max() >= _EXACT:
                    return None
                return cost, row_cost
            cost[: self.none] = lowest
        return None

    def choose(self, cost: np.ndarray, row_cost: np.ndarray, roots: list[int]) -> list[int] | None:
        """Each e-class's first row of least cost in scan order (-1 where it has no term, and for
        the classes no chosen term holds), walked from `roots` level by level; None when a class
        the chosen terms hold has two rows of its least cost (a tie, egglog's to break)."""
        row_class = self.row_class_array
        best = np.flatnonzero((row_cost == cost[row_class]) & np.isfinite(row_cost))
        choice = np.full(self.none + 1, len(row_class), dtype=np.int64)
        np.minimum.at(choice, row_class[best], best)  # the first in scan order
        choice[choice == len(row_class)] = -1
        tied = np.bincount(row_class[best], minlength=self.none + 1) > 1
        # The children of each row in a matrix, padded with `none`, to walk the chosen terms.
        width = max((len(t.classes) for t in self.tables), default=0)
        kids = np.full((len(self.row_class), max(width, 1)), self.none, dtype=np.int64)
        for (t, i), column in self.child_columns.items():
            kids[self.first[t] : self.first[t + 1], i] = column
        held = np.zeros(self.none + 1, dtype=bool)
        held[self.none] = True
        frontier = np.array([c for c in roots if choice[c] >= 0], dtype=np.int64)
        while frontier.size:
            held[frontier] = True
            below = kids[choice[frontier]].ravel()
            below = below[~held[below]]
            met = np.zeros(self.none + 1, dtype=bool)  # each class once in the next level
            met[below] = True
            frontier = np.flatnonzero(met)
        held[self.none] = False
        if tied[held].any():
            return None
        choice[~held] = -1
        chosen: list[int] = choice.tolist()
        return chosen

    def read(self, egraph: eb.EGraph, choice: list[int]) -> DagRead:
        """The chosen rows as the decoder's columns, table by table: node c is e-class c, and each
        distinct primitive value is one node more, converted once."""
        size = self.none
        names: list[str | None] = [None] * size
        args: list[list[int]] = [[]] * size
        values: list[Any] = [NOT_LITERAL] * size
        literals: dict[str, dict[eb.Value, int]] = {sort: {} for sort in _PRIMITIVES}
        chosen = sorted(choice)
        del chosen[: bisect.bisect_left(chosen, 0)]  # the classes with no chosen term
        first, row_class = self.first, self.row_class
        for t, table in enumerate(self.tables):
            rows = chosen[bisect.bisect_left(chosen, first[t]) : bisect.bisect_left(chosen, first[t + 1])]
            if not rows:
                continue
            # Column by column with map over C-level getters, as the rows were read.
            classes = list(map(row_class.__getitem__, rows))
            for c in classes:
                names[c] = table.name
            at = [row - first[t] for row in rows]
            own = iter(self.children[t])
            columns = [
                list(map(next(own).__getitem__, at))
                if sort not in literals
                else self._literals(egraph, sort, list(map(self.column(t, i).__getitem__, at)), literals[sort], names, args, values)
                for i, sort in enumerate(table.sorts)
            ]
            kids = list(map(list, zip(*columns, strict=True))) if columns else [[] for _ in rows]
            for c, node in zip(classes, kids, strict=True):
                args[c] = node
        return DagRead(len(names), names, args, values)

    @staticmethod
    def _literals(
        egraph: eb.EGraph,
        sort: str,
        column: list[eb.Value],
        nodes: dict[eb.Value, int],
        names: list[str | None],
        args: list[list[int]],
        values: list[Any],
    ) -> list[int]:
        """The nodes of a column of primitive Values of `sort`, each distinct Value made a node
        (appended to the columns) and converted when first met."""
        # One look-up per Value in a plain loop: a Value hashes and compares through egglog's
        # bindings, and a look-up costs more than the loop (two passes in C, the column's distinct
        # Values and then each Value's node, took about 40% longer at flat-10000).
        convert, get = _PRIMITIVES[sort], nodes.get
        found: list[int] = []
        for value in column:
            node = get(value)
            if node is None:
                node = nodes[value] = len(values)
                values.append(convert(egraph, value))
            found.append(node)
        fresh = len(values) - len(names)
        names += [None] * fresh
        args += [[]] * fresh
        return found
