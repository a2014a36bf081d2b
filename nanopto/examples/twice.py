"""docs/specification.md, "Rebinding a parameter": the 3A trap.

`twice` rebinds its tensor parameter with a value that does not alias it (`t = pl.add(t, t)`), so
the call site binds a fresh local `t_inline0 = a` first. Substituting the caller's `a` at the
def-site instead would rebind `a` itself, and `w = pl.add(a, u)` would compute 4A, not 3A.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def twice(self, t: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        t = pl.add(t, t)
        return t

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        u = self.twice(a)
        w = pl.add(a, u)
        return w
