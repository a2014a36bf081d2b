"""`pl.mul(x, 1) -> x`: a user rewrite rule, run as the pass `fold-mul-one`.

    nanopto inline PROGRAM.py --rules nanopto/examples/rules/fold_mul_one.py

runs inline-functions, then fold-mul-one. This file is imported as Python (it is your rule code);
the program file is only parsed.

`pl.mul` returns a buffer of its own, and the rewrite makes its receiver share `x`'s instead. That
is invisible only if nobody writes either buffer in place afterwards, so the rule requires it:
`Fresh(m)` (the product is a fresh buffer no statement writes in place, returns or passes on) and
`Unwritten(x)` (nothing writes `x`'s buffer in place). Without them,
`v = pl.mul(a, 1); v = pl.tensor.assemble(v, b, [0]); return a` would write the caller's `a`
(docs/your-own-rules.md#side-conditions). Only the integer constant 1 is folded: `x * 1.0` may
promote an integer `x` to a float. On scalars `pl.mul(n, 1)` is the operator `n * 1`, which
`call("mul", ...)` never matches.
"""

from egglog import rewrite

from nanopto import passes
from nanopto.rules import Ruleset, call, declare, var
from nanopto.terms.language import Fresh, Unwritten

x = var("x")
x_times_one = call("mul", x, 1)
one_times_x = call("mul", 1, x)

FOLD_MUL_ONE = Ruleset(
    "fold-mul-one",
    "Multiplying by the integer constant 1 gives the other operand, where sharing its buffer is unobservable.",
    (
        declare("mul-x-one", rewrite(x_times_one).to(x, Fresh(x_times_one), Unwritten(x))),
        declare("mul-one-x", rewrite(one_times_x).to(x, Fresh(one_times_x), Unwritten(x))),
    ),
)

PASSES = [passes.rewrite(FOLD_MUL_ONE, name="fold-mul-one")]
"""What `--rules` picks up: the passes this file contributes, in the order they run."""
