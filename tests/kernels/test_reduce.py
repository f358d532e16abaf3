"""MEAN and SUM against the live TFLM wheel: float32, int8, int16; random axes (negative and
repeated ones too), keep_dims on and off, and the 4-D spatial mean of image models."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle
FLOAT_ULP = 0  # sums run in TFLM's order in float32: identical


def _case(rng: np.random.Generator, op: str, dtype: str, shape: tuple[int, ...],
          axes: list[int], keep_dims: bool) -> bytes:
    rank = len(shape)
    resolved = {a % rank for a in axes}
    out_shape = tuple(1 if i in resolved else d for i, d in enumerate(shape) if keep_dims
                      or i not in resolved)
    in_q = out_q = None
    if dtype == "int8":
        in_q = (float(10 ** rng.uniform(-2, 0)), int(rng.integers(-128, 128)))
        out_q = (float(10 ** rng.uniform(-2, 0.5 if op == "SUM" else 0)),
                 int(rng.integers(-128, 128)))
    elif dtype == "int16":
        in_q = (float(10 ** rng.uniform(-4, -2)), 0)
        out_q = (float(10 ** rng.uniform(-4, -1 if op == "SUM" else -2)), 0)
    return single_op_model(op, shape, dtype, in_q, out_shape, dtype, out_q,
                           extra_inputs=[np.array(axes, np.int32)], keep_dims=keep_dims)


@pytest.mark.parametrize("op", ["MEAN", "SUM"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_reduce_matches_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng(110 + len(op) * 7 + len(dtype))
    for _ in range(12):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 7, size=rank))
        n_axes = int(rng.integers(1, rank + 1))
        axes = [int(a) for a in rng.integers(-rank, rank, size=n_axes)]
        model = _case(rng, op, dtype, shape, axes, bool(rng.random() < 0.5))
        for _ in range(2):
            compare(model, [random_input(rng, shape, dtype, 5.0)], max_ulp=FLOAT_ULP)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("keep_dims", [True, False])
def test_spatial_mean_matches_tflm(dtype: str, keep_dims: bool) -> None:
    """The 4-D mean over axes (1, 2), as in mobilenet's global average pooling."""
    rng = np.random.default_rng(120)
    shape = (1, 7, 7, 24)
    for axes in ([1, 2], [2, 1]):
        model = _case(rng, "MEAN", dtype, shape, axes, keep_dims)
        compare(model, [random_input(rng, shape, dtype, 5.0)], max_ulp=FLOAT_ULP)


def test_int8_mean_by_hand() -> None:
    """Equal scales, zero points 0: the mean of [1, 2, 4] is 7/3, which rounds to 2."""
    model = single_op_model("MEAN", (1, 3), "int8", (1.0, 0), (1,), "int8", (1.0, 0),
                            extra_inputs=[np.array([1], np.int32)], keep_dims=False)
    ours, _ = compare(model, [np.array([[1, 2, 4]], np.int8)])
    assert ours[0].tolist() == [2]


@pytest.mark.parametrize("op,axes", [("SUM", [-3]), ("MEAN", [0, 2]), ("SUM", [1])])
def test_float_negative_zero_columns_sum_to_plus_zero(op: str, axes: list[int]) -> None:
    """TFLM's sums start from 0.0f, so a reduced group of -0.0 (or a single -0.0) gives +0.0;
    signed zeros must match too (check_op compares sign bits)."""
    from op_sweep import check_op

    x = np.array([[[-0.0, 1.5], [-0.0, -0.0]], [[-0.0, -2.0], [-0.0, -0.0]]], np.float32)
    model = _case(np.random.default_rng(0), op, "float32", x.shape, axes, False)
    check_op(model, [x])
