"""Fixed-point quantization arithmetic shared by the kernels, bit-exact with TFLM.

Every quantized kernel ends in the same step: an int32 (or int64) accumulator is scaled by a
real multiplier that TFLM represents as a Q31 significand plus a power-of-two shift, then
offset and clamped. Getting one rounding wrong here makes every quantized op differ by one
LSB, so each function below names the TFLM/gemmlowp function it ports and follows its
arithmetic exactly (default build: double rounding, i.e. without ``TFLITE_SINGLE_ROUNDING``).

All array functions work on int64 numpy arrays so that intermediate products of two int32
values (< 2**62) are exact, and they broadcast: a per-channel multiplier/shift of shape
``(C,)`` applies along the last axis of an ``(..., C)`` accumulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, NamedTuple, Union

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.model.types import Tensor

IntOrArray = Union[int, np.ndarray]

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
_Q31_ONE = 1 << 31
_TRUNC_BIAS = (1 << 31) - 1

FLOAT32_LOWEST = float(np.finfo(np.float32).min)
FLOAT32_MAX = float(np.finfo(np.float32).max)

# fused_activation_function names as in the schema's ActivationFunctionType enum.
ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")

_QRANGE: dict[str, tuple[int, int]] = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-32768, 32767),
}


# ----------------------------------------------------------------------------------------------
# Multiplier encoding (quantization_util.cc)
# ----------------------------------------------------------------------------------------------


def round_half_away(x: float) -> int:
    """TfLiteRound on a double (std::round): halves go away from zero, unlike Python's round."""
    r = math.floor(abs(x) + 0.5)
    return int(r) if x >= 0 else -int(r)


def quantize_multiplier(double_multiplier: float) -> tuple[int, int]:
    """TFLM QuantizeMultiplier: real multiplier -> (Q31 significand, power-of-two shift).

    ``double_multiplier ~= significand * 2**(shift - 31)``. The significand rounds to 2**31 for
    values just under a power of two; TFLM then halves it and bumps the shift. Shifts below -31
    flush the multiplier to zero (TFLM's "denormals to zero").
    """
    m = float(double_multiplier)
    if m == 0.0:
        return 0, 0
    if not math.isfinite(m):
        raise KernelError(f"quantization multiplier {m} is not finite; check the tensor scales")
    q, shift = math.frexp(m)
    q_fixed = round_half_away(q * _Q31_ONE)
    if q_fixed == _Q31_ONE:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q_fixed = 0
    return int(q_fixed), int(shift)


def quantize_multiplier_array(multipliers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """QuantizeMultiplier over an array of real multipliers -> (int32 significands, int32 shifts).

    Vectorised form of :func:`quantize_multiplier`, used for per-channel scales.
    """
    m = np.asarray(multipliers, dtype=np.float64)
    if not np.all(np.isfinite(m)):
        raise KernelError("a per-channel quantization multiplier is not finite; check the scales")
    q, shift = np.frexp(m)
    scaled = q * float(_Q31_ONE)
    q_fixed = (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)).astype(np.int64)
    shift = shift.astype(np.int64)
    corner = q_fixed == _Q31_ONE
    q_fixed = np.where(corner, q_fixed // 2, q_fixed)
    shift = np.where(corner, shift + 1, shift)
    tiny = shift < -31
    q_fixed = np.where(tiny, 0, q_fixed)
    shift = np.where(tiny, 0, shift)
    zero = m == 0.0
    q_fixed = np.where(zero, 0, q_fixed)
    shift = np.where(zero, 0, shift)
    return q_fixed.astype(np.int32), shift.astype(np.int32)


def quantize_multiplier_greater_than_one(double_multiplier: float) -> tuple[int, int]:
    """TFLM QuantizeMultiplierGreaterThanOne: as quantize_multiplier, requires m > 1."""
    if not double_multiplier > 1.0:
        raise KernelError(f"multiplier {double_multiplier} must be > 1 here; check the scales")
    q, shift = quantize_multiplier(double_multiplier)
    if shift < 0:
        raise KernelError(f"multiplier {double_multiplier} gave a negative left shift")
    return q, shift


def quantize_multiplier_smaller_than_one_exp(double_multiplier: float) -> tuple[int, int]:
    """TFLM QuantizeMultiplierSmallerThanOneExp: requires 0 < m < 1; shift is <= 0."""
    if not 0.0 < double_multiplier < 1.0:
        raise KernelError(
            f"multiplier {double_multiplier} must lie in (0, 1) here; check the tensor scales"
        )
    q, shift = quantize_multiplier(double_multiplier)
    if shift > 0:
        raise KernelError(f"multiplier {double_multiplier} gave a positive shift")
    return q, shift


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """TFLM CalculateInputRadius: the largest |input| that does not saturate (logistic, tanh)."""
    max_input_rescaled = (
        1.0
        * ((1 << input_integer_bits) - 1)
        * (1 << (total_signed_bits - input_integer_bits))
        / (1 << input_left_shift)
    )
    return int(math.floor(max_input_rescaled))


# ----------------------------------------------------------------------------------------------
# gemmlowp fixed-point primitives, vectorised over int64 arrays
# ----------------------------------------------------------------------------------------------


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values into the int32 range (C's int32 overflow)."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def wrap_int16(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap into the int16 range (C's cast of an int to int16_t)."""
    return ((x + 32768) & 0xFFFF) - 32768


def saturating_rounding_doubling_high_mul(a: IntOrArray, b: IntOrArray) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values held in int64 arrays.

    (a*b + nudge) / 2**31 with C's truncating division; nudge is 2**30 for a non-negative
    product and 1 - 2**30 otherwise. Both cases equal the floor shift (a*b + 2**30) >> 31
    (for a negative product, truncating (p + 1 - 2**30) / 2**31 is flooring p + 2**30), which
    needs fewer numpy passes. The single overflow, a == b == INT32_MIN, is the only product
    reaching 2**62 and so the only result above INT32_MAX: clamping saturates it.
    """
    ab = np.multiply(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    ab += 1 << 30
    ab >>= 31
    return np.minimum(ab, INT32_MAX)


def rounding_divide_by_pot(x: IntOrArray, exponent: IntOrArray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2**exponent rounded to nearest, ties away from zero."""
    x64 = np.asarray(x, dtype=np.int64)
    if isinstance(exponent, (int, np.integer)) and exponent >= 1:
        # (x + 2**(e-1) - [x < 0]) >> e, the same rounding in fewer passes
        return (x64 + ((1 << (int(exponent) - 1)) - 1) + (x64 >= 0)) >> int(exponent)
    e = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    return (x64 >> e) + (remainder > threshold)


# C's ``1 << n`` for n >= 32 is undefined; x86-64's shift instructions use n & 31 (host-x64, the
# wheel's build; a Cortex-M LSL by 32 or more gives 0 instead)
X86_SHIFT_MASK = 31


def multiply_by_quantized_multiplier(x: IntOrArray, quantized_multiplier: IntOrArray,
                                     shift: IntOrArray) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplier(int32 x, ...), double rounding, vectorised.

    ``x`` holds int32 accumulators (any integer dtype; values must fit int32). A positive
    ``shift`` is a left shift done first in wrapping int32 arithmetic, as in C; a negative one
    a rounding right shift done last. Multiplier and shift may be scalars or arrays that
    broadcast against ``x`` (per-channel: shape ``(C,)`` against ``(..., C)``). Returns int64.
    A left shift of 32 or more (a multiplier above 2**31, from extreme scales) is C's undefined
    ``1 << left_shift``: the shift count is masked to 5 bits, as x86-64 (the wheel) does.
    """
    s = np.asarray(shift, dtype=np.int64)
    left = np.maximum(s, 0) & X86_SHIFT_MASK
    right = np.maximum(-s, 0)
    x64 = np.asarray(x, dtype=np.int64)
    if np.any(left):
        x64 = wrap_int32(x64 << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x64, quantized_multiplier),
                                  right)


def multiply_by_quantized_multiplier_int64(x: IntOrArray, quantized_multiplier: IntOrArray,
                                           shift: IntOrArray) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplier(int64 x, ...): the 16x8 kernels' int64 accumulators.

    TFLM drops the multiplier to 16 bits (rounded; saturated at 0x7FFF), multiplies, adds the
    rounding bit and shifts right arithmetically by 15 - shift; the result is truncated to
    int32. ``x`` must lie in [-2**47, 2**47). Returns int64 holding the int32 result.
    """
    qm = np.asarray(quantized_multiplier, dtype=np.int64)
    reduced = np.where(qm < 0x7FFF0000, (qm + (1 << 15)) >> 16, 0x7FFF)
    total_shift = 15 - np.asarray(shift, dtype=np.int64)
    x64 = np.asarray(x, dtype=np.int64)
    # a shift above 15 (extreme scales) makes both shift counts negative, undefined in C:
    # x86-64 masks 64-bit shift counts to 6 bits
    y = x64 * reduced + (np.int64(1) << ((total_shift - 1) & 63))
    return wrap_int32(y >> (total_shift & 63))


def multiply_by_quantized_multiplier_smaller_than_one_exp(
        x: IntOrArray, quantized_multiplier: IntOrArray, left_shift: IntOrArray) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplierSmallerThanOneExp: SRDHM then rounding right shift."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, quantized_multiplier),
                                  -np.asarray(left_shift, dtype=np.int64))


def multiply_by_quantized_multiplier_greater_than_one(
        x: IntOrArray, quantized_multiplier: IntOrArray, left_shift: IntOrArray) -> np.ndarray:
    """TFLM MultiplyByQuantizedMultiplierGreaterThanOne: wrapping int32 left shift (count masked
    to 5 bits as x86-64 does), then SRDHM."""
    x64 = wrap_int32(np.asarray(x, dtype=np.int64)
                     << (np.asarray(left_shift, dtype=np.int64) & X86_SHIFT_MASK))
    return saturating_rounding_doubling_high_mul(x64, quantized_multiplier)


# ----------------------------------------------------------------------------------------------
# Activation ranges (kernel_util.cc / kernel_util.h)
# ----------------------------------------------------------------------------------------------


class QuantParams(NamedTuple):
    """A tensor's per-tensor quantization as TFLM's TfLiteQuantizationParams (float32 scale)."""

    scale: float
    zero_point: int


def tensor_quant(t: Tensor) -> QuantParams:
    """TfLiteTensor::params: the first scale (as float32) and zero point; 0/0 if unquantized.

    TFLM copies only the first entries of the flatbuffer's quantization into these params;
    a missing zero point reads as 0.
    """
    q = t.quantization
    if q is None or len(q.scale) == 0:
        return QuantParams(0.0, 0)
    zp = int(q.zero_point[0]) if len(q.zero_point) else 0
    return QuantParams(float(np.float32(q.scale[0])), zp)


def _check_activation(activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise KernelError(
            f"unknown fused_activation_function {activation!r}; expected one of {ACTIVATIONS}"
        )


def _quantize_float_for_range(scale: float, zero_point: int, value: float) -> int:
    """TFLM kernel_util.cc Quantize: roundf(value / scale) in float32, plus the zero point."""
    tmp = np.float32(value) / np.float32(scale)
    if not np.isfinite(tmp) or not (-2.0**31 <= float(tmp) <= 2.0**31 - 1):
        raise KernelError(f"activation bound {value} overflows int32 at scale {scale}")
    return int(zero_point) + round_half_away(float(tmp))  # roundf, exact in double


def qrange(dtype: str | np.dtype | type) -> tuple[int, int]:
    """(min, max) of a quantized integer type given as a name or numpy dtype."""
    name = np.dtype(dtype).name
    if name not in _QRANGE:
        raise KernelError(f"type {name} is not a quantized type (expected int8, uint8 or int16)")
    return _QRANGE[name]


def calculate_activation_range_quantized(activation: str, scale: float, zero_point: int,
                                         dtype: str | np.dtype | type) -> tuple[int, int]:
    """TFLM CalculateActivationRangeQuantized: clamp bounds in the output's quantized domain.

    RELU, RELU6 and RELU_N1_TO_1 quantize their real bounds with the output scale/zero point
    and intersect with the type's range; every other activation uses the full type range.
    """
    _check_activation(activation)
    qmin, qmax = qrange(dtype)
    if activation == "RELU":
        return max(qmin, _quantize_float_for_range(scale, zero_point, 0.0)), qmax
    if activation == "RELU6":
        return (max(qmin, _quantize_float_for_range(scale, zero_point, 0.0)),
                min(qmax, _quantize_float_for_range(scale, zero_point, 6.0)))
    if activation == "RELU_N1_TO_1":
        return (max(qmin, _quantize_float_for_range(scale, zero_point, -1.0)),
                min(qmax, _quantize_float_for_range(scale, zero_point, 1.0)))
    return qmin, qmax


def calculate_activation_range_float(activation: str) -> tuple[float, float]:
    """TFLM CalculateActivationRange<float>: clamp bounds for float kernels."""
    _check_activation(activation)
    if activation == "RELU":
        return 0.0, FLOAT32_MAX
    if activation == "RELU6":
        return 0.0, 6.0
    if activation == "RELU_N1_TO_1":
        return -1.0, 1.0
    return FLOAT32_LOWEST, FLOAT32_MAX


def calculate_activation_range_int(activation: str, dtype: str | np.dtype | type
                                   ) -> tuple[int, int]:
    """TFLM CalculateActivationRange<int32/int64>: unscaled integer bounds (e.g. int32 ADD)."""
    _check_activation(activation)
    info = np.iinfo(np.dtype(dtype))
    if activation == "RELU":
        return 0, int(info.max)
    if activation == "RELU6":
        return 0, 6
    if activation == "RELU_N1_TO_1":
        return -1, 1
    return int(info.min), int(info.max)


# ----------------------------------------------------------------------------------------------
# Convolution-style requantisation (PopulateConvolutionQuantizationParams)
# ----------------------------------------------------------------------------------------------


def per_channel_multipliers(input_scale: float, filter_scales: np.ndarray, output_scale: float,
                            num_channels: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM PopulateConvolutionQuantizationParams: per-output-channel (multiplier, shift).

    The effective scale is computed in double as in_scale * filter_scale / out_scale from the
    float32 scales; a single filter scale is broadcast to all ``num_channels``.
    """
    fs = np.asarray(filter_scales, dtype=np.float32).reshape(-1)
    if fs.size == 1:
        fs = np.full(num_channels, fs[0], dtype=np.float32)
    elif fs.size != num_channels:
        raise KernelError(
            f"filter has {fs.size} per-channel scales but {num_channels} output channels; "
            "the scale count must match the quantized dimension"
        )
    effective = (float(np.float32(input_scale)) * fs.astype(np.float64)
                 / float(np.float32(output_scale)))
    return quantize_multiplier_array(effective)


def requantize(acc: np.ndarray, multiplier: IntOrArray, shift: IntOrArray, output_offset: int,
               act_min: int, act_max: int, out: np.ndarray | None = None) -> np.ndarray:
    """MultiplyByQuantizedMultiplier + output offset + clamp, as TFLM's quantized kernels end.

    ``acc`` holds int32 accumulators (bias already added). The result is written to ``out``
    (any integer dtype, e.g. the int8 output view) when given, and returned.
    """
    scaled = multiply_by_quantized_multiplier(acc, multiplier, shift)
    return _offset_clamp_store(scaled, output_offset, act_min, act_max, out)


def requantize_int64(acc: np.ndarray, multiplier: IntOrArray, shift: IntOrArray,
                     output_offset: int, act_min: int, act_max: int,
                     out: np.ndarray | None = None) -> np.ndarray:
    """As :func:`requantize` for the 16x8 kernels' int64 accumulators."""
    scaled = multiply_by_quantized_multiplier_int64(acc, multiplier, shift)
    return _offset_clamp_store(scaled, output_offset, act_min, act_max, out)


def _offset_clamp_store(scaled: np.ndarray, output_offset: int, act_min: int, act_max: int,
                        out: np.ndarray | None) -> np.ndarray:
    """The end both requantize variants share: output offset, activation clamp (in place on
    ``scaled``), then the store into ``out`` when given."""
    scaled += output_offset
    np.clip(scaled, act_min, act_max, out=scaled)
    if out is None:
        return scaled
    out[...] = scaled
    return out



_SMALL_CLIP = 1 << 15
_SIGN_BIT = np.array(-(1 << 31), dtype=np.int64)  # x & _SIGN_BIT = -[x < 0] * 2**31
_SIGN_BIT.flags.writeable = False


# numpy's clip ufunc itself (np.clip is a Python wrapper around it costing several
# microseconds a call): one pass instead of maximum + minimum on small integer arrays.
_CLIP_UFUNC: Any = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", None)


def _wrap_int64(value: int) -> int:
    """``value`` as int64 arithmetic leaves it (two's complement wrap-around)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _const0(value: int) -> np.ndarray:
    """A read-only 0-d int64 array: the cheapest constant operand of a ufunc call."""
    array = np.array(value, dtype=np.int64)
    array.flags.writeable = False
    return array


def clip_inplace(a: np.ndarray, lo: IntOrArray | float, hi: IntOrArray | float) -> None:
    """a = min(max(a, lo), hi) in place (TFLM's ActivationFunctionWithMinMax; NaN passes).

    np.clip's Python wrapper costs several microseconds per call, which dominates on the small
    tensors of micro models; two ufunc calls are cheaper there, one np.clip pass beyond.
    """
    if a.size < _SMALL_CLIP:
        np.maximum(a, lo, out=a)
        np.minimum(a, hi, out=a)
    else:
        np.clip(a, lo, hi, out=a)


@dataclass(frozen=True)
class ChannelRequant:
    """Per-channel (or per-tensor) requantisation constants, precomputed at prepare.

    Arrays are int64 of shape ``(C,)`` (or ``(1,)``) so they broadcast along the last axis of an
    accumulator. ``left``/``right`` split the TFLM shift; ``half`` and ``rounds`` are the
    rounding terms of RoundingDivideByPOT per channel. ``fused_*`` are the constants of the
    single-shift form used by :func:`requantize_inplace` (valid when ``fused``).
    """

    multiplier: np.ndarray
    left: np.ndarray
    right: np.ndarray
    half: np.ndarray
    rounds: np.ndarray
    any_left: bool
    any_right: bool
    output_offset: int
    act_min: int
    act_max: int
    fused: bool = False
    fused_add: np.ndarray | None = None
    fused_all_fix: bool = False
    fused_shift: np.ndarray | None = None
    offset_in_fused_add: bool = False
    # Per-tensor fused form (``scalar``): small tensors are dominated by the cost of each
    # numpy call. The operands are 0-d int64 arrays (``k_*``): with numpy 2's scalar promotion
    # rules a Python-int operand costs a ufunc call about twice as much as a 0-d array.
    scalar: bool = False
    scalar_fix: bool = False  # the negative-tie term applies (right shift >= 1)
    scalar_multiplier: int = 0
    scalar_add: int = 0
    scalar_shift: int = 0
    k_multiplier: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)
    k_add: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)
    k_shift: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)
    k_offset: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)
    k_min: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)
    k_max: np.ndarray = field(default_factory=lambda: _const0(0), compare=False)

    @staticmethod
    def make(multiplier: IntOrArray, shift: IntOrArray, output_offset: int, act_min: int,
             act_max: int) -> "ChannelRequant":
        if np.size(multiplier) == 1 and np.size(shift) == 1:
            # Per-tensor constants (most ops of a small model): the same values as the array
            # path below, in Python integers, because a dozen numpy calls on one-element arrays
            # are most of a small model's sizing time.
            return ChannelRequant._make_one(int(np.asarray(multiplier).reshape(-1)[0]),
                                            int(np.asarray(shift).reshape(-1)[0]),
                                            int(output_offset), int(act_min), int(act_max))
        m = np.atleast_1d(np.asarray(multiplier, dtype=np.int64)).copy()
        s = np.atleast_1d(np.asarray(shift, dtype=np.int64))
        m, s = np.broadcast_arrays(m, s)
        if np.any(m < 0):
            raise KernelError("negative quantized multiplier; tensor scales must be positive")
        left = np.maximum(s, 0).astype(np.int64)
        right = np.maximum(-s, 0).astype(np.int64)
        if np.any(right > 62):
            raise KernelError("requantisation right shift out of range")
        half = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0).astype(np.int64)
        rounds = (right > 0).astype(np.int64)
        # Single-shift form (see requantize_inplace); its sums stay below 2**63 while the
        # right shift is at most 31, which QuantizeMultiplier guarantees.
        fused = not bool(np.any(left)) and not bool(np.any(right > 31)) \
            and bool(np.all((m == 0) | (m >= 1 << 30)))  # QuantizeMultiplier's range
        shift_total = 31 + right
        fused_add = (1 << 30) + (half << 31)
        # The output offset can ride in the same constant (offset << S shifts out to exactly
        # + offset) while that stays far from int64's limit.
        fold = fused and int(output_offset) != 0 and \
            int(shift_total.max(initial=0)) + abs(int(output_offset)).bit_length() <= 60
        if fold:
            fused_add = fused_add + (np.int64(output_offset) << shift_total)
        scalar = fused and m.size == 1 and (fold or int(output_offset) == 0)
        return ChannelRequant(
            np.ascontiguousarray(m), left, right, half, rounds, bool(np.any(left)),
            bool(np.any(right)), int(output_offset), int(act_min), int(act_max), fused,
            fused_add, bool(np.all(rounds == 1)), shift_total,
            fold or int(output_offset) == 0, scalar,
            scalar and bool(rounds[0]), int(m[0]) if scalar else 0,
            int(fused_add[0]) if scalar else 0, int(shift_total[0]) if scalar else 0,
            _const0(int(m[0]) if scalar else 0), _const0(int(fused_add[0]) if scalar else 0),
            _const0(int(shift_total[0]) if scalar else 0), _const0(int(output_offset)),
            _const0(int(act_min)), _const0(int(act_max)))

    @staticmethod
    def _make_one(m: int, s: int, output_offset: int, act_min: int,
                  act_max: int) -> "ChannelRequant":
        """``make`` for one channel: each field equals the array path's (tested)."""
        if not -(1 << 63) <= m < (1 << 63) or not -(1 << 63) <= s < (1 << 63):
            raise OverflowError(f"requantisation constants {m}, {s} do not fit int64")
        if m < 0:
            raise KernelError("negative quantized multiplier; tensor scales must be positive")
        left, right = max(s, 0), max(-s, 0)
        if right > 62:
            raise KernelError("requantisation right shift out of range")
        half = 1 << (right - 1) if right > 0 else 0
        rounds = 1 if right > 0 else 0
        fused = left == 0 and right <= 31 and (m == 0 or m >= 1 << 30)
        shift_total = 31 + right
        fused_add = _wrap_int64((1 << 30) + (half << 31))
        fold = fused and output_offset != 0 and \
            shift_total + abs(output_offset).bit_length() <= 60
        if fold:
            fused_add = _wrap_int64(fused_add + (output_offset << shift_total))
        scalar = fused and (fold or output_offset == 0)

        def one(value: int) -> np.ndarray:
            return np.array([value], dtype=np.int64)

        return ChannelRequant(
            one(m), one(left), one(right), one(half), one(rounds), left != 0, right != 0,
            output_offset, act_min, act_max, fused, one(fused_add), rounds == 1,
            one(shift_total), fold or output_offset == 0, scalar, scalar and rounds == 1,
            m if scalar else 0, fused_add if scalar else 0, shift_total if scalar else 0,
            _const0(m if scalar else 0), _const0(fused_add if scalar else 0),
            _const0(shift_total if scalar else 0), _const0(output_offset), _const0(act_min),
            _const0(act_max))


def requantize_inplace(acc: np.ndarray, rq: ChannelRequant, out: np.ndarray,
                       tmp: np.ndarray, work: np.ndarray | None = None) -> None:
    """Fast MultiplyByQuantizedMultiplier (int32 form) + offset + clamp, written into ``out``.

    Same results as :func:`requantize` for non-negative multipliers, with fewer passes and no
    allocation (every ufunc runs on one dtype: mixed dtypes make numpy allocate cast buffers).
    ``acc`` holds int32-valued accumulators, C-contiguous ``(..., C)``: int64 (then it is
    overwritten) or any integer dtype with an int64 ``work`` buffer of its shape. ``tmp`` is
    an int64 scratch of the same shape.

    With no left shift gemmlowp's two roundings become one shift:
    SaturatingRoundingDoublingHighMul(x, M) is floor((x*M + 2**30) / 2**31) for M >= 0,
    RoundingDivideByPOT(q, r) is floor((q + h - [q < 0]) / 2**r) with h = 2**(r-1) (r >= 1),
    and floor(floor(a) / b) is floor(a / b), so the result is
    (x*M + 2**30 + (h - n) * 2**31) >> (31 + r) with n = [x*M + 2**30 < 0] (h = n = 0 for
    r = 0). QuantizeMultiplier gives M = 0 or M >= 2**30, so n equals [x < 0] except when
    x*M + 2**30 is 0 or 2**30, where both choices give 0; and -[x < 0] * 2**31 is the single
    operation x & -2**31.
    """
    if work is not None and work is not acc:
        np.copyto(work, acc, casting="unsafe")
        acc = work
    small = acc.size < _SMALL_CLIP
    if rq.scalar:  # the same steps with 0-d operands
        if rq.scalar_fix:
            np.bitwise_and(acc, _SIGN_BIT, out=tmp)
            np.multiply(acc, rq.k_multiplier, out=acc)
            np.add(acc, tmp, out=acc)
        else:
            np.multiply(acc, rq.k_multiplier, out=acc)
        np.add(acc, rq.k_add, out=acc)
        np.right_shift(acc, rq.k_shift, out=acc)
        _clamp_into(acc, rq, out, small)
        return
    if not rq.fused:
        _requantize_two_step(acc, rq, out, tmp)
        return
    if rq.fused_add is None or rq.fused_shift is None:
        raise KernelError("internal error: ChannelRequant says fused but lacks the fused "
                          "constants; build it with ChannelRequant.make")
    np.bitwise_and(acc, _SIGN_BIT, out=tmp)  # -n * 2**31
    if not rq.fused_all_fix:
        np.multiply(tmp, rq.rounds, out=tmp)  # no rounding term for r = 0 channels
    np.multiply(acc, rq.multiplier, out=acc)
    np.add(acc, tmp, out=acc)
    np.add(acc, rq.fused_add, out=acc)
    np.right_shift(acc, rq.fused_shift, out=acc)
    if not rq.offset_in_fused_add:
        np.add(acc, rq.k_offset, out=acc)
    _clamp_into(acc, rq, out, small)


def bound_requantize(acc: np.ndarray, rq: ChannelRequant, out: np.ndarray,
                     tmp: np.ndarray) -> Callable[[], None]:
    """``requantize_inplace(acc, rq, out, tmp)`` as a step over these very arrays (int64
    ``acc``), its branches and reshapes resolved once: what kernels' bound steps call."""
    if acc.dtype != np.int64 or acc.size >= _SMALL_CLIP or _CLIP_UFUNC is None or \
            not rq.fused or rq.fused_add is None or rq.fused_shift is None or rq.scalar:
        return partial(requantize_inplace, acc, rq, out, tmp)
    dst = out.reshape(acc.shape) if out.shape != acc.shape else out
    if not np.shares_memory(dst, out):
        return partial(requantize_inplace, acc, rq, out, tmp)
    clip = _CLIP_UFUNC
    mult, add, shift, lo, hi = rq.multiplier, rq.fused_add, rq.fused_shift, rq.k_min, rq.k_max
    rounds = None if rq.fused_all_fix else rq.rounds
    offset = None if rq.offset_in_fused_add else rq.k_offset

    def step() -> None:  # requantize_inplace's fused per-channel branch
        np.bitwise_and(acc, _SIGN_BIT, out=tmp)
        if rounds is not None:
            np.multiply(tmp, rounds, out=tmp)
        np.multiply(acc, mult, out=acc)
        np.add(acc, tmp, out=acc)
        np.add(acc, add, out=acc)
        np.right_shift(acc, shift, out=acc)
        if offset is not None:
            np.add(acc, offset, out=acc)
        clip(acc, lo, hi, out=acc)
        dst[...] = acc
    return step


def _clamp_into(acc: np.ndarray, rq: ChannelRequant, out: np.ndarray, small: bool) -> None:
    """Clamp to the activation range and store into ``out`` (values fit: a plain cast)."""
    if small:
        if _CLIP_UFUNC is not None:  # integers: the same min(max(x, lo), hi)
            _CLIP_UFUNC(acc, rq.k_min, rq.k_max, out=acc)
        else:
            np.maximum(acc, rq.k_min, out=acc)
            np.minimum(acc, rq.k_max, out=acc)
        out[...] = acc.reshape(out.shape)  # cheaper than np.copyto on small arrays
    else:
        np.clip(acc, rq.act_min, rq.act_max, out=acc)
        np.copyto(out, acc.reshape(out.shape), casting="unsafe")


def _requantize_two_step(acc: np.ndarray, rq: ChannelRequant, out: np.ndarray,
                         tmp: np.ndarray) -> None:
    """requantize_inplace for multipliers with a left shift: wrap, SRDHM, then RDBP."""
    if rq.any_left:
        np.left_shift(acc, rq.left, out=acc)
        acc += 1 << 31
        np.bitwise_and(acc, 0xFFFFFFFF, out=acc)
        acc -= 1 << 31
    np.multiply(acc, rq.multiplier, out=acc)
    acc += 1 << 30
    np.right_shift(acc, 31, out=acc)
    if rq.any_right:
        np.right_shift(acc, 63, out=tmp)  # -1 where negative
        np.multiply(tmp, rq.rounds, out=tmp)
        acc += tmp
        acc += rq.half
        np.right_shift(acc, rq.right, out=acc)
    acc += rq.output_offset
    clip_inplace(acc, rq.act_min, rq.act_max)
    np.copyto(out, acc.reshape(out.shape), casting="unsafe")


def requantize_int64_inplace(acc: np.ndarray, rq: ChannelRequant, out: np.ndarray) -> None:
    """MultiplyByQuantizedMultiplier (int64 form, 16x8 kernels) + offset + clamp into ``out``.

    ``acc`` (int64) is overwritten. The multiplier is reduced to 16 bits as TFLM does.
    """
    reduced = np.where(rq.multiplier < 0x7FFF0000, (rq.multiplier + (1 << 15)) >> 16, 0x7FFF)
    shift = rq.left - rq.right
    total_shift = 15 - shift
    np.multiply(acc, reduced, out=acc)
    acc += np.int64(1) << (total_shift - 1)
    np.right_shift(acc, total_shift, out=acc)
    acc += 1 << 31
    np.bitwise_and(acc, 0xFFFFFFFF, out=acc)
    acc -= 1 << 31
    acc += rq.output_offset
    clip_inplace(acc, rq.act_min, rq.act_max)
    np.copyto(out, acc.reshape(out.shape), casting="unsafe")

__all__ = [
    "ACTIVATIONS",
    "ChannelRequant",
    "FLOAT32_LOWEST",
    "FLOAT32_MAX",
    "INT32_MAX",
    "INT32_MIN",
    "QuantParams",
    "tensor_quant",
    "calculate_activation_range_float",
    "calculate_activation_range_int",
    "calculate_activation_range_quantized",
    "calculate_input_radius",
    "clip_inplace",
    "multiply_by_quantized_multiplier",
    "multiply_by_quantized_multiplier_greater_than_one",
    "multiply_by_quantized_multiplier_int64",
    "multiply_by_quantized_multiplier_smaller_than_one_exp",
    "per_channel_multipliers",
    "qrange",
    "quantize_multiplier",
    "quantize_multiplier_array",
    "quantize_multiplier_greater_than_one",
    "quantize_multiplier_smaller_than_one_exp",
    "requantize",
    "requantize_int64",
    "requantize_inplace",
    "bound_requantize",
    "round_half_away",
    "requantize_int64_inplace",
    "rounding_divide_by_pot",
    "saturating_rounding_doubling_high_mul",
    "wrap_int16",
    "wrap_int32",
]
