"""Compiled integer MEAN / SUM over a contiguous run of axes (MEAN over height and width, the
global pool ending mobilenet-style models; SUM over the last axis...).

The numpy path transposes the input into a workspace, accumulates it and rescales the sums
(QuantizedMeanOrSum); here each output sums its column directly and the same rescale follows:
the zero-point correction wrapped to int32, MultiplyByQuantizedMultiplier as
``_fixedpoint.multiply_by_quantized_multiplier_inplace`` computes it (left shift masked to 5
bits and wrapped, floor((x*m + 2**30) / 2**31), rounding right shift), the output zero point
and the clamp. Integer sums wrap to int32 the same way in any order, so the order of the
additions does not matter. float32 sums do depend on it: ``mean_or_sum_float`` adds each
output's inputs in the input's row-major order from the first one (``np.add.accumulate``, as
the numpy path sums), then +0.0 (TFLM's sum starts from 0.0f: an all -0.0 column gives +0.0)
and, for MEAN, divides by the float count; outputs accumulate in place, channels innermost.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels.native._fops import fadd


@native.jit
def mean_or_sum(x: Any, out: Any, p: Any) -> None:  # pragma: no cover - compiled
    outer = p[0]
    k = p[1]
    inner = p[2]
    zp_total = p[3]
    m = p[4]
    left = p[5]
    right = p[6]
    out_zp = p[7]
    lo = p[8]
    hi = p[9]
    for o in range(outer):
        for i in range(inner):
            base = o * k * inner + i
            s = np.int64(0)
            for r in range(k):
                s += x[base + r * inner]
            s = ((s - zp_total + 2147483648) & 0xFFFFFFFF) - 2147483648
            if left > 0:
                s = (((s << left) + 2147483648) & 0xFFFFFFFF) - 2147483648
            s = (s * m + 1073741824) >> 31
            if right > 0:
                s = (s + (s >> 63) + (np.int64(1) << (right - 1))) >> right
            s += out_zp
            if s < lo:
                s = lo
            elif s > hi:
                s = hi
            out[o * inner + i] = s


def bind_mean_or_sum(x: np.ndarray, out: np.ndarray, axes: Sequence[int], multiplier: int,
                     shift: int, input_zero_point: int, output_zero_point: int
                     ) -> Callable[[], None] | None:
    """The compiled reduction over ``axes`` (resolved, sorted) with the multiplier and shift
    the numpy path uses for this count; None (numpy runs) unless the axes are one contiguous
    run of an int8/int16 input and the constants are in the loop's range."""
    if x.dtype not in (np.int8, np.int16) or out.dtype != x.dtype or not axes or \
            list(axes) != list(range(axes[0], axes[-1] + 1)) or axes[-1] >= x.ndim or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    shape = x.shape
    outer = int(np.prod(shape[:axes[0]], dtype=np.int64))
    k = int(np.prod(shape[axes[0]:axes[-1] + 1], dtype=np.int64))
    inner = int(np.prod(shape[axes[-1] + 1:], dtype=np.int64))
    if k == 0 or out.size != outer * inner or not 0 <= multiplier < 1 << 32 or \
            not -62 <= shift <= 62 or k >= 1 << 24:
        return None
    info = np.iinfo(x.dtype)
    left = (shift & 31) if shift > 0 else 0
    params = np.array([outer, k, inner, input_zero_point * k, multiplier, left,
                       max(-shift, 0), output_zero_point, int(info.min), int(info.max)],
                      dtype=np.int64)
    return native.native_step(mean_or_sum, x.reshape(-1), out.reshape(-1), params)


@native.jit
def mean_or_sum_float(x: Any, out: Any, p: Any, divisor: Any) -> None:  # pragma: no cover
    # x as (outer, k, inner), out as (outer, inner); out is the accumulator: row r = 0 is
    # copied in, rows 1..k-1 added in order (each output's additions stay sequential)
    outer = p[0]
    k = p[1]
    inner = p[2]
    mean = p[3] != 0
    count = divisor[0]
    zero = np.float32(0)
    for o in range(outer):
        acc = out[o * inner:(o + 1) * inner]
        base = o * k * inner
        for i in range(inner):
            acc[i] = x[base + i]
        for r in range(1, k):
            row = x[base + r * inner:base + (r + 1) * inner]
            for i in range(inner):
                acc[i] = fadd(acc[i], row[i])
        if mean:
            for i in range(inner):
                acc[i] = fadd(acc[i], zero) / count
        else:
            for i in range(inner):
                acc[i] = fadd(acc[i], zero)


def bind_mean_or_sum_float(x: np.ndarray, out: np.ndarray, axes: Sequence[int], mean: bool
                           ) -> Callable[[], None] | None:
    """The compiled float32 reduction over ``axes`` (resolved, sorted); None (numpy runs)
    unless they are one contiguous run, the count is non-zero and exact in float32, and the
    output does not overlap the input (other than as the same elements, when nothing is
    reduced)."""
    if x.dtype != np.float32 or out.dtype != np.float32 or not axes or \
            list(axes) != list(range(axes[0], axes[-1] + 1)) or axes[-1] >= x.ndim or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    shape = x.shape
    outer = int(np.prod(shape[:axes[0]], dtype=np.int64))
    k = int(np.prod(shape[axes[0]:axes[-1] + 1], dtype=np.int64))
    inner = int(np.prod(shape[axes[-1] + 1:], dtype=np.int64))
    if k == 0 or k >= 1 << 24 or out.size != outer * inner:
        return None
    if np.may_share_memory(x, out) and not (k == 1 and x.ctypes.data == out.ctypes.data):
        return None
    params = np.array([outer, k, inner, int(mean)], dtype=np.int64)
    divisor = np.array([k], dtype=np.float32)
    return native.native_step(mean_or_sum_float, x.reshape(-1), out.reshape(-1), params,
                              divisor)


__all__ = ["bind_mean_or_sum", "bind_mean_or_sum_float", "mean_or_sum",
           "mean_or_sum_float"]
