"""HARD_SWISH: TFLM's hard_swish.cc / hard_swish_common.cc and reference/hard_swish.h.

Types: float32 (x * min(6, max(0, x + 3)) / 6 in float32) and int8. The int8 path works in
16-bit fixed point: the input on a "high-res" scale (x * 2**7), a "relu-ish" factor in
[0, 1] from the input rescaled so that 3.0 maps to 32768, and int16 versions of gemmlowp's
rounding (and TFLM's truncating) doubling high multiplies.

Allocation: init allocates ``HardSwishParams`` (20 bytes); prepare takes two temp tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import quantize_multiplier, tensor_quant
from tinyarena.kernels._tflm_version import scale_arithmetic
from tinyarena.kernels._unary import checked_unary_io, map_unary
from tinyarena.kernels._bound import float_unary, unary_lut
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8 = TensorType.FLOAT32, TensorType.INT8
_SUPPORTED = ((_F32, _F32), (_I8, _I8))


@dataclass(frozen=True)
class OpData:
    """HardSwishParams."""

    type: TensorType
    input_zero_point: int = 0
    output_zero_point: int = 0
    reluish_multiplier_fixedpoint_int16: int = 0
    reluish_multiplier_exponent: int = 0
    output_multiplier_fixedpoint_int16: int = 0
    output_multiplier_exponent: int = 0


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("HardSwishParams"))


def down_scale_int32_to_int16_multiplier(multiplier: int) -> int:
    """TFLM DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15, saturating."""
    if multiplier >= (1 << 31) - 1 - (1 << 15):
        return 32767
    return (multiplier + (1 << 15)) >> 16


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """HardSwishPrepare: the two int16 multipliers (ratios of the float32 scales, in double)."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = checked_unary_io(ctx, op, "HARD_SWISH", _SUPPORTED)
    if inp.type == _F32:
        return OpData(inp.type)
    f32 = np.float32
    iq, oq = tensor_quant(inp), tensor_quant(out)
    hires_input_scale = f32(1.0) / f32(128.0) * f32(iq.scale)
    reluish_scale = f32(3.0) / f32(32768.0)
    # hires_input_scale is a float32 product in every version (exact: a power of two times
    # the scale); the wheel divides in double, TFLM 90b983c2 in float32 (_tflm_version).
    sa = scale_arithmetic(ctx.target)
    out_mult, out_exp = quantize_multiplier(sa.quotient(float(hires_input_scale), oq.scale))
    if out_exp > 0:
        raise KernelError("int8 HARD_SWISH needs output_scale >= input_scale / 128 (TFLM "
                          "requires a non-positive output multiplier exponent)")
    rel_mult, rel_exp = quantize_multiplier(sa.quotient(float(hires_input_scale),
                                                        float(reluish_scale)))
    return OpData(inp.type, iq.zero_point, oq.zero_point,
                  down_scale_int32_to_int16_multiplier(rel_mult), rel_exp,
                  down_scale_int32_to_int16_multiplier(out_mult), out_exp)


def _wrap16(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + 32768) & 0xFFFF) - 32768


def _trunc_div_pow2(x: np.ndarray, bits: int) -> np.ndarray:
    """C integer division by 2**bits (rounds toward zero)."""
    return np.where(x >= 0, x >> bits, -((-x) >> bits))


def srdhm16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul<int16_t>."""
    ab = np.asarray(a, dtype=np.int64) * b
    q = _trunc_div_pow2(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 15)
    return np.where((np.asarray(a) == -32768) & (b == -32768), 32767, _wrap16(q))


def sdhm16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TFLM SaturatingDoublingHighMul (int16): like SRDHM but truncating toward zero."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = _wrap16(_trunc_div_pow2(a * b, 15))
    return np.where((a == -32768) & (b == -32768), 32767, q)


def saturating_left_shift16(x: np.ndarray, amount: int) -> np.ndarray:
    """TFLM SaturatingLeftShift (hard_swish.h): x * 2**amount clamped to int16."""
    return np.clip(np.asarray(x, dtype=np.int64) * (1 << amount), -32768, 32767)


def rounding_divide_by_pot16(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT<int16_t>: the mask is narrowed to int16 as in C."""
    x = np.asarray(x, dtype=np.int64)
    mask = int(_wrap16(np.int64((1 << exponent) - 1)))
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return _wrap16((x >> exponent) + (remainder > threshold))


def hard_swish_int8(x: np.ndarray, p: OpData) -> np.ndarray:
    """reference_ops::HardSwish<int8_t> (quantized), element-wise in int16 fixed point."""
    input_value = _wrap16(x.astype(np.int64) - p.input_zero_point)
    hires = _wrap16(input_value * 128)
    preshift_output = srdhm16(hires, p.output_multiplier_fixedpoint_int16)
    reluish = hires
    if p.reluish_multiplier_exponent > 0:
        reluish = saturating_left_shift16(reluish, p.reluish_multiplier_exponent - 1)
    reluish = srdhm16(reluish, p.reluish_multiplier_fixedpoint_int16)
    if p.reluish_multiplier_exponent > 0:
        reluish = saturating_left_shift16(reluish, 1)
    if p.reluish_multiplier_exponent < 0:
        reluish = rounding_divide_by_pot16(reluish, -p.reluish_multiplier_exponent)
    reluish = _wrap16((reluish + (1 << 15)) >> 1)
    preshift_value = sdhm16(reluish, preshift_output)
    output = rounding_divide_by_pot16(preshift_value, -p.output_multiplier_exponent)
    output = _wrap16(output + p.output_zero_point)
    return np.clip(output, -128, 127)


def hard_swish_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::HardSwish<float>: in * min(6, max(0, in + 3)) / 6, all float32."""
    f32 = np.float32
    x = np.asarray(x, dtype=f32)
    relu6 = np.minimum(f32(6.0), np.maximum(f32(0.0), x + f32(3.0)))
    return (x * relu6) / f32(6.0)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """HardSwishEval."""
    if data.type == _F32:
        map_unary(ctx, op, hard_swish_float)
    else:
        map_unary(ctx, op, lambda v: hard_swish_int8(v, data))


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """int8: the integer HardSwish as a 256-entry table (``_bound.unary_lut``); float32: the
    compiled loop (``_bound.float_unary``) when compiled kernels are on; else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "HARD_SWISH")
    return unary_lut(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     lambda v: hard_swish_int8(v, data), ctx)


REGISTRATION = Registration("HARD_SWISH", init=init, prepare=prepare, eval=eval_, bind=bind)
