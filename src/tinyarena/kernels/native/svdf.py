"""Compiled SVDF: ``_svdf_math.svdf_integer`` / ``svdf_float`` as the C loops of
EvalIntegerSvdfReference and EvalFloatSvdfReference (state shift, feature dot products into
the newest memory column, time dot products, rank sums, bias, rescale or activation).

Integer sums are exact in int64 and wrapped to int32 once (C's wrapping int32 accumulation
gives the same residue); float sums start from +0 and add in C's order, each product one
float32 rounding or, with the target's ``float_fma``, one fused multiply-add. Weights and
bias are read through their arena views at every invoke, as eval does.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels.native import jit, native_step
from tinyarena.kernels.native.lstm import _clamp, _wrap32, mbqm
from tinyarena.kernels.native.libm import add32, fma32, mul32, tanhf
# numba's disk cache keeps libm's code as this file was last compiled: a change to libm
# (tanhf quiets a signaling NaN since nfloat) needs a change here or a cleared cache

ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")


@jit
def _shift_state(flat):
    for i in range(flat.shape[0] - 1):
        flat[i] = flat[i + 1]


@jit
def svdf_integer(x, w_feature, w_time, bias, state, out, p):
    """p = (input zp, state zp, output zp, state min, state max, scale 1 multiplier, left,
    right, scale 2 multiplier, left, right, has bias, rank); ``state`` (batch, filters,
    memory) over the arena's bytes, shifted first through ``state.ravel()``."""
    izp, szp, ozp, smin, smax = p[0], p[1], p[2], p[3], p[4]
    has_bias, rank = p[11] != 0, p[12]
    batch, n_filter, n_memory = state.shape
    n_in = x.shape[1]
    _shift_state(state.reshape(-1))
    for b in range(batch):
        for f in range(n_filter):
            acc = np.int64(0)
            for j in range(n_in):
                acc += (np.int64(x[b, j]) - izp) * w_feature[f, j]
            v = _clamp(mbqm(_wrap32(acc), p[5], p[6], p[7]), smin, smax) + szp
            state[b, f, n_memory - 1] = v
        for u in range(out.shape[1]):
            acc = np.int64(bias[u]) if has_bias else np.int64(0)
            for f in range(u * rank, (u + 1) * rank):
                for m in range(n_memory):
                    acc += (np.int64(state[b, f, m]) - szp) * w_time[f, m]
            v = _clamp(mbqm(_wrap32(acc), p[8], p[9], p[10]) + ozp, -128, 127)
            out[b, u] = v


@jit
def _maximum(a, b):
    """np.maximum on one pair: a NaN operand wins, equal values give ``b``."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a > b else b


@jit
def _minimum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a < b else b


@jit
def svdf_float(x, w_feature, w_time, bias, state, out, p):
    """p = (fused multiply-adds, has bias, rank, activation index in ``ACTIVATIONS``)."""
    fused, has_bias, rank, act = p[0] != 0, p[1] != 0, p[2], p[3]
    batch, n_filter, n_memory = state.shape
    n_in = x.shape[1]
    zero = np.float32(0)
    _shift_state(state.reshape(-1))
    for b in range(batch):
        for f in range(n_filter):
            s = zero
            for j in range(n_in):
                if fused:
                    s = fma32(w_feature[f, j], x[b, j], s)
                else:
                    s = add32(s, mul32(x[b, j], w_feature[f, j]))
            state[b, f, n_memory - 1] = s
        for u in range(out.shape[1]):
            acc = add32(bias[u], zero) if has_bias else zero
            for f in range(u * rank, (u + 1) * rank):
                s = zero
                for m in range(n_memory):
                    if fused:
                        s = fma32(w_time[f, m], state[b, f, m], s)
                    else:
                        s = add32(s, mul32(w_time[f, m], state[b, f, m]))
                acc = add32(acc, add32(s, zero))
            if act == 1:
                acc = _maximum(acc, zero)
            elif act == 2:
                acc = _maximum(_minimum(acc, np.float32(1)), np.float32(-1))
            elif act == 3:
                acc = _maximum(_minimum(acc, np.float32(6)), zero)
            elif act == 4:
                acc = tanhf(acc)
            elif act == 5:
                acc = np.float32(1) if np.float32(acc).view(np.int32) < 0 else zero
            out[b, u] = acc


def _split_shift(shift: int) -> tuple[int, int] | None:
    """(left, right) of a TFLM shift as MultiplyByQuantizedMultiplier applies it; None for
    left shifts of 32 or more (the numpy paths differ there) or right shifts above 62."""
    if shift >= 32 or shift < -62:
        return None
    return max(shift, 0), max(-shift, 0)


def bind_svdf(x: np.ndarray, w_feature: np.ndarray, w_time: np.ndarray, bias: np.ndarray | None,
              state: np.ndarray, out: np.ndarray, data: Any, fused: bool
              ) -> Callable[[], None] | None:
    """The compiled step for one SVDF (``data``: the kernel's OpData), or None (decline)."""
    if x.ndim != 2 or w_feature.ndim != 2 or w_time.ndim != 2 or out.ndim != 2:
        return None
    batch, n_in = x.shape
    n_filter, n_memory = w_time.shape
    rank = int(data.rank)
    if rank < 1 or n_filter % rank or n_memory < 1 or w_feature.shape != (n_filter, n_in) \
            or out.shape != (batch, n_filter // rank) or state.size != batch * n_filter * n_memory \
            or (bias is not None and bias.shape[0] < n_filter // rank) \
            or not all(a.flags.c_contiguous for a in (x, w_feature, w_time, state, out)):
        return None
    st = state.reshape(batch, n_filter, n_memory)
    if not np.shares_memory(st, state):
        return None
    has_bias = bias is not None
    b = bias.reshape(-1) if bias is not None else np.zeros(1, out.dtype if data.quant is None
                                                            else np.int32)
    q = data.quant
    if q is None:
        if data.activation not in ACTIVATIONS or x.dtype != np.float32 \
                or state.dtype != np.float32:
            return None
        p = np.array([int(fused), int(has_bias), rank, ACTIVATIONS.index(data.activation)],
                     np.int64)
        return native_step(svdf_float, x, w_feature, w_time, b, st, out, p)
    s1, s2 = _split_shift(int(q.scale_1_b)), _split_shift(int(q.scale_2_b))
    if s1 is None or s2 is None or x.dtype != np.int8 or out.dtype != np.int8 \
            or state.dtype not in (np.int8, np.int16) \
            or not (0 <= q.scale_1_a < 1 << 31 and 0 <= q.scale_2_a < 1 << 31):
        return None
    info = np.iinfo(state.dtype)
    p = np.array([q.input_zero_point, q.state_zero_point, q.output_zero_point, info.min,
                  info.max, q.scale_1_a, s1[0], s1[1], q.scale_2_a, s2[0], s2[1],
                  int(has_bias), rank], np.int64)
    return native_step(svdf_integer, x, w_feature, w_time, b, st, out, p)


__all__ = ["ACTIVATIONS", "bind_svdf", "svdf_float", "svdf_integer"]
