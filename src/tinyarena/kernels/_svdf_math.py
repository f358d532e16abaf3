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
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._libm import tanhf
from tinyarena.kernels._quant import ChannelRequant, quantize_multiplier, requantize_inplace
from tinyarena.kernels._tflm_version import WHEEL, ScaleArithmetic
from tinyarena.kernels.base import PrepareContext

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
               state_zp: int, arithmetic: ScaleArithmetic = WHEEL) -> SvdfQuant:
    """PrepareSvdf's integer part: the effective scales and the bias-scale check.

    The wheel (8f6596d) widens every float32 scale to double before multiplying and dividing;
    TFLM 90b983c2's svdf_common.cc does both products and quotients in float32. ``arithmetic``
    is the target's (``_tflm_version``); the two differ on rounding boundaries.
    """
    s_st, s_out = float(F32(state_scale)), float(F32(output_scale))
    if s_st == 0 or s_out == 0:
        raise KernelError("SVDF needs non-zero activation-state and output scales")
    sa = arithmetic
    eff1 = sa.quotient(sa.product(input_scale, feature_scale), state_scale)
    eff2 = sa.quotient(sa.product(state_scale, time_scale), output_scale)
    if not abs(float(F32(bias_scale)) - sa.product(state_scale, time_scale)) < 1e-5:
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
    fast: SvdfIntFast | None = None  # the integer path with constant weights, see below
    fused: bool = False  # float dot products as fused multiply-adds (the target's float_fma)


@dataclass(frozen=True)
class SvdfIntFast:
    """The integer SVDF with constant weights in few, whole-tensor numpy calls.

    Both contractions run as exact float GEMVs (every product and partial sum is an integer
    below 2**24 for float32 or 2**53 for float64, checked at prepare against the actual
    weights, so the BLAS summation order cannot change the result), with the zero points
    folded into per-output constants: sum w * (v - zp) = sum w * v - zp * sum w.

    * Feature: ``[x, 1] @ [[weights_feature^T], [-input_zp * column sums]]``.
    * Time: the state, viewed as (batch * n_unit, rank * n_memory) (a unit's filters and their
      memories are adjacent), times weights_time elementwise, summed per row by a GEMV with a
      ones vector: the per-filter sums and the reduction over rank in one call; then
      ``+ (bias - state_zp * sum w)``.

    int32 wrap-around of TFLM's accumulators commutes with these integer sums (C wraps modulo
    2**32 at every step; wrapping the exact sum once is the same), and is skipped when the
    bounds show no sum can leave the int32 range. Rescaling is ``requantize_inplace``.
    """

    ws_x: int  # scratch (batch, n_in + 1), feature dtype
    ws_wf: int  # constant (n_in + 1, n_filter), feature dtype
    ws_f: int  # scratch (batch, n_filter), feature dtype
    ws_acc1: int  # scratch (batch, n_filter) int64
    ws_tmp1: int  # scratch (batch, n_filter) int64
    ws_prod: int  # scratch (batch * n_unit, rank * n_memory), time dtype
    ws_wt: int  # constant (batch * n_unit, rank * n_memory), time dtype (tiled: numpy
    # buffers a broadcast operand, which would allocate)
    ws_ones: int  # constant (rank * n_memory,), time dtype
    ws_g: int  # scratch (batch * n_unit,), time dtype
    ws_acc2: int  # scratch (batch * n_unit,) int64
    ws_tmp2: int  # scratch (batch * n_unit,) int64
    time_const: np.ndarray  # (batch * n_unit,) time dtype: bias - state_zp * sum of weights
    wrap1: bool
    wrap2: bool
    rq1: ChannelRequant  # scale 1, + state zero point, clamp to the state type (then wrap)
    rq2: ChannelRequant  # scale 2, + output zero point, clamp to int8


def _exact_float_dtype(bound: int) -> Any:
    """float32 when every integer up to ``bound`` is exact there, else float64; None if not
    even float64 holds it."""
    if bound < 1 << 24:
        return np.float32
    if bound < 1 << 53:
        return np.float64
    return None


def svdf_int_fast(ctx: PrepareContext, batch: int, n_in: int, n_filter: int, n_memory: int,
                  rank: int, state_dtype: np.dtype, q: SvdfQuant, w_feature: np.ndarray,
                  w_time: np.ndarray, bias: np.ndarray | None) -> SvdfIntFast | None:
    """Constants and workspaces of :class:`SvdfIntFast`; None when a bound does not hold."""
    n_unit = n_filter // rank
    info = np.iinfo(state_dtype)
    wf = np.asarray(w_feature, np.int64).reshape(n_filter, n_in)
    wt = np.asarray(w_time, np.int64).reshape(n_unit, rank * n_memory)
    b = np.zeros(n_unit, np.int64) if bias is None else \
        np.asarray(bias, np.int64).reshape(-1)[:n_unit]
    izp, szp = int(q.input_zero_point), int(q.state_zero_point)
    c1 = -izp * wf.sum(axis=1)
    abs_wf = np.abs(wf).sum(axis=1)
    f_dtype = _exact_float_dtype(int((abs_wf * 128 + np.abs(c1)).max(initial=0)))
    max_state = max(abs(int(info.min)), abs(int(info.max)))
    c2 = b - szp * wt.sum(axis=1)
    abs_wt = np.abs(wt).sum(axis=1)
    t_dtype = _exact_float_dtype(int((abs_wt * max_state + np.abs(c2)).max(initial=0)))
    if f_dtype is None or t_dtype is None:
        return None
    max_x = max(abs(127 - izp), abs(-128 - izp))
    wrap1 = int((abs_wf * max_x).max(initial=0)) >= 1 << 31
    max_s = max(abs(int(info.max) - szp), abs(int(info.min) - szp))
    wrap2 = int((abs_wt * max_s + np.abs(b)).max(initial=0)) >= 1 << 31

    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    def constant(array: np.ndarray) -> int:
        return int(ctx.request_workspace(array.shape, array.dtype, initial=array))

    wf_aug = np.ascontiguousarray(np.concatenate([wf.T, c1.reshape(1, -1)]).astype(f_dtype))
    i64 = np.int64
    rm = rank * n_memory
    return SvdfIntFast(
        scratch((batch, n_in + 1), f_dtype), constant(wf_aug),
        scratch((batch, n_filter), f_dtype), scratch((batch, n_filter), i64),
        scratch((batch, n_filter), i64),
        scratch((batch * n_unit, rm), t_dtype),
        constant(np.ascontiguousarray(np.tile(wt, (batch, 1)), t_dtype)),
        constant(np.ones(rm, t_dtype)), scratch((batch * n_unit,), t_dtype),
        scratch((batch * n_unit,), i64), scratch((batch * n_unit,), i64),
        np.tile(c2, batch).astype(t_dtype), wrap1, wrap2,
        ChannelRequant.make(q.scale_1_a, q.scale_1_b, szp, int(info.min) + szp,
                            int(info.max) + szp),
        ChannelRequant.make(q.scale_2_a, q.scale_2_b, q.output_zero_point, -128, 127))


def svdf_integer_fast(x: np.ndarray, state: np.ndarray, out: np.ndarray, p: SvdfIntFast,
                      ws: Callable[[int], np.ndarray]) -> None:
    """EvalIntegerSvdfReference through :class:`SvdfIntFast`; updates ``state``."""
    # Left shift the activation state: a 1-D copy to lower addresses, which numpy performs
    # front to back in place (no temporary), as the C loop does.
    flat = state.reshape(-1)
    np.copyto(flat[:-1], flat[1:])
    xs = ws(p.ws_x)
    n_in = xs.shape[1] - 1
    np.copyto(xs[:, :n_in], x.reshape(xs.shape[0], n_in))
    xs[:, n_in] = 1
    f = ws(p.ws_f)
    np.dot(xs, ws(p.ws_wf), out=f)
    acc1 = ws(p.ws_acc1)
    np.copyto(acc1, f, casting="unsafe")
    if p.wrap1:
        wrap_int32_inplace(acc1)
    batch, n_filter = acc1.shape
    st = state.reshape(batch, n_filter, -1)
    requantize_inplace(acc1, p.rq1, st[:, :, -1], ws(p.ws_tmp1))
    prod = ws(p.ws_prod)
    np.copyto(prod, state.reshape(prod.shape))
    np.multiply(prod, ws(p.ws_wt), out=prod)
    g = ws(p.ws_g)
    np.dot(prod, ws(p.ws_ones), out=g)
    g += p.time_const
    acc2 = ws(p.ws_acc2)
    np.copyto(acc2, g, casting="unsafe")
    if p.wrap2:
        wrap_int32_inplace(acc2)
    requantize_inplace(acc2, p.rq2, out.reshape(acc2.shape), ws(p.ws_tmp2))


def svdf_plan(ctx: PrepareContext, batch: int, n_in: int, n_filter: int, n_memory: int, rank: int,
              state_dtype: np.dtype, integer: bool, w_feature: np.ndarray | None,
              w_time: np.ndarray | None, bias: np.ndarray | None,
              quant: SvdfQuant | None = None) -> SvdfPlan:
    """Widen the constant weights and request the eval workspaces.

    With ``quant`` (integer path; the caller passes it only when a bias tensor, if any, is
    constant) and constant weights, the plan holds :class:`SvdfIntFast` instead.
    """
    n_unit = n_filter // rank
    # All scratch: the state lives in the arena (a variable tensor); every workspace is
    # written before it is read in each eval.
    def request(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    if integer and quant is not None and w_feature is not None and w_time is not None:
        fast = svdf_int_fast(ctx, batch, n_in, n_filter, n_memory, rank, state_dtype, quant,
                             w_feature, w_time, bias)
        if fast is not None:
            return SvdfPlan(batch, n_in, n_filter, n_memory, n_unit, rank, True, None, None,
                            None, (), fast)
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
    ws_float = (shift, request((n_filter, n_in), f32), request((n_filter,), f32),
                request((n_filter, n_memory), f32), request((n_unit, rank + 1), f32))
    return SvdfPlan(batch, n_in, n_filter, n_memory, n_unit, rank, False, None, None, None,
                    ws_float, fused=bool(getattr(ctx.target, "float_fma", False)))


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
        if plan.fused:  # dot_prod += a * b, each one fmaf from +0 (a build with float_fma)
            column.fill(zero)
            for j in range(plan.n_in):
                column[...] = fma32(w_feature[:, j], xb[b, j], column)
            np.copyto(st[b, :, n_memory - 1], column)
            last = tprod[:, -1]
            last.fill(zero)
            for j in range(n_memory):
                last[...] = fma32(w_time[:, j], st[b, :, j], last)
        else:
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


__all__ = ["SvdfIntFast", "SvdfPlan", "SvdfQuant", "svdf_int_fast", "svdf_integer_fast", "svdf_float", "svdf_integer", "svdf_plan", "svdf_quant"]
