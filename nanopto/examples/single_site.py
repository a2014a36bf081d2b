"""docs/specification.md, "Purpose", a single call site: one helper, one call; the helper's local is alpha-renamed."""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, a):
        z = self.helper(a)
        return z
