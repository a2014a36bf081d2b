"""Constant folding on scalars: `n + 1 + 2 -> n + 3`, `2 * 3 -> 6`, run as the pass `fold-constants`.

    nanopto inline PROGRAM.py --rules nanopto/examples/rules/fold_constants.py

Constants carry their values as egglog `i64`s, so a rule computes on them: `ConstInt(a + b, d)` is
the sum, computed by egglog when the rule fires. Each fold requires both operands to be in a range
where the sum or product cannot overflow 64 bits (a condition), and the association of `+` is a
`birewrite`, so `(n + 1) + 2` meets `n + (1 + 2)` and the fold sees the two constants side by side.
Extraction keeps the smallest equal term, `n + 3`. Only integers of one dtype are folded: a float
sum may round, and mixing dtypes changes the result's type.
"""

from egglog import String, birewrite, i64, rewrite

from nanopto import passes
from nanopto.rules import Ruleset, binary, declare, var
from nanopto.terms.language import ConstInt

a, b, d = var("a", i64), var("b", i64), var("d", String)
x, y, z = var("x"), var("y"), var("z")
SMALL = 2**31
"""Operands below this in magnitude: no sum or product of two of them overflows an i64."""


def small(value: i64) -> tuple[object, object]:
    """The condition `-SMALL < value < SMALL`."""
    return (value < SMALL, value > -SMALL)


FOLD_CONSTANTS = Ruleset(
    "fold-constants",
    "Integer arithmetic on two constants of one dtype is its result; + associates.",
    (
        declare(
            "fold-add",
            rewrite(binary("+", ConstInt(a, d), ConstInt(b, d))).to(ConstInt(a + b, d), *small(a), *small(b)),
        ),
        declare(
            "fold-sub",
            rewrite(binary("-", ConstInt(a, d), ConstInt(b, d))).to(ConstInt(a - b, d), *small(a), *small(b)),
        ),
        declare(
            "fold-mul",
            rewrite(binary("*", ConstInt(a, d), ConstInt(b, d))).to(ConstInt(a * b, d), *small(a), *small(b)),
        ),
        declare(
            "add-associates",
            birewrite(binary("+", binary("+", x, y), z)).to(binary("+", x, binary("+", y, z))),
            "(x + y) + z is x + (y + z) on integers, so constants meet whatever order they were written in",
        ),
    ),
)

PASSES = [passes.rewrite(FOLD_CONSTANTS, name="fold-constants")]
"""What `--rules` picks up: the passes this file contributes, in the order they run."""
