"""Quantization parameters from float ranges, and (de)quantizing arrays with them.

These follow the conventions of the TFLite converter so that models built here look like
converted ones: activations are asymmetric int8 (the range is widened to include 0 so that 0.0 is
exactly representable) or symmetric int16 (zero point 0); weights are symmetric int8 per channel
in [-127, 127]; a bias is int32 (int64 under int16 activations) with scale input_scale *
weight_scale and zero point 0, which is what the integer kernels assume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.builder._dtypes import tensor_type
from tinyarena.errors import BuildError
from tinyarena.model.types import NUMPY_DTYPES, TensorType

_INT_TYPES = (TensorType.INT8, TensorType.UINT8, TensorType.INT16, TensorType.INT32,
              TensorType.INT64, TensorType.INT4, TensorType.UINT16, TensorType.UINT32)


@dataclass(frozen=True)
class QuantParams:
    """scale and zero point arrays (one entry per tensor, or one per channel)."""

    scale: np.ndarray  # float32
    zero_point: np.ndarray  # int64
    quantized_dimension: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


def qrange(dtype: Any, narrow_range: bool = False) -> tuple[int, int]:
    """Smallest and largest stored integer of ``dtype`` (int4 is [-8, 7])."""
    ttype = tensor_type(dtype)
    if ttype not in _INT_TYPES:
        raise BuildError(f"{ttype.name} is not an integer type and cannot be quantized")
    if ttype == TensorType.INT4:
        low, high = -8, 7
    else:
        info = np.iinfo(NUMPY_DTYPES[ttype])
        low, high = int(info.min), int(info.max)
    return (low + 1 if narrow_range else low), high


def choose_quant_params(rmin: float, rmax: float, dtype: Any = "int8", *,
                        narrow_range: bool = False, symmetric: bool | None = None) -> QuantParams:
    """Per-tensor scale and zero point covering [rmin, rmax].

    Asymmetric (the default for 8-bit types): the range is first widened to contain 0, then
    scale = (rmax - rmin) / (qmax - qmin) and the zero point is qmin - rmin / scale rounded and
    clamped into [qmin, qmax] (the converter's "nudging"). Symmetric (default for int16 and
    wider): zero point 0 and scale = max(|rmin|, |rmax|) / qmax.
    """
    if not (np.isfinite(rmin) and np.isfinite(rmax)) or rmin > rmax:
        raise BuildError(f"invalid float range [{rmin}, {rmax}]: need finite rmin <= rmax")
    qmin, qmax = qrange(dtype, narrow_range)
    ttype = tensor_type(dtype)
    if symmetric is None:
        symmetric = ttype not in (TensorType.INT8, TensorType.UINT8, TensorType.INT4)
    rmin, rmax = min(float(rmin), 0.0), max(float(rmax), 0.0)
    if symmetric:
        bound = max(abs(rmin), abs(rmax))
        scale = bound / qmax if bound > 0 else 1.0
        return QuantParams(np.array([scale], np.float32), np.zeros(1, np.int64))
    if rmax == rmin:
        return QuantParams(np.array([1.0], np.float32), np.array([max(qmin, min(qmax, 0))],
                                                                  np.int64))
    scale = (rmax - rmin) / (qmax - qmin)
    zero_point = int(np.clip(np.round(qmin - rmin / scale), qmin, qmax))
    return QuantParams(np.array([scale], np.float32), np.array([zero_point], np.int64))


def symmetric_scales(values: np.ndarray, axis: int | None = None, dtype: Any = "int8",
                     *, narrow_range: bool = True) -> np.ndarray:
    """Scale(s) mapping max |value| (over everything, or per slice along ``axis``) to qmax.

    With ``narrow_range`` (the converter's choice for weights) int8 uses [-127, 127]. All-zero
    channels get scale 1 so that the scale stays positive, as TFLM requires.
    """
    array = np.asarray(values, dtype=np.float64)
    _, qmax = qrange(dtype, narrow_range)
    if axis is None:
        bound = np.array([np.max(np.abs(array))]) if array.size else np.zeros(1)
    else:
        axis = axis % array.ndim
        others = tuple(i for i in range(array.ndim) if i != axis)
        bound = np.max(np.abs(array), axis=others) if others else np.abs(array)
    scales = np.where(bound > 0, bound / qmax, 1.0)
    return scales.astype(np.float32)


def _along_axis(scale_arr: np.ndarray, zp_arr: np.ndarray, ndim: int,
                axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel scales and zero points reshaped to broadcast along ``axis`` of the values."""
    if axis is None:
        raise BuildError("per-channel scale or zero point given without the channel axis")
    shape = [1] * ndim
    shape[axis % ndim] = -1
    return scale_arr.reshape(shape), zp_arr.reshape(shape)


def quantize(values: Any, scale: Any, zero_point: Any = 0, dtype: Any = "int8", *,
             axis: int | None = None, narrow_range: bool = False) -> np.ndarray:
    """round(values / scale) + zero_point, saturated to ``dtype``'s range.

    ``scale`` and ``zero_point`` may be per channel; then ``axis`` names the channel axis.
    Rounding is half away from zero, like TFLM's reference quantize (TfLiteRound).
    """
    ttype = tensor_type(dtype)
    qmin, qmax = qrange(ttype, narrow_range)
    array = np.asarray(values, dtype=np.float64)
    scale_arr = np.asarray(scale, dtype=np.float64).reshape(-1)
    zp_arr = np.asarray(zero_point, dtype=np.int64).reshape(-1)
    if scale_arr.size > 1 or zp_arr.size > 1:
        scale_arr, zp_arr = _along_axis(scale_arr, zp_arr, array.ndim, axis)
    elif scale_arr.size == 1:
        scale_arr = scale_arr[0]
        zp_arr = zp_arr[0] if zp_arr.size else np.int64(0)
    if np.any(np.asarray(scale_arr) <= 0):
        raise BuildError("quantization scales must be positive")
    scaled = array / scale_arr
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    q = np.clip(rounded + zp_arr, qmin, qmax).astype(np.int64)
    storage = np.int8 if ttype == TensorType.INT4 else NUMPY_DTYPES[ttype]
    return q.astype(storage)


def dequantize(values: Any, scale: Any, zero_point: Any = 0, *,
               axis: int | None = None) -> np.ndarray:
    """scale * (values - zero_point) as float32 (per channel along ``axis`` when given)."""
    array = np.asarray(values, dtype=np.float64)
    scale_arr: np.ndarray = np.asarray(scale, dtype=np.float64).reshape(-1)
    zp_arr: np.ndarray = np.asarray(zero_point, dtype=np.float64).reshape(-1)
    if scale_arr.size > 1 or zp_arr.size > 1:
        scale_arr, zp_arr = _along_axis(scale_arr, zp_arr, array.ndim, axis)
    elif scale_arr.size == 1:
        # 0-d arrays broadcast exactly like the scalars they hold
        scale_arr = scale_arr.reshape(())
        zp_arr = zp_arr.reshape(()) if zp_arr.size else np.zeros((), np.float64)
    else:
        raise BuildError("dequantize needs a scale; got an empty one")
    return (scale_arr * (array - zp_arr)).astype(np.float32)


def quantize_weights(weights: Any, axis: int | None = 0, dtype: Any = "int8"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric weight quantization (per channel along ``axis``, or per tensor with None).

    Returns (quantized weights, float32 scales); the zero points are all 0.
    """
    array = np.asarray(weights, dtype=np.float64)
    scales = symmetric_scales(array, axis, dtype, narrow_range=True)
    q = quantize(array, scales, 0, dtype, axis=axis, narrow_range=True)
    return q, scales


def bias_scales(input_scale: float, weight_scales: Any) -> np.ndarray:
    """input_scale * weight_scale per output channel: the scale integer kernels assume."""
    return (np.float64(input_scale) * np.asarray(weight_scales, np.float64).reshape(-1)
            ).astype(np.float32)


def quantize_bias(bias: Any, input_scale: float, weight_scales: Any,
                  dtype: Any = "int32") -> tuple[np.ndarray, np.ndarray]:
    """A float bias as int32 (or int64) with scale input_scale * weight_scale, zero point 0.

    Returns (quantized bias, float32 scales).
    """
    scales = bias_scales(input_scale, weight_scales)
    array = np.asarray(bias, dtype=np.float64)
    per_channel = scales.size > 1
    q = quantize(array, scales if per_channel else scales[0], 0, dtype,
                 axis=0 if per_channel else None)
    return q, scales
