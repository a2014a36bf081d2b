"""`@pl.jit` at its edges: whatever a caller passes is a located JITError or InterpreterError
naming the argument, never a raw Python error; results keep `pl` dtypes and `pl.Out` buffers
keep theirs (docs/errors.md#whose-mistake-the-exit-code-says)."""

from __future__ import annotations

import numpy as np
import pytest

import nanopto.language as pl
from nanopto.jit import JITError
from nanopto.verify.interpreter import InterpreterError


@pl.jit
def copy_into(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0], [4])
    c = pl.store(t, [0], c)
    return c


@pl.jit
def scale(a: pl.Tensor, s: pl.Scalar):
    return pl.mul(a, s)


@pl.jit
def next_index(n: pl.Scalar):
    return n + 1


@pl.jit
def corner(matrix: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(matrix, [0, 0], [2, 2])
    out = pl.store(t, [0, 0], out)
    return out


def test_a_lambda_is_refused_as_not_a_def() -> None:
    entry = pl.jit(
        lambda a: a
    )
    with pytest.raises(JITError, match=r"@pl.jit decorates a plain `def` function; '<lambda>' is not one"):
        entry(np.ones(4, np.float32))


def test_keyword_arguments_bind_by_parameter_name_and_a_wrong_one_is_named() -> None:
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(scale(a=a, s=2.0), scale(a, 2.0))
    np.testing.assert_array_equal(scale(a, s=2.0), a * 2)
    with pytest.raises(JITError, match=r"scale\(\) got an unexpected keyword argument 'b'") as caught:
        scale(a, b=2.0)
    assert "its parameters are a, s" in str(caught.value)
    with pytest.raises(JITError, match=r"got multiple values for argument 'a'"):
        scale(a, a=a)


def test_an_object_that_only_claims_to_be_torch_is_not_touched() -> None:
    touched: list[str] = []

    class Impostor:
        def detach(self) -> object:
            touched.append("detach")
            raise RuntimeError("not a tensor")

    Impostor.__module__ = "torch.impostor"
    with pytest.raises(JITError, match=r"argument 'a' of scale\(\) expects a tensor \(a numpy array\), got a value of type Impostor"):
        scale(Impostor(), 2.0)
    assert touched == []


def test_float_results_are_not_written_silently_into_an_integer_out_buffer() -> None:
    out = np.zeros(4, np.int32)
    with pytest.raises(InterpreterError, match=r"writes float32 values into the int32 buffer") as caught:
        copy_into(np.full(4, 1.5, np.float32), out)
    assert "'c' of shape [4] (int32)" in str(caught.value)
    np.testing.assert_array_equal(out, 0)


def test_an_int32_tensor_times_a_float_is_an_fp32_tensor() -> None:
    result = scale(np.arange(4, dtype=np.int32), 2.5)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.arange(4) * 2.5)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_an_index_that_does_not_fit_64_bits_is_refused_naming_the_argument(value: int) -> None:
    with pytest.raises(JITError, match=rf"argument 'n' of next_index\(\) is {value}, which does not fit pl.INDEX"):
        next_index(value)
    assert next_index(2**63 - 2) == 2**63 - 1


def test_a_wrong_rank_names_the_argument_whose_shape_is_wrong() -> None:
    with pytest.raises(InterpreterError, match=r"2 offsets for a rank-1 destination; operands: 'matrix' of shape \[4\]"):
        corner(np.ones(4, np.float32), np.zeros((2, 2), np.float32))
