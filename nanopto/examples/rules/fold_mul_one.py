"""`pl.mul(x, 1) -> x`: a user rewrite rule, run as the pass `fold-mul-one`.

    nanopto inline PROGRAM.py --rules nanopto/examples/rules/fold_mul_one.py

runs inline-functions, then fold-mul-one. This file is imported as Python (it is your rule code);
the program file is only parsed. Only the integer constant 1 is folded: `x * 1.0` may promote an
integer `x` to a float, so folding it would change the result's type. On scalars `pl.mul(n, 1)` is
the operator `n * 1`, which `call("mul", ...)` never matches; docs/your-own-rules.md adds the
operator form (`x * 1`).
"""

from nanopto import passes
from nanopto.rules import Ruleset, call, const, rewrite_rule, var

x = var("x")

FOLD_MUL_ONE = Ruleset(
    "fold-mul-one",
    "Multiplying by the integer constant 1 gives the other operand.",
    (
        rewrite_rule("mul-x-one", call("mul", x, const(1)), x),
        rewrite_rule("mul-one-x", call("mul", const(1), x), x),
    ),
)

PASSES = [passes.rewrite(FOLD_MUL_ONE, name="fold-mul-one")]
"""What `--rules` picks up: the passes this file contributes, in the order they run."""
