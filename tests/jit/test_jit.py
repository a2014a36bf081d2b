"""`@pl.jit`: specialization from arguments, discovery, the JIT alpha-rename, the cache, running,
and every error (docs/09-inlining-with-jit.md)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types

import numpy as np
import pytest

import nanopto.language as pl
from nanopto import ir
from nanopto.jit import JITError, JITFunction
from nanopto.jit.program import to_user_names

N = pl.dynamic("N")


def vec(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def line_of(fn: JITFunction, text: str) -> int:
    """The file line of the first line of `fn`'s source that contains `text`."""
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def roundtrips(program: ir.Program) -> None:
    ir.assert_structural_equal(ir.parse_program(ir.python_print(program)), program)


# ---------------------------------------------------------------------------------------------
# The family and discovery
# ---------------------------------------------------------------------------------------------


@pl.jit.incore
def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    out[:] = pl.add(a, b)
    return out


@pl.jit.inline
def add_twice(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """An Inline helper that wraps an InCore kernel."""
    y = pl.add(x, x)
    out = add_kernel(y, x, out)
    return out


@pl.jit
def wrapped(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = add_twice(a, out)
    return out


@pl.jit.opaque
def scale(x: pl.Tensor):
    return pl.add(x, x)


@pl.jit
def uses_opaque(a: pl.Tensor):
    r = scale(a)
    return r


def test_the_family_marks_each_function_type() -> None:
    program = wrapped.compile(vec(1, 2, 3, 4), np.zeros(4, np.float32)).program
    kinds = {f.name: f.func_type for f in program.function_list}
    assert kinds == {
        "wrapped": ir.FunctionType.Orchestration,
        "add_twice": ir.FunctionType.Inline,
        "add_kernel": ir.FunctionType.InCore,
    }
    program = uses_opaque.compile(vec(1, 2, 3, 4)).program
    assert program.functions["scale"].func_type is ir.FunctionType.Opaque


def test_a_helper_wrapping_an_incore_kernel_is_spliced_and_the_kernel_survives() -> None:
    a, out = vec(1, 2, 3, 4), np.zeros(4, np.float32)
    lowered = wrapped.lower(a, out)
    kinds = {f.name: f.func_type for f in lowered.function_list}
    assert kinds == {"wrapped": ir.FunctionType.Orchestration, "add_kernel": ir.FunctionType.InCore}
    result = wrapped(a, out)
    assert result is out
    np.testing.assert_array_equal(out, 3 * a)


def test_discovery_is_transitive_and_types_sub_functions_from_their_call_sites() -> None:
    program = wrapped.compile(vec(1, 2, 3, 4), np.zeros(4, np.float32)).program
    kernel = program.functions["add_kernel"]
    assert [ir.python_print(p.var.type) for p in kernel.param_list] == ["pl.Tensor[[4], pl.FP32]"] * 3
    assert kernel.param_list[2].direction is ir.ParamDirection.Out


def test_discovery_finds_functions_in_a_closure() -> None:
    @pl.jit.inline
    def local_helper(x):
        return pl.add(x, x)

    @pl.jit
    def local_entry(a: pl.Tensor):
        return local_helper(a)

    np.testing.assert_array_equal(local_entry(vec(1, 2)), vec(2, 4))
    assert "local_helper" in local_entry.compile(vec(1, 2)).program.functions


@pl.jit
def other_entry(a: pl.Tensor):
    return a


def test_an_entry_does_not_pull_in_another_entry() -> None:
    @pl.jit
    def calls_entry(a: pl.Tensor):
        r = other_entry(a)
        return r

    with pytest.raises(JITError) as info:
        calls_entry(vec(1))
    assert "'other_entry' is a @pl.jit entry: an entry does not pull another entry" in str(info.value)
    assert info.value.line == line_of(calls_entry, "r = other_entry(a)")
    assert info.value.file == __file__


def plain_python(x: object) -> object:
    return x


def test_calling_a_plain_python_function_is_an_error() -> None:
    @pl.jit
    def calls_python(a: pl.Tensor):
        return plain_python(a)

    with pytest.raises(JITError, match="'plain_python' is not a jit function") as info:
        calls_python(vec(1))
    assert "@pl.jit.inline" in (info.value.hint or "")


# ---------------------------------------------------------------------------------------------
# Parameters and specialization
# ---------------------------------------------------------------------------------------------


@pl.jit
def annotated(
    a: pl.Tensor[[2, 3], pl.FP32],
    k: pl.Scalar[pl.INDEX],
    out: pl.Out[pl.Tensor[[2, 3], pl.FP32]],
):
    out[:, :] = pl.add(a, a)
    return k + 1


@pl.jit
def bare(a: pl.Tensor, k: pl.Scalar, out: pl.Out[pl.Tensor]):
    out[:, :] = pl.add(a, a)
    return k + 1


@pl.jit
def unannotated(a, k, x):
    return pl.add(a, a)


def test_fully_annotated_and_bare_parameters_specialize_to_the_same_program() -> None:
    a, out = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    one = annotated.compile(a, 5, out).program
    two = bare.compile(a, 5, out).program
    assert [ir.python_print(p.var.type) for p in one.functions["annotated"].param_list] == [
        ir.python_print(p.var.type) for p in two.functions["bare"].param_list
    ]
    assert annotated(a, 5, out) == 6
    np.testing.assert_array_equal(out, 2 * a)


def test_ints_floats_and_arrays_give_scalar_and_tensor_types() -> None:
    program = unannotated.compile(np.ones((3,), np.int32), 2, 1.5).program
    assert [ir.python_print(p.var.type) for p in program.functions["unannotated"].param_list] == [
        "pl.Tensor[[3], pl.INT32]",
        "pl.Scalar[pl.INDEX]",
        "pl.Scalar[pl.FP32]",
    ]


@pytest.mark.parametrize("entry", [annotated, bare, wrapped, uses_opaque])
def test_the_specialized_program_is_an_ordinary_program_that_roundtrips(entry: JITFunction) -> None:
    args = {
        "annotated": (np.ones((2, 3), np.float32), 5, np.zeros((2, 3), np.float32)),
        "bare": (np.ones((2, 3), np.float32), 5, np.zeros((2, 3), np.float32)),
        "wrapped": (vec(1, 2, 3, 4), np.zeros(4, np.float32)),
        "uses_opaque": (vec(1, 2, 3, 4),),
    }[entry.__name__]
    roundtrips(entry.compile(*args).program)
    roundtrips(entry.lower(*args))


@pl.jit
def dynamic_rows(a: pl.Tensor[[N, 4], pl.FP32], b: pl.Tensor[[N, 4], pl.FP32]):
    return pl.add(a, b)


def test_dynamic_dimensions_stay_symbolic_and_bind_per_call() -> None:
    small, large = np.ones((2, 4), np.float32), np.ones((5, 4), np.float32)
    np.testing.assert_array_equal(dynamic_rows(small, small), 2 * small)
    np.testing.assert_array_equal(dynamic_rows(large, large), 2 * large)
    assert len(dynamic_rows.cache) == 1
    program = dynamic_rows.compile(small, small).program
    assert ir.python_print(program.functions["dynamic_rows"].param_list[0].var.type) == "pl.Tensor[[N, 4], pl.FP32]"
    roundtrips(program)


def test_a_dynamic_dimension_must_agree_across_arguments() -> None:
    with pytest.raises(JITError) as info:
        dynamic_rows(np.ones((2, 4), np.float32), np.ones((3, 4), np.float32))
    text = str(info.value)
    assert "argument 'b' of dynamic_rows() binds the dynamic dimension N to 3, but 'a' bound it to 2" in text
    assert info.value.parameter == "b"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_tensors_specialize_and_are_written_in_place() -> None:
    import torch

    a = torch.ones(4, dtype=torch.float32)
    out = torch.zeros(4, dtype=torch.float32)
    result = wrapped(a, out)
    assert result is out
    assert out.tolist() == [3.0, 3.0, 3.0, 3.0]


class _Device:
    type = "cpu"


class _FakeTorchTensor:
    """Quacks like a CPU `torch.Tensor`: `.detach().numpy()` shares its memory."""

    device = _Device()

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def detach(self) -> _FakeTorchTensor:
        return self

    def numpy(self) -> np.ndarray:
        return self.array


_FakeTorchTensor.__module__ = "torch"


def test_a_torch_like_tensor_is_seen_through_numpy_sharing_its_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tensor of the `torch` the caller imported (here a stand-in module): an object whose class
    merely names a torch module is not one (tests/jit/test_jit_edges.py)."""
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(Tensor=_FakeTorchTensor))
    a, out = _FakeTorchTensor(vec(1, 2, 3, 4)), _FakeTorchTensor(np.zeros(4, np.float32))
    result = wrapped(a, out)
    assert result is out  # the caller's own object comes back
    np.testing.assert_array_equal(out.array, vec(3, 6, 9, 12))


# ---------------------------------------------------------------------------------------------
# The cache
# ---------------------------------------------------------------------------------------------


def test_one_specialization_per_argument_signature() -> None:
    @pl.jit
    def cached(a: pl.Tensor):
        return pl.add(a, a)

    first = cached.compile(vec(1, 2))
    assert cached.compile(vec(5, 6)) is first
    assert len(cached.cache) == 1
    cached.compile(vec(1, 2, 3))
    cached.compile(np.array([1, 2], dtype=np.int32))
    assert len(cached.cache) == 3
    int_program = cached.compile(np.array([1, 2], dtype=np.int32)).program
    assert ir.python_print(int_program.functions["cached"].param_list[0].var.type) == "pl.Tensor[[2], pl.INT32]"


# ---------------------------------------------------------------------------------------------
# The JIT alpha-rename (docs/specification.md, "JIT helpers")
# ---------------------------------------------------------------------------------------------


@pl.jit.inline
def double_in_place(x: pl.Tensor):
    x = pl.add(x, x)
    return x


@pl.jit
def twice(a: pl.Tensor):
    u = double_in_place(a)
    w = pl.add(a, u)
    return w


@pl.jit.inline
def double_in_loop(x: pl.Tensor):
    for _ in pl.range(2):
        x = pl.add(x, x)
    return x


@pl.jit
def twice_in_loop(a: pl.Tensor):
    u = double_in_loop(a)
    w = pl.add(a, u)
    return w


@pl.jit.inline
def bump_in_loop(n: pl.Scalar):
    for _ in pl.range(1):
        n = n + 1
    return n


@pl.jit
def bump(k: pl.Scalar):
    m = bump_in_loop(k)
    return k + m


def test_a_straight_line_rebinding_of_a_parameter_gets_a_fresh_name() -> None:
    spec = twice.compile(vec(1, 2, 3, 4))
    helper = spec.program.functions["double_in_place"]
    assert "x__jit_v1 = pl.add(x, x)" in ir.python_print(helper)
    assert spec.renamed == {"x__jit_v1": "x"}
    a = vec(1, 2, 3, 4)
    np.testing.assert_array_equal(twice(a), 3 * vec(1, 2, 3, 4))  # 3A, never 4A
    np.testing.assert_array_equal(a, vec(1, 2, 3, 4))  # the caller's tensor is unchanged


def test_a_rebinding_inside_pl_range_is_left_to_inline_functions() -> None:
    spec = twice_in_loop.compile(vec(1, 2, 3, 4))
    helper_text = ir.python_print(spec.program.functions["double_in_loop"])
    assert "x = pl.add(x, x)" in helper_text and "__jit" not in helper_text
    lowered = ir.python_print(twice_in_loop.lower(vec(1, 2, 3, 4)))
    assert "a = " not in lowered  # InlineFunctions bound the argument to a fresh local instead
    a = vec(1, 2, 3, 4)
    np.testing.assert_array_equal(twice_in_loop(a), 5 * vec(1, 2, 3, 4))  # A + 4A, not 4A + 4A
    np.testing.assert_array_equal(a, vec(1, 2, 3, 4))


@pl.jit.inline
def double_in_spmd(x: pl.Tensor):
    for _ in pl.spmd(1):
        x = pl.add(x, x)
    return x


@pl.jit
def twice_in_spmd(a: pl.Tensor):
    u = double_in_spmd(a)
    w = pl.add(a, u)
    return w


def test_a_rebinding_inside_pl_spmd_is_left_to_inline_functions() -> None:
    spec = twice_in_spmd.compile(vec(1, 2, 3, 4))
    assert "__jit" not in ir.python_print(spec.program.functions["double_in_spmd"])
    assert "x_inline0: pl.Tensor[[4], pl.FP32] = a" in ir.python_print(spec.lowered)
    a = vec(1, 2, 3, 4)
    np.testing.assert_array_equal(twice_in_spmd(a), 3 * vec(1, 2, 3, 4))
    np.testing.assert_array_equal(a, vec(1, 2, 3, 4))


def test_a_scalar_rebinding_inside_pl_range_leaves_the_callers_scalar() -> None:
    assert bump(5) == 11  # k + (k + 1), not 2(k + 1)


def test_reads_after_a_rename_read_the_fresh_name_and_loop_headers_shadow() -> None:
    @pl.jit
    def shadowing(a: pl.Tensor, k: pl.Scalar):
        a = pl.add(a, a)
        for _, (a2,) in pl.range(2, init_values=(a,)):
            a3 = pl.add(a2, a2)
            r = pl.yield_(a3)
        k = k + 1
        return pl.add(a, r)

    text = ir.python_print(shadowing.compile(vec(1), 3).program)
    assert "a__jit_v1 = pl.add(a, a)" in text
    assert "init_values=(a__jit_v1,)" in text
    assert "k__jit_v1 = k + 1" in text
    np.testing.assert_array_equal(shadowing(vec(1), 3), vec(2 + 8))


@pl.jit.inline
def count(n: pl.Out[pl.Scalar]):
    n = n + 1
    return n


@pl.jit
def counting(k: pl.Scalar):
    m = k + 0
    r = count(m)
    return m + r


def test_an_out_parameters_rebinding_is_not_renamed_it_is_the_write_back() -> None:
    """Renaming `n = n + 1` would leave the caller's `m` unwritten (found by the property test)."""
    helper = ir.python_print(counting.compile(5).program.functions["count"])
    assert "n = n + 1" in helper and "__jit" not in helper
    assert counting(5) == 12  # m = 6 after the call, r = 6


def test_errors_speak_of_the_users_names() -> None:
    assert to_user_names("x__jit_v1 and x__jit_v12, not xx__jit_v1b", {"x__jit_v1": "x", "x__jit_v12": "x"}) == (
        "x and x, not xx__jit_v1b"
    )


# ---------------------------------------------------------------------------------------------
# Running: results, Out and InOut written in place
# ---------------------------------------------------------------------------------------------


@pl.jit
def accumulate(a: pl.Tensor, acc: pl.InOut[pl.Tensor], out: pl.Out[pl.Tensor]):
    acc[:] = pl.add(acc, a)
    out[:] = pl.add(acc, acc)
    return pl.add(a, a)


def test_out_and_inout_arrays_are_written_in_place_and_the_result_returned() -> None:
    a, acc, out = vec(1, 2), vec(10, 20), np.zeros(2, np.float32)
    result = accumulate(a, acc, out)
    np.testing.assert_array_equal(acc, vec(11, 22))
    np.testing.assert_array_equal(out, vec(22, 44))
    np.testing.assert_array_equal(result, vec(2, 4))
    np.testing.assert_array_equal(a, vec(1, 2))


# ---------------------------------------------------------------------------------------------
# Errors: the parameter, what was expected, the user's file and line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "parameter", "message"),
    [
        ((np.ones((2, 3, 1), np.float32), 1, np.zeros((2, 3), np.float32)), "a", "expects rank 2 (pl.Tensor[[2, 3], pl.FP32]), got rank 3"),
        ((np.ones((2, 3), np.int32), 1, np.zeros((2, 3), np.float32)), "a", "expects dtype pl.FP32 (pl.Tensor[[2, 3], pl.FP32]), got an array of shape (2, 3) and dtype int32"),
        ((np.ones((2, 4), np.float32), 1, np.zeros((2, 3), np.float32)), "a", "expects extent 3 in dimension 1"),
        (([[1.0]], 1, np.zeros((2, 3), np.float32)), "a", "expects a tensor (a numpy array), got a value of type list"),
        ((np.ones((2, 3), np.float32), np.ones(2), np.zeros((2, 3), np.float32)), "k", "expects a scalar (a Python int, float or bool), got an array"),
        ((np.ones((2, 3), np.float32), 1.5, np.zeros((2, 3), np.float32)), "k", "expects an integer scalar (pl.Scalar[pl.INDEX]), got the float 1.5"),
    ],
)
def test_argument_errors_name_the_parameter_and_what_was_expected(args: tuple, parameter: str, message: str) -> None:
    with pytest.raises(JITError) as info:
        annotated(*args)
    error = info.value
    assert f"argument '{parameter}' of annotated() {message}" in error.message
    assert error.parameter == parameter and error.function == "annotated"
    assert error.file == __file__
    assert error.line == line_of(annotated, f"    {parameter}: ")
    assert error.source_line is not None and error.source_line.strip().startswith(f"{parameter}:")


def test_a_dtype_pl_has_no_name_for_is_an_error_with_a_hint() -> None:
    with pytest.raises(JITError) as info:
        bare(np.ones((2, 3)), 1, np.zeros((2, 3), np.float32))
    assert "argument 'a' of bare() has dtype float64, which pl has no dtype for" in str(info.value)
    assert "np.float32" in (info.value.hint or "")


def test_an_out_scalar_entry_parameter_is_an_error() -> None:
    @pl.jit
    def out_scalar(k: pl.Out[pl.Scalar]):
        k = 1
        return k

    with pytest.raises(JITError, match=r"argument 'k' of out_scalar\(\) is a pl.Out scalar") as info:
        out_scalar(3)
    assert info.value.hint == "return the scalar from the entry instead"


def test_sub_functions_from_another_file_are_found_and_errors_name_that_file(tmp_path, monkeypatch) -> None:
    (tmp_path / "jit_kernels_mod.py").write_text(
        "import nanopto.language as pl\n"
        "\n"
        "\n"
        "@pl.jit.inline\n"
        "def triple(x: pl.Tensor):\n"
        "    return pl.add(pl.add(x, x), x)\n"
        "\n"
        "\n"
        "@pl.jit.inline\n"
        "def broken(x: pl.Tensor):\n"
        "    return pl.no_such_op(x)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    kernels = importlib.import_module("jit_kernels_mod")

    @pl.jit
    def uses_triple(a: pl.Tensor):
        return kernels_triple(a)

    @pl.jit
    def uses_broken(a: pl.Tensor):
        return kernels_broken(a)

    kernels_triple, kernels_broken = kernels.triple, kernels.broken
    np.testing.assert_array_equal(uses_triple(vec(1, 2)), vec(3, 6))
    program = uses_triple.compile(vec(1, 2)).program
    assert program.functions["triple"].span == ir.Span(str(tmp_path / "jit_kernels_mod.py"), 5, 0)
    assert program.functions["uses_triple"].span == ir.Span(__file__, line_of(uses_triple, "def uses_triple"), 4)
    roundtrips(program)
    with pytest.raises(ir.ParserError) as info:
        uses_broken(vec(1))
    assert info.value.file == str(tmp_path / "jit_kernels_mod.py")
    assert info.value.line == 11


def test_a_wrong_number_of_arguments_is_an_error() -> None:
    with pytest.raises(JITError, match=r"annotated\(\) takes 3 argument\(s\) \(a, k, out\) but 1 were given"):
        annotated(vec(1))


@pytest.mark.parametrize(
    ("fn", "decorator"), [(double_in_place, "@pl.jit.inline"), (add_kernel, "@pl.jit.incore"), (scale, "@pl.jit.opaque")]
)
def test_calling_a_sub_function_directly_says_why_and_what_to_call(fn: JITFunction, decorator: str) -> None:
    with pytest.raises(JITError) as info:
        fn(vec(1))
    text = str(info.value)
    assert f"{decorator} function '{fn.__name__}' cannot be called directly from Python" in text
    assert "call it by name from a @pl.jit entry" in text
    assert info.value.line == line_of(fn, "def ")
    with pytest.raises(JITError, match=r"cannot be given to \.lower\(\) directly"):
        fn.lower(vec(1))


def test_a_parse_error_in_a_jit_body_points_at_the_users_line() -> None:
    @pl.jit
    def broken(a: pl.Tensor):
        b = pl.no_such_op(a)
        return b

    with pytest.raises(ir.ParserError) as info:
        broken(vec(1))
    assert info.value.file == __file__
    assert info.value.line == line_of(broken, "b = pl.no_such_op(a)")
    assert info.value.source_line is not None and "pl.no_such_op" in info.value.source_line
    assert "Unknown operation 'pl.no_such_op'" in str(info.value)


def test_decorator_options_are_an_error_at_the_def_and_empty_parentheses_are_fine() -> None:
    with pytest.raises(JITError) as info:

        @pl.jit.incore(level=pl.Level.CORE_GROUP)
        def kernel(x: pl.Tensor):
            return x

    assert "@pl.jit.incore(level=...) takes options nanopto does not model" in info.value.message
    assert info.value.file == __file__

    @pl.jit()
    def plain(x: pl.Tensor):
        return pl.add(x, x)

    np.testing.assert_array_equal(plain(vec(1)), vec(2))


def test_a_function_without_source_is_an_error() -> None:
    namespace: dict[str, object] = {"pl": pl}
    exec("@pl.jit\ndef nowhere(a):\n    return a\n", namespace)
    with pytest.raises(JITError, match=r"cannot read the source of @pl\.jit function 'nowhere'"):
        namespace["nowhere"](vec(1))  # type: ignore[operator]
