"""TRANSPOSE_CONV against the live TFLM wheel: float32 (summed in TFLM's order: bound 0 ulps),
int8 per-channel/per-tensor, 16x8 with int64 bias; random strides, padding and activations."""

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

pytestmark = pytest.mark.oracle


def _case(dtype: str, rng: np.random.Generator) -> tuple[bytes, list, str]:
    q = random_qspec(dtype, rng)
    n = int(rng.integers(1, 3))
    h, w, cin = int(rng.integers(2, 7)), int(rng.integers(2, 7)), int(rng.integers(1, 5))
    cout = int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = str(rng.choice(["SAME", "VALID"]))
    if padding == "SAME":
        oh, ow = h * sh, w * sw
    else:
        oh, ow = (h - 1) * sh + kh, (w - 1) * sw + kw
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2))
    with_bias = bool(rng.integers(0, 4))
    bias_dtype = {"int8": "int32", "int16": "int64"}.get(dtype, "float32")
    b = ModelBuilder()
    shape_t = b.add_constant("shape", np.array([n, oh, ow, cout], np.int32))
    wt, bt = add_filter_and_bias(b, q, (cout, kh, kw, cin), cout, 0, per_channel, with_bias,
                                 bias_dtype, rng)
    x = add_activation(b, "x", (n, h, w, cin), q, output=False, is_input=True)
    y = add_activation(b, "y", (n, oh, ow, cout), q, output=True)
    inputs = [shape_t, wt, x] if bt is None else [shape_t, wt, x, bt]
    b.add_operator("TRANSPOSE_CONV", inputs, [y], padding=padding, stride_w=sw, stride_h=sh,
                   fused_activation_function=act)
    b.mark_output(y)
    desc = f"{dtype} n={n} {h}x{w}x{cin}->{oh}x{ow}x{cout} k={kh}x{kw} s={sh},{sw} {padding} {act}"
    return b.build(), [random_input((n, h, w, cin), dtype, rng) for _ in range(2)], desc


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_transpose_conv_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(sum(map(ord, dtype)) + 21)
    for _ in range(14):
        model, inputs, desc = _case(dtype, rng)
        compare_each(model, inputs, dtype, desc)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_transpose_conv_allocations_match_tflm(dtype: str) -> None:
    """Scratch, persistent and OpData sizes: the emulated arena equals the wheel's report."""
    from tflm_oracle import tflm_allocations
    from tinyarena.arena.allocator import allocate_model
    from tinyarena.model import read_model

    rng = np.random.default_rng(sum(map(ord, dtype)) + 5)
    for _ in range(3):
        model, _, desc = _case(dtype, rng)
        real = tflm_allocations(model)
        ours = allocate_model(read_model(model))
        assert (ours.total, ours.head, ours.tail) == (real.total, real.head, real.tail), desc
