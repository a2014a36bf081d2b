"""docs/specification.md, "Statement forms": the scope is spliced verbatim.

A later pass (OutlineIncoreScopes in PyPTO) outlines it exactly as if it had been written at the
call site.
"""

import nanopto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def scaled(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.mul(x, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        b = self.scaled(a)
        return b
