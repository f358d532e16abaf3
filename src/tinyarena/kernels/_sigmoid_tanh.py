"""The arithmetic TFLM's LOGISTIC and TANH kernels share (logistic_common.cc, tanh.cc).

int8: the input, minus its zero point, is rescaled into gemmlowp Q4.27 by a multiplier
derived from ``scale * 2**27`` (frexp, *not* QuantizeMultiplier: no 2**31 corner fix) and fed
to gemmlowp's fixed-point logistic/tanh; inputs beyond ``input_range_radius`` saturate.
int16: the input is rescaled to a scale of 1/(3 * 4096) (or by a power of two) and looked up
in the 256-entry ``sigmoid_table_uint16`` with linear interpolation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import _fixedpoint, native
from tinyarena.kernels._lut import SIGMOID_TABLE_UINT16
from tinyarena.kernels._quant import (
    calculate_input_radius,
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    tensor_quant,
    wrap_int16,
)
from tinyarena.kernels._unary import c_int32_from_double, checked_log2
from tinyarena.model.types import Operator, Tensor, TensorType

_INT8_INPUT_INTEGER_BITS = 4
_INT16_INPUT_INTEGER_BITS = 3
_INT16_OUTPUT_FRACTIONAL_BITS = 15


@dataclass(frozen=True)
class ActivationOpData:
    """OpDataLogistic / tanh.cc OpData: the int8 or int16 input rescaling."""

    input_zero_point: int = 0
    input_range_radius: int = 0
    input_multiplier: int = 0
    input_left_shift: int = 0


def int8_params(input_scale: float, input_zero_point: int) -> ActivationOpData:
    """CalculateArithmeticOpDataLogistic / tanh CalculateArithmeticOpData, int8 branch."""
    real = float(input_scale) * float(1 << (31 - _INT8_INPUT_INTEGER_BITS))
    q, shift = math.frexp(real)
    scaled = q * float(1 << 31)
    multiplier = c_int32_from_double(math.copysign(math.floor(abs(scaled) + 0.5), scaled))
    radius = calculate_input_radius(_INT8_INPUT_INTEGER_BITS, shift, 31)
    return ActivationOpData(input_zero_point, radius, multiplier, shift)


def int16_params(op: str, input_scale: float, input_zero_point: int, output_scale: float,
                 output_zero_point: int, pot_shifts: tuple[int, ...]) -> ActivationOpData:
    """The int16 branch: power-of-two input scales use a shift, others a 1/(3*4096) multiplier.

    ``pot_shifts`` are the left shifts TFLM accepts as a power-of-two case (LOGISTIC: 0;
    TANH: 0 or 1).
    """
    if input_zero_point != 0 or output_zero_point != 0:
        raise KernelError(f"int16 {op} needs zero points of 0 on input and output")
    is_pot, log2_scale = checked_log2(input_scale)
    left_shift = (15 - _INT16_INPUT_INTEGER_BITS) + log2_scale
    if is_pot and left_shift in pot_shifts:
        multiplier = 0
    else:
        real = float(input_scale) * 4096.0 * 3.0
        left_shift = 0
        while real <= 32767.0 / 2.0 and left_shift <= 30:
            left_shift += 1
            real *= 2.0
        multiplier = c_int32_from_double(real)
    out_pot, out_log2 = checked_log2(output_scale)
    if not out_pot or out_log2 != -_INT16_OUTPUT_FRACTIONAL_BITS:
        raise KernelError(f"int16 {op} needs an output scale of 2**-15, got {output_scale}")
    return ActivationOpData(0, 0, multiplier, left_shift)


@dataclass(frozen=True)
class SigmoidTanhOpData:
    """What LOGISTIC's and TANH's Prepare keep: the tensor type and the integer rescaling."""

    type: TensorType
    params: ActivationOpData
    libm: str = "glibc"  # float LOGISTIC: the build's C library (std::exp), _libm.expf_for


def sigmoid_tanh_op_data(op: str, inp: Tensor, out: Tensor,
                         pot_shifts: tuple[int, ...]) -> SigmoidTanhOpData:
    """CalculateArithmeticOpDataLogistic / tanh's CalculateArithmeticOpData, by input type."""
    iq, oq = tensor_quant(inp), tensor_quant(out)
    if inp.type == TensorType.INT8:
        return SigmoidTanhOpData(inp.type, int8_params(iq.scale, iq.zero_point))
    if inp.type == TensorType.INT16:
        return SigmoidTanhOpData(inp.type, int16_params(op, iq.scale, iq.zero_point, oq.scale,
                                                        oq.zero_point, pot_shifts=pot_shifts))
    return SigmoidTanhOpData(inp.type, ActivationOpData())


def bind_int16(ctx: Any, op: Operator, data: SigmoidTanhOpData, op_name: str) -> Any:
    """int16 LOGISTIC or TANH with compiled kernels on: ``native.sigmoid_tanh``'s table and
    lerp; None (eval runs) without them."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.sigmoid_tanh import MODE_LOGISTIC, MODE_TANH, \
        bind_sigmoid_tanh16

    return bind_sigmoid_tanh16(MODE_LOGISTIC if op_name == "LOGISTIC" else MODE_TANH,
                               data.params.input_multiplier, data.params.input_left_shift,
                               ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]))


def _int8_common(x: np.ndarray, p: ActivationOpData, fn: str) -> tuple[np.ndarray, np.ndarray,
                                                                        np.ndarray]:
    centered = x.astype(np.int64) - p.input_zero_point
    low = centered <= -p.input_range_radius
    high = centered >= p.input_range_radius
    input_q4 = multiply_by_quantized_multiplier(centered, p.input_multiplier, p.input_left_shift)
    if fn == "logistic":
        out_q0 = _fixedpoint.logistic(input_q4, _INT8_INPUT_INTEGER_BITS)
    else:
        out_q0 = _fixedpoint.tanh(input_q4, _INT8_INPUT_INTEGER_BITS)
    return out_q0, low, high


def logistic_int8(x: np.ndarray, p: ActivationOpData) -> np.ndarray:
    """reference_integer_ops::Logistic (int8): Q0.31 logistic -> Q23.8, output zero point -128."""
    out_q0, low, high = _int8_common(x, p, "logistic")
    out = np.clip(rounding_divide_by_pot(out_q0, 31 - 8) - 128, -128, 127)
    return np.where(low, -128, np.where(high, 127, out))


def tanh_int8(x: np.ndarray, p: ActivationOpData) -> np.ndarray:
    """reference_integer_ops::Tanh (int8): Q0.31 tanh -> Q24.7, no output zero point."""
    out_q0, low, high = _int8_common(x, p, "tanh")
    out = np.clip(rounding_divide_by_pot(out_q0, 31 - 7), -128, 127)
    return np.where(low, -128, np.where(high, 127, out))


def _rescale_int16(x: np.ndarray, p: ActivationOpData) -> np.ndarray:
    multiplier, shift = p.input_multiplier, p.input_left_shift
    if multiplier == 0:  # power-of-two case
        multiplier, shift = 3 << shift, 0
    rounding = (1 << (shift - 1)) if shift > 0 else 0
    return (x.astype(np.int64) * multiplier + rounding) >> shift


def _table_lerp(a: np.ndarray, frac_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The sigmoid-table step of both int16 kernels: the table index ``a >> frac_bits`` and the
    entry there interpolated linearly toward the next by the low ``frac_bits`` bits of ``a``
    (scaled by 2**frac_bits). The index is capped at 254; callers saturate at 255 and above."""
    uh = a >> frac_bits
    idx = np.minimum(uh, 254)
    ua = SIGMOID_TABLE_UINT16[idx]
    ub = SIGMOID_TABLE_UINT16[idx + 1]
    return uh, (ua << frac_bits) + (a & ((1 << frac_bits) - 1)) * (ub - ua)


def logistic_int16(x: np.ndarray, p: ActivationOpData) -> np.ndarray:
    """reference_integer_ops::Logistic (int16): sigmoid table, 9 fractional bits of lerp."""
    v = _rescale_int16(x, p)
    uh, interp = _table_lerp(np.abs(v), 9)
    result = np.where(uh >= 255, 0x7FFF << 10, interp)
    result = np.where(v >= 0, result + (1 << 9), (1 << (16 + 9)) - result + (1 << 9) - 1)
    return wrap_int16((result & 0xFFFFFFFF) >> 10)


def tanh_int16(x: np.ndarray, p: ActivationOpData) -> np.ndarray:
    """reference_integer_ops::Tanh (int16): tanh(x) = 2 sigmoid(2x) - 1 on the same table."""
    v = _rescale_int16(x, p)
    uh, interp = _table_lerp(np.abs(v), 8)
    result = np.where(uh >= 255, 0xFFFF << 8, interp)
    result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return wrap_int16(result >> 8)


__all__ = [
    "ActivationOpData",
    "SigmoidTanhOpData",
    "sigmoid_tanh_op_data",
    "int16_params",
    "int8_params",
    "logistic_int16",
    "logistic_int8",
    "tanh_int16",
    "tanh_int8",
]
