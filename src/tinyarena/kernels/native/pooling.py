"""Compiled integer AVERAGE_POOL_2D / MAX_POOL_2D: reference_integer_ops::AveragePool and
MaxPool as loops over output positions, windows clipped to the input.

Keyword-spotting and person-detection models end in one pool over the whole feature map (a
25x5 window over 64 channels); the numpy path loops over the window's taps in Python, tens of
microseconds for work a C loop does in a few (and large pools run 3x faster than numpy's
taps: channels innermost, into a per-channel accumulator made at bind). Averages sum in int32
(wrapping, as the numpy path's int32 accumulator does) and divide rounding half away from
zero, ``(sum +- count/2) / count`` truncating; maxima start at the type's lowest value; then
the activation clamp. float32 (``pool_float``) follows the numpy path, which is TFLM's
reference loop: averages add the window's taps in (filter_y, filter_x) order from +0.0 (x86's
NaN rule made explicit, ``_fops``) and divide by the float count; maxima keep ``max < x ? x :
max`` from the lowest float (NaN skipped, the earlier of two signed zeros kept); then the
clamp ``v < lo ? lo : v``, ``hi < v ? hi : v``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels.native._fops import clamp, fadd


@native.jit
def pool(x: Any, out: Any, acc: Any, p: Any) -> None:  # pragma: no cover - compiled
    # x, out: flat NHWC; acc: int32 per channel (the window's running sum or maximum); p:
    # sizes and constants, read into locals first (``out`` could alias ``p`` for all the
    # compiler knows). Channels innermost: contiguous loads the compiler vectorises.
    stride_h, stride_w, pad_h, pad_w, fh, fw = p[0], p[1], p[2], p[3], p[4], p[5]
    lo, hi, average, lowest = p[6], p[7], p[8] != 0, p[9]
    n, in_h, in_w, channels, out_h, out_w = p[10], p[11], p[12], p[13], p[14], p[15]
    row = in_w * channels
    o = 0
    for b in range(n):
        image = b * in_h * row
        for oy in range(out_h):
            y0 = oy * stride_h - pad_h
            fy0 = max(0, -y0)
            fy1 = min(fh, in_h - y0)
            for ox in range(out_w):
                x0 = ox * stride_w - pad_w
                fx0 = max(0, -x0)
                fx1 = min(fw, in_w - x0)
                start = lowest
                if average:
                    start = 0
                for c in range(channels):
                    acc[c] = start
                for fy in range(fy0, fy1):
                    for fx in range(fx0, fx1):
                        at = image + (y0 + fy) * row + (x0 + fx) * channels
                        src = x[at:at + channels]
                        if average:
                            for c in range(channels):
                                acc[c] += np.int32(src[c])  # wraps as TFLM's int32 sum
                        else:
                            for c in range(channels):
                                acc[c] = max(acc[c], np.int32(src[c]))
                dst = out[o:o + channels]
                if average:
                    # (|sum| + count/2) / count, truncating, with the sum's sign: computed as
                    # floor of a float64 quotient, exact here (numerator < 2**33, count <
                    # 2**16: a quotient just below an integer stays below it in float64),
                    # which the compiler vectorises where integer division would not
                    count = (fy1 - fy0) * (fx1 - fx0)
                    half = count // 2
                    divisor = np.float64(count)
                    for c in range(channels):
                        t = np.int64(acc[c])
                        a = t + half if t > 0 else half - t
                        q = np.int64(np.floor(np.float64(a) / divisor))
                        v = q if t > 0 else -q
                        dst[c] = min(max(v, lo), hi)
                else:
                    for c in range(channels):
                        dst[c] = min(max(np.int64(acc[c]), lo), hi)
                o += channels


@native.jit
def pool_float(x: Any, out: Any, acc: Any, p: Any, f: Any) -> None:  # pragma: no cover
    # as ``pool`` with float32 data: f holds the clamp bounds and the max's start value
    stride_h, stride_w, pad_h, pad_w, fh, fw = p[0], p[1], p[2], p[3], p[4], p[5]
    average = p[8] != 0
    n, in_h, in_w, channels, out_h, out_w = p[10], p[11], p[12], p[13], p[14], p[15]
    lo, hi, lowest = f[0], f[1], f[2]
    zero = np.float32(0)
    row = in_w * channels
    o = 0
    for b in range(n):
        image = b * in_h * row
        for oy in range(out_h):
            y0 = oy * stride_h - pad_h
            fy0 = max(0, -y0)
            fy1 = min(fh, in_h - y0)
            for ox in range(out_w):
                x0 = ox * stride_w - pad_w
                fx0 = max(0, -x0)
                fx1 = min(fw, in_w - x0)
                start = zero if average else lowest
                for c in range(channels):
                    acc[c] = start
                for fy in range(fy0, fy1):
                    for fx in range(fx0, fx1):
                        at = image + (y0 + fy) * row + (x0 + fx) * channels
                        src = x[at:at + channels]
                        if average:
                            for c in range(channels):
                                acc[c] = fadd(acc[c], src[c])
                        else:
                            for c in range(channels):
                                v = src[c]
                                if acc[c] < v:
                                    acc[c] = v
                dst = out[o:o + channels]
                if average:
                    count = np.float32((fy1 - fy0) * (fx1 - fx0))
                    for c in range(channels):
                        dst[c] = clamp(acc[c] / count, lo, hi)
                else:
                    for c in range(channels):
                        dst[c] = clamp(acc[c], lo, hi)
                o += channels


def bind_pool(x: np.ndarray, out: np.ndarray, data: Any, average: bool
              ) -> Callable[[], None] | None:
    """The compiled pool over these arena views, or None (numpy runs): shapes other than the
    prepared ones, windows with no input (TFLM divides by zero there), sums that could leave
    int32, or a float32 output overlapping its input."""
    if x.dtype == np.float32:
        return _bind_pool_float(x, out, data, average)
    if x.dtype not in (np.int8, np.int16) or out.dtype != x.dtype or x.ndim != 4 or \
            out.shape != tuple(data.out_shape) or x.shape[0] != out.shape[0] or \
            x.shape[3] != out.shape[3] or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    fh, fw = data.filter_hw
    if data.stride_h <= 0 or data.stride_w <= 0 or fh <= 0 or fw <= 0 or fh * fw >= 1 << 16:
        return None
    counts = np.asarray(data.counts)
    if counts.size and int(counts.min()) <= 0:
        return None
    lo, hi = float(data.act_min), float(data.act_max)
    if lo != int(lo) or hi != int(hi):
        return None
    pad_h, pad_w = data.padding
    n, in_h, in_w, channels = (int(d) for d in x.shape)
    params = np.array([data.stride_h, data.stride_w, pad_h, pad_w, fh, fw, int(lo), int(hi),
                       int(average), int(np.iinfo(x.dtype).min), n, in_h, in_w, channels,
                       int(out.shape[1]), int(out.shape[2])], dtype=np.int64)
    accumulator = np.zeros(channels, dtype=np.int32)  # private to the step, made once
    return native.native_step(pool, x.reshape(-1), out.reshape(-1), accumulator, params)


def _bind_pool_float(x: np.ndarray, out: np.ndarray, data: Any, average: bool
                     ) -> Callable[[], None] | None:
    if out.dtype != np.float32 or x.ndim != 4 or out.shape != tuple(data.out_shape) or \
            x.shape[0] != out.shape[0] or x.shape[3] != out.shape[3] or \
            not (x.flags.c_contiguous and out.flags.c_contiguous) or \
            np.may_share_memory(x, out):
        return None
    fh, fw = data.filter_hw
    if data.stride_h <= 0 or data.stride_w <= 0 or fh <= 0 or fw <= 0 or fh * fw >= 1 << 24:
        return None
    counts = np.asarray(data.counts)
    if counts.size and int(counts.min()) <= 0:
        return None
    pad_h, pad_w = data.padding
    n, in_h, in_w, channels = (int(d) for d in x.shape)
    params = np.array([data.stride_h, data.stride_w, pad_h, pad_w, fh, fw, 0, 0, int(average),
                       0, n, in_h, in_w, channels, int(out.shape[1]), int(out.shape[2])],
                      dtype=np.int64)
    bounds = np.array([data.act_min, data.act_max, np.finfo(np.float32).min], dtype=np.float32)
    accumulator = np.zeros(channels, dtype=np.float32)  # private to the step, made once
    return native.native_step(pool_float, x.reshape(-1), out.reshape(-1), accumulator, params,
                              bounds)


__all__ = ["bind_pool", "pool", "pool_float"]
