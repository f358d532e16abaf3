"""CONV_2D against the live TFLM wheel: float32, int8 (per-channel and per-tensor) and 16x8
(int64 and int32 bias), over random padding, strides, dilations, activations and batches.

float32: small layers are summed in TFLM's order, so the bound is 0 ulps; layers above
``EXACT_FLOAT_WORK`` use a float64 GEMM (checked separately: on positive data measured <= 15
ulps, bound 32; on signed data within the float32 running-sum error bound).
"""

from __future__ import annotations

import numpy as np
import pytest

from conv_cases import (
    ACTIVATIONS,
    add_activation,
    add_filter_and_bias,
    compare,
    compare_each,
    random_input,
    random_qspec,
)
from tinyarena.builder import ModelBuilder
from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.kernels._conv_common import compute_out_size, compute_padding_height_width
from tinyarena.kernels._conv_kernels import EXACT_FLOAT_WORK

pytestmark = pytest.mark.oracle


def _conv_case(dtype: str, rng: np.random.Generator, *, bias_dtype: str = "int32",
               with_bias: bool | None = None, big: bool = False) -> tuple[bytes, list, str]:
    q = random_qspec(dtype, rng)
    n = int(rng.integers(1, 3))
    h, w = (int(rng.integers(3, 11)), int(rng.integers(3, 11))) if not big else (24, 24)
    cin = int(rng.integers(1, 6)) if not big else 16
    cout = int(rng.integers(1, 7)) if not big else 24
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = str(rng.choice(["SAME", "VALID"]))
    oh = compute_out_size(padding, h, kh, sh, dh)
    ow = compute_out_size(padding, w, kw, sw, dw)
    if not oh or not ow:
        padding, oh, ow = "SAME", compute_out_size("SAME", h, kh, sh, dh), \
            compute_out_size("SAME", w, kw, sw, dw)
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2))
    if with_bias is None:
        with_bias = bool(rng.integers(0, 4))  # mostly with bias
    b = ModelBuilder()
    x = add_activation(b, "x", (n, h, w, cin), q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (cout, kh, kw, cin), cout, 0, per_channel, with_bias,
                                 bias_dtype, rng)
    y = add_activation(b, "y", (n, oh, ow, cout), q, output=True)
    options = {}
    if dtype == "int16" and not with_bias:
        options["quantized_bias_type"] = "INT32" if bias_dtype == "int32" else "INT64"
    b.add_operator("CONV_2D", [x, wt, bt], [y], padding=padding, stride_w=sw, stride_h=sh,
                   dilation_w_factor=dw, dilation_h_factor=dh, fused_activation_function=act,
                   **options)
    b.mark_output(y)
    desc = (f"{dtype} n={n} {h}x{w}x{cin}->{cout} k={kh}x{kw} s={sh},{sw} d={dh},{dw} "
            f"{padding} {act}")
    return b.build(), [random_input((n, h, w, cin), dtype, rng) for _ in range(2)], desc


@pytest.mark.parametrize("dtype, bias_dtype", [("int8", "int32"), ("int16", "int64"),
                                               ("int16", "int32"), ("float32", "float32")])
def test_conv_2d_matches_tflm(dtype: str, bias_dtype: str) -> None:
    rng = np.random.default_rng(sum(map(ord, dtype + bias_dtype)))
    for _ in range(40):
        model, inputs, desc = _conv_case(dtype, rng, bias_dtype=bias_dtype)
        compare_each(model, inputs, dtype, desc)


def _reported_neighbourhood_case(rng: np.random.Generator) -> tuple[bytes, list, str]:
    """int8, batch 1, 1xK kernels, stride (1, 2), dilation (1, 2), mostly VALID and RELU6."""
    q = random_qspec("int8", rng)
    h, w = int(rng.integers(1, 7)), int(rng.integers(5, 13))
    cin, cout = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    kw = int(rng.choice([3, 3, 2, 4]))
    padding = str(rng.choice(["VALID", "VALID", "SAME"]))
    act = str(rng.choice(["RELU6", "RELU6", "RELU", "NONE"]))
    per_channel = bool(rng.integers(0, 2))
    oh, ow = compute_out_size(padding, h, 1, 1, 1), compute_out_size(padding, w, kw, 2, 2)
    if not ow:
        padding, ow = "SAME", compute_out_size("SAME", w, kw, 2, 2)
        oh = h
    b = ModelBuilder()
    x = add_activation(b, "x", (1, h, w, cin), q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (cout, 1, kw, cin), cout, 0, per_channel, True, "int32",
                                 rng)
    y = add_activation(b, "y", (1, oh, ow, cout), q, output=True)
    b.add_operator("CONV_2D", [x, wt, bt], [y], padding=padding, stride_w=2, stride_h=1,
                   dilation_w_factor=2, dilation_h_factor=1, fused_activation_function=act)
    b.mark_output(y)
    desc = f"int8 1x{h}x{w}x{cin}->{cout} k=1x{kw} {padding} {act} per_channel={per_channel}"
    return b.build(), [random_input((1, h, w, cin), "int8", rng) for _ in range(2)], desc


def test_conv_2d_reported_geometry_neighbourhood() -> None:
    """A first, unseeded sweep once reported 'int8 n=1 4x8x4->5 k=1x3 s=1,2 d=1,2 VALID RELU6:
    16 of 40 outputs differ'. 18,500 seeded cases of that geometry and its neighbours (and
    thousands of general ones) matched since; this keeps a seeded slice of that search."""
    rng = np.random.default_rng(4845)
    for _ in range(40):
        model, inputs, desc = _reported_neighbourhood_case(rng)
        compare_each(model, inputs, "int8", desc)


def _big_float_conv(rng: np.random.Generator, low: float) -> tuple[bytes, np.ndarray]:
    b = ModelBuilder()
    x = b.add_input("x", (1, 32, 32, 32), "float32")
    w = b.add_constant("w", rng.uniform(low, 1, (32, 3, 3, 32)).astype(np.float32))
    bias = b.add_constant("b", rng.uniform(low, 1, 32).astype(np.float32))
    y = b.add_tensor("y", (1, 32, 32, 32), "float32")
    b.add_operator("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1, stride_h=1)
    b.mark_output(y)
    return b.build(), rng.uniform(low, 1, (1, 32, 32, 32)).astype(np.float32)


def test_conv_2d_float_gemm_path_within_ulps() -> None:
    """Above EXACT_FLOAT_WORK (here 9.4M MACs) the float sum is a float64 GEMM rounded once.
    On positive data (no cancellation) it is within 16 ulps of TFLM's float32 running sum
    (measured 10-15 over K = 288); bound 32."""
    assert 32 * 32 * 32 * 288 > EXACT_FLOAT_WORK
    model, x = _big_float_conv(np.random.default_rng(13), 0.0)
    assert compare(model, [x], "float32", max_ulps=32) > 0  # not summed in TFLM's order


def test_conv_2d_float_gemm_path_signed_data_within_the_float32_sum_bound() -> None:
    """With mixed signs ulps are meaningless near zero (cancellation), so check the classic
    bound of a sequential float32 sum: |ours - TFLM| <= K * eps32 * sum |x * w| (+ bias)."""
    model, x = _big_float_conv(np.random.default_rng(14), -1.0)
    got = run_kernels(model, [x])[0]
    expected = tflm_run(model, [x])[0]
    from tinyarena.model import read_model

    w = np.abs(read_model(model).subgraphs[0].tensors[1].data.astype(np.float64))
    padded = np.pad(np.abs(x.astype(np.float64)), ((0, 0), (1, 1), (1, 1), (0, 0)))
    l1 = sum(np.einsum("nhwc,oc->nhwo", padded[:, ky:ky + 32, kx:kx + 32, :], w[:, ky, kx, :])
             for ky in range(3) for kx in range(3)) + 1.0
    eps = float(np.finfo(np.float32).eps)
    assert np.all(np.abs(got.astype(np.float64) - expected) <= 289 * eps * l1)


def test_conv_2d_int8_large_layer_tiles() -> None:
    """A layer big enough to need several im2col tiles."""
    rng = np.random.default_rng(12)
    model, inputs, _ = _conv_case("int8", rng, big=True, with_bias=True)
    from tinyarena.kernels import _conv_common

    old = _conv_common.IM2COL_TILE_ELEMENTS
    _conv_common.IM2COL_TILE_ELEMENTS = 4096  # force many tiles
    try:
        for x in inputs:
            compare(model, [x], "int8")
    finally:
        _conv_common.IM2COL_TILE_ELEMENTS = old


@pytest.mark.parametrize(
    "padding, size, k, stride, dil, expected",
    [
        # SAME: out = ceil(in / stride); total pad = (out-1)*stride + (k-1)*dil + 1 - in
        ("SAME", 7, 3, 1, 1, (1, 0, 7)),
        ("SAME", 8, 3, 2, 1, (0, 1, 4)),  # total 1 -> 0 before, offset 1
        ("SAME", 7, 3, 2, 2, (2, 0, 4)),  # effective 5, total 4
        ("VALID", 7, 3, 2, 1, (0, 0, 3)),
        ("VALID", 5, 3, 1, 3, (0, 0, 0)),  # effective 7 > 5: out 0 (C truncation of -1/1)
    ],
)
def test_compute_padding_hand_values(padding: str, size: int, k: int, stride: int, dil: int,
                                     expected: tuple[int, int, int]) -> None:
    pad, out_h, out_w = compute_padding_height_width(stride, stride, dil, dil, size, size, k, k,
                                                     padding)
    if expected[2] == 0 and padding == "VALID" and (size + stride - ((k - 1) * dil + 1)) < 0:
        assert (out_h, out_w) == (0, 0)
        return
    assert (pad.height, pad.height_offset, out_h) == expected
    assert (pad.width, pad.width_offset, out_w) == expected


@pytest.mark.parametrize("shape", [(5, 7, 3), (300, 40, 30), (1, 700, 400), (3, 900, 300)])
def test_gemm_chunks_equal_one_matmul(shape: tuple[int, int, int]) -> None:
    """gemm() splits rows (and, for one huge row, columns) below OpenBLAS's threading
    threshold; the chunks must add up to exactly the plain product."""
    from tinyarena.kernels._conv_common import gemm

    rows, k, n = shape
    rng = np.random.default_rng(rows + k + n)
    a = rng.integers(-255, 256, (rows, k)).astype(np.float64)
    b = rng.integers(-127, 128, (k, n)).astype(np.float64)
    out = np.full((rows, n), np.nan)
    gemm(a, b, out)
    assert np.array_equal(out, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
def test_runtime_filter_and_bias_int8(op: str) -> None:
    """Filter and bias fed at invoke (not constants): the input-offset correction is then
    computed at eval instead of prepare."""
    rng = np.random.default_rng(77)
    b = ModelBuilder()
    if op == "FULLY_CONNECTED":
        x_shape, w_shape, y_shape, opts = (3, 6), (4, 6), (3, 4), {}
    elif op == "CONV_2D":
        x_shape, w_shape, y_shape = (1, 5, 5, 3), (4, 3, 3, 3), (1, 5, 5, 4)
        opts = {"padding": "SAME", "stride_w": 1, "stride_h": 1}
    else:
        x_shape, w_shape, y_shape = (1, 5, 5, 2), (1, 3, 3, 4), (1, 3, 3, 4)
        opts = {"padding": "VALID", "stride_w": 1, "stride_h": 1, "depth_multiplier": 2}
    x = b.add_input("x", x_shape, "int8", scale=0.05, zero_point=-7)
    w = b.add_input("w", w_shape, "int8", scale=0.01, zero_point=0)
    bias = b.add_input("b", (y_shape[-1],), "int32", scale=0.0005, zero_point=0)
    y = b.add_tensor("y", y_shape, "int8", scale=0.1, zero_point=3)
    b.add_operator(op, [x, w, bias], [y], **opts)
    b.mark_output(y)
    model = b.build()
    for _ in range(2):
        inputs = [random_input(x_shape, "int8", rng), random_input(w_shape, "int8", rng),
                  rng.integers(-2000, 2000, y_shape[-1]).astype(np.int32)]
        expected = tflm_run(model, inputs)[0]
        assert np.array_equal(run_kernels(model, inputs)[0], expected)


def _unquantized_conv(op: str, drop: str, activation: str) -> bytes:
    """An int8 conv whose input or output lost its quantization (a broken export)."""
    b = ModelBuilder()
    xq = {} if drop == "input" else {"scale": 0.1, "zero_point": -7}
    yq = {} if drop == "output" else {"scale": 0.2, "zero_point": 3}
    x = b.add_input("x", (1, 4, 4, 3), "int8", **xq)
    shape, axis = ((3, 1, 1, 3), 0) if op == "CONV_2D" else ((1, 1, 1, 3), 3)
    w = b.add_constant("w", np.ones(shape, np.int8), scale=[0.01, 0.02, 0.03], zero_point=0,
                       quantized_dimension=axis)
    y = b.add_tensor("y", (1, 4, 4, 3), "int8", **yq)
    extra = {"depth_multiplier": 1} if op == "DEPTHWISE_CONV_2D" else {}
    b.add_operator(op, [x, w, None], [y], padding="SAME", stride_w=1, stride_h=1,
                   fused_activation_function=activation, **extra)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("drop,activation", [("input", "NONE"), ("output", "RELU")])
def test_unquantized_int8_conv_tensors_are_refused_like_tflm(op: str, drop: str,
                                                             activation: str) -> None:
    """TFLM's Prepare refuses these (PopulateConvolutionQuantizationParams wants an affine
    input; a zero output scale fails CalculateActivationRangeQuantized): a clear KernelError
    naming the tensor, not a run on scale 0 nor a numpy warning."""
    import warnings

    from tflm_oracle import tflm_fits
    from tinyarena.errors import KernelError
    from tinyarena.interpreter import Interpreter

    model = _unquantized_conv(op, drop, activation)
    assert not tflm_fits(model, 1 << 20)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KernelError, match=f"{drop} tensor '{'x' if drop == 'input' else 'y'}'"
                                              " is not quantized"):
            Interpreter(model).allocate_tensors()
