"""The terms inlining adds to the IR encoding: call sites, renamed copies of callee variables,
the helper terms its rules reason with, and the facts Python gives them.

An inline call site is written `(At site template bindings)` (`INLINE_TERMS` below): the
template is the helper body Python chose for that site, `bindings` the statements that bind
arguments to fresh locals before the body. The call itself stays in Python, so an unspliced site
decodes back to its own call and `decode(encode(p))` is `p` when no rule fires.

The subst rules rename a callee local `y` for site `s` as `(RVar "y" type id s)`; the decoder turns
each distinct copy into one fresh `Var`, named by `names.inline_name` in the order it meets them
(program order), so names are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.names import inline_name, join_name_suffix, parse_auto_name
from nanopto.ir_terms.ops import OPS, SCALAR_OPERATORS
from nanopto.terms.encoding import (
    ANALYSIS_FACTS,
    SORTS,
    Constructor,
    DecodeError,
    Decoder,
    Encoder,
    Fact,
    attr_value,
)
from nanopto.terms.term_rows import FactTable, TermRows, handle

# ---------------------------------------------------------------------------------------------
# The helper terms and facts of the inlining rules. None of the helper terms is ever extracted:
# they are declared `:unextractable`, so extraction cannot return a program that still mentions a
# substitution, a template or a pending discard; a rule that forgot to eliminate one makes
# extraction fail loudly instead of printing a half-rewritten program.
# ---------------------------------------------------------------------------------------------

SUBST = {sort: f"Sub{sort}" for sort in SORTS}
"""`(SubEx e site)`: `e` with the formals of `site`'s callee replaced and its locals renamed."""

INLINE_TERMS: tuple[Constructor, ...] = (
    Constructor(
        "At",
        ("i64", "String", "SL"),
        "Ex",
        doc="an inline call site: (At site template bindings), the bindings placed before the body",
        fields=("site", "template", "bindings"),
    ),
    Constructor(
        "RVar", ("String", "Ty", "i64", "i64"), "Ex", doc="callee local `id` renamed for `site`", fields=("name", "type", "id", "site")
    ),
    Constructor(
        "RIterArg",
        ("String", "Ty", "i64", "i64", "Ex"),
        "Ex",
        doc="callee iter_arg renamed for `site`",
        fields=("name", "type", "id", "site", "init"),
    ),
)
"""The extractable terms inlining adds to the IR: a call site still to splice, and the renamed
copies of callee variables (decoded into fresh Vars by `InlineDecoder` below)."""

HELPER_CONSTRUCTORS: tuple[Constructor, ...] = (
    *(
        Constructor(SUBST[s], (s, "i64"), s, unextractable=True, doc=f"substitute into a {s}", fields=("term", "site"))
        for s in SORTS
    ),
    Constructor("Arg", ("i64", "i64"), "Ex", True, "(Arg site param-id): what the formal stands for at site", ("site", "param")),
    Constructor(
        "Body", ("String",), "SL", True, "(Body t): the statements of template t (an Inline helper), return excluded", ("template",)
    ),
    Constructor("Ret", ("String",), "ExL", True, "(Ret t): the values template t returns", ("template",)),
    Constructor(
        "WireAssign",
        ("Ex", "Ex", "String", "String"),
        "St",
        True,
        "lhs = cloned return value, if not the same Var",
        ("lhs", "value", "annotated", "span"),
    ),
    Constructor("Discard", ("ExL", "String"), "SL", True, "the statements a discarded return value leaves behind", ("values", "span")),
    Constructor("NthEx", ("ExL", "i64"), "Ex", True, "the i-th element of an expression list", ("values", "index")),
)

HELPER_FACTS: tuple[Fact, ...] = (
    Fact(
        "Local",
        ("i64",),
        "`(Local id)`: a variable the callee binds (renamed per site); a module-level symbol is a formal of "
        "every site (its `Arg` is the caller's extent or the symbol itself)",
        fields=("id",),
    ),
    Fact("Projected", ("Ex",), "`(Projected e)`: e was a tuple component `tmp[i]`", fields=("e",)),
    Fact(
        "ProjectedRead",
        ("SL",),
        "`(ProjectedRead x)`: x is a caller's statement `q = tmp[i]` reading a component of a projected receiver",
        fields=("x",),
    ),
    Fact(
        "ScalarOperator",
        ("String", "String"),
        "`(ScalarOperator op binop)`: `pl.<op>` of two scalars is the scalar operator `binop`",
        fields=("op", "binop"),
    ),
    Fact(
        "TupleForm",
        ("i64",),
        '`(TupleForm site)`: "project" or "bind", how a multi-return site wires its result',
        value="String",
        fields=("site",),
    ),
)
"""The facts inlining's rules read besides the terms (`IsScalar` is the IR's, `ANALYSIS_FACTS`)."""

FACT_NAMES: tuple[str, ...] = tuple(f.name for f in (*HELPER_FACTS, *ANALYSIS_FACTS))
"""The names of the fact relations and tables (what a picture hides with the helpers)."""


def helper_declarations() -> str:
    """The inline terms, the helper constructors and the fact relations, as egglog text."""
    operators = [
        f'(ScalarOperator "{op}" "{attr_value(binop)}")'
        for op, binop in SCALAR_OPERATORS.items()
        if op in OPS  # pl.min and pl.max of anything but scalars are refused by the parser
    ]
    return "\n".join(
        [*(c.declaration() for c in (*INLINE_TERMS, *HELPER_CONSTRUCTORS)), *(f.declaration() for f in HELPER_FACTS), *operators]
    )


SITE_ASSIGN = "SiteAssign"
"""The load table of a call site's statement `lhs = f(args)` (`InlineEncoder._single`)."""

HELPER_FACT_TABLES = (
    FactTable("ArgIs", ("i64", "i64", "i64"), f"(union (Arg c0 c1) ({handle('Ex')} c2))"),
    FactTable(
        SITE_ASSIGN,
        ("i64", "i64", "i64", "String", "i64", "String", "String"),
        f"(union ({handle('SL')} c0) (SOne (AssignStmt ({handle('Ex')} c1) (At c2 c3 ({handle('SL')} c4)) c5 c6)))",
    ),
    FactTable("Local", ("i64",), "(Local c0)"),
    FactTable("TupleForm", ("i64", "String"), "(set (TupleForm c0) c1)"),
    FactTable("ProjectedRead", ("i64",), f"(ProjectedRead ({handle('SL')} c0))"),
)
"""The facts Python gives the rules that are not terms, loaded as rows. `ArgIs` states what a
formal stands for at a site, `(Arg site param)` equal to the actual's term, in one row (the term
and a union would be two, at every site). `SiteAssign` is a call site's statement `lhs = f(args)`
as its statement list holds it, `(SOne (AssignStmt lhs (At site template pre) annotated span))`
under the handle in its first column: one row where the three terms were three, at every site
(each row costs `input` and the load rule a few µs; the terms are the same)."""


class InlineEncoder(Encoder):
    """The IR encoder that writes the chosen calls as `(At site template bindings)`.

    `site_of` maps a call (by identity) to its site number and template; `site_bindings` holds
    each site's bindings handle, set before the bodies are encoded (`(Skip)` when absent).
    """

    def __init__(
        self,
        site_of: dict[int, tuple[int, str]],
        opaque: set[int] | None = None,
        rows: TermRows | None = None,
        singles: set[int] | None = None,
    ) -> None:
        super().__init__(opaque=opaque, rows=rows, singles=singles)
        self.site_of = site_of
        self.site_calls: dict[int, n.Node] = {}
        self.site_bindings: dict[int, int] = {}
        self.stand_ins: dict[int, n.Node] = {}
        """Nodes (by identity) encoded as another node in their place: the assignment and reads of
        a tuple receiver that several sites assign, told apart per site (`CallSite.stand_in`)."""

    def _expr(self, node: n.Node) -> int:
        if self.stand_ins:  # rarely any: asked once per encoded node
            node = self.stand_ins.get(id(node), node)
        site = self.site_of.get(id(node))
        if site is None:
            return super()._expr(node)
        return self.rows.term("At", *self._at_cells(node, site))

    def _at_cells(self, call: n.Node, site: tuple[int, str]) -> tuple[int, str, int]:
        """The cells of the site's `(At site template pre)`."""
        number, template = site
        self.site_calls[number] = call
        bindings = self.site_bindings.get(number)
        return number, template, self.rows.term("Skip") if bindings is None else bindings

    def _single(self, stmt: n.Stmt) -> int:
        """A call site's `lhs = f(args)` as one `SiteAssign` row (`HELPER_FACT_TABLES`); any
        other statement as `(SOne st)`."""
        shown = self.stand_ins.get(id(stmt), stmt) if self.stand_ins else stmt
        if not isinstance(shown, n.AssignStmt) or (site := self.site_of.get(id(shown.value))) is None:
            return super()._single(stmt)
        lhs = self.expr(shown.var)
        return self.rows.term(
            SITE_ASSIGN,
            lhs,
            *self._at_cells(shown.value, site),
            attr_value(shown.annotated),
            self.span_text(shown.span, shown.comments),
        )


@dataclass
class InlineDecoder(Decoder):
    """The decoder that reads call sites back as their calls and renamed copies as fresh Vars."""

    counter: int = 0
    site_calls: dict[int, n.Node] = field(default_factory=dict)
    """Site number -> its call, for a site that comes back unspliced."""
    taken: set[str] = field(default_factory=set)
    """Names already used where the copies land: a fresh name skips them, so the printed program
    never makes two Vars one name (the counter still numbers every copy uniquely)."""
    origins: dict[int, str] = field(default_factory=dict)
    """Fresh Var id -> the name it was derived from. Shared across the stages of one pass run, so
    a local copied through nested helpers is named once from its original (`y_inline7`, not
    `y_inline0_inline7`); the counter keeps every name unique."""
    renamed: dict[tuple[int, int], n.Var] = field(default_factory=dict)
    """(callee Var id, site number) -> the fresh Var made for it."""
    _prefixes: dict[str, str] = field(default_factory=dict)
    """Base name -> what `inline_name(base, k)` is followed by `k`, for a plain (not auto) name;
    "" for an auto-name, which `inline_name` rewrites whole."""

    def _at(self, args: list[int]) -> n.Node:
        site = self.lit(args[0])
        if site not in self.site_calls:
            raise DecodeError(f"extraction produced call site {site}, whose call the decoder was not given")
        return self.site_calls[site]

    def fresh_copy(self, args: list[int]) -> n.Var:
        """The one fresh Var standing for a renamed copy `(RVar name type id site)` (an IterArg for
        `(RIterArg name type id site init)`), named when first met; the type and init terms are
        decoded after the name, so the names they contain are numbered after it. The handler of
        both constructors itself: a renamed copy is the commonest spliced term (40,000 at
        flat-10000), so its literals are read here without a call in between."""
        lit = self.lit
        var_id = lit(args[2])
        key = (var_id, lit(args[3]))
        existing = self.renamed.get(key)
        if existing is not None:
            return existing
        base = self.origins.get(var_id)
        if base is None:
            base = lit(args[0])
        prefix = self._prefixes.get(base)
        if prefix is None:
            prefix = self._prefixes[base] = "" if parse_auto_name(base) is not None else join_name_suffix(base, "inline")
        counter, taken = self.counter, self.taken
        while True:  # the next number whose name is free
            fresh_name = prefix + str(counter) if prefix else inline_name(base, counter)
            counter += 1
            if fresh_name not in taken:
                break
        self.counter = counter
        taken.add(fresh_name)
        ty = self._term(args[1])
        var = _new_var(fresh_name, ty) if len(args) == 4 else n.IterArg(fresh_name, ty, init_value=self._term(args[4]))
        self.renamed[key] = var
        self.origins[var.id] = base
        return var


_new_var = n.slot_constructor(n.Var, ("name", "type"))
"""`n.Var(name, ty)`, its other fields (a fresh id, no span) at their defaults, built slot by
slot: a frozen dataclass's `__init__` costs twice as much, and the decoder makes one Var per
copied local per call site."""


_INLINE_SPECIAL: dict[str, Callable[[Any, list[int]], Any]] = {
    "At": InlineDecoder._at,
    "RVar": InlineDecoder.fresh_copy,
    "RIterArg": InlineDecoder.fresh_copy,
}
InlineDecoder.SPECIAL = {**Decoder.SPECIAL, **_INLINE_SPECIAL}
