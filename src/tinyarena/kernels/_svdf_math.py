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
from typing import Any, Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import (
    multiply_by_quantized_multiplier_inplace,
    wrap_int32_inplace,
)
from tinyarena.kernels._libm import tanhf
from tinyarena.kernels._quant import quantize_multiplier

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
    """PrepareSvdf's integer part: the effective scales and the bias-scale check.

    The pinned wheel widens every float32 scale to double before multiplying and dividing
    (the repository snapshot's svdf_common.cc does both products and quotients in float32);
    the two differ on rounding boundaries, see test_multiplier_drift.py.
    """
    s_in, s_wf, s_st = (float(F32(s)) for s in (input_scale, feature_scale, state_scale))
    s_wt, s_out = float(F32(time_scale)), float(F32(output_scale))
    if s_st == 0 or s_out == 0:
        raise KernelError("SVDF needs non-zero activation-state and output scales")
    eff1 = s_in * s_wf / s_st
    eff2 = s_st * s_wt / s_out
    if not abs(float(F32(bias_scale)) - s_st * s_wt) < 1e-5:
        raise KernelError("SVDF: bias scale must equal activation-state scale times weights_time "
                          "scale; requantize the bias")
    a1, b1 = quantize_multiplier(eff1)
    a2, b2 = quantize_multiplier(eff2)
    return SvdfQuant(a1, b1, a2, b2, input_zp, output_zp, state_zp)


@dataclass(frozen=True)
class SvdfPlan:
    """What an invoke needs, fixed at prepare: widened constant weights and workspace handles.

    Constant weights are widened once (int64 for the exact integer products; None when a
    weight tensor is not constant, then it is widened at eval). Workspaces: ``shift`` (the
    state's length, state dtype) and per path the int64 or float32 buffers listed in
    :func:`svdf_plan`; only contiguous same-shape arrays meet in ufuncs (numpy buffers
    broadcast or strided operands), so nothing is allocated per invoke.
    """

    batch: int
    n_in: int
    n_filter: int
    n_memory: int
    n_unit: int
    rank: int
    integer: bool
    w_feature_t: np.ndarray | None  # int64 (n_in, n_filter)
    w_time: np.ndarray | None  # int64 (batch, n_filter, n_memory)
    bias: np.ndarray | None  # int64 (batch, n_unit)
    workspaces: tuple[int, ...]


def svdf_plan(ctx: object, batch: int, n_in: int, n_filter: int, n_memory: int, rank: int,
              state_dtype: np.dtype, integer: bool, w_feature: np.ndarray | None,
              w_time: np.ndarray | None, bias: np.ndarray | None) -> SvdfPlan:
    """Widen the constant weights and request the eval workspaces."""
    n_unit = n_filter // rank
    # All scratch: the state lives in the arena (a variable tensor); every workspace is
    # written before it is read in each eval.
    def request(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype,  # type: ignore[attr-defined]
                                         persistent=False))

    shift = request((batch * n_filter * n_memory,), state_dtype)
    if integer:
        wf = None if w_feature is None else np.ascontiguousarray(w_feature.astype(np.int64).T)
        wt = None if w_time is None else np.ascontiguousarray(np.broadcast_to(
            w_time.astype(np.int64), (batch, n_filter, n_memory)))
        b = None if bias is None else np.ascontiguousarray(np.broadcast_to(
            bias.astype(np.int64).reshape(1, n_unit), (batch, n_unit)))
        i64 = np.int64
        ws = (shift, request((batch, n_in), i64), request((batch, n_filter), i64),
              request((batch, n_filter), i64), request((batch, n_filter, n_memory), i64),
              request((batch, n_unit), i64), request((batch, n_unit), i64))
        return SvdfPlan(batch, n_in, n_filter, n_memory, n_unit, rank, True, wf, wt, b, ws)
    f32 = np.float32
    ws = (shift, request((n_filter, n_in), f32), request((n_filter,), f32),
          request((n_filter, n_memory), f32), request((n_unit, rank + 1), f32))
    return SvdfPlan(batch, n_in, n_filter, n_memory, n_unit, rank, False, None, None, None, ws)


def _shift_state(state: np.ndarray, spare: np.ndarray) -> None:
    """'Left shift the activation_state': every element moves one place down, flat.

    Copied through ``spare`` because numpy copies overlapping views through a fresh temporary.
    """
    flat = state.reshape(-1)
    n = flat.size - 1
    np.copyto(spare[:n], flat[1:])
    np.copyto(flat[:n], spare[:n])


def _clamp(x: np.ndarray, lo: int, hi: int) -> None:
    np.maximum(x, lo, out=x)
    np.minimum(x, hi, out=x)


def svdf_integer(x: np.ndarray, w_feature: np.ndarray, w_time: np.ndarray,
                 bias: np.ndarray | None, state: np.ndarray, out: np.ndarray, plan: SvdfPlan,
                 q: SvdfQuant, ws: Callable[[int], np.ndarray]) -> None:
    """EvalIntegerSvdfReference<T> with T = state dtype (int8 or int16); updates ``state``."""
    batch, n_filter, n_memory = plan.batch, plan.n_filter, plan.n_memory
    shift, xin, dot, tmp, stv, acc, tmp2 = (ws(h) for h in plan.workspaces)
    info = np.iinfo(state.dtype)
    _shift_state(state, shift)
    st = state.reshape(batch, n_filter, n_memory)
    # Feature matmul: int32 dot products of int8 weights and offset int8 inputs.
    np.copyto(xin, x.reshape(batch, -1))
    xin -= q.input_zero_point
    wf = plan.w_feature_t if plan.w_feature_t is not None else \
        np.ascontiguousarray(w_feature.astype(np.int64).T)
    np.matmul(xin, wf, out=dot)
    wrap_int32_inplace(dot)
    multiply_by_quantized_multiplier_inplace(dot, q.scale_1_a, q.scale_1_b, tmp)
    _clamp(dot, int(info.min), int(info.max))
    dot += q.state_zero_point  # C stores an int into T: wraps
    np.copyto(st[:, :, n_memory - 1], dot, casting="unsafe")
    # Time: per filter, dot product over memory of weights_time and offset state.
    np.copyto(stv, st)
    stv -= q.state_zero_point
    wt = plan.w_time if plan.w_time is not None else np.ascontiguousarray(np.broadcast_to(
        w_time.astype(np.int64), stv.shape))
    stv *= wt
    np.add.reduce(stv, axis=2, out=dot)
    # Reduce over rank, bias, then wrap to int32 and rescale.
    np.add.reduce(dot.reshape(batch, plan.n_unit, plan.rank), axis=2, out=acc)
    if bias is not None:
        acc += plan.bias if plan.bias is not None else np.broadcast_to(
            bias.astype(np.int64).reshape(1, -1), acc.shape)
    wrap_int32_inplace(acc)
    multiply_by_quantized_multiplier_inplace(acc, q.scale_2_a, q.scale_2_b, tmp2)
    acc += q.output_zero_point
    _clamp(acc, -128, 127)
    np.copyto(out.reshape(acc.shape), acc, casting="unsafe")


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
               bias: np.ndarray | None, state: np.ndarray, out: np.ndarray, plan: SvdfPlan,
               activation: str, ws: Callable[[int], np.ndarray]) -> None:
    """EvalFloatSvdfReference with float32 sequential accumulation; updates ``state``.

    Each C loop ``sum = 0; sum += a * b`` is a product array accumulated in order along its
    row (np.add.accumulate is sequential) and then ``+ 0.0``: a sum starting from +0.0 equals
    the accumulation of the products except that a -0.0 result becomes +0.0.
    """
    batch, n_filter, n_memory = plan.batch, plan.n_filter, plan.n_memory
    shift, prod, column, tprod, rows = (ws(h) for h in plan.workspaces)
    _shift_state(state, shift)
    st = state.reshape(batch, n_filter, n_memory)
    xb = x.reshape(batch, -1)
    out_rows = out.reshape(batch, plan.n_unit)
    zero = F32(0)
    for b in range(batch):
        np.copyto(prod, xb[b])
        np.multiply(prod, w_feature, out=prod)
        np.add.accumulate(prod, axis=1, out=prod)
        np.copyto(column, prod[:, -1])
        column += zero
        np.copyto(st[b, :, n_memory - 1], column)
        np.multiply(w_time, st[b], out=tprod)
        np.add.accumulate(tprod, axis=1, out=tprod)
        # acc = 0 (+ bias), then + scratch over rank in order: one row per unit.
        if bias is None:
            rows[:, 0] = zero
        else:
            np.copyto(rows[:, 0], bias.reshape(-1))
            np.copyto(column[:plan.n_unit], rows[:, 0])
            column[:plan.n_unit] += zero
            np.copyto(rows[:, 0], column[:plan.n_unit])
        np.copyto(column, tprod[:, -1])
        column += zero
        np.copyto(rows[:, 1:], column.reshape(plan.n_unit, plan.rank))
        np.add.accumulate(rows, axis=1, out=rows)
        result = column[:plan.n_unit]
        np.copyto(result, rows[:, -1])
        _activation_float_inplace(result, activation)
        np.copyto(out_rows[b], result)


def _activation_float_inplace(x: np.ndarray, activation: str) -> None:
    """ActivationValFloat, element-wise in float32, written back into ``x``."""
    if activation == "NONE":
        return
    if activation == "RELU":
        np.maximum(x, F32(0), out=x)
    elif activation == "RELU_N1_TO_1":
        np.minimum(x, F32(1), out=x)
        np.maximum(x, F32(-1), out=x)
    elif activation == "RELU6":
        np.minimum(x, F32(6), out=x)
        np.maximum(x, F32(0), out=x)
    else:
        x[...] = _activation_float(x, activation)


__all__ = ["SvdfPlan", "SvdfQuant", "svdf_float", "svdf_integer", "svdf_plan", "svdf_quant"]
