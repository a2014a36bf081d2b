"""nanopto: a nanopass-style term-rewriting system for the `pl` tile IR.

Its central pass, InlineFunctions, splices alpha-renamed copies of `FunctionType.Inline` helpers
at their call sites; the splicing, substitution and tuple projection are egglog rewrite rules run
to saturation, and a Python checker enforces the seed's alias/rebinding table on the result.
"""

__version__ = "0.1.0"
