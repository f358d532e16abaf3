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

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.kernels._quant import (
    calculate_activation_range_float,
    calculate_activation_range_quantized,
)
from tinyarena.kernels._unary import CHUNK, quant_params
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
    workspace: int = -1  # average pooling accumulator, (N, OH, OW, C)


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
        iq, oq = quant_params(inp), quant_params(out)
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
                      tuple(taps), counts)


def average_workspace(data: PoolOpData) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of the average-pooling accumulator (float32 or int32 sums)."""
    return data.out_shape, np.dtype(np.float32 if data.type == _F32 else np.int32)


def _tap_views(x: np.ndarray, acc: np.ndarray, p: PoolOpData):  # type: ignore[no-untyped-def]
    """Per tap: (accumulator rectangle, matching strided input view); both are views."""
    for oy0, oy1, ox0, ox1, iy0, ix0 in p.taps:
        src = x[:, iy0:iy0 + (oy1 - oy0 - 1) * p.stride_h + 1:p.stride_h,
                ix0:ix0 + (ox1 - ox0 - 1) * p.stride_w + 1:p.stride_w]
        yield acc[:, oy0:oy1, ox0:ox1], src


def _row_blocks(p: PoolOpData):  # type: ignore[no-untyped-def]
    n, out_h, out_w, c = p.out_shape
    step = max(1, CHUNK // max(1, n * out_w * c))
    for start in range(0, out_h, step):
        yield slice(start, min(out_h, start + step))


def _clamp_into(out: np.ndarray, values: np.ndarray, lo: float, hi: float) -> None:
    """ActivationFunctionWithMinMax: min(max(v, lo), hi) with std::min/max semantics."""
    out[...] = values
    np.copyto(out, np.asarray(lo, dtype=out.dtype), where=out < lo)
    np.copyto(out, np.asarray(hi, dtype=out.dtype), where=hi < out)


def average_pool(x: np.ndarray, p: PoolOpData, out: np.ndarray,
                 acc: np.ndarray | None = None) -> None:
    """reference_ops::AveragePool (float) / reference_integer_ops::AveragePool (int8, int16)."""
    shape, dtype = average_workspace(p)
    if acc is None:
        acc = np.empty(shape, dtype)
    acc[...] = 0
    for dst, src in _tap_views(x, acc, p):
        np.add(dst, src, out=dst)  # taps in TFLM's order: float sums round identically
    for rows in _row_blocks(p):
        total = acc[:, rows]
        n = p.counts[rows][None, :, :, None]
        if p.type == _F32:
            avg = total / n.astype(np.float32)
        else:
            t = total.astype(np.int64)
            half = n // 2
            avg = np.where(t > 0, (t + half) // n, -((half - t) // n))  # C division
        _clamp_into(out[:, rows], avg, p.act_min, p.act_max)


def max_pool(x: np.ndarray, p: PoolOpData, out: np.ndarray) -> None:
    """reference_ops::MaxPool / reference_integer_ops::MaxPool, then the activation clamp.

    Accumulates in the output itself; float uses fmax, which like TFLM's std::max loop skips
    NaN inputs.
    """
    if p.type == _F32:
        out[...] = np.finfo(np.float32).min
        for dst, src in _tap_views(x, out, p):
            np.fmax(dst, src, out=dst)
    else:
        out[...] = np.iinfo(out.dtype).min
        for dst, src in _tap_views(x, out, p):
            np.maximum(dst, src, out=dst)
    for rows in _row_blocks(p):
        block = out[:, rows]
        _clamp_into(block, block, p.act_min, p.act_max)


__all__ = ["PoolOpData", "average_pool", "average_workspace", "max_pool", "pool_op_data"]
