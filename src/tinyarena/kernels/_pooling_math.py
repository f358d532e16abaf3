"""AVERAGE_POOL_2D / MAX_POOL_2D arithmetic: TFLM's pooling_common.cc with reference/pooling.h
and reference/integer_ops/pooling.h.

Windows are clipped to the input (padding contributes nothing and is not counted). Averages:
float32 sums the window left to right in float32 and divides by the float count; int8/int16
sum in int32 and divide rounding half away from zero ((acc +- count/2) / count, truncating).
The loops run over the filter taps (a few dozen at most): each tap adds (or maxes) a strided
view of the input into the rectangle of outputs whose window contains it, so nothing of the
tensors' size is allocated at invoke; averages accumulate in a workspace made at prepare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.kernels._ieee import c_min_max_inplace
from tinyarena.kernels._quant import (
    calculate_activation_range_float,
    calculate_activation_range_quantized,
    tensor_quant,
)
from tinyarena.kernels.base import PrepareContext
from tinyarena.model.options import Pool2DOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16


@dataclass(frozen=True)
class PoolOpData:
    """OpDataPooling plus the TfLitePoolParams fields the eval reads.

    ``taps`` lists, per filter tap in TFLM's (filter_y, filter_x) order, the output rectangle
    whose window contains that tap inside the input, and the input start of its strided view.
    ``counts`` is the number of in-input taps per output position (the averaging divisor).
    """

    type: TensorType
    stride_h: int
    stride_w: int
    act_min: float
    act_max: float
    out_shape: tuple[int, int, int, int]
    taps: tuple[tuple[int, int, int, int, int, int], ...]  # oy0, oy1, ox0, ox1, iy0, ix0
    counts: np.ndarray  # (OH, OW) int64
    padding: tuple[int, int] = (0, 0)  # TFLM's padding values (height, width)
    filter_hw: tuple[int, int] = (1, 1)
    plan: PoolPlan | None = None  # the invoke-time layout, made at prepare


def _tap_range(out_size: int, stride: int, pad: int, tap: int, in_size: int) -> tuple[int, int]:
    """Outputs o in [lo, hi) with 0 <= o * stride - pad + tap < in_size."""
    lo = max(0, -((tap - pad) // stride))  # ceil((pad - tap) / stride)
    hi = min(out_size, (in_size - 1 + pad - tap) // stride + 1)
    return lo, max(lo, hi)


def pool_op_data(op_name: str, op: Operator, inp: Tensor, out: Tensor) -> PoolOpData:
    """PoolingPrepare -> CalculateOpDataPooling and the activation range."""
    if inp.type != out.type or inp.type not in (_F32, _I8, _I16):
        raise KernelError(f"{op_name} supports float32, int8 and int16 with equal input and "
                          f"output types, got {inp.type.name.lower()} -> {out.type.name.lower()}")
    if len(inp.shape) != 4 or len(out.shape) != 4:
        raise KernelError(f"{op_name} needs 4-D NHWC input and output, got {inp.shape} and "
                          f"{out.shape}")
    if inp.shape[0] != out.shape[0] or inp.shape[3] != out.shape[3]:
        raise KernelError(f"{op_name}: batch and channels of {inp.shape} and {out.shape} differ")
    options = op.options if isinstance(op.options, Pool2DOptions) else Pool2DOptions()
    if options.stride_h <= 0 or options.stride_w <= 0:
        raise KernelError(f"{op_name} needs positive strides, got {options.stride_h} and "
                          f"{options.stride_w}")
    padding, _, _ = compute_padding_height_width(
        options.stride_h, options.stride_w, 1, 1, inp.shape[1], inp.shape[2],
        options.filter_height, options.filter_width, options.padding)
    act = options.fused_activation_function
    if inp.type == _F32:
        lo, hi = calculate_activation_range_float(act)
    else:
        iq, oq = tensor_quant(inp), tensor_quant(out)
        if abs(float(np.float32(iq.scale) - np.float32(oq.scale))) > 1.0e-6 \
                or iq.zero_point != oq.zero_point:
            raise KernelError(f"{op_name} needs the same scale and zero point on input and "
                              "output")
        ilo, ihi = calculate_activation_range_quantized(act, oq.scale, oq.zero_point,
                                                        NUMPY_DTYPES[out.type])
        lo, hi = float(ilo), float(ihi)
    n, out_h, out_w, c = out.shape
    in_h, in_w = inp.shape[1], inp.shape[2]
    taps = []
    counts = np.zeros((out_h, out_w), dtype=np.int64)
    for fy in range(options.filter_height):
        oy0, oy1 = _tap_range(out_h, options.stride_h, padding.height, fy, in_h)
        for fx in range(options.filter_width):
            ox0, ox1 = _tap_range(out_w, options.stride_w, padding.width, fx, in_w)
            if oy0 < oy1 and ox0 < ox1:
                taps.append((oy0, oy1, ox0, ox1, oy0 * options.stride_h - padding.height + fy,
                             ox0 * options.stride_w - padding.width + fx))
                counts[oy0:oy1, ox0:ox1] += 1
    counts.setflags(write=False)
    return PoolOpData(inp.type, options.stride_h, options.stride_w, lo, hi, (n, out_h, out_w, c),
                      tuple(taps), counts, (padding.height, padding.width),
                      (options.filter_height, options.filter_width))


@dataclass(frozen=True)
class PoolPlan:
    """How an invoke runs, fixed at prepare, so that it allocates nothing.

    The input is seen zero- (average) or lowest-padded (max) in a workspace ``padded``
    (N, Hp, Wp, C) that covers every window, so each filter tap is one whole strided view of
    it; padding adds exactly 0 (a float sum starting at +0.0 never becomes -0.0) or loses every
    max. numpy buffers strided operands of a ufunc, so views are first copied (``np.copyto``
    does not buffer) into contiguous workspaces and only contiguous arrays meet in ufuncs.

    ``by_taps``: loop over the fh*fw taps, adding (maxing) each tap's view into ``acc``; else
    loop over the OH*OW output positions, copying each window into ``rows`` (K + 1, N*C) after
    a first row of 0 (lowest) and accumulating down the rows in TFLM's (fy, fx) order.
    """

    average: bool
    dtype: np.dtype  # accumulator type: float32, int32 (average) or the input type (max)
    padded: int  # workspace handles; -1 when unused
    acc: int
    tmp: int
    rows: int
    interior: tuple[slice, slice]  # where the input goes inside ``padded``
    input_rows: tuple[slice, slice]  # the part of the input that any window reads
    pad_value: np.generic  # 0 or the lowest value, as a scalar of ``dtype``
    taps: tuple[tuple[slice, slice], ...]  # strided tap views of ``padded``
    windows: tuple[tuple[int, int, slice, slice], ...]  # oy, ox, window slices of ``padded``
    by_taps: bool
    divisor: np.ndarray | None  # (N, OH, OW, C) window counts (average)
    half: np.ndarray | None  # divisor // 2 (integer average)
    lo: np.generic
    hi: np.generic


def pool_plan(ctx: PrepareContext, p: PoolOpData, in_shape: tuple[int, ...], *, average: bool,
              in_dtype: np.dtype) -> PoolPlan:
    """Prepare-time layout of :class:`PoolPlan` and its workspace requests."""
    n, out_h, out_w, c = p.out_shape
    in_h, in_w = in_shape[1], in_shape[2]
    fh, fw = p.filter_hw
    pad_h, pad_w = p.padding
    hp = (out_h - 1) * p.stride_h + fh
    wp = (out_w - 1) * p.stride_w + fw
    dtype: np.dtype
    if average:
        dtype = np.dtype(np.float32) if p.type == _F32 else np.dtype(np.int32)
        pad_value = 0.0
    else:
        dtype = np.dtype(in_dtype)
        pad_value = float(np.finfo(np.float32).min) if p.type == _F32 else \
            float(np.iinfo(dtype).min)
    # Every workspace is scratch: eval fills the padded buffer whole, and writes the
    # accumulator, temporary and window rows before reading them.
    def request(shape: tuple[int, ...], dtype: np.dtype) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    needs_pad = pad_h > 0 or pad_w > 0 or hp > in_h or wp > in_w
    padded = request((n, hp, wp, c), dtype) if needs_pad else -1
    interior = (slice(pad_h, min(hp, pad_h + in_h)), slice(pad_w, min(wp, pad_w + in_w)))
    input_rows = (slice(0, interior[0].stop - pad_h), slice(0, interior[1].stop - pad_w))
    by_taps = fh * fw <= out_h * out_w
    taps = tuple((slice(fy, fy + (out_h - 1) * p.stride_h + 1, p.stride_h),
                  slice(fx, fx + (out_w - 1) * p.stride_w + 1, p.stride_w))
                 for fy in range(fh) for fx in range(fw))
    windows = tuple((oy, ox, slice(oy * p.stride_h, oy * p.stride_h + fh),
                     slice(ox * p.stride_w, ox * p.stride_w + fw))
                    for oy in range(out_h) for ox in range(out_w))
    # Max pooling also accumulates in a workspace, never in the output: under an optimizer
    # plan the output may sit on the input bytes that later taps still read.
    acc = request(p.out_shape, dtype)
    tmp = request(p.out_shape, dtype) if average or by_taps else -1
    rows = -1 if by_taps else request((fh * fw + 1, n * c), dtype)
    divisor = half = None
    if average:
        counts = np.maximum(p.counts, 1)  # a window always holds a tap when filter <= input
        # full output shape: a divisor broadcast over the batch would make numpy buffer
        divisor = np.ascontiguousarray(np.broadcast_to(
            counts[None, :, :, None], (n, out_h, out_w, c))).astype(dtype)
        half = None if p.type == _F32 else divisor // 2
    if p.type == _F32:
        lo, hi = np.float32(p.act_min), np.float32(p.act_max)
    else:
        lo, hi = dtype.type(int(p.act_min)), dtype.type(int(p.act_max))
    return PoolPlan(average, dtype, padded, acc, tmp, rows, interior, input_rows,
                    dtype.type(pad_value),
                    taps, windows, by_taps, divisor, half, lo, hi)


def _source(x: np.ndarray, plan: PoolPlan, ws: Callable[[int], np.ndarray]) -> np.ndarray:
    """The padded input: ``x`` itself when no window leaves it, else the filled workspace."""
    if plan.padded < 0:
        return x
    padded = ws(plan.padded)
    padded.fill(plan.pad_value)
    iy, ix = plan.interior
    ry, rx = plan.input_rows
    np.copyto(padded[:, iy, ix], x[:, ry, rx], casting="unsafe")
    return padded


class _FloatMax:
    """TFLM's float max loop, ``max = std::max(max, x)``, i.e. ``max < x ? x : max``: as
    np.fmax it never picks a NaN, but on a tie of -0.0 and +0.0 it keeps the earlier one
    (fmax may return either). Offers the two ufunc methods _gather uses; works in blocks so
    the comparison masks stay small whatever the layer size."""

    def __call__(self, a: np.ndarray | np.generic, b: np.ndarray | np.generic,
                 out: np.ndarray) -> None:
        if isinstance(a, np.ndarray) and a is out:  # acc = max(acc, tap)
            flat, other = out.reshape(-1), np.asarray(b)
            for start in range(0, flat.size, _MASK_BLOCK):
                block = flat[start:start + _MASK_BLOCK]
                source = other.reshape(-1)[start:start + _MASK_BLOCK] if other.ndim else other
                np.copyto(block, source, where=block < source)
            return
        # acc = max(start value, first tap): keep the tap unless it is not above the start
        flat, start_value = out.reshape(-1), np.asarray(a)
        for start in range(0, flat.size, _MASK_BLOCK):
            block = flat[start:start + _MASK_BLOCK]
            mask = start_value < block
            np.logical_not(mask, out=mask)
            np.copyto(block, start_value, where=mask)

    def accumulate(self, rows: np.ndarray, axis: int, out: np.ndarray) -> None:
        # np.fmax skips a quiet NaN as TFLM's ``max < x`` does, but returns NaN for a
        # signaling one (IEEE maxNum) and the next element then restarts the maximum: NaNs
        # become the lowest value first, which never wins either
        np.copyto(rows, np.finfo(rows.dtype).min, where=np.isnan(rows))
        np.fmax.accumulate(rows, axis=axis, out=out)
        # A zero maximum carries the sign of the window's first zero: the running maximum
        # first reaches zero at that tap (everything before it is negative), and later ties
        # keep it.
        last = out[-1]
        zero = last == 0
        if zero.any():
            first = np.argmax(out == 0, axis=0)[None]
            negative = np.signbit(np.take_along_axis(out, first, axis=0))[0]
            last[zero] = np.where(negative[zero], -0.0, 0.0)


_MASK_BLOCK = 2048


def _gather(src: np.ndarray, plan: PoolPlan, acc: np.ndarray, tmp: np.ndarray | None,
            rows: np.ndarray | None, combine: np.ufunc | _FloatMax) -> None:
    """acc = the combination (add or fmax/maximum) of every window, in TFLM's tap order."""
    if plan.by_taps:
        if tmp is None:
            raise KernelError("internal error: pooling by taps needs its temporary workspace")
        first = True
        for ty, tx in plan.taps:
            if first:
                np.copyto(acc, src[:, ty, tx], casting="unsafe")
                first = False
                # TFLM starts from 0 (a float -0.0 becomes +0.0) or the lowest value (a NaN
                # is skipped): combine the first tap with that start value.
                combine(plan.pad_value, acc, out=acc)
                continue
            np.copyto(tmp, src[:, ty, tx], casting="unsafe")
            combine(acc, tmp, out=acc)
        return
    if rows is None:
        raise KernelError("internal error: pooling by windows needs its rows workspace")
    n, c = acc.shape[0], acc.shape[3]
    rows[0] = plan.pad_value
    body = rows[1:]
    for oy, ox, wy, wx in plan.windows:
        window = src[:, wy, wx]  # (N, fh, fw, C)
        np.copyto(body.reshape(window.shape[1], window.shape[2], n, c),
                  window.transpose(1, 2, 0, 3), casting="unsafe")
        combine.accumulate(rows, axis=0, out=rows)
        np.copyto(acc[:, oy, ox], rows[-1].reshape(n, c))
        rows[0] = plan.pad_value


def _plan(p: PoolOpData) -> PoolPlan:
    if p.plan is None:
        raise KernelError("internal error: the pooling op was evaluated before its prepare "
                          "made a plan")
    return p.plan


def average_pool(x: np.ndarray, p: PoolOpData, out: np.ndarray,
                 ws: Callable[[int], np.ndarray]) -> None:
    """reference_ops::AveragePool (float) / reference_integer_ops::AveragePool (int8, int16).

    float32 sums every window in TFLM's order and divides by the float count; integers sum in
    int32 and divide rounding half away from zero: sign(t) * ((|t| + count/2) / count).
    """
    plan = _plan(p)
    if plan.divisor is None:
        raise KernelError("internal error: AVERAGE_POOL_2D was prepared without its divisors")
    acc = ws(plan.acc)
    tmp = ws(plan.tmp)
    rows = ws(plan.rows) if plan.rows >= 0 else None
    _gather(_source(x, plan, ws), plan, acc, tmp, rows, np.add)
    if p.type == _F32:
        np.divide(acc, plan.divisor, out=acc)
    else:
        if plan.half is None:
            raise KernelError("internal error: an integer AVERAGE_POOL_2D was prepared without "
                              "its rounding terms")
        np.sign(acc, out=tmp)
        np.abs(acc, out=acc)
        acc += plan.half
        np.floor_divide(acc, plan.divisor, out=acc)
        acc *= tmp
    c_min_max_inplace(acc, plan.lo, plan.hi)
    np.copyto(out, acc, casting="unsafe")


def max_pool(x: np.ndarray, p: PoolOpData, out: np.ndarray,
             ws: Callable[[int], np.ndarray]) -> None:
    """reference_ops::MaxPool / reference_integer_ops::MaxPool, then the activation clamp.

    Starts from the type's lowest value; float uses :class:`_FloatMax`, TFLM's std::max loop
    (NaN inputs skipped, the earlier of two signed zeros kept).
    """
    plan = _plan(p)
    combine: np.ufunc | _FloatMax = _FloatMax() if p.type == _F32 else np.maximum
    acc = ws(plan.acc)
    if plan.by_taps:
        _gather(_source(x, plan, ws), plan, acc, ws(plan.tmp), None, combine)
    else:
        _gather(_source(x, plan, ws), plan, acc, None, ws(plan.rows), combine)
    np.copyto(out, acc)
    c_min_max_inplace(out, plan.lo, plan.hi)


__all__ = ["PoolOpData", "PoolPlan", "average_pool", "max_pool", "pool_op_data", "pool_plan"]
