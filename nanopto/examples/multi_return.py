"""docs/specification.md, "Tuple returns and projection": `q, ready = self.helper(x, q)` is wired by projection.

No tuple is built: each use of a component is replaced by the helper's returned value, and the
identity write-back `q = q` is omitted because both sides are the same Var.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, x: pl.Tensor[[4], pl.FP32], q: pl.Tensor[[4], pl.FP32]):
        q = pl.tensor.assemble(q, x, [0])
        ready = pl.exp(x)
        return q, ready

    @pl.function
    def main(self, x: pl.Tensor[[4], pl.FP32], q: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        q, ready = self.helper(x, q)
        return pl.add(q, ready)
