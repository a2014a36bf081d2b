"""docs/specification.md, "Rebinding a parameter": the `k + m` trap (the table's last row).

`bump` rebinds a plain scalar parameter, so its argument is bound to a fresh local
`n_inline0 = k` and the caller's `k` is still the original afterwards: `k + m` is 2k + 1.
Substituting `k` at the def-site would splice `k = k + 1` and compute 2k + 2.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def bump(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        n = n + 1
        return n

    @pl.function
    def main(self, k: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        m: pl.Scalar[pl.INDEX] = self.bump(k)
        return k + m
