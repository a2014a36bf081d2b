"""Property: a drawn program called through `@pl.jit` computes what its `@pl.program` form does.

Each drawn program (`nanopto.verify.strategies.programs()`) is printed as `@pl.jit` source: every
method becomes a module-level function, `main` a `@pl.jit` entry and each Inline helper a
`@pl.jit.inline` function, `self.h(...)` a plain call `h(...)`, and (drawn) parameter annotations
either kept in full or cut to their bare heads (`pl.Tensor`, `pl.Out[pl.Tensor]`, `pl.Scalar`,
`pl.Array`), so the types come from the arguments and the call sites. Calling the entry with drawn
arrays must give the result, and leave every buffer, as interpreting the original program does.
"""

from __future__ import annotations

import ast
import copy
import itertools
import linecache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, note, reject
from hypothesis import strategies as st

from nanopto import ir, passes
from nanopto.ir_terms.nodes import FunctionType, Program
from nanopto.ir_terms.printer import python_print
from nanopto.jit import JITError, JITFunction
from nanopto.verify.interpreter import interpret, values_equal
from nanopto.verify.strategies import ENTRY, inputs_for, programs

_BARE = {"Tensor": "pl.Tensor", "Scalar": "pl.Scalar", "Array": "pl.Array", "Tile": "pl.Tile"}
_files = itertools.count()


def _bare(annotation: ast.expr) -> ast.expr:
    """`pl.Out[pl.Tensor[[4], pl.FP32]]` -> `pl.Out[pl.Tensor]`."""
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Attribute):
        head = annotation.value.attr
        if head in ("Out", "InOut"):
            return ast.Subscript(value=annotation.value, slice=_bare(annotation.slice), ctx=ast.Load())
        if head in _BARE:
            return ast.parse(_BARE[head], mode="eval").body
    return annotation


class _Unself(ast.NodeTransformer):
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return ast.Name(id=node.attr, ctx=ast.Load())
        return node


def jit_source(program: Program, *, bare: bool) -> str:
    """`program` printed as `@pl.jit` functions (see the module docstring)."""
    module = ast.parse(python_print(program))
    cls = next(s for s in module.body if isinstance(s, ast.ClassDef))
    out: list[ast.stmt] = [s for s in module.body if not isinstance(s, ast.ClassDef)]
    for method in cls.body:
        assert isinstance(method, ast.FunctionDef)
        kind = program.functions[method.name].func_type
        decorator = "pl.jit.inline" if kind is FunctionType.Inline else "pl.jit"
        method.decorator_list = [ast.parse(decorator, mode="eval").body]
        method.args.args = method.args.args[1:]
        if bare:
            for arg in method.args.args:
                if arg.annotation is not None:
                    arg.annotation = _bare(arg.annotation)
            method.returns = None
        out.append(_Unself().visit(method))
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=out, type_ignores=[]))) + "\n"


def load_jit(source: str) -> dict[str, Any]:
    """Define the functions of `source`; linecache keeps the text, so `@pl.jit` can read it."""
    filename = f"<jit-property-{next(_files)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


@given(st.data())
def test_calling_through_pl_jit_equals_interpreting_the_program(data: st.DataObject) -> None:
    program = data.draw(programs(), label="program")
    args = data.draw(inputs_for(program), label="args")
    bare = data.draw(st.booleans(), label="bare annotations")
    source = jit_source(program, bare=bare)
    note(source)
    entry = load_jit(source)[ENTRY]
    assert isinstance(entry, JITFunction)
    expected_args, actual_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = interpret(program, ENTRY, *expected_args)
    try:
        actual = entry(*actual_args)
    except JITError as err:
        # The one documented refusal a drawn program can meet (chapter 9, "nanopto's choices").
        assert bare and "bare pl." in str(err) and "[pl.Scalar] parameter" in str(err), str(err)
        reject()
    assert values_equal(expected, actual)
    for name, before, after in zip((p.var.name for p in program.functions[ENTRY].param_list), expected_args, actual_args, strict=True):
        assert values_equal(before, after), f"argument {name!r} differs"


KNOWN_BUG = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def h0(self, t0: pl.Tensor[[4], pl.FP32]):
        t1 = pl.add(t0, t0)
        return t1

    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        b = self.h0(a)
        return self.h0(pl.add(b, b))
"""


def test_a_second_site_with_a_computed_argument_over_the_first_receiver() -> None:
    """Found by the property above (the JIT's rename turned a drawn helper's self-update into a
    fresh local, giving this shape): a second call site's computed argument reads the first
    site's receiver (`b = h0(a); h0(pl.add(b, b))`). The rebinding checker keyed the argument by
    the Vars inside their types too, and the pass derives the receiver's type afresh, so it counted
    the argument "evaluated 0 time(s) after inlining" and refused a correct program; it now keys
    by the Vars the expression reads."""
    program = ir.parse_program(KNOWN_BUG)
    a = np.arange(4, dtype=np.float32)
    assert values_equal(
        interpret(program, "main", a.copy()), interpret(passes.PassManager.default().run(program), "main", a.copy())
    )


def test_a_bare_out_scalar_the_call_sites_leave_untyped_is_refused_not_mistaken_for_a_tensor() -> None:
    """Found by the property above: `h1`'s bare `pl.Out[pl.Scalar]` received a constant at one
    site and a value of unknown type at the other, so it stayed untyped; InlineFunctions then read
    it as a tensor and bound it to a local, and the second site's write-back to `k` was lost
    (`arr[0]` was 2 where the program computes 3). It is now a located JITError asking for the
    dtype, and with the dtype written the program computes what it should."""
    source = """
import nanopto.language as pl


@pl.jit.inline
def h1(t0: pl.Tensor, s1: pl.Out[pl.Scalar], t3: pl.Tensor):
    s1 = s1 + 1
    t0 = pl.add(t0, t0)
    return t0, s1 + s1


@pl.jit
def main(a: pl.Tensor, k: pl.Scalar, arr: pl.Array):
    a, k = h1(pl.add(a, a), 0, pl.add(a, a))
    y2, m3 = h1(pl.add(a, a), k, a)
    arr[0] = k
    return a
"""
    args = (np.zeros(4, np.float32), 0, np.zeros(4, np.int64))
    with pytest.raises(JITError, match="parameter 's1' of 'h1'") as err:
        load_jit(source)["main"](*copy.deepcopy(args))
    assert err.value.parameter == "s1" and err.value.line > 0
    typed = load_jit(source.replace("pl.Out[pl.Scalar]", "pl.Out[pl.Scalar[pl.INDEX]]"))["main"]
    arr = np.zeros(4, np.int64)
    typed(np.zeros(4, np.float32), 0, arr)
    assert arr.tolist() == [3, 0, 0, 0]
