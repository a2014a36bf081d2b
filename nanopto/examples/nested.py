"""docs/specification.md, "Callee-first order": callees are expanded first.

`quad` calls `square` twice; it is expanded before `main`'s site is spliced, so `main` receives
the fully expanded body with every local renamed per site.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def square(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function(type=pl.FunctionType.Inline)
    def quad(self, x):
        s = self.square(x)
        q = self.square(s)
        return q

    @pl.function
    def main(self, a):
        r = self.quad(a)
        return r
