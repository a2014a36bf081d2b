"""docs/specification.md, "Alpha-renaming", multiple call sites: each site gets its own fresh names, so locals never collide."""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def square(self, x):
        y = pl.mul(x, x)
        return y

    @pl.function
    def main(self, a, b):
        a2 = self.square(a)
        b2 = self.square(b)
        return pl.add(a2, b2)
