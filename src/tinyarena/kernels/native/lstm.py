"""Compiled UNIDIRECTIONAL_SEQUENCE_LSTM: ``_lstm_math.lstm_float`` and ``lstm_integer`` as
one loop nest each (time step, batch row, gate unit), the recurrence's only sequential axis
being the time step.

The numpy path computes every time step's input FC up front because a numpy call costs a
microsecond; compiled, the input FC of a step is computed with that step (same operations,
same order per element: C's ``total += x[d] * w[d]`` from +0, then the bias), so the kernel
needs only two rows of 4 * state values of scratch. Integer requantisation is gemmlowp's
MultiplyByQuantizedMultiplier written out on int64 scalars (the numpy path's single-shift
forms are proven equal to it); float logistic and tanh use the scalar ports of
``native.libm``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels.native import jit, native_step
from tinyarena.kernels.native.libm import add32, expf_mode_for, fma32, logistic, mul32, tanhf
# numba's disk cache keeps libm's code as this file was last compiled: a change to libm
# (tanhf quiets a signaling NaN since nfloat) needs a change here or a cleared cache

_I16_MIN, _I16_MAX = -32768, 32767

# p (int64 parameters) of the integer kernel
_P_TIME_MAJOR, _P_WIDE, _P_IN_OFF, _P_H_OFF, _P_CELL_SIGMOID, _P_CLIP, _P_QCLIP = range(7)
_P_MULS = 7  # then three inter-gate muls of 6 values each: m, left, right, offset, min, max


@jit
def _wrap32(v):
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


@jit
def mbqm(x, m, left, right):
    """MultiplyByQuantizedMultiplier (int32 form) of an int32-valued ``x``: wrapping left
    shift, SaturatingRoundingDoublingHighMul, RoundingDivideByPOT."""
    if left > 0:
        x = _wrap32(x << left)
    p = (x * m + (1 << 30)) >> 31
    if p > 2147483647:
        p = 2147483647
    if right > 0:
        p = (p + (1 << (right - 1)) - (1 if p < 0 else 0)) >> right
    return p


@jit
def mbqm64(x, reduced, total_shift):
    """MultiplyByQuantizedMultiplier (int64 form): the 16-bit multiplier and one rounding
    shift (``_quant.requantize_int64_inplace``), truncated to int32."""
    return _wrap32((x * reduced + (1 << (total_shift - 1))) >> total_shift)


@jit
def _clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@jit
def _mul(a, b, p, at):
    """reference_integer_ops::MulElementwise with zero input offsets (``_lstm_math._mul_int``),
    its constants at p[at:at + 6]."""
    v = mbqm(np.int64(a) * np.int64(b), p[at], p[at + 1], p[at + 2]) + p[at + 3]
    return _clamp(v, p[at + 4], p[at + 5])


@jit
def lstm_integer(x, hidden, cell, out, w_in, w_rec, bias, rq, p, sigmoid, tanh_gate,
                 tanh_cell, acc, racc):
    """EvalLstm's integer kernels (8x8->16, 16x8->16). ``rq`` rows: input FC multiplier,
    left, right, recurrent FC multiplier, left, right per gate unit (16x8: row 0/3 the
    16-bit multiplier, row 1/4 the total shift); tables indexed by the int16 bit pattern."""
    time_major = p[_P_TIME_MAJOR] != 0
    wide = p[_P_WIDE] != 0
    in_off, h_off = p[_P_IN_OFF], p[_P_H_OFF]
    cell_sigmoid = p[_P_CELL_SIGMOID] != 0
    clip, qclip = p[_P_CLIP] != 0, p[_P_QCLIP]
    d0, d1, n_in = x.shape
    batch, s = hidden.shape
    cols = 4 * s
    steps = d0 if time_major else d1
    for t in range(steps):
        for b in range(batch):
            i0, i1 = (t, b) if time_major else (b, t)
            for j in range(cols):
                acc[j] = bias[j]
            for d in range(n_in):
                xv = np.int64(x[i0, i1, d]) + in_off
                for j in range(cols):
                    acc[j] += xv * w_in[d, j]
            for j in range(cols):
                racc[j] = 0
            for k in range(s):
                hv = np.int64(hidden[b, k]) + h_off
                for j in range(cols):
                    racc[j] += hv * w_rec[k, j]
            for j in range(cols):
                if wide:
                    a = mbqm64(acc[j], rq[0, j], rq[1, j])
                    r = mbqm64(racc[j], rq[3, j], rq[4, j])
                else:
                    a = mbqm(_wrap32(acc[j]), rq[0, j], rq[1, j], rq[2, j])
                    r = mbqm(_wrap32(racc[j]), rq[3, j], rq[4, j], rq[5, j])
                g = _clamp(_clamp(r, _I16_MIN, _I16_MAX) + _clamp(a, _I16_MIN, _I16_MAX),
                           _I16_MIN, _I16_MAX) & 0xFFFF
                if j < 3 * s or cell_sigmoid:
                    acc[j] = sigmoid[g]
                else:
                    acc[j] = tanh_gate[g]
            for k in range(s):
                c = _clamp(_mul(acc[k], cell[b, k], p, _P_MULS)
                           + _mul(acc[s + k], acc[3 * s + k], p, _P_MULS + 6),
                           _I16_MIN, _I16_MAX)
                if clip:
                    c = _clamp(c, -qclip, qclip)
                cell[b, k] = c
                h = _mul(tanh_cell[c & 0xFFFF], acc[2 * s + k], p, _P_MULS + 12)
                hidden[b, k] = h
                out[i0, i1, k] = h


@jit
def lstm_float(x, hidden, cell, out, w_in, w_rec, bias, p, clip, acc,
               racc):
    """EvalLstm<float>: p = (time major, fused multiply-adds, expf mode, cell gate is a
    sigmoid, clip); ``clip`` a float32 array holding the cell clip."""
    time_major = p[0] != 0
    fused = p[1] != 0
    mode = p[2]
    cell_sigmoid = p[3] != 0
    use_clip = p[4] != 0
    cc = clip[0]
    zero = np.float32(0)
    d0, d1, n_in = x.shape
    batch, s = hidden.shape
    cols = 4 * s
    steps = d0 if time_major else d1
    for t in range(steps):
        for b in range(batch):
            i0, i1 = (t, b) if time_major else (b, t)
            for j in range(cols):
                acc[j] = zero
                racc[j] = zero
            for d in range(n_in):
                xv = x[i0, i1, d]
                if fused:
                    for j in range(cols):
                        acc[j] = fma32(xv, w_in[d, j], acc[j])
                else:
                    for j in range(cols):
                        acc[j] = acc[j] + xv * w_in[d, j]
            for k in range(s):
                hv = hidden[b, k]
                if fused:
                    for j in range(cols):
                        racc[j] = fma32(hv, w_rec[k, j], racc[j])
                else:
                    for j in range(cols):
                        racc[j] = racc[j] + hv * w_rec[k, j]
            if not fused:
                # A NaN sum: which operand's NaN survives depends on the order of each add
                # and multiply, which the vectorised loops above do not pin; redo it exactly.
                for j in range(cols):
                    if acc[j] != acc[j]:
                        exact = zero
                        for d in range(n_in):
                            exact = add32(exact, mul32(x[i0, i1, d], w_in[d, j]))
                        acc[j] = exact
                    if racc[j] != racc[j]:
                        exact = zero
                        for k in range(s):
                            exact = add32(exact, mul32(hidden[b, k], w_rec[k, j]))
                        racc[j] = exact
            for j in range(cols):
                g = add32(add32(acc[j], bias[j]), racc[j])
                if j < 3 * s or cell_sigmoid:
                    acc[j] = logistic(g, mode)
                else:
                    acc[j] = tanhf(g)
            for k in range(s):
                c = add32(mul32(acc[k], cell[b, k]), mul32(acc[s + k], acc[3 * s + k]))
                if use_clip:
                    if c > cc:
                        c = cc
                    elif c < -cc:
                        c = -cc
                cell[b, k] = c
                h = mul32(tanhf(c), acc[2 * s + k])
                hidden[b, k] = h
                out[i0, i1, k] = h


def _view(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` reshaped without a copy, or None (the step must write through to the arena)."""
    if not a.flags.c_contiguous or a.size != int(np.prod(shape)):
        return None
    v = a.reshape(shape)
    return v if np.shares_memory(v, a) or a.size == 0 else None


def _muls(q: Any) -> list[int]:
    """The three inter-gate MulQuant constants in ``_mul``'s layout (None if unsupported)."""
    out: list[int] = []
    for m in (q.forget_cell_mul, q.input_mul, q.output_mul):
        left, right = max(m.shift, 0) & 31, max(-m.shift, 0)  # x86-64 masks the left shift
        if not 0 <= m.multiplier < 1 << 31 or right > 62:
            raise ValueError
        out += [m.multiplier, left, right, m.output_offset, m.act_min, m.act_max]
    return out


def _requant_rows(rq: Any, wide: bool) -> list[np.ndarray]:
    m = np.asarray(rq.multiplier, np.int64)
    left, right = np.asarray(rq.left, np.int64), np.asarray(rq.right, np.int64)
    if rq.output_offset != 0 or rq.act_min != _I16_MIN or rq.act_max != _I16_MAX \
            or np.any(m < 0) or np.any(m >= 1 << 31):
        raise ValueError
    if wide:
        reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
        total = 15 - (left - right)
        if np.any(total < 1) or np.any(total > 62):
            raise ValueError
        return [reduced, total, np.zeros_like(m)]
    if np.any(left >= 32) or np.any(right > 62):  # the numpy path does not mask this shift
        raise ValueError
    return [m, left, right]


def bind_lstm(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, out: np.ndarray,
              data: Any, workspace: Callable[[int], np.ndarray]) -> Callable[[], None] | None:
    """The compiled step for one LSTM operator (``data``: the kernel's OpData), or None when
    its layout or arithmetic is one this module does not reproduce."""
    plan = data.plan
    s, batch, n_in = plan.n_state, plan.batch, plan.n_input
    cols = 4 * s
    if x.ndim != 3 or min(x.shape) < 1 or s < 1 or x.shape[2] != n_in \
            or out.shape != x.shape[:2] + (s,) \
            or (x.shape[1] if plan.time_major else x.shape[0]) != batch \
            or data.cell_activation not in ("TANH", "SIGMOID") or not x.flags.c_contiguous \
            or not out.flags.c_contiguous:
        return None
    h2, c2 = _view(hidden, (batch, s)), _view(cell, (batch, s))
    if h2 is None or c2 is None:
        return None
    if plan.w_in.shape != (n_in, cols) or plan.w_rec.shape != (s, cols) \
            or plan.bias.shape != (cols,):
        return None
    sigmoid_cell = int(data.cell_activation == "SIGMOID")
    if plan.kind == "float":
        mode = expf_mode_for(plan.libm)
        if mode is None or x.dtype != np.float32:
            return None
        ws = workspace(plan.workspaces[2]).reshape(-1, cols)  # (batch, S + 1, 4S) floats
        p = np.array([int(plan.time_major), int(plan.fused), mode, sigmoid_cell,
                      int(data.cell_clip > 0)], np.int64)
        clip = np.array([data.cell_clip], np.float32)
        return native_step(lstm_float, x, h2, c2, out, np.ascontiguousarray(plan.w_in),
                           np.ascontiguousarray(plan.w_rec), np.ascontiguousarray(plan.bias),
                           p, clip, ws[0], ws[1])
    q = data.quant
    if q is None or plan.in_rq is None or plan.rec_rq is None or len(plan.tables) != 3:
        return None
    wide = plan.kind == "16x8_16"
    try:
        rq = np.ascontiguousarray(np.stack(_requant_rows(plan.in_rq, wide)
                                           + _requant_rows(plan.rec_rq, wide)))
        muls = _muls(q)
    except ValueError:
        return None
    if rq.shape != (6, cols):
        return None
    tables = [workspace(h) for h in plan.tables]
    if any(t.shape != (1 << 16,) or t.dtype != np.int16 for t in tables):
        return None
    acc, racc = workspace(plan.workspaces[4]), workspace(plan.workspaces[5])
    if acc.shape != (batch, cols) or racc.shape != (batch, cols):
        return None
    p = np.array([int(plan.time_major), int(wide), plan.input_offset, plan.hidden_offset,
                  sigmoid_cell, int(data.cell_clip > 0), q.quantized_cell_clip] + muls,
                 np.int64)
    return native_step(lstm_integer, x, h2, c2, out, np.ascontiguousarray(plan.w_in),
                       np.ascontiguousarray(plan.w_rec), np.ascontiguousarray(plan.bias), rq,
                       p, tables[0], tables[1], tables[2], acc[0], racc[0])


__all__ = ["bind_lstm", "lstm_float", "lstm_integer", "mbqm", "mbqm64"]
