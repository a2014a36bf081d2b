"""The `@pl.jit` front end: Python functions, specialized by their arguments into `pl` programs.

It sits above the passes and the verifier: it parses with the `pl` parser (`ir_terms`), lowers
with the default pipeline (`passes.PassManager.default()`) and runs with the reference interpreter
(`verify.interpret`). Users reach it as `pl.jit` (`import nanopto.language as pl`).
"""

from nanopto.jit.errors import JITError
from nanopto.jit.function import JITFunction, Specialization, jit

__all__ = ["JITError", "JITFunction", "Specialization", "jit"]
