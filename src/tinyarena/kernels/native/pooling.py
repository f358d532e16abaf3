"""Compiled integer AVERAGE_POOL_2D / MAX_POOL_2D: reference_integer_ops::AveragePool and
MaxPool as loops over output positions, windows clipped to the input.

Keyword-spotting and person-detection models end in one pool over the whole feature map (a
25x5 window over 64 channels); the numpy path loops over the window's taps in Python, tens of
microseconds for work a C loop does in a few. Averages sum in int32 (wrapping, as the numpy
path's int32 accumulator does) and divide rounding half away from zero, ``(sum +- count/2) /
count`` truncating; maxima start at the type's lowest value; then the activation clamp.
Float pooling is left to numpy (its sum order and division are that path's to define).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native

# params: stride h, stride w, pad h, pad w, filter h, filter w, act min, act max, average,
# lowest value of the type
_PARAMS = 10


@native.jit
def pool(x: Any, out: Any, p: Any) -> None:  # pragma: no cover - compiled
    stride_h = p[0]
    stride_w = p[1]
    pad_h = p[2]
    pad_w = p[3]
    fh = p[4]
    fw = p[5]
    lo = p[6]
    hi = p[7]
    average = p[8] != 0
    lowest = p[9]
    n, in_h, in_w, channels = x.shape
    out_h = out.shape[1]
    out_w = out.shape[2]
    for b in range(n):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_h
            fy0 = max(0, -y0)
            fy1 = min(fh, in_h - y0)
            for ox in range(out_w):
                x0 = ox * stride_w - pad_w
                fx0 = max(0, -x0)
                fx1 = min(fw, in_w - x0)
                count = (fy1 - fy0) * (fx1 - fx0)
                for c in range(channels):
                    if average:
                        acc = np.int64(0)
                        for fy in range(fy0, fy1):
                            for fx in range(fx0, fx1):
                                acc += x[b, y0 + fy, x0 + fx, c]
                        acc = ((acc + 2147483648) & 0xFFFFFFFF) - 2147483648
                        if acc > 0:
                            v = (acc + count // 2) // count
                        else:
                            v = -((-acc + count // 2) // count)
                    else:
                        v = lowest
                        for fy in range(fy0, fy1):
                            for fx in range(fx0, fx1):
                                t = np.int64(x[b, y0 + fy, x0 + fx, c])
                                if t > v:
                                    v = t
                    if v < lo:
                        v = lo
                    elif v > hi:
                        v = hi
                    out[b, oy, ox, c] = v


def bind_pool(x: np.ndarray, out: np.ndarray, data: Any, average: bool
              ) -> Callable[[], None] | None:
    """The compiled pool over these arena views, or None (numpy runs): float tensors, shapes
    other than the prepared ones, windows with no input (TFLM divides by zero there) or sums
    that could leave int32."""
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
    params = np.array([data.stride_h, data.stride_w, pad_h, pad_w, fh, fw, int(lo), int(hi),
                       int(average), int(np.iinfo(x.dtype).min)], dtype=np.int64)
    return native.native_step(pool, x, out, params)


__all__ = ["bind_pool", "pool"]
