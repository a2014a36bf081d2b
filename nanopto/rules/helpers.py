"""The helper terms the inlining rules reason with; none of them is ever extracted.

They are declared `:unextractable`, so extraction cannot return a program that still mentions a
substitution, a template or a pending discard: a rule that forgot to eliminate one makes
extraction fail loudly instead of printing a half-rewritten program.
"""

from __future__ import annotations

import re

from nanopto.ir_terms.encoding import SORTS, Constructor, attr_value
from nanopto.ir_terms.ops import OPS, SCALAR_OPERATORS
from nanopto.ir_terms.term_rows import FactTable, handle

SUBST = {sort: f"Sub{sort}" for sort in SORTS}
"""`(SubEx e site)`: `e` with the formals of `site`'s callee replaced and its locals renamed."""

INLINE_TERMS: tuple[Constructor, ...] = (
    Constructor(
        "At",
        ("i64", "String", "SL"),
        "Ex",
        doc="an inline call site: (At site template bindings), the bindings placed before the body",
    ),
    Constructor("RVar", ("String", "Ty", "i64", "i64"), "Ex", doc="callee local `id` renamed for `site`"),
    Constructor("RIterArg", ("String", "Ty", "i64", "i64", "Ex"), "Ex", doc="callee iter_arg renamed for `site`"),
)
"""The extractable terms inlining adds to the IR: a call site still to splice, and the renamed
copies of callee variables (decoded into fresh Vars by `nanopto.passes.inlining.terms`)."""

HELPER_CONSTRUCTORS: tuple[Constructor, ...] = (
    *(Constructor(SUBST[s], (s, "i64"), s, unextractable=True, doc=f"substitute into a {s}") for s in SORTS),
    Constructor("Arg", ("i64", "i64"), "Ex", True, "(Arg site param-id): what the formal stands for at site"),
    Constructor("Body", ("String",), "SL", True, "(Body t): the statements of template t (an Inline helper), return excluded"),
    Constructor("Ret", ("String",), "ExL", True, "(Ret t): the values template t returns"),
    Constructor("WireAssign", ("Ex", "Ex", "String", "String"), "St", True, "lhs = cloned return value, if not the same Var"),
    Constructor("Discard", ("ExL", "String"), "SL", True, "the statements a discarded return value leaves behind"),
    Constructor("NthEx", ("ExL", "i64"), "Ex", True, "the i-th element of an expression list"),
)

HELPER_FACTS = """\
(relation Local (i64))
(relation Projected (Ex))
(relation ProjectedRead (SL))
(relation IsScalar (Ex))
(relation WantScalar (Ex))
(relation ScalarOperator (String String))
(function TupleForm (i64) String :merge new)"""
"""`(Local id)`: a variable the callee binds (renamed per site); a module-level symbol is a formal
of every site (its `Arg` is the caller's extent or the symbol itself). `(Projected e)`: e was a tuple component `tmp[i]`.
`(ProjectedRead x)`: x is a caller's statement `q = tmp[i]` reading a component of a projected receiver. `(TupleForm site)`: "project" or "bind", how a multi-return site wires its result.
`(IsScalar e)`: e is a scalar, by the types its variables and constants carry; `(WantScalar e)`:
a rule asks whether it is. `(ScalarOperator op binop)`: `pl.<op>` of two scalars is the scalar operator `binop`."""


FACT_NAMES: tuple[str, ...] = tuple(re.findall(r"^\((?:relation|function) (\w+)", HELPER_FACTS, re.MULTILINE))
"""The names of the fact relations and tables above (what a picture hides with the helpers)."""


def helper_declarations() -> str:
    """The inline terms, the helper constructors and the fact relations, as egglog text."""
    operators = [
        f'(ScalarOperator "{op}" "{attr_value(binop)}")'
        for op, binop in SCALAR_OPERATORS.items()
        if op in OPS  # pl.min and pl.max of anything but scalars are refused by the parser
    ]
    return "\n".join([*(c.declaration() for c in (*INLINE_TERMS, *HELPER_CONSTRUCTORS)), HELPER_FACTS, *operators])


HELPER_FACT_TABLES = (
    FactTable("Local", ("i64",), "(Local c0)"),
    FactTable("TupleForm", ("i64", "String"), "(set (TupleForm c0) c1)"),
    FactTable("ProjectedRead", ("i64",), f"(ProjectedRead ({handle('SL')} c0))"),
)
"""The facts Python gives the rules that are not terms, loaded as rows."""
