"""RESHAPE, SQUEEZE and EXPAND_DIMS against the live TFLM wheel (pure data copies)."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import assert_same_as_tflm
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32"]


def _data(shape, dtype, rng):
    if dtype == "float32":
        return rng.normal(size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(31)
    cases = [((2, 3, 4), (6, 4), True), ((24,), (2, 12), False), ((1, 5, 1, 2), (10,), True)]
    for in_shape, out_shape, with_shape_input in cases:
        b = ModelBuilder()
        x = b.add_input("x", in_shape, dtype)
        ins = [x]
        if with_shape_input:
            ins.append(b.add_constant("shape", np.array(out_shape, np.int32)))
        y = b.add_tensor("y", out_shape, dtype)
        b.add_operator("RESHAPE", ins, [y], new_shape=out_shape)
        b.mark_output(y)
        assert_same_as_tflm(b.build(), [_data(in_shape, dtype, rng)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(32)
    for in_shape, dims, out_shape in [((1, 3, 1, 4), (), (3, 4)), ((1, 3, 1, 4), (0,), (3, 1, 4)),
                                      ((2, 1, 1), (-1,), (2, 1))]:
        b = ModelBuilder()
        x = b.add_input("x", in_shape, dtype)
        y = b.add_tensor("y", out_shape, dtype)
        b.add_operator("SQUEEZE", [x], [y], squeeze_dims=dims)
        b.mark_output(y)
        assert_same_as_tflm(b.build(), [_data(in_shape, dtype, rng)])


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_expand_dims_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(33)
    for in_shape, axis in [((3, 4), 0), ((3, 4), 2), ((3, 4), -1), ((2, 3, 4), 1)]:
        rank = len(in_shape)
        pos = axis if axis >= 0 else axis + rank + 1
        out_shape = in_shape[:pos] + (1,) + in_shape[pos:]
        b = ModelBuilder()
        x = b.add_input("x", in_shape, dtype)
        a = b.add_constant("axis", np.array([axis], np.int32))
        y = b.add_tensor("y", out_shape, dtype)
        b.add_operator("EXPAND_DIMS", [x, a], [y])
        b.mark_output(y)
        assert_same_as_tflm(b.build(), [_data(in_shape, dtype, rng)])


def test_copy_skipped_for_shared_memory() -> None:
    """copy_if_distinct leaves a buffer alone when input and output are the same memory."""
    from tinyarena.kernels._elementwise import copy_if_distinct

    buf = np.arange(12, dtype=np.int8)
    src, dst = buf.reshape(3, 4), buf.reshape(2, 6)
    copy_if_distinct(src, dst)
    assert np.array_equal(buf, np.arange(12, dtype=np.int8))
    other = np.zeros((2, 6), np.int8)
    copy_if_distinct(src, other)
    assert np.array_equal(other.reshape(-1), buf)
