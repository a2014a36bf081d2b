"""docs/09-inlining-with-jit.md: the `twice` trap written with @pl.jit functions and called with an array.

`double` rebinds its parameter in straight-line code, so the JIT's own rename gives the rebinding
a fresh name (`x__jit_v1`). `double_twice` rebinds it inside `pl.range`, which the JIT leaves as
written: InlineFunctions' rebinding table binds the argument to a fresh local, so the caller's `a`
is unchanged and `main(a)` is A + 2A + 4A = 7A.

`nanopto demo jit_twice` imports this module (it is part of nanopto, never a user's file): the
decorators only record the functions, whose bodies are parsed, never run.
"""

import numpy as np

import nanopto.language as pl


@pl.jit.inline
def double(x: pl.Tensor):
    x = pl.add(x, x)
    return x


@pl.jit.inline
def double_twice(x: pl.Tensor):
    for _ in pl.range(2):
        x = pl.add(x, x)
    return x


@pl.jit
def main(a: pl.Tensor):
    u = double(a)
    v = double_twice(a)
    w = pl.add(a, u)
    return pl.add(w, v)


ENTRY = main
"""The entry the demo calls."""


def demo_args() -> tuple[np.ndarray, ...]:
    """The arguments the demo calls `ENTRY` with."""
    return (np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32),)


INPUTS = "a = [1, 2, 3, 4]"
RIGHT_RESULT = "7A"
"""What the call computes: A + 2A + 4A (substituting `a` at the loop's def-site would not)."""
