"""Compiled RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR.

The coordinate arithmetic (TFLM's GetNearestNeighbor, ComputeInterpolationValues in float32
and ComputeInterpolationValuesInteger in 1/1024 units) depends only on the sizes and options,
so bind computes it once with the numpy kernels' own functions and these loops only walk the
pixels:

* nearest neighbour copies whole pixels (depth x itemsize bytes, any type, moved as the
  widest unsigned words that divide a pixel) from the row and column bind picked (clipped
  into the input, as the numpy path's ``take(mode="clip")``);
* bilinear int8 forms the four-term int64 sum of the numpy path and divides it by 2**20
  rounding half away from zero (C's truncating division of the offset sum);
* bilinear float32 evaluates the numpy path's expression in the same order, one float32
  rounding per operation: ``top0 * (1 - dy) * (1 - dx) + bottom0 * dy * (1 - dx) + top1 *
  (1 - dy) * dx + bottom1 * dy * dx + 0`` (no fused multiply-add: numba compiles without
  fast-math, so LLVM neither contracts nor reassociates).

Indices are cast to uint64, which spares numba's negative-index test on every access.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native

# dims: batches, input height, input width, output height, output width, depth
D_BATCHES, D_IN_H, D_IN_W, D_OUT_H, D_OUT_W, D_DEPTH = range(6)


@native.jit
def nearest(src: Any, out: Any, rows: Any, cols: Any, d: Any) -> None:  # pragma: no cover
    batches, in_h, in_w = d[D_BATCHES], d[D_IN_H], d[D_IN_W]
    out_h, out_w, depth = d[D_OUT_H], d[D_OUT_W], d[D_DEPTH]
    o = 0
    for b in range(batches):
        for y in range(out_h):
            srow = (b * in_h + rows[y]) * in_w
            for x in range(out_w):
                s = (srow + cols[x]) * depth
                for k in range(depth):
                    out[np.uint64(o + k)] = src[np.uint64(s + k)]
                o += depth


@native.jit
def bilinear_int(src: Any, out: Any, ix: Any, d: Any) -> None:  # pragma: no cover
    """ix: y0, y1, fy, gy per output row, then x0, x1, fx, gx per output column."""
    batches, in_h, in_w = d[D_BATCHES], d[D_IN_H], d[D_IN_W]
    out_h, out_w, depth = d[D_OUT_H], d[D_OUT_W], d[D_DEPTH]
    cx = 4 * out_h
    half = np.int64(1) << 19
    o = 0
    for b in range(batches):
        for y in range(out_h):
            top = (b * in_h + ix[4 * y]) * in_w
            bottom = (b * in_h + ix[4 * y + 1]) * in_w
            fy = ix[4 * y + 2]
            gy = ix[4 * y + 3]
            for x in range(out_w):
                x0 = ix[cx + 4 * x]
                x1 = ix[cx + 4 * x + 1]
                fx = ix[cx + 4 * x + 2]
                gx = ix[cx + 4 * x + 3]
                t0 = (top + x0) * depth
                b0 = (bottom + x0) * depth
                t1 = (top + x1) * depth
                b1 = (bottom + x1) * depth
                for c in range(depth):
                    total = (np.int64(src[np.uint64(t0 + c)]) * gy * gx
                             + np.int64(src[np.uint64(b0 + c)]) * fy * gx
                             + np.int64(src[np.uint64(t1 + c)]) * gy * fx
                             + np.int64(src[np.uint64(b1 + c)]) * fy * fx)
                    total += half if total > 0 else -half
                    q = total >> 20 if total >= 0 else -((-total) >> 20)
                    out[np.uint64(o + c)] = q
                o += depth


@native.jit
def bilinear_float(src: Any, out: Any, ix: Any, w: Any, d: Any) -> None:  # pragma: no cover
    """ix: y0, y1 per output row, then x0, x1 per column; w: dy, 1 - dy per row, then dx,
    1 - dx per column (float32)."""
    batches, in_h, in_w = d[D_BATCHES], d[D_IN_H], d[D_IN_W]
    out_h, out_w, depth = d[D_OUT_H], d[D_OUT_W], d[D_DEPTH]
    cx = 2 * out_h
    zero = np.float32(0.0)
    o = 0
    for b in range(batches):
        for y in range(out_h):
            top = (b * in_h + ix[2 * y]) * in_w
            bottom = (b * in_h + ix[2 * y + 1]) * in_w
            dy = w[2 * y]
            ody = w[2 * y + 1]
            for x in range(out_w):
                x0 = ix[cx + 2 * x]
                x1 = ix[cx + 2 * x + 1]
                dx = w[cx + 2 * x]
                odx = w[cx + 2 * x + 1]
                t0 = (top + x0) * depth
                b0 = (bottom + x0) * depth
                t1 = (top + x1) * depth
                b1 = (bottom + x1) * depth
                for c in range(depth):
                    out[np.uint64(o + c)] = (src[np.uint64(t0 + c)] * ody * odx
                                             + src[np.uint64(b0 + c)] * dy * odx
                                             + src[np.uint64(t1 + c)] * ody * dx
                                             + src[np.uint64(b1 + c)] * dy * dx + zero)
                o += depth


def _geometry(src: np.ndarray, out: np.ndarray) -> np.ndarray | None:
    """The packed dims, or None when the arrays are not what the loops assume: 4-D NHWC,
    contiguous, same batches and depth, not empty, not sharing memory."""
    if src.ndim != 4 or out.ndim != 4 or not (src.flags.c_contiguous and out.flags.c_contiguous):
        return None
    if src.shape[0] != out.shape[0] or src.shape[3] != out.shape[3] or src.size == 0 or \
            out.size == 0 or src.dtype != out.dtype or np.shares_memory(src, out):
        return None
    return np.array([src.shape[0], src.shape[1], src.shape[2], out.shape[1], out.shape[2],
                     src.shape[3]], dtype=np.int64)


def bind_nearest(src: np.ndarray, out: np.ndarray, rows: np.ndarray, cols: np.ndarray
                 ) -> Callable[[], None] | None:
    """Whole-pixel copies from the ``rows``/``cols`` the numpy kernel picks (clipped into the
    input like its ``take(mode="clip")``), over unsigned-word views: one loop for every type."""
    d = _geometry(src, out)
    if d is None or rows.shape != (out.shape[1],) or cols.shape != (out.shape[2],):
        return None
    r = np.clip(np.asarray(rows, dtype=np.int64), 0, src.shape[1] - 1)
    c = np.clip(np.asarray(cols, dtype=np.int64), 0, src.shape[2] - 1)
    pixel = int(d[D_DEPTH]) * src.dtype.itemsize
    unit = next(u for u in (8, 4, 2, 1) if pixel % u == 0)  # words, not bytes, per pixel
    word = np.dtype(f"u{unit}")
    d[D_DEPTH] = pixel // unit
    return native.native_step(nearest, src.reshape(-1).view(np.uint8).view(word),
                              out.reshape(-1).view(np.uint8).view(word), r, c, d)


def _in_range(index: np.ndarray, size: int) -> bool:
    return bool(index.size == 0 or (index.min() >= 0 and index.max() < size))


def bind_bilinear_int(src: np.ndarray, out: np.ndarray, rows: tuple[np.ndarray, ...],
                      cols: tuple[np.ndarray, ...]) -> Callable[[], None] | None:
    """int8 bilinear: ``rows``/``cols`` are the numpy kernel's (scaled, lower, upper) in 1/1024
    units; None when an index would leave the input (the numpy path would raise)."""
    d = _geometry(src, out)
    if d is None or src.dtype != np.int8:
        return None
    ix = []
    for (scaled, lower, upper), size in ((rows, src.shape[1]), (cols, src.shape[2])):
        if not (_in_range(lower, size) and _in_range(upper, size)):
            return None
        f = np.asarray(scaled, np.int64) - (1 << 10) * np.asarray(lower, np.int64)
        ix.append(np.stack([lower, upper, f, (1 << 10) - f], axis=1).astype(np.int64))
    if ix[0].shape[0] != out.shape[1] or ix[1].shape[0] != out.shape[2]:
        return None
    return native.native_step(bilinear_int, src.reshape(-1), out.reshape(-1),
                              np.concatenate([ix[0].reshape(-1), ix[1].reshape(-1)]), d)


def bind_bilinear_float(src: np.ndarray, out: np.ndarray, rows: tuple[np.ndarray, ...],
                        cols: tuple[np.ndarray, ...]) -> Callable[[], None] | None:
    """float32 bilinear: ``rows``/``cols`` are the numpy kernel's (scaled, lower, upper) in
    float32; the weights are formed here exactly as that kernel forms them."""
    d = _geometry(src, out)
    if d is None or src.dtype != np.float32:
        return None
    f32 = np.float32
    one = f32(1)
    ix, w = [], []
    for (scaled, lower, upper), size in ((rows, src.shape[1]), (cols, src.shape[2])):
        if not (_in_range(lower, size) and _in_range(upper, size)):
            return None
        frac = (np.asarray(scaled, f32) - np.asarray(lower).astype(f32)).astype(f32)
        ix.append(np.stack([lower, upper], axis=1).astype(np.int64).reshape(-1))
        w.append(np.stack([frac, (one - frac).astype(f32)], axis=1).astype(f32).reshape(-1))
    if ix[0].shape[0] != 2 * out.shape[1] or ix[1].shape[0] != 2 * out.shape[2]:
        return None
    return native.native_step(bilinear_float, src.reshape(-1), out.reshape(-1),
                              np.concatenate(ix), np.concatenate(w).astype(f32), d)


__all__ = ["bilinear_float", "bilinear_int", "bind_bilinear_float", "bind_bilinear_int",
           "bind_nearest", "nearest"]
