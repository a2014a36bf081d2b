"""docs/specification.md, "Argument binding": computed tensor arguments, `f(a[r], c[r], r)`.

Each computed argument is bound once at the call site (`x_inline0 = a[r]`, `c_inline1 = c[r]`,
each the call `pl.tensor.slice(...)` the parser reads a subscript as), then the callee's write
`c[0:4, j] = v` (which the parser desugars to
`c = pl.tensor.assemble(c, pl.tensor.reshape(v, [4, 1]), [0, j])`) lands on that local, a view of
the caller's `c`.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def f(self, x: pl.Tensor[[4, 8], pl.FP32], c: pl.Tensor[[4, 8], pl.FP32], j: pl.Scalar[pl.INDEX]):
        v = pl.exp(x[0:4, j])
        c[0:4, j] = v
        return c

    @pl.function
    def main(
        self, a: pl.Tensor[[8, 4, 8], pl.FP32], c: pl.Tensor[[8, 4, 8], pl.FP32], r: pl.Scalar[pl.INDEX]
    ) -> pl.Tensor[[4, 8], pl.FP32]:
        d = self.f(a[r], c[r], r)
        return d
