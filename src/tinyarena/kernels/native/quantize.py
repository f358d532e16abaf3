"""Compiled QUANTIZE between integer types: TFLM's Requantize, one loop per tensor.

keyword-spotting models requantize a few dozen int16 activations to int8 per invoke (SVDF
output into a FULLY_CONNECTED); the numpy path needs about ten ufunc calls, ~10 us, for work a
C loop does in well under a microsecond. The arithmetic is MultiplyByQuantizedMultiplier as
TFLM writes it (a wrapping int32 left shift, SaturatingRoundingDoublingHighMul, then
RoundingDivideByPOT), the output zero point added and the result clamped: the numpy path's
``quantize`` (``kernels._quantize_math``) step for step, not its rearranged fast form.
Bound only where the numpy path uses its whole-tensor plan (``QuantizeFast``), whose checks
(non-negative multiplier, shift at most 31, no int32 wrap of the offset) also hold here.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native

# params: multiplier, left shift, right shift, input zero point, output zero point, min, max
_PARAMS = 7
INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


@native.jit
def requantize(x: Any, out: Any, p: Any) -> None:  # pragma: no cover - compiled
    m = p[0]
    left = p[1]
    right = p[2]
    in_zp = p[3]
    out_zp = p[4]
    lo = p[5]
    hi = p[6]
    for i in range(x.shape[0]):
        v = np.int64(x[i]) - in_zp
        v = ((v + 2147483648) & 0xFFFFFFFF) - 2147483648  # int32 arithmetic of x - zero_point
        if left > 0:
            v = (((v << left) + 2147483648) & 0xFFFFFFFF) - 2147483648
        # SaturatingRoundingDoublingHighMul: (v*m + nudge) / 2**31, truncating, which is the
        # floor of (v*m + 2**30) / 2**31; INT32_MIN * INT32_MIN is the only overflow
        h = (v * m + 1073741824) >> 31
        if h > 2147483647:
            h = 2147483647
        if right > 0:  # RoundingDivideByPOT: ties away from zero
            mask = (np.int64(1) << right) - 1
            rem = h & mask
            threshold = (mask >> 1) + (1 if h < 0 else 0)
            h = (h >> right) + (1 if rem > threshold else 0)
        h = ((h + out_zp + 2147483648) & 0xFFFFFFFF) - 2147483648
        if h < lo:
            h = lo
        elif h > hi:
            h = hi
        out[i] = h


def bind_requantize(x: np.ndarray, out: np.ndarray, multiplier: int, shift: int,
                    input_zero_point: int, output_zero_point: int, act_min: int,
                    act_max: int) -> Callable[[], None] | None:
    """The compiled Requantize over these arena views, or None (the numpy path runs) when
    the tensors or the constants fall outside what the loop reproduces."""
    if x.size != out.size or x.dtype.kind != "i" or out.dtype.kind not in "iu" or \
            x.dtype.itemsize > 4 or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    if not (0 <= multiplier <= INT32_MAX and -62 <= shift <= 31):
        return None
    if not (INT32_MIN <= input_zero_point <= INT32_MAX and INT32_MIN <= output_zero_point
            <= INT32_MAX and act_min <= act_max):
        return None
    params = np.array([multiplier, max(shift, 0), max(-shift, 0), input_zero_point,
                       output_zero_point, act_min, act_max], dtype=np.int64)
    return native.native_step(requantize, x.reshape(-1), out.reshape(-1), params)


@native.jit
def affine_quantize(x: Any, out: Any, scale: Any, p: Any) -> None:  # pragma: no cover
    """AffineQuantize as ``_quantize_math.quantize`` computes it: the float32 quotient,
    std::round (half away from zero, exact on float32), the x86 float -> int32 conversion
    (INT32_MIN for NaN, infinities and values out of range), the zero point added in wrapping
    int32, the clamp to the output type. ``scale`` is a one-element float32 array."""
    s = scale[0]
    out_zp = p[0]
    lo = p[1]
    hi = p[2]
    half = np.float32(0.5)
    for i in range(x.shape[0]):
        q = np.float32(x[i] / s)
        a = abs(q)
        fl = np.float32(np.floor(a))
        if a - fl >= half:
            fl = np.float32(fl + np.float32(1.0))
        r = np.float32(np.copysign(fl, q))
        if r > -2147483649.0 and r < 2147483648.0:
            v = np.int64(r)
        else:
            v = np.int64(INT32_MIN)
        v = ((v + out_zp + 2147483648) & 0xFFFFFFFF) - 2147483648
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        out[i] = v


def bind_affine_quantize(x: np.ndarray, out: np.ndarray, scale: float, output_zero_point: int,
                         act_min: int, act_max: int) -> Callable[[], None] | None:
    """float32 -> int8/int16 QUANTIZE compiled over these views, or None (numpy runs)."""
    if x.size != out.size or x.dtype != np.float32 or out.dtype not in (np.int8, np.int16) or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    if not (INT32_MIN <= output_zero_point <= INT32_MAX and act_min <= act_max):
        return None
    params = np.array([output_zero_point, act_min, act_max], dtype=np.int64)
    return native.native_step(affine_quantize, x.reshape(-1), out.reshape(-1),
                              np.array([scale], dtype=np.float32), params)


__all__ = ["affine_quantize", "bind_affine_quantize", "bind_requantize", "requantize"]
