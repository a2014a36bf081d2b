"""docs/specification.md, "Discarding a return value": the value is dropped, its evaluation is not.

`writeout`'s return expression is the store itself, so the discarded call site re-emits it as an
EvalStmt: the store survives in `kernel`.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def writeout(self, t: pl.Tile[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        return pl.tile.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(
        self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
    ) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.tile.load(a, [0, 0], [64, 64])
        self.writeout(t, out)
        return out
