"""Corners of the whole-tensor fast paths for small layers, against the live TFLM wheel.

QUANTIZE float -> int rounds through float64 ``trunc(q + copysign(0.5, q))``: quotients one
float32 ulp either side of a half must round as std::round does. The small float
FULLY_CONNECTED sums with np.add.accumulate (which starts from the first product, not from
+0.0): all-zero products with a -0.0 bias must still give TFLM's signed zeros. The integer SVDF
folds zero points into constants and sums with float GEMVs: extreme zero points, rank 3 and
several batches, over several invokes.
"""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import kernels_invokes
from tflm_oracle import tflm_invokes
from tinyarena.builder import ModelBuilder
from unary_cases import compare, single_op_model

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_quantize_float_rounds_halves_like_std_round(out_dtype: str) -> None:
    scale = 0.25  # a power of two: x / scale is exact, so the halves below are exact halves
    halves = np.array([0.5, 1.5, 2.5, 10.5, 100.5, 126.5, -0.5, -1.5, -2.5, -127.5],
                      np.float32) * np.float32(scale)
    up = np.nextafter(halves, np.float32(np.inf))
    down = np.nextafter(halves, np.float32(-np.inf))
    x = np.concatenate([halves, up, down, np.array([0.0, -0.0, 1e-45, -1e-45], np.float32)])
    model = single_op_model("QUANTIZE", x.shape, "float32", None, x.shape, out_dtype,
                            (scale, -3))
    compare(model, [x])
    # a scale that is not a power of two: quotients land next to halves after rounding
    rng = np.random.default_rng(5)
    scale = 0.0123
    k = rng.integers(-120, 120, 64).astype(np.float32) + np.float32(0.5)
    y = (k * np.float32(scale)).astype(np.float32)
    y = np.concatenate([y, np.nextafter(y, np.float32(np.inf)),
                        np.nextafter(y, np.float32(-np.inf))])
    model = single_op_model("QUANTIZE", y.shape, "float32", None, y.shape, out_dtype, (scale, 7))
    compare(model, [y])


def _float_fc(weights: np.ndarray, bias: np.ndarray | None, batches: int,
              activation: str) -> bytes:
    units, depth = weights.shape
    b = ModelBuilder()
    x = b.add_input("x", (batches, depth), "float32")
    w = b.add_constant("w", weights)
    inputs = [x, w] + ([b.add_constant("b", bias)] if bias is not None else [])
    y = b.add_tensor("y", (batches, units), "float32")
    b.add_operator("FULLY_CONNECTED", inputs, [y], fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("with_bias", [True, False])
def test_small_float_fully_connected_signed_zeros(with_bias: bool) -> None:
    """Products that are all -0.0 or +0.0, biases of both signed zeros: bit-identical."""
    w = np.array([[-1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [0.0, -0.0, 0.0], [-1.0, 1.0, -1.0]],
                 np.float32)
    bias = np.array([-0.0, 0.0, -0.0, 1.5], np.float32) if with_bias else None
    model = _float_fc(w, bias, 3, "NONE")
    x = np.array([[0.0, 0.0, -0.0], [-0.0, -0.0, -0.0], [1.0, -1.0, 0.5]], np.float32)
    ours, theirs = compare(model, [x])
    assert np.array_equal(ours[0].view(np.int32), theirs[0].view(np.int32))
    # infinities clamp to the float range with activation NONE; NaN passes through
    rng = np.random.default_rng(9)
    w = rng.normal(0, 1, (7, 12)).astype(np.float32)
    model = _float_fc(w, bias if bias is None else rng.normal(0, 1, 7).astype(np.float32), 2,
                      "RELU6")
    x = rng.normal(0, 3, (2, 12)).astype(np.float32)
    x[1, 3] = np.inf
    ours, theirs = compare(model, [x])
    assert np.array_equal(ours[0].view(np.int32), theirs[0].view(np.int32))


@pytest.mark.parametrize("state_dtype,state_zp", [("int8", -128), ("int8", 127), ("int16", 0)])
def test_integer_svdf_folded_zero_points(state_dtype: str, state_zp: int) -> None:
    rng = np.random.default_rng(300 + state_zp)
    batch, n_in, units, rank, memory = 3, 11, 4, 3, 5
    filters = units * rank
    info = np.iinfo(state_dtype)
    s_wt = 0.002 if state_dtype == "int16" else 0.02
    s_st = 0.02 if state_dtype == "int16" else 0.5
    b = ModelBuilder()
    x = b.add_input("x", (batch, n_in), "int8", scale=0.05, zero_point=-128)
    wf = b.add_constant("wf", rng.integers(-127, 128, (filters, n_in)).astype(np.int8),
                        scale=0.01, zero_point=0)
    wt = b.add_constant("wt", rng.integers(info.min + 1, info.max, (filters, memory))
                        .astype(state_dtype), scale=s_wt, zero_point=0)
    bias = b.add_constant("b", rng.integers(-50000, 50000, units).astype(np.int32),
                          scale=float(np.float32(np.float32(s_st) * np.float32(s_wt))),
                          zero_point=0)
    st = b.add_tensor("state", (batch, memory * filters), state_dtype, scale=s_st,
                      zero_point=state_zp, is_variable=True)
    y = b.add_tensor("y", (batch, units), "int8", scale=0.5, zero_point=5)
    b.add_operator("SVDF", [x, wf, wt, bias, st], [y], rank=rank,
                   fused_activation_function="RELU")
    b.mark_output(y)
    model = b.build()
    steps = [[rng.integers(-128, 128, (batch, n_in)).astype(np.int8)] for _ in range(6)]
    want = tflm_invokes(model, steps)
    got = kernels_invokes(model, steps)
    for g, w in zip(got, want):
        assert np.array_equal(g[0], w[0]), (g, w)
