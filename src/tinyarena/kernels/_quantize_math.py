"""QUANTIZE and DEQUANTIZE arithmetic: TFLM's quantize_common.cc / dequantize_common.cc with
reference/quantize.h (AffineQuantize), requantize.h (Requantize) and dequantize.h.

QUANTIZE float -> int: ``round(x / scale) + zero_point`` with the division in float32 and
std::round (halves away from zero), the float -> int32 conversion done as x86-64 does it
(out-of-range and NaN give INT32_MIN) and the zero point added with int32 wrap-around, then
clamped. Integer -> integer: MultiplyByQuantizedMultiplier by in_scale/out_scale (double),
with TFLM's shortcut of flipping the top bit for int8 <-> uint8 at equal scales.
DEQUANTIZE: ``float32(double(scale) * (q - zero_point))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._quant import (
    ChannelRequant,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    requantize_inplace,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels._unary import require_same_size
from tinyarena.model.types import NUMPY_DTYPES, Tensor, TensorType

_F32, _I32, _I16, _I8, _U8 = (TensorType.FLOAT32, TensorType.INT32, TensorType.INT16,
                              TensorType.INT8, TensorType.UINT8)
_QUANTIZE_INPUTS = (_F32, _I32, _I16, _I8, _U8)
_QUANTIZE_OUTPUTS = (_I8, _I16, _I32, _U8)
# PrepareQuantizeReference computes a requantization multiplier for these pairs.
_REQUANTIZE_PAIRS = ((_I16, _I8), (_I8, _I8), (_I8, _U8), (_U8, _I8), (_I8, _I16), (_I8, _I32),
                     (_I16, _I16), (_I16, _I32), (_I32, _I8), (_I32, _I16))


@dataclass(frozen=True)
class QuantizeOpData:
    """OpDataQuantizeReference."""

    input_type: TensorType
    output_type: TensorType
    output_zero_point: int
    output_scale: float
    input_zero_point: int
    requantize_multiplier: int = 0
    requantize_shift: int = 0


# Tensors up to this many elements take the whole-tensor paths of QuantizeFast (workspaces of
# a few tens of bytes per element); larger ones the block-wise reference path.
FAST_ELEMENTS = 1 << 14
# |round(x / scale)| below this cannot reach the int32 conversion's or the zero point's
# wrap-around (and is far outside every output range), so the float path needs no C corner.
_FLOAT_SAFE = float(1 << 30)


@dataclass(frozen=True)
class QuantizeFast:
    """QUANTIZE in a few whole-tensor numpy calls, for the common cases (see quantize_fast).

    ``rq`` set: integer input, Requantize through ``requantize_inplace`` (int64 workspaces
    ``ws_a``/``ws_b``); prepare checked that ``MultiplyByQuantizedMultiplier(x - in_zp) +
    out_zp`` cannot wrap, so offset-then-clamp is TFLM's arithmetic. ``rq`` None: float input,
    AffineQuantize with ``ws_f32``, ``ws_a`` and ``ws_b`` (float64).
    """

    rq: ChannelRequant | None
    input_zero_point: int
    scale: Any  # np.float32 output scale (float input)
    output_zero_point: int
    act_min: int
    act_max: int
    ws_a: int
    ws_b: int
    ws_f32: int = -1


@dataclass(frozen=True)
class DequantizeOpData:
    """DequantizeOpData: the input's scale (as double) and zero point."""

    input_type: TensorType
    scale: float
    zero_point: int


def quantize_op_data(inp: Tensor, out: Tensor) -> QuantizeOpData:
    """PrepareQuantizeReference."""
    q = out.quantization
    if q is None or len(q.scale) == 0:
        raise KernelError("QUANTIZE output has no quantization parameters; give the output "
                          "tensor a scale and zero point (TFLM requires affine quantization)")
    if len(q.scale) != 1:
        raise KernelError("QUANTIZE needs a per-tensor quantized output (exactly one scale); "
                          "TFLM does not quantize per channel here")
    if inp.type not in _QUANTIZE_INPUTS or out.type not in _QUANTIZE_OUTPUTS:
        raise KernelError(f"QUANTIZE does not support {inp.type.name.lower()} -> "
                          f"{out.type.name.lower()}; inputs float32/int32/int16/int8/uint8, "
                          "outputs int8/int16/int32/uint8")
    require_same_size("QUANTIZE", inp, out)
    iq, oq = tensor_quant(inp), tensor_quant(out)
    multiplier, shift = 0, 0
    if (inp.type, out.type) in _REQUANTIZE_PAIRS:
        multiplier, shift = quantize_multiplier(float(iq.scale) / float(oq.scale))
    return QuantizeOpData(inp.type, out.type, oq.zero_point, float(oq.scale), iq.zero_point,
                          multiplier, shift)


def quantize_fast(ctx: Any, data: QuantizeOpData, count: int) -> QuantizeFast | None:
    """The QuantizeFast plan and its workspaces, or None where the reference path must run:
    large tensors, the int8 <-> uint8 bit flip, an int32 input with a zero point, pairs TFLM
    does not implement, and offsets that could wrap int32."""
    if count > FAST_ELEMENTS or count == 0:
        return None
    pair = (data.input_type, data.output_type)
    info = np.iinfo(NUMPY_DTYPES[data.output_type])
    lo, hi = int(info.min), int(info.max)

    def scratch(dtype: Any) -> int:
        return int(ctx.request_workspace((count,), dtype, persistent=False))

    if data.input_type == _F32:
        if pair not in ((_F32, _I8), (_F32, _I16)):
            return None
        return QuantizeFast(None, 0, np.float32(data.output_scale), data.output_zero_point,
                            lo, hi, scratch(np.float64), scratch(np.float64),
                            scratch(np.float32))
    if pair not in _REQUANTIZE_PAIRS:
        return None
    diff = data.input_zero_point - data.output_zero_point
    same_scale = (data.requantize_multiplier, data.requantize_shift) == (1 << 30, 1)
    if same_scale and ((pair == (_I8, _U8) and diff == -128)
                       or (pair == (_U8, _I8) and diff == 128)):
        return None
    if data.input_type == _I32 and data.input_zero_point != 0:
        return None  # x - zero_point may wrap int32
    in_info = np.iinfo(NUMPY_DTYPES[data.input_type])
    centered = max(abs(int(in_info.min) - data.input_zero_point),
                   abs(int(in_info.max) - data.input_zero_point))
    m, shift = data.requantize_multiplier, data.requantize_shift
    if m < 0 or shift > 31:
        return None
    pre = min(centered << max(shift, 0), 1 << 31)  # the left shift wraps into int32 in C
    bound = ((pre * m) >> 31) + 2  # |MultiplyByQuantizedMultiplier| never exceeds this
    if bound + abs(data.output_zero_point) >= 1 << 31:
        return None
    rq = ChannelRequant.make(m, shift, data.output_zero_point, lo, hi)
    return QuantizeFast(rq, data.input_zero_point, None, data.output_zero_point, lo, hi,
                        scratch(np.int64), scratch(np.int64))


def quantize_fast_eval(x: np.ndarray, out: np.ndarray, p: QuantizeFast, ws: Any,
                       data: QuantizeOpData) -> None:
    """EvalQuantizeReference through a QuantizeFast plan (the output written in place)."""
    a = ws(p.ws_a)
    if p.rq is not None:  # Requantize
        np.copyto(a, x.reshape(-1), casting="unsafe")
        if p.input_zero_point:
            np.subtract(a, p.input_zero_point, out=a)
        requantize_inplace(a, p.rq, out.reshape(-1), ws(p.ws_b))
        return
    # AffineQuantize: float32 quotient; std::round as trunc(q + copysign(0.5, q)) in float64,
    # exact for float32 q (q + 0.5 needs at most 53 bits while |q| < 2**52, and below 0.5 the
    # float64 sum stays below 1).
    f = ws(p.ws_f32)
    b = ws(p.ws_b)
    np.divide(x.reshape(-1), p.scale, out=f)
    np.copyto(a, f)
    np.copysign(0.5, a, out=b)
    np.add(a, b, out=a)
    np.trunc(a, out=a)
    np.abs(a, out=b)
    if not np.maximum.reduce(b) < _FLOAT_SAFE:  # NaN, inf or huge: the C corners
        out.reshape(-1)[...] = quantize(x.reshape(-1), data)
        return
    np.add(a, p.output_zero_point, out=a)
    np.maximum(a, p.act_min, out=a)
    np.minimum(a, p.act_max, out=a)
    np.copyto(out.reshape(-1), a, casting="unsafe")


def dequantize_op_data(inp: Tensor, out: Tensor) -> DequantizeOpData:
    """DequantizePrepare."""
    if inp.type not in (_I8, _I16, _U8) or out.type != _F32:
        raise KernelError(f"DEQUANTIZE does not support {inp.type.name.lower()} -> "
                          f"{out.type.name.lower()}; TFLM takes int8/int16/uint8 to float32")
    require_same_size("DEQUANTIZE", inp, out)
    iq = tensor_quant(inp)
    return DequantizeOpData(inp.type, float(iq.scale), iq.zero_point)


def _c_float_to_int32(x: np.ndarray) -> np.ndarray:
    """static_cast<int32_t>(float) as cvttss2si executes it: truncate; INT32_MIN if invalid."""
    x64 = x.astype(np.float64)
    ok = np.isfinite(x64) & (x64 > -2.0**31 - 1) & (x64 < 2.0**31)
    return np.where(ok, np.trunc(np.where(ok, x64, 0.0)), -2.0**31).astype(np.int64)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round on float32 values (exact: the fractional part is computed without error)."""
    a = np.abs(x)
    fl = np.floor(a)
    with np.errstate(invalid="ignore"):  # inf - inf: the value stays inf, as in C
        return np.copysign(fl + (a - fl >= 0.5), x)


def quantize(x: np.ndarray, data: QuantizeOpData) -> np.ndarray:
    """EvalQuantizeReference: AffineQuantize (float input) or Requantize (integer input)."""
    pair = (data.input_type, data.output_type)
    info = np.iinfo(NUMPY_DTYPES[data.output_type])
    if data.input_type == _F32:
        if pair not in ((_F32, _I8), (_F32, _I16)):
            raise KernelError(f"QUANTIZE float32 -> {data.output_type.name.lower()} is not "
                              "implemented by TFLM's reference kernel; use int8 or int16")
        scaled = (x.astype(np.float32) / np.float32(data.output_scale)).astype(np.float32)
        unclamped = wrap_int32(_c_float_to_int32(_round_half_away(scaled)) + data.output_zero_point)
        return np.clip(unclamped, info.min, info.max)
    if pair not in _REQUANTIZE_PAIRS:
        raise KernelError(f"QUANTIZE {data.input_type.name.lower()} -> "
                          f"{data.output_type.name.lower()} is not implemented by TFLM's "
                          "reference kernel")
    same_scale = (data.requantize_multiplier, data.requantize_shift) == (1 << 30, 1)
    diff = data.input_zero_point - data.output_zero_point
    if same_scale and ((pair == (_I8, _U8) and diff == -128)
                       or (pair == (_U8, _I8) and diff == 128)):
        # Requantize's fast path: flip the top bit, then narrow to the output type.
        flipped = (x.astype(np.int64) ^ 0x80) & 0xFF
        return flipped if data.output_type == _U8 else ((flipped + 128) & 0xFF) - 128
    centered = wrap_int32(x.astype(np.int64) - data.input_zero_point)
    scaled = multiply_by_quantized_multiplier(centered, data.requantize_multiplier,
                                              data.requantize_shift)
    return np.clip(wrap_int32(scaled + data.output_zero_point), info.min, info.max)


def dequantize(x: np.ndarray, data: DequantizeOpData) -> np.ndarray:
    """reference_ops::Dequantize: double arithmetic, one rounding to float32 at the end."""
    return (data.scale * (x.astype(np.float64) - data.zero_point)).astype(np.float32)


__all__ = ["DequantizeOpData", "QuantizeFast", "QuantizeOpData", "quantize_fast",
           "quantize_fast_eval", "dequantize", "dequantize_op_data", "quantize",
           "quantize_op_data"]
