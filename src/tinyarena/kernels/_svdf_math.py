"""SVDF arithmetic, bit-exact with TFLM's svdf_common.cc (reference kernels).

The activation state is a variable tensor of shape (batch, num_filters * memory_size), viewed
here as (batch, num_filters, memory_size). Each invoke shifts it left by one element, writes the
new feature projection into the last memory column, then contracts it with the time weights.

Integer path (EvalIntegerSvdfReference, int8 input, int8 weights_feature, int8 or int16
state/weights_time, int32 bias, int8 output): int32 accumulators, C's wrapping int32
arithmetic, MultiplyByQuantizedMultiplier rescales. Float path (EvalFloatSvdfReference): every
dot product is accumulated sequentially in float32, element by element, as the C loops do,
so the result is bit-exact and not merely close (the loop runs over the reduction axis only,
vectorised over everything else).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._libm import tanhf
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    wrap_int32,
)

F32 = np.float32


@dataclass(frozen=True)
class SvdfQuant:
    """OpDataSvdf's integer fields."""

    scale_1_a: int
    scale_1_b: int
    scale_2_a: int
    scale_2_b: int
    input_zero_point: int
    output_zero_point: int
    state_zero_point: int


def svdf_quant(input_scale: float, feature_scale: float, state_scale: float, time_scale: float,
               bias_scale: float, output_scale: float, input_zp: int, output_zp: int,
               state_zp: int) -> SvdfQuant:
    """PrepareSvdf's integer part: both effective scales computed in float32, then widened."""
    s_in, s_wf, s_st = F32(input_scale), F32(feature_scale), F32(state_scale)
    s_wt, s_out = F32(time_scale), F32(output_scale)
    if s_st == 0 or s_out == 0:
        raise KernelError("SVDF needs non-zero activation-state and output scales")
    eff1 = float(F32(F32(s_in * s_wf) / s_st))
    eff2 = float(F32(F32(s_st * s_wt) / s_out))
    if not abs(float(F32(bias_scale)) - float(F32(s_st * s_wt))) < 1e-5:
        raise KernelError("SVDF: bias scale must equal activation-state scale times weights_time "
                          "scale; requantize the bias")
    a1, b1 = quantize_multiplier(eff1)
    a2, b2 = quantize_multiplier(eff2)
    return SvdfQuant(a1, b1, a2, b2, input_zp, output_zp, state_zp)


def _shift_state(state: np.ndarray) -> None:
    """'Left shift the activation_state': every element moves one place down, flat."""
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()


def svdf_integer(x: np.ndarray, w_feature: np.ndarray, w_time: np.ndarray,
                 bias: np.ndarray | None, state: np.ndarray, out: np.ndarray, rank: int,
                 q: SvdfQuant) -> None:
    """EvalIntegerSvdfReference<T> with T = state dtype (int8 or int16); updates ``state``."""
    batch = x.shape[0]
    n_filter, n_memory = w_time.shape
    n_unit = n_filter // rank
    info = np.iinfo(state.dtype)
    _shift_state(state)
    st = state.reshape(batch, n_filter, n_memory)
    # Feature matmul: int32 dot products of int8 weights and offset int8 inputs.
    xin = x.reshape(batch, -1).astype(np.int64) - q.input_zero_point
    dot = wrap_int32(xin @ w_feature.astype(np.int64).T)  # (batch, n_filter)
    dot = multiply_by_quantized_multiplier(dot, q.scale_1_a, q.scale_1_b)
    np.clip(dot, info.min, info.max, out=dot)
    newest = dot + q.state_zero_point  # C stores an int into T: wraps
    st[:, :, n_memory - 1] = newest.astype(state.dtype)
    # Time: per filter, dot product over memory of weights_time and offset state.
    stv = st.astype(np.int64) - q.state_zero_point
    scratch = wrap_int32(np.einsum("bfm,fm->bf", stv, w_time.astype(np.int64)))
    # Bias, then reduce over rank, in wrapping int32.
    acc = scratch.reshape(batch, n_unit, rank).sum(axis=2)
    if bias is not None:
        acc = acc + bias.astype(np.int64).reshape(1, n_unit)
    acc = multiply_by_quantized_multiplier(wrap_int32(acc), q.scale_2_a, q.scale_2_b)
    acc += q.output_zero_point
    np.clip(acc, -128, 127, out=acc)
    out[...] = acc.reshape(out.shape)


def _activation_float(x: np.ndarray, activation: str) -> np.ndarray:
    """ActivationValFloat, element-wise in float32."""
    if activation == "NONE":
        return x
    if activation == "RELU":
        return np.maximum(F32(0), x)
    if activation == "RELU_N1_TO_1":
        return np.maximum(F32(-1), np.minimum(x, F32(1)))
    if activation == "RELU6":
        return np.maximum(F32(0), np.minimum(x, F32(6)))
    if activation == "TANH":
        return tanhf(x)
    if activation == "SIGN_BIT":
        return np.signbit(x).astype(F32)
    raise KernelError(f"SVDF: unsupported fused activation {activation}")


def svdf_float(x: np.ndarray, w_feature: np.ndarray, w_time: np.ndarray,
               bias: np.ndarray | None, state: np.ndarray, out: np.ndarray, rank: int,
               activation: str) -> None:
    """EvalFloatSvdfReference with float32 sequential accumulation; updates ``state``."""
    batch = x.shape[0]
    n_filter, n_memory = w_time.shape
    n_unit = n_filter // rank
    _shift_state(state)
    st = state.reshape(batch, n_filter, n_memory)
    xb = x.reshape(batch, -1)
    dot = np.zeros((batch, n_filter), dtype=F32)
    for k in range(xb.shape[1]):  # sequential float32 sum over the input dimension
        dot += w_feature[:, k][None, :] * xb[:, k][:, None]
    st[:, :, n_memory - 1] = dot
    scratch = np.zeros((batch, n_filter), dtype=F32)
    for j in range(n_memory):  # sequential over memory
        scratch += w_time[:, j][None, :] * st[:, :, j]
    acc = np.zeros((batch, n_unit), dtype=F32)
    if bias is not None:
        acc += bias.reshape(1, n_unit)
    sc = scratch.reshape(batch, n_unit, rank)
    for r in range(rank):  # reduction over rank, in order
        acc += sc[:, :, r]
    out[...] = _activation_float(acc, activation).reshape(out.shape)


__all__ = ["SvdfQuant", "svdf_float", "svdf_integer", "svdf_quant"]
