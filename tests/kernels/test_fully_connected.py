"""FULLY_CONNECTED against the live TFLM wheel: float32 (sequential sum in TFLM's order: bound 0
ulps), int8 per-tensor and per-channel, int16 with int64 and int32 bias, keep_num_dims and
inputs of rank 2-4 flattened into batches."""

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
from tinyarena.errors import KernelError

pytestmark = pytest.mark.oracle


def _case(dtype: str, rng: np.random.Generator, bias_dtype: str,
          per_channel: bool | None = None) -> tuple[bytes, list, str]:
    q = random_qspec(dtype, rng)
    depth = int(rng.integers(1, 40))
    units = int(rng.integers(1, 20))
    keep = bool(rng.integers(0, 2))
    lead = tuple(int(v) for v in rng.integers(1, 4, int(rng.integers(1, 3))))
    in_shape = lead + (depth,)
    out_shape = lead + (units,) if keep else (int(np.prod(lead)), units)
    act = str(rng.choice(ACTIVATIONS))
    if per_channel is None:
        per_channel = bool(rng.integers(0, 2))
    with_bias = bool(rng.integers(0, 4))
    b = ModelBuilder()
    x = add_activation(b, "x", in_shape, q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (units, depth), units, 0, per_channel, with_bias,
                                 bias_dtype, rng)
    y = add_activation(b, "y", out_shape, q, output=True)
    options = {}
    if dtype == "int16" and not with_bias:
        options["quantized_bias_type"] = "INT32" if bias_dtype == "int32" else "INT64"
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], fused_activation_function=act,
                   keep_num_dims=keep, **options)
    b.mark_output(y)
    desc = f"{dtype} {in_shape}->{out_shape} pc={per_channel} bias={with_bias} {act}"
    return b.build(), [random_input(in_shape, dtype, rng) for _ in range(2)], desc


@pytest.mark.parametrize("dtype, bias_dtype", [("int8", "int32"), ("int16", "int64"),
                                               ("int16", "int32"), ("float32", "float32")])
def test_fully_connected_matches_tflm(dtype: str, bias_dtype: str) -> None:
    rng = np.random.default_rng(sum(map(ord, dtype + bias_dtype)) + 3)
    for _ in range(40):
        model, inputs, desc = _case(dtype, rng, bias_dtype)
        compare_each(model, inputs, dtype, desc)


def test_fully_connected_rejects_mismatched_bias_scale() -> None:
    from kernel_runner import run_kernels

    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=0.1, zero_point=0)
    w = b.add_constant("w", np.ones((2, 4), np.int8), scale=0.1, zero_point=0)
    bias = b.add_constant("b", np.zeros(2, np.int32), scale=0.5, zero_point=0)  # not 0.01
    y = b.add_tensor("y", (1, 2), "int8", scale=0.1, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y])
    b.mark_output(y)
    with pytest.raises(KernelError, match="bias scale"):
        run_kernels(b.build(), [np.zeros((1, 4), np.int8)])


def test_fully_connected_per_tensor_multiplier_uses_the_double_product() -> None:
    """Regression: the wheel's per-tensor multiplier is double(in) * double(w) / double(out),
    not the float32 product the TFLM source snapshot shows. Biases are chosen (by hand
    arithmetic, independent of the kernel) so that the two multipliers round differently."""
    from tinyarena.kernels._quant import multiply_by_quantized_multiplier, quantize_multiplier

    f32 = np.float32
    in_s, w_s, out_s = f32(0.0137), f32(0.0091), f32(11.3)
    qa, sa = quantize_multiplier(float(f32(in_s * w_s)) / float(out_s))
    qb, sb = quantize_multiplier(float(in_s) * float(w_s) / float(out_s))
    assert (qa, sa) != (qb, sb)
    real = float(in_s) * float(w_s) / float(out_s)
    # accumulators next to every output rounding boundary k + 1/2 in the int8 range
    near = np.round((np.arange(-120, 120) + 0.5) / real).astype(np.int64)
    acc = (near[:, None] + np.arange(-3, 4)).reshape(-1)
    split = acc[multiply_by_quantized_multiplier(acc, qa, sa)
                != multiply_by_quantized_multiplier(acc, qb, sb)][:16]
    assert split.size >= 4
    b = ModelBuilder()
    x = b.add_input("x", (1, 1), "int8", scale=float(in_s), zero_point=0)
    w = b.add_constant("w", np.ones((split.size, 1), np.int8), scale=float(w_s), zero_point=0)
    bias = b.add_constant("b", split.astype(np.int32), scale=float(f32(in_s * w_s)),
                          zero_point=0)
    y = b.add_tensor("y", (1, split.size), "int8", scale=float(out_s), zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y])
    b.mark_output(y)
    compare(b.build(), [np.zeros((1, 1), np.int8)], "int8")


def test_fully_connected_int16_sweep_case_484() -> None:
    """Regression: the sweep case (seed [484, 5, 5]) that exposed the multiplier above."""
    rng = np.random.default_rng([484, 5, 5])
    model, inputs, desc = _case("int16", rng, "int32")
    compare_each(model, inputs, "int16", desc)


def test_fully_connected_float_gemm_path_within_ulps() -> None:
    """Above EXACT_FLOAT_WORK (64 x 256 x 256 = 4.2M MACs) the float sum is a float64 GEMM
    rounded once: on positive data measured 13-14 ulps from TFLM's float32 running sum over
    K = 256; bound 32."""
    from tinyarena.kernels._conv_kernels import EXACT_FLOAT_WORK

    assert 64 * 256 * 256 > EXACT_FLOAT_WORK
    rng = np.random.default_rng(15)
    b = ModelBuilder()
    x = b.add_input("x", (64, 256), "float32")
    w = b.add_constant("w", rng.uniform(0, 1, (256, 256)).astype(np.float32))
    bias = b.add_constant("b", rng.uniform(0, 1, 256).astype(np.float32))
    y = b.add_tensor("y", (64, 256), "float32")
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y])
    b.mark_output(y)
    x_in = rng.uniform(0, 1, (64, 256)).astype(np.float32)
    assert compare(b.build(), [x_in], "float32", max_ulps=32) > 0  # not TFLM's order


def test_fully_connected_unquantized_int8_filter_runs_like_tflm() -> None:
    """A filter exported without quantization: TFLM's TfLiteTensor reads its scale as 0, the
    multiplier is 0 and every output is the output zero point (clamped) — the wheel runs it,
    so tinyarena must too, with the same outputs and arena."""
    from op_sweep import check_op

    rng = np.random.default_rng(11)
    b = ModelBuilder()
    x = b.add_input("x", (2, 6), "int8", scale=0.05, zero_point=3)
    w = b.add_constant("w", rng.integers(-127, 128, (4, 6)).astype(np.int8))
    bias = b.add_constant("b", rng.integers(-500, 500, 4).astype(np.int32), scale=0.0005,
                          zero_point=0)
    y = b.add_tensor("y", (2, 4), "int8", scale=0.1, zero_point=-5)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function="RELU")
    b.mark_output(y)
    want = check_op(b.build(), [rng.integers(-128, 128, (2, 6)).astype(np.int8)])
    assert want[0].size == 8
