"""Compiled CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (the ``fast`` extra, numba).

Why: the numpy paths of ``_conv_kernels`` cost several numpy calls per operator (staging,
GEMM, bias, five or six requantisation passes), about 10-16 us for the one-pixel convolutions
of a streaming model whose whole invoke takes TFLM 27 us. Here each operator is one compiled
call over arrays fixed at bind time.

Arithmetic, per kind (the numpy path stays the reference; tests compare both):

* Integer sums are exact, folded as TFLM folds them: ``sum (x + input_offset) * w`` over
  the taps inside the image, plus the bias; the numpy path's GEMM sums and its folded bias
  constant give the same integer. They run in int64, or in int32 (vectorising better) where
  bind proves that no partial sum leaves the int32 range. Where the numpy path keeps int32
  accumulators (int8 DEPTHWISE_CONV_2D; the 16x8 kernels with an int32 bias) the sum is
  wrapped to int32: the same value modulo 2**32, as C's wrapping int32 adds give.
* Requantisation reproduces, per channel, the very formula ``_quant.requantize_inplace``
  applies (its single-shift form, or its two-step form with a left shift) or
  ``requantize_int64_inplace`` (16x8 with int64 accumulators); then offset and clamp.
  A left shift of 32 or more (C's undefined ``1 << 32``) is declined.
* float32 sums run in TFLM's order (taps, then input channels), one float32 rounding per
  product and per addition: numba does not contract ``a * b + c`` into a fused
  multiply-add without ``fastmath``. On targets with ``float_fma`` each step is one fmaf,
  computed exactly as ``_fma.fma32`` does (float64 rounded to odd). The numpy path's
  GEMM-rounded large float layers and filters holding inf or NaN are declined.

Every ``bind_*`` returns ``None`` (the numpy step stays) for anything it does not reproduce,
and checks every size the compiled loop relies on: the loops do no bounds checks.

Parameter packing (numba's dispatch costs ~0.05-0.1 us per array argument): one int64 array
``p`` holds the scalar header, one row of ``COLUMNS`` per output channel (bias and
requantisation constants), and, as its tail, the int64 accumulator row of CONV_2D and
FULLY_CONNECTED; float kernels get one float32 array ``f`` holding [act min, act max, bias
row, accumulator row]. Scratch the loops write (accumulators, staged patches) is made at bind
and private to the step.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels._conv_kernels import (
    KIND_FLOAT,
    KIND_INT8,
    KIND_INT16_ACC32,
    KIND_INT16_ACC64,
    ConvData,
    DepthwiseData,
    FullyConnectedData,
    _const,
)
from tinyarena.kernels._quant import _SMALL_CLIP, ChannelRequant

# -- header of ``p`` ---------------------------------------------------------------------------
BATCHES, IN_H, IN_W, IN_C, OUT_H, OUT_W, OUT_C = 0, 1, 2, 3, 4, 5, 6
FILTER_H, FILTER_W, STRIDE_H, STRIDE_W, DILATION_H, DILATION_W = 7, 8, 9, 10, 11, 12
PAD_H, PAD_W, GROUPS, CIN_G, INPUT_OFFSET = 13, 14, 15, 16, 17
OUTPUT_OFFSET, ACT_MIN, ACT_MAX, MODE, WRAP32, HAS_BIAS, ACC32 = 18, 19, 20, 21, 22, 23, 24
BY_CHANNEL = 25  # DEPTHWISE_CONV_2D's loop order
FUSED = 26  # float sums as fused multiply-adds (the target's float_fma)
HEADER = 27
# FULLY_CONNECTED reuses BATCHES, IN_C (accum depth) and OUT_C (output depth).
# DEPTHWISE_CONV_2D keeps its depth multiplier in GROUPS.

# -- one row per output channel ----------------------------------------------------------------
BIAS, MULT, LEFT, SHIFT, ROUNDS, ADD = 0, 1, 2, 3, 4, 5
COLUMNS = 6

# requantisation forms (MODE)
MODE_FUSED = 0  # requantize_inplace's single shift: (acc*M + sign*rounds + add) >> shift
MODE_TWO_STEP = 1  # requantize_inplace with a left shift: wrap(acc << left), SRDHM, RDBP
MODE_INT64 = 2  # requantize_int64_inplace: 16-bit multiplier, one rounding shift

SIGN_BIT = -(1 << 31)
INT32_OFFSET = 1 << 31
LOW32 = 0xFFFFFFFF
Q30 = 1 << 30

# float parameters ``f``
F_MIN, F_MAX, F_BIAS = 0, 1, 2

Step = Callable[[], None]


# ----------------------------------------------------------------------------------------------
# compiled loops
# ----------------------------------------------------------------------------------------------




@native.jit_inline
def _store_requantized(p: Any, acc: Any, out: Any, obase: int, channels: int) -> None:
    """acc[c] + bias -> (wrap) -> requantise -> offset -> clamp -> out[obase + c]."""
    mode = p[MODE]
    wrap = p[WRAP32]
    offset = p[OUTPUT_OFFSET]
    lo = p[ACT_MIN]
    hi = p[ACT_MAX]
    for c in range(channels):
        row = HEADER + c * COLUMNS
        v = acc[c] + p[row + BIAS]
        if wrap:
            v = ((v + INT32_OFFSET) & LOW32) - INT32_OFFSET
        m = p[row + MULT]
        if mode == MODE_FUSED:
            v = (v * m + (v & SIGN_BIT) * p[row + ROUNDS] + p[row + ADD]) >> p[row + SHIFT]
        elif mode == MODE_TWO_STEP:
            left = p[row + LEFT]
            if left:
                v = ((v << left) + INT32_OFFSET & LOW32) - INT32_OFFSET
            v = (v * m + Q30) >> 31
            right = p[row + SHIFT]
            if right:
                v = (v + (v >> 63) * p[row + ROUNDS] + p[row + ADD]) >> right
        else:
            v = (v * m + p[row + ADD]) >> p[row + SHIFT]
            v = ((v + INT32_OFFSET) & LOW32) - INT32_OFFSET
        v += offset
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        out[obase + c] = v


@native.jit_inline
def _store_float(f: Any, has_bias: int, acc: Any, out: Any, obase: int, channels: int) -> None:
    """acc[c] (+ bias) -> clamp -> out[obase + c]; the clamp is np.maximum then np.minimum
    (an equal lower bound replaces the value: -0.0 becomes the bound's +0.0, NaN passes)."""
    lo = f[F_MIN]
    hi = f[F_MAX]
    for c in range(channels):
        v = acc[c]
        if has_bias:
            v = v + f[F_BIAS + c]
        if v <= lo:
            v = lo
        if v > hi:
            v = hi
        out[obase + c] = v


@native.jit_inline
def _dot32(a: Any, abase: int, w: Any, wbase: int, count: int) -> int:
    """sum a[abase + k] * w[wbase + k] in wrapping int32 arithmetic (vectorises well); bind
    uses it only where no partial sum can leave the int32 range, so it is the exact sum."""
    total = np.int32(0)
    for k in range(count):
        total = np.int32(total + np.int32(np.int32(a[abase + k]) * np.int32(w[wbase + k])))
    return total


@native.jit_inline
def _dot64(a: Any, abase: int, w: Any, wbase: int, count: int) -> int:
    """sum a[abase + k] * w[wbase + k] in int64: exact."""
    total = np.int64(0)
    for k in range(count):
        total += np.int64(a[abase + k]) * np.int64(w[wbase + k])
    return total


@native.jit_inline
def _fma32(a: Any, b: Any, c: Any) -> Any:
    """fmaf(a, b, c) on float32 values, as ``_fma.fma32`` computes it: the float64 product
    is exact, the float64 sum is rounded to odd (TwoSum's error term moves an inexact sum
    with an even last bit to its odd neighbour), and that rounds to float32 exactly as the
    unrounded sum would."""
    product = np.float64(a) * np.float64(b)
    addend = np.float64(c)
    total = product + addend
    back = total - product
    err = (product - (total - back)) + (addend - back)
    if err != 0.0 and math.isfinite(total):
        significand, _ = math.frexp(total)  # |significand| in [0.5, 1): 53 bits
        if np.int64(significand * 9007199254740992.0) & 1 == 0:
            total = np.nextafter(total, np.inf if err > 0.0 else -np.inf)
    return np.float32(total)


@native.jit
def conv_int(x: Any, w: Any, out: Any, p: Any, patch: Any) -> None:
    """reference_integer_ops::ConvPerChannel (and its 16x8 form). Per output pixel and group
    the patch is staged as int16 ``x + input_offset`` (0 for taps outside the image, which
    TFLM skips), then each output channel is one dot product with its row of ``w``
    ((out_c, fh * fw * cin_g) int8)."""
    batches = p[BATCHES]
    in_h = p[IN_H]
    in_w = p[IN_W]
    in_c = p[IN_C]
    out_h = p[OUT_H]
    out_w = p[OUT_W]
    out_c = p[OUT_C]
    fh = p[FILTER_H]
    fw = p[FILTER_W]
    groups = p[GROUPS]
    cin_g = p[CIN_G]
    per_group = out_c // groups
    depth = fh * fw * cin_g
    off = p[INPUT_OFFSET]
    narrow = p[ACC32]
    acc = p[HEADER + out_c * COLUMNS:HEADER + out_c * COLUMNS + out_c]
    for b in range(batches):
        for oy in range(out_h):
            iy0 = oy * p[STRIDE_H] - p[PAD_H]
            for ox in range(out_w):
                ix0 = ox * p[STRIDE_W] - p[PAD_W]
                for g in range(groups):
                    k = 0
                    for ky in range(fh):
                        iy = iy0 + ky * p[DILATION_H]
                        row_inside = iy >= 0 and iy < in_h
                        for kx in range(fw):
                            ix = ix0 + kx * p[DILATION_W]
                            if row_inside and ix >= 0 and ix < in_w:
                                xbase = ((b * in_h + iy) * in_w + ix) * in_c + g * cin_g
                                for ic in range(cin_g):
                                    patch[k + ic] = x[xbase + ic] + off
                            else:
                                for ic in range(cin_g):
                                    patch[k + ic] = 0
                            k += cin_g
                    # range(per_group) plus an offset: a range(start, stop) loop here was
                    # measured 3x slower (the dot products did not vectorise)
                    for cc in range(per_group):
                        c = g * per_group + cc
                        if narrow:
                            acc[c] = _dot32(patch, 0, w, c * depth, depth)
                        else:
                            acc[c] = _dot64(patch, 0, w, c * depth, depth)
                _store_requantized(p, acc, out, ((b * out_h + oy) * out_w + ox) * out_c, out_c)


@native.jit
def conv_float(x: Any, w: Any, out: Any, p: Any, f: Any) -> None:
    """reference_ops::Conv (float): per output, ``total += input * filter`` over taps inside
    the image then input channels, from 0.0f; + bias; clamp."""
    batches = p[BATCHES]
    in_h = p[IN_H]
    in_w = p[IN_W]
    in_c = p[IN_C]
    out_h = p[OUT_H]
    out_w = p[OUT_W]
    out_c = p[OUT_C]
    fh = p[FILTER_H]
    fw = p[FILTER_W]
    groups = p[GROUPS]
    cin_g = p[CIN_G]
    per_group = out_c // groups
    acc = f[F_BIAS + out_c:F_BIAS + 2 * out_c]
    zero = np.float32(0.0)
    fused = p[FUSED]
    for b in range(batches):
        for oy in range(out_h):
            iy0 = oy * p[STRIDE_H] - p[PAD_H]
            for ox in range(out_w):
                ix0 = ox * p[STRIDE_W] - p[PAD_W]
                for c in range(out_c):
                    acc[c] = zero
                for ky in range(fh):
                    iy = iy0 + ky * p[DILATION_H]
                    if iy < 0 or iy >= in_h:
                        continue
                    for kx in range(fw):
                        ix = ix0 + kx * p[DILATION_W]
                        if ix < 0 or ix >= in_w:
                            continue
                        xbase = ((b * in_h + iy) * in_w + ix) * in_c
                        wtap = (ky * fw + kx) * cin_g
                        for g in range(groups):
                            c0 = g * per_group
                            for ic in range(cin_g):
                                xv = x[xbase + g * cin_g + ic]
                                wrow = (wtap + ic) * out_c
                                if fused:
                                    for cc in range(per_group):
                                        acc[c0 + cc] = _fma32(xv, w[wrow + c0 + cc], acc[c0 + cc])
                                else:
                                    for cc in range(per_group):
                                        acc[c0 + cc] = acc[c0 + cc] + xv * w[wrow + c0 + cc]
                _store_float(f, p[HAS_BIAS], acc, out,
                             ((b * out_h + oy) * out_w + ox) * out_c, out_c)


@native.jit
def depthwise_int(x: Any, w: Any, out: Any, p: Any, acc: Any, patch: Any) -> None:
    """reference_integer_ops::DepthwiseConvPerChannel (and 16x8); output channel
    ``ic * multiplier + m`` reads input channel ``ic``. ``acc`` is int32 for int8 (its stores
    wrap as C's int32 sums do) and int64 for the 16x8 kernel.

    Two loop orders, fixed at bind (``BY_CHANNEL``): with multiplier 1 and 8 channels or
    more, each tap is one pass over the pixel's channels (``w`` is (fh * fw, out_c)); else
    the pixel's taps are staged per input channel as int16 ``x + input_offset`` (0 outside
    the image, where TFLM skips the tap) and each output channel is one dot product with its
    row of ``w`` ((out_c, fh * fw))."""
    batches = p[BATCHES]
    in_h = p[IN_H]
    in_w = p[IN_W]
    in_c = p[IN_C]
    out_h = p[OUT_H]
    out_w = p[OUT_W]
    out_c = p[OUT_C]
    fh = p[FILTER_H]
    fw = p[FILTER_W]
    mult = p[GROUPS]
    off = p[INPUT_OFFSET]
    by_channel = p[BY_CHANNEL]
    narrow = p[ACC32]
    taps = fh * fw
    dh = p[DILATION_H]
    dw = p[DILATION_W]
    for b in range(batches):
        for oy in range(out_h):
            iy0 = oy * p[STRIDE_H] - p[PAD_H]
            for ox in range(out_w):
                ix0 = ox * p[STRIDE_W] - p[PAD_W]
                if by_channel:
                    for c in range(out_c):
                        acc[c] = 0
                    for ky in range(fh):
                        iy = iy0 + ky * p[DILATION_H]
                        if iy < 0 or iy >= in_h:
                            continue
                        for kx in range(fw):
                            ix = ix0 + kx * p[DILATION_W]
                            if ix < 0 or ix >= in_w:
                                continue
                            xbase = ((b * in_h + iy) * in_w + ix) * in_c
                            wbase = (ky * fw + kx) * out_c
                            for c in range(out_c):
                                acc[c] = acc[c] + (np.int64(x[xbase + c]) + off) * w[wbase + c]
                else:
                    for ic in range(in_c):
                        t = ic * taps
                        for ky in range(fh):
                            iy = iy0 + ky * dh
                            if iy >= 0 and iy < in_h:
                                row = (b * in_h + iy) * in_w
                                for kx in range(fw):
                                    ix = ix0 + kx * dw
                                    v = 0
                                    if ix >= 0 and ix < in_w:
                                        v = x[(row + ix) * in_c + ic] + off
                                    patch[t + kx] = v
                            else:
                                for kx in range(fw):
                                    patch[t + kx] = 0
                            t += fw
                    for ic in range(in_c):  # (no c // mult: a division here cost 7x)
                        for m in range(mult):
                            c = ic * mult + m
                            if narrow:
                                acc[c] = _dot32(patch, ic * taps, w, c * taps, taps)
                            else:
                                acc[c] = _dot64(patch, ic * taps, w, c * taps, taps)
                _store_requantized(p, acc, out, ((b * out_h + oy) * out_w + ox) * out_c, out_c)


@native.jit
def depthwise_float(x: Any, w: Any, out: Any, p: Any, f: Any) -> None:
    """The numpy path's float depthwise sum: every tap in (ky, kx) order, a tap outside the
    image reading 0.0 (its zero border), the sum starting from the first tap's product
    (TFLM's loop skips outside taps and starts from 0.0f: only the sign of a zero sum can
    differ); + bias; clamp."""
    batches = p[BATCHES]
    in_h = p[IN_H]
    in_w = p[IN_W]
    in_c = p[IN_C]
    out_h = p[OUT_H]
    out_w = p[OUT_W]
    out_c = p[OUT_C]
    fh = p[FILTER_H]
    fw = p[FILTER_W]
    mult = p[GROUPS]
    acc = f[F_BIAS + out_c:F_BIAS + 2 * out_c]
    zero = np.float32(0.0)
    fused = p[FUSED]
    for b in range(batches):
        for oy in range(out_h):
            iy0 = oy * p[STRIDE_H] - p[PAD_H]
            for ox in range(out_w):
                ix0 = ox * p[STRIDE_W] - p[PAD_W]
                for ky in range(fh):
                    iy = iy0 + ky * p[DILATION_H]
                    row_inside = iy >= 0 and iy < in_h
                    for kx in range(fw):
                        ix = ix0 + kx * p[DILATION_W]
                        inside = row_inside and ix >= 0 and ix < in_w
                        xbase = ((b * in_h + iy) * in_w + ix) * in_c
                        wbase = (ky * fw + kx) * out_c
                        first = ky == 0 and kx == 0
                        for ic in range(in_c):
                            xv = x[xbase + ic] if inside else zero
                            for m in range(mult):
                                c = ic * mult + m
                                if fused:  # from 0.0f, as the numpy path's fused sum
                                    acc[c] = _fma32(xv, w[wbase + c], zero if first else acc[c])
                                elif first:
                                    acc[c] = xv * w[wbase + c]
                                else:
                                    acc[c] = acc[c] + xv * w[wbase + c]
                _store_float(f, p[HAS_BIAS], acc, out,
                             ((b * out_h + oy) * out_w + ox) * out_c, out_c)


@native.jit
def fully_connected_int(x: Any, w: Any, out: Any, p: Any) -> None:
    """reference_integer_ops::FullyConnected (per-tensor and per-channel, 16x8): ``w`` is
    (output_depth, accum_depth) int16 with the filter offset already added."""
    batches = p[BATCHES]
    depth = p[IN_C]
    units = p[OUT_C]
    off = p[INPUT_OFFSET]
    narrow = p[ACC32]
    acc = p[HEADER + units * COLUMNS:HEADER + units * COLUMNS + units]
    for b in range(batches):
        xbase = b * depth
        for o in range(units):
            wbase = o * depth
            if narrow:
                off32 = np.int32(off)
                total32 = np.int32(0)
                for d in range(depth):
                    total32 = np.int32(total32 + np.int32(
                        np.int32(np.int32(x[xbase + d]) + off32) * np.int32(w[wbase + d])))
                acc[o] = total32
            else:
                total = np.int64(0)
                for d in range(depth):
                    total += (np.int64(x[xbase + d]) + off) * np.int64(w[wbase + d])
                acc[o] = total
        _store_requantized(p, acc, out, b * units, units)


@native.jit
def fully_connected_float(x: Any, w: Any, out: Any, p: Any, f: Any) -> None:
    """reference_ops::FullyConnected (float): ``total += input[d] * weights[d]`` in order of
    d from 0.0f, + bias, clamp; ``w`` is (accum_depth, output_depth) so that the innermost
    loop runs over outputs (each output's additions keep their order)."""
    batches = p[BATCHES]
    depth = p[IN_C]
    units = p[OUT_C]
    acc = f[F_BIAS + units:F_BIAS + 2 * units]
    zero = np.float32(0.0)
    fused = p[FUSED]
    for b in range(batches):
        xbase = b * depth
        for o in range(units):
            acc[o] = zero
        for d in range(depth):
            xv = x[xbase + d]
            wrow = d * units
            if fused:
                for o in range(units):
                    acc[o] = _fma32(xv, w[wrow + o], acc[o])
            else:
                for o in range(units):
                    acc[o] = acc[o] + xv * w[wrow + o]
        _store_float(f, p[HAS_BIAS], acc, out, b * units, units)


# ----------------------------------------------------------------------------------------------
# binding: constants packed once, every size checked
# ----------------------------------------------------------------------------------------------


def _flat(array: np.ndarray) -> np.ndarray | None:
    """A 1-D view of a C-contiguous arena array (None when a reshape would copy)."""
    if not array.flags.c_contiguous:
        return None
    flat = array.reshape(-1)
    return flat if np.shares_memory(flat, array) or array.size == 0 else None


def _requant_rows(kind: str, rq: ChannelRequant, channels: int,
                  bias: np.ndarray | None) -> tuple[int, int, np.ndarray] | None:
    """(MODE, offset applied after the shift, (channels, COLUMNS) rows) reproducing the numpy
    path's requantisation of ``rq``, or None when it is not reproduced."""
    m = np.broadcast_to(rq.multiplier, (channels,)).astype(np.int64)
    rows = np.zeros((channels, COLUMNS), np.int64)
    if bias is not None:
        if bias.size < channels:
            return None
        rows[:, BIAS] = np.asarray(bias, np.int64).reshape(-1)[:channels]
    left = np.broadcast_to(rq.left, (channels,)).astype(np.int64)
    right = np.broadcast_to(rq.right, (channels,)).astype(np.int64)
    if kind == KIND_INT16_ACC64:
        reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
        total_shift = 15 - (left - right)
        if np.any(total_shift < 1) or np.any(total_shift > 62):
            return None  # C's undefined shift counts: not reproduced
        rows[:, MULT] = reduced
        rows[:, SHIFT] = total_shift
        rows[:, ADD] = np.int64(1) << (total_shift - 1)
        return MODE_INT64, rq.output_offset, rows
    if np.any(left > 31) or np.any(right > 62) or np.any(m < 0):
        return None
    rows[:, MULT] = m
    rows[:, ROUNDS] = np.broadcast_to(rq.rounds, (channels,))
    if rq.fused and rq.fused_add is not None and rq.fused_shift is not None:
        if np.any(np.broadcast_to(rq.fused_shift, (channels,)) > 62):
            return None
        rows[:, ADD] = np.broadcast_to(rq.fused_add, (channels,))
        rows[:, SHIFT] = np.broadcast_to(rq.fused_shift, (channels,))
        return MODE_FUSED, 0 if rq.offset_in_fused_add else rq.output_offset, rows
    rows[:, LEFT] = left
    rows[:, SHIFT] = right
    rows[:, ADD] = np.broadcast_to(rq.half, (channels,))
    return MODE_TWO_STEP, rq.output_offset, rows


def _int_params(header: dict[int, int], kind: str, rq: ChannelRequant | None, channels: int,
                bias: np.ndarray | None, wrap32: bool) -> np.ndarray | None:
    """``p`` for an integer kernel: header, per-channel rows, accumulator row."""
    if rq is None:
        return None
    packed = _requant_rows(kind, rq, channels, bias)
    if packed is None:
        return None
    mode, offset, rows = packed
    p = np.zeros(HEADER + channels * (COLUMNS + 1), np.int64)
    for index, value in header.items():
        p[index] = value
    p[OUTPUT_OFFSET] = offset
    p[ACT_MIN] = rq.act_min
    p[ACT_MAX] = rq.act_max
    p[MODE] = mode
    p[WRAP32] = int(wrap32)
    p[HEADER:HEADER + channels * COLUMNS] = rows.reshape(-1)
    return p


def _float_params(header: dict[int, int], lo: float, hi: float, channels: int,
                  bias: np.ndarray | None, fused: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """(``p``, ``f``) for a float kernel."""
    p = np.zeros(HEADER, np.int64)
    for index, value in header.items():
        p[index] = value
    p[FUSED] = int(fused)
    f = np.zeros(F_BIAS + 2 * channels, np.float32)
    f[F_MIN] = np.float32(lo)
    f[F_MAX] = np.float32(hi)
    if bias is not None:
        b = np.asarray(bias).reshape(-1)
        if b.dtype != np.float32 or b.size < channels:
            return None
        f[F_BIAS:F_BIAS + channels] = b[:channels]
        p[HAS_BIAS] = 1
    return p, f


def _geometry_header(geom: Any, out_c: int, groups: int, cin_g: int,
                     input_offset: int) -> dict[int, int]:
    return {BATCHES: geom.batches, IN_H: geom.in_h, IN_W: geom.in_w, IN_C: geom.in_c,
            OUT_H: geom.out_h, OUT_W: geom.out_w, OUT_C: out_c, FILTER_H: geom.filter_h,
            FILTER_W: geom.filter_w, STRIDE_H: geom.stride_h, STRIDE_W: geom.stride_w,
            DILATION_H: geom.dilation_h, DILATION_W: geom.dilation_w, PAD_H: geom.pad_h,
            PAD_W: geom.pad_w, GROUPS: groups, CIN_G: cin_g, INPUT_OFFSET: input_offset}


def _io(ctx: Any, op: Any, in_size: int, out_size: int, dtype: Any
        ) -> tuple[np.ndarray, np.ndarray] | None:
    """Flat input and output views of the expected sizes and dtype."""
    x = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    if x.dtype != dtype or out.dtype != dtype or x.size < in_size or out.size != out_size:
        return None
    xf, of = _flat(x), _flat(out)
    if xf is None or of is None:
        return None
    return xf, of


def _constant_bias(ctx: Any, op: Any) -> tuple[bool, np.ndarray | None]:
    """(usable, values): no bias input -> (True, None); a constant one -> its values; a
    runtime bias -> (False, None) (declined)."""
    if len(op.inputs) <= 2 or op.inputs[2] < 0:
        return True, None
    t = ctx.tensor(op.inputs[2])
    if t is None:
        return True, None
    values = _const(t)
    return (values is not None), values


def _int32_sums_exact(w: np.ndarray, kind: str, input_offset: int) -> bool:
    """Can every partial sum of ``(x + input_offset) * w[c, k]`` over k leave the int32 range?
    If not (the usual case), the int32 dot product is the exact sum, as the numpy path's."""
    info = np.iinfo(_int_dtype(kind))
    xmax = max(abs(int(info.min) + input_offset), abs(int(info.max) + input_offset))
    widest = int(np.abs(w.astype(np.int64)).sum(axis=1).max(initial=0))
    return widest * xmax < (1 << 31)


def _int_dtype(kind: str) -> Any:
    return np.int8 if kind == KIND_INT8 else np.int16


def bind_conv2d(ctx: Any, op: Any, data: ConvData) -> Step | None:
    """CONV_2D as one compiled call, or None (see the module docstring for what is declined)."""
    geom = data.geom
    if data.kind == KIND_FLOAT and (not data.exact_float or not data.filter_finite):
        return None
    filt = _const(ctx.tensor(op.inputs[1]))
    usable, bias = _constant_bias(ctx, op)
    if filt is None or not usable:
        return None
    out_c = filt.shape[0]
    groups = data.groups
    cin_g = geom.in_c // groups
    if filt.shape != (out_c, geom.filter_h, geom.filter_w, cin_g) or out_c % groups:
        return None
    dtype = np.float32 if data.kind == KIND_FLOAT else _int_dtype(data.kind)
    io = _io(ctx, op, geom.batches * geom.in_h * geom.in_w * geom.in_c,
             geom.batches * geom.out_h * geom.out_w * out_c, dtype)
    if io is None:
        return None
    x, out = io
    header = _geometry_header(geom, out_c, groups, cin_g, data.input_offset)
    if data.kind == KIND_FLOAT:
        if bias is not None and bias.size != out_c:
            return None  # numpy's broadcast of a mis-sized bias raises: keep that error
        wf = np.ascontiguousarray(np.asarray(filt, np.float32).transpose(1, 2, 3, 0))
        packed = _float_params(header, data.float_min, data.float_max, out_c, bias,
                               data.fused)
        if packed is None:
            return None
        return native.native_step(conv_float, x, wf.reshape(-1), out, *packed)
    if filt.dtype.kind != "i" or filt.dtype.itemsize > 1:
        return None
    w = np.ascontiguousarray(np.asarray(filt, np.int8).reshape(out_c, -1))
    header[ACC32] = int(_int32_sums_exact(w, data.kind, data.input_offset))
    p = _int_params(header, data.kind, data.rq, out_c, bias,
                    wrap32=data.kind == KIND_INT16_ACC32)
    if p is None:
        return None
    patch = np.zeros(w.shape[1], np.int16)
    return native.native_step(conv_int, x, w.reshape(-1), out, p, patch)


def bind_depthwise(ctx: Any, op: Any, data: DepthwiseData) -> Step | None:
    """DEPTHWISE_CONV_2D as one compiled call, or None."""
    geom = data.geom
    mult = data.depth_multiplier
    out_c = geom.in_c * mult
    if data.kind == KIND_FLOAT and not data.filter_finite:
        return None
    filt = _const(ctx.tensor(op.inputs[1]))
    usable, bias = _constant_bias(ctx, op)
    if filt is None or not usable or mult <= 0:
        return None
    if filt.ndim != 4 or filt.shape[1:] != (geom.filter_h, geom.filter_w, out_c) \
            or filt.shape[0] < 1:
        return None
    dtype = np.float32 if data.kind == KIND_FLOAT else _int_dtype(data.kind)
    out_size = geom.batches * geom.out_h * geom.out_w * out_c
    io = _io(ctx, op, geom.batches * geom.in_h * geom.in_w * geom.in_c, out_size, dtype)
    if io is None:
        return None
    x, out = io
    header = _geometry_header(geom, out_c, mult, geom.in_c, data.input_offset)
    if data.kind == KIND_FLOAT:
        if bias is not None and bias.size != out_c:
            return None  # numpy's broadcast of a mis-sized bias raises: keep that error
        if bias is None and out_size >= _SMALL_CLIP:
            # the numpy path then clamps with np.clip, which keeps a -0.0 sum's sign where
            # np.maximum (smaller outputs, and this loop) gives +0.0
            return None
        wf = np.ascontiguousarray(np.asarray(filt[0], np.float32)).reshape(-1)
        packed = _float_params(header, data.float_min, data.float_max, out_c, bias,
                               data.fused)
        if packed is None:
            return None
        return native.native_step(depthwise_float, x, wf, out, *packed)
    if filt.dtype.kind != "i" or filt.dtype.itemsize > 1:
        return None
    taps = np.asarray(filt[0], np.int8).reshape(-1, out_c)  # (fh * fw, out_c)
    by_channel = mult == 1 and out_c >= 8
    header[BY_CHANNEL] = int(by_channel)
    # int8: C's int32 sums wrap, and so do the numpy path's int32 accumulators: an int32 dot
    # product is right whatever the sums; 16x8 sums are int64
    header[ACC32] = int(data.kind == KIND_INT8
                        or _int32_sums_exact(taps.T, data.kind, data.input_offset))
    w = np.ascontiguousarray(taps if by_channel else taps.T).reshape(-1)
    p = _int_params(header, data.kind, data.rq, out_c, bias,
                    wrap32=data.kind == KIND_INT8)  # int32 accumulators in TFLM and numpy
    if p is None:
        return None
    acc = np.zeros(out_c, np.int32 if data.kind == KIND_INT8 else np.int64)
    patch = np.zeros(1 if by_channel else taps.shape[0] * geom.in_c, np.int16)
    return native.native_step(depthwise_int, x, w, out, p, acc, patch)


def bind_fully_connected(ctx: Any, op: Any, data: FullyConnectedData) -> Step | None:
    """FULLY_CONNECTED as one compiled call, or None."""
    if data.kind == KIND_FLOAT and not data.exact_float:
        return None
    filt = _const(ctx.tensor(op.inputs[1]))
    usable, bias = _constant_bias(ctx, op)
    if filt is None or not usable:
        return None
    depth, units, batches = data.accum_depth, data.output_depth, data.batches
    if filt.size < units * depth or filt.size % depth:
        return None
    wmat = np.asarray(filt).reshape(-1, depth)[:units]
    dtype = np.float32 if data.kind == KIND_FLOAT else _int_dtype(data.kind)
    io = _io(ctx, op, batches * depth, batches * units, dtype)
    if io is None:
        return None
    x, out = io
    header = {BATCHES: batches, IN_C: depth, OUT_C: units, INPUT_OFFSET: data.input_offset}
    if data.kind == KIND_FLOAT:
        wf = np.ascontiguousarray(np.asarray(wmat, np.float32).T).reshape(-1)
        packed = _float_params(header, data.float_min, data.float_max, units, bias,
                               data.fused)
        if packed is None:
            return None
        return native.native_step(fully_connected_float, x, wf, out, *packed)
    if wmat.dtype.kind != "i" or wmat.dtype.itemsize > 1 or abs(data.filter_offset) > 255:
        return None
    w = np.ascontiguousarray(wmat.astype(np.int16) + np.int16(data.filter_offset))
    header[ACC32] = int(_int32_sums_exact(w, data.kind, data.input_offset))
    p = _int_params(header, data.kind, data.rq, units, bias,
                    wrap32=data.kind == KIND_INT16_ACC32)
    if p is None:
        return None
    return native.native_step(fully_connected_int, x, w.reshape(-1), out, p)


__all__ = ["bind_conv2d", "bind_depthwise", "bind_fully_connected", "conv_float", "conv_int",
           "depthwise_float", "depthwise_int", "fully_connected_float", "fully_connected_int"]
