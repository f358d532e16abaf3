"""Compiled SOFTMAX: ``_softmax_math.softmax`` row by row, for float32, int8 -> int8/int16 and
int16 -> int16.

int8 reads the prepare-time exp and accumulator tables (``SoftmaxOpData``) and takes each
row's GetReciprocal with gemmlowp's Newton iteration on int64 scalars (the numpy path's
``_reciprocal_scalar``); int16 uses the two interpolated LUTs; float32 the scalar expf port
of ``native.libm`` for the target's C library.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels.native import jit, native_step
from tinyarena.kernels.native.libm import expf, expf_mode_for

_INT32_MAX, _INT32_MIN = 2147483647, -2147483648
_FORTY_EIGHT_OVER_17 = 1515870810
_MINUS_32_OVER_17 = -1010580540


@jit
def _wrap32(v):
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


@jit
def _srdhm(a, b):
    v = (a * b + (1 << 30)) >> 31
    return _INT32_MAX if v > _INT32_MAX else v


@jit
def _mul_by_pot(x, exponent):
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return _INT32_MAX
    if x < -threshold:
        return _INT32_MIN
    return _wrap32(x << exponent)


@jit
def _bit_length(u):
    n = 0
    while u > 0:
        u >>= 1
        n += 1
    return n


@jit
def reciprocal(x, integer_digits):
    """GetReciprocal of a positive int32 value (``_softmax_math._reciprocal_scalar``)."""
    u = x & 0xFFFFFFFF
    headroom_plus_one = 32 - _bit_length(u)
    a = _wrap32(((u << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    total = a + _INT32_MAX
    half_denominator = (total + 1) >> 1 if total >= 0 else -((1 - total) >> 1)
    est = _wrap32(_FORTY_EIGHT_OVER_17 + _srdhm(half_denominator, _MINUS_32_OVER_17))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - _srdhm(half_denominator, est))
        est = _wrap32(est + _mul_by_pot(_srdhm(est, one_minus), 2))
    return _mul_by_pot(est, 1), integer_digits - headroom_plus_one


@jit
def softmax_int8(x, out, exp_table, contrib_table, out_bits):
    """reference_ops::Softmax<int8_t, int8_t/int16_t> on (rows, depth)."""
    rows, depth = x.shape
    out_min = -(1 << (out_bits - 1))
    out_max = (1 << (out_bits - 1)) - 1
    for r in range(rows):
        m = np.int64(x[r, 0])
        for i in range(1, depth):
            if x[r, i] > m:
                m = np.int64(x[r, i])
        total = np.int64(0)
        for i in range(depth):
            total += contrib_table[m - x[r, i]]
        scale, bits_over_unit = reciprocal(_wrap32(total), 12)
        exponent = bits_over_unit + 31 - out_bits
        half = np.int64(1) << (exponent - 1)
        for i in range(depth):
            v = (exp_table[m - x[r, i]] * scale + (1 << 30)) >> 31
            v = ((v + half) >> exponent) + out_min
            out[r, i] = out_max if v > out_max else v


@jit
def _lut16(v, lut):
    """LUTLookup(int16_t): 7-bit linear interpolation (``_lut.lut_lookup_int16``)."""
    index = 256 + (v >> 7)
    base = np.int64(lut[index])
    slope = ((np.int64(lut[index + 1]) - base + 32768) & 0xFFFF) - 32768
    delta = (slope * (v & 0x7F) + 64) >> 7
    return ((base + delta + 32768) & 0xFFFF) - 32768


@jit
def softmax_int16(x, out, exp_lut, recip_lut, p, tmp):
    """reference_ops::SoftmaxInt16; p = (multiplier, left shift, right shift); ``tmp``: one
    row of int64 scratch."""
    rows, depth = x.shape
    mult, left, right = p[0], p[1], p[2]
    for r in range(rows):
        m = np.int64(x[r, 0])
        for i in range(1, depth):
            if x[r, i] > m:
                m = np.int64(x[r, i])
        total = np.int64(0)
        for i in range(depth):
            d = np.int64(x[r, i]) - m
            if left > 0:
                d = _wrap32(d << left)
            s = (d * mult + (1 << 30)) >> 31
            if s > _INT32_MAX:
                s = _INT32_MAX
            if right > 0:
                s = (s + (1 << (right - 1)) - (1 if s < 0 else 0)) >> right
            s += 32767
            s = -32768 if s < -32768 else (32767 if s > 32767 else s)
            e = _lut16(s, exp_lut)
            tmp[i] = e
            total += e
        total = _wrap32(total)
        headroom_plus_one = 32 - _bit_length(total & 0xFFFFFFFF)
        shifted = ((total << (headroom_plus_one - 1)) + (1 << 13)) >> 14
        shifted -= (1 << 15) + (1 << 16)
        shifted = -32768 if shifted < -32768 else (32767 if shifted > 32767 else shifted)
        recip = _lut16(shifted, recip_lut)
        right_shift = 31 - headroom_plus_one
        rounding = np.int64(1) << (right_shift - 1)
        for i in range(depth):
            v = (tmp[i] * recip + rounding) >> right_shift
            out[r, i] = 0 if v < 0 else (32767 if v > 32767 else v)


@jit
def softmax_float(x, out, beta, mode):
    """reference_ops::Softmax<float>: max from the lowest float (NaNs never win), exp of
    (x - max) * beta, the sum left to right (a NaN sum keeps its bits, as x86's addss
    does: the numpy path's), then each exp divided by it."""
    rows, depth = x.shape
    b = beta[0]
    lowest = np.float32(-3.4028234663852886e38)
    for r in range(rows):
        m = lowest
        for i in range(depth):
            if x[r, i] > m:
                m = x[r, i]
        total = np.float32(0)
        for i in range(depth):
            e = expf((x[r, i] - m) * b, mode)
            out[r, i] = e
            if total != total:
                continue
            if e != e:
                total = e
            else:
                total = total + e
        for i in range(depth):
            out[r, i] = out[r, i] / total


def bind_softmax(x: np.ndarray, out: np.ndarray, data: Any,
                 workspace: Callable[[tuple[int, ...]], np.ndarray] | None = None
                 ) -> Callable[[], None] | None:
    """The compiled step for one SOFTMAX (``data``: SoftmaxOpData), or None (decline)."""
    from tinyarena.kernels._lut import softmax_int16_luts
    from tinyarena.model.types import TensorType

    if x.ndim == 0 or x.size == 0 or x.shape != out.shape or not x.flags.c_contiguous \
            or not out.flags.c_contiguous:
        return None
    depth = x.shape[-1]
    rows_in, rows_out = x.reshape(-1, depth), out.reshape(-1, depth)
    if not (np.shares_memory(rows_in, x) and np.shares_memory(rows_out, out)):
        return None
    if data.input_type == TensorType.FLOAT32:
        mode = expf_mode_for(data.libm)
        if mode is None or x.dtype != np.float32 or out.dtype != np.float32:
            return None
        return native_step(softmax_float, rows_in, rows_out,
                           np.array([data.beta], np.float32), mode)
    if data.input_type == TensorType.INT8:
        exp, contrib = data.exp_table, data.contrib_table
        # the row sum stays a positive int32 (each contribution is at most 2**19)
        if exp is None or contrib is None or depth > 4095 or x.dtype != np.int8:
            return None
        bits = 16 if data.output_type == TensorType.INT16 else 8
        if out.dtype != (np.int16 if bits == 16 else np.int8):
            return None
        return native_step(softmax_int8, rows_in, rows_out,
                           np.ascontiguousarray(exp, np.int64),
                           np.ascontiguousarray(contrib, np.int64), bits)
    if data.input_type == TensorType.INT16:
        shift = int(data.input_left_shift)
        if x.dtype != np.int16 or out.dtype != np.int16 or depth > 65535 \
                or not 0 <= data.input_multiplier < 1 << 31 or -shift > 62:
            return None
        exp_lut, recip_lut = softmax_int16_luts()
        p = np.array([data.input_multiplier, max(shift, 0) & 31, max(-shift, 0)], np.int64)
        tmp = np.zeros(depth, np.int64)  # one row of exps, made once at bind
        return native_step(softmax_int16, rows_in, rows_out, np.ascontiguousarray(exp_lut),
                           np.ascontiguousarray(recip_lut), p, tmp)
    return None


__all__ = ["bind_softmax", "reciprocal", "softmax_float", "softmax_int16", "softmax_int8"]
