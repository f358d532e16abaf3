"""AVERAGE_POOL_2D / MAX_POOL_2D arithmetic: TFLM's pooling_common.cc with reference/pooling.h
and reference/integer_ops/pooling.h.

Windows are clipped to the input (padding contributes nothing and is not counted). Averages:
float32 sums the window left to right in float32 and divides by the float count; int8/int16
sum in int32 and divide rounding half away from zero ((acc +- count/2) / count, truncating).
The loops run over the filter taps (a few dozen at most), each vectorised over the output.
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
from tinyarena.kernels._unary import quant_params
from tinyarena.model.options import Pool2DOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16


@dataclass(frozen=True)
class PoolOpData:
    """OpDataPooling plus the TfLitePoolParams fields the eval reads."""

    type: TensorType
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_h: int
    pad_w: int
    act_min: float
    act_max: float


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
    return PoolOpData(inp.type, options.stride_h, options.stride_w, options.filter_height,
                      options.filter_width, padding.height, padding.width, lo, hi)


def _taps(x: np.ndarray, p: PoolOpData, out_h: int, out_w: int):  # type: ignore[no-untyped-def]
    """Yield (values, valid mask) per filter tap: values shaped (N, OH, OW, C), mask (OH, OW)."""
    in_h, in_w = x.shape[1], x.shape[2]
    oy = np.arange(out_h) * p.stride_h - p.pad_h
    ox = np.arange(out_w) * p.stride_w - p.pad_w
    for fy in range(p.filter_h):
        iy = oy + fy
        vy = (iy >= 0) & (iy < in_h)
        rows = x[:, np.clip(iy, 0, in_h - 1)]
        for fx in range(p.filter_w):
            ix = ox + fx
            vx = (ix >= 0) & (ix < in_w)
            yield rows[:, :, np.clip(ix, 0, in_w - 1)], vy[:, None] & vx[None, :]


def average_pool(x: np.ndarray, p: PoolOpData, out_shape: tuple[int, ...]) -> np.ndarray:
    """reference_ops::AveragePool (float) / reference_integer_ops::AveragePool (int8, int16)."""
    out_h, out_w = out_shape[1], out_shape[2]
    count = np.zeros((out_h, out_w), dtype=np.int64)
    if p.type == _F32:
        total = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.float32)
        for values, valid in _taps(x, p, out_h, out_w):
            total += np.where(valid[None, :, :, None], values, np.float32(0.0))
            count += valid
        avg = total / np.maximum(count, 1).astype(np.float32)[None, :, :, None]
        lo, hi = np.float32(p.act_min), np.float32(p.act_max)
        avg = np.where(avg < lo, lo, avg)
        return np.where(hi < avg, hi, avg)
    acc = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.int64)
    for values, valid in _taps(x, p, out_h, out_w):
        acc += np.where(valid[None, :, :, None], values, 0)
        count += valid
    n = np.maximum(count, 1)[None, :, :, None]
    half = n // 2
    pos = (acc + half) // n
    neg = -((half - acc) // n)  # C division of the non-positive (acc - half) by n
    avg_i = np.where(acc > 0, pos, neg)
    return np.clip(avg_i, int(p.act_min), int(p.act_max))


def max_pool(x: np.ndarray, p: PoolOpData, out_shape: tuple[int, ...]) -> np.ndarray:
    """reference_ops::MaxPool / reference_integer_ops::MaxPool, then the activation clamp."""
    out_h, out_w = out_shape[1], out_shape[2]
    shape = (x.shape[0], out_h, out_w, x.shape[3])
    if p.type == _F32:
        m = np.full(shape, np.finfo(np.float32).min, dtype=np.float32)
        for values, valid in _taps(x, p, out_h, out_w):
            take = valid[None, :, :, None] & (m < values)  # std::max: NaN inputs are skipped
            m = np.where(take, values, m)
        lo, hi = np.float32(p.act_min), np.float32(p.act_max)
        m = np.where(m < lo, lo, m)
        return np.where(hi < m, hi, m)
    info = np.iinfo(x.dtype)
    mi = np.full(shape, info.min, dtype=np.int64)
    for values, valid in _taps(x, p, out_h, out_w):
        mi = np.where(valid[None, :, :, None], np.maximum(mi, values), mi)
    return np.clip(mi, int(p.act_min), int(p.act_max))


__all__ = ["PoolOpData", "average_pool", "max_pool", "pool_op_data"]
