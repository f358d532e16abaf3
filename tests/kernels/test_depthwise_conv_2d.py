"""DEPTHWISE_CONV_2D against the live TFLM wheel: float32 (summed tap by tap in TFLM's order,
so the bound is 0 ulps), int8 per-channel/per-tensor, and 16x8 with int64 bias; random depth
multipliers, padding, strides, dilations, activations and batches."""

from __future__ import annotations

import numpy as np
import pytest

from conv_cases import (
    ACTIVATIONS,
    add_activation,
    add_filter_and_bias,
    compare_each,
    random_input,
    random_qspec,
)
from tinyarena.builder import ModelBuilder
from tinyarena.kernels._conv_common import compute_out_size

pytestmark = pytest.mark.oracle


def _case(dtype: str, rng: np.random.Generator) -> tuple[bytes, list, str]:
    q = random_qspec(dtype, rng)
    n = int(rng.integers(1, 3))
    h, w, cin = int(rng.integers(3, 12)), int(rng.integers(3, 12)), int(rng.integers(1, 6))
    mult = int(rng.choice([1, 1, 2, 3]))
    cout = cin * mult
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = str(rng.choice(["SAME", "VALID"]))
    oh, ow = compute_out_size(padding, h, kh, sh, dh), compute_out_size(padding, w, kw, sw, dw)
    if not oh or not ow:
        padding = "SAME"
        oh, ow = compute_out_size(padding, h, kh, sh, dh), compute_out_size(padding, w, kw, sw, dw)
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2))
    with_bias = bool(rng.integers(0, 4))
    bias_dtype = {"int8": "int32", "int16": "int64"}.get(dtype, "float32")
    b = ModelBuilder()
    x = add_activation(b, "x", (n, h, w, cin), q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (1, kh, kw, cout), cout, 3, per_channel, with_bias,
                                 bias_dtype, rng)
    y = add_activation(b, "y", (n, oh, ow, cout), q, output=True)
    # two inputs when there is no bias: the wheel crashes on an omitted (-1) third input
    # (CalculateOpDataDepthwiseConv frees the missing bias temp tensor)
    inputs = [x, wt] if bt is None else [x, wt, bt]
    b.add_operator("DEPTHWISE_CONV_2D", inputs, [y], padding=padding, stride_w=sw,
                   stride_h=sh, depth_multiplier=mult, dilation_w_factor=dw,
                   dilation_h_factor=dh, fused_activation_function=act)
    b.mark_output(y)
    desc = (f"{dtype} n={n} {h}x{w}x{cin} m={mult} k={kh}x{kw} s={sh},{sw} d={dh},{dw} "
            f"{padding} {act}")
    return b.build(), [random_input((n, h, w, cin), dtype, rng) for _ in range(2)], desc


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_depthwise_conv_2d_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(sum(map(ord, dtype)) + 7)
    for _ in range(40):
        model, inputs, desc = _case(dtype, rng)
        compare_each(model, inputs, dtype, desc)
