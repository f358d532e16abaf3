"""gemmlowp's fixed-point transcendental functions, vectorised and bit-exact.

TFLM's quantized SOFTMAX (int8), LOGISTIC (int8) and TANH (int8) do not use floating point at
run time: they call gemmlowp's ``exp_on_negative_values``, ``logistic``, ``tanh`` and
``one_over_one_plus_x_for_x_in_0_1`` (fixedpoint/fixedpoint.h) on int32 Q-format values. A
value in format Qm (``integer_bits`` = m) is an int32 ``raw`` meaning ``raw / 2**(31 - m)``.

Everything here works on int64 numpy arrays that hold int32 values, so products of two int32
values are exact; additions that could overflow in C are wrapped back to int32 with
``wrap_int32`` so that the results match the compiled code even in those corners.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._quant import (
    INT32_MAX,
    INT32_MIN,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)

# gemmlowp constants (raw int32 values of the named real numbers, as gemmlowp spells them).
_EXP_MINUS_ONE_EIGHTH = 1895147668  # exp(-1/8) in Q0.31
_ONE_THIRD = 715827883  # 1/3 in Q0.31
_FORTY_EIGHT_OVER_17 = 1515870810  # 48/17 in Q2.29
_MINUS_32_OVER_17 = -1010580540  # -32/17 in Q2.29
# exp(-2**k) in Q0.31 for k = -2 .. 4: the barrel shifter of exp_on_negative_values.
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


# In-place forms: no temporaries, for invoke paths that must not allocate.


def srdhm_rdbp_inplace(x: np.ndarray, multiplier: int, right: int, tmp: np.ndarray) -> None:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp on int32 values in int64 ``x``, in place.

    With a non-negative multiplier SaturatingRoundingDoublingHighMul is exactly
    floor((x * m + 2**30) / 2**31) (its negative nudge and truncation meet the same value, and
    the saturating case needs m = INT32_MIN), and RoundingDivideByPOT by e >= 1 is
    floor((x + 2**(e-1) - [x < 0]) / 2**e); tests check both against the gemmlowp forms.
    """
    np.multiply(x, multiplier, out=x)
    x += 1 << 30
    np.right_shift(x, 31, out=x)
    if right > 0:
        np.right_shift(x, 63, out=tmp)  # -1 where negative
        x += tmp
        x += 1 << (right - 1)
        np.right_shift(x, right, out=x)


def wrap_int32_inplace(x: np.ndarray) -> None:
    """Two's-complement wrap of int64 ``x`` into the int32 range, in place."""
    x += 1 << 31
    np.bitwise_and(x, 0xFFFFFFFF, out=x)
    x -= 1 << 31


def multiply_by_quantized_multiplier_inplace(x: np.ndarray, multiplier: int, shift: int,
                                             tmp: np.ndarray) -> None:
    """MultiplyByQuantizedMultiplier (int32 form, double rounding) on int64 ``x``, in place.

    A positive ``shift`` is a left shift wrapped to int32 as C does (count masked to 5 bits, as
    x86-64 does for C's undefined ``1 << 32`` and up); a negative one the rounding right shift.
    ``multiplier`` must be non-negative (see :func:`srdhm_rdbp_inplace`).
    """
    if shift > 0:
        np.left_shift(x, shift & 31, out=x)
        wrap_int32_inplace(x)
    srdhm_rdbp_inplace(x, multiplier, max(-shift, 0), tmp)


def _i64(x: np.ndarray | int) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def mul(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """FixedPoint operator*: SaturatingRoundingDoublingHighMul; integer bits add up."""
    return saturating_rounding_doubling_high_mul(a, b)


def saturating_rounding_multiply_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent> on int32 raws.

    A positive exponent is a left shift that saturates to INT32_MIN/MAX; a negative one is
    RoundingDivideByPOT.
    """
    x = _i64(x)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    result = wrap_int32(x << exponent)
    result = np.where(x > threshold, INT32_MAX, result)
    return np.where(x < -threshold, INT32_MIN, result)


def rescale(x: np.ndarray, src_integer_bits: int, dst_integer_bits: int) -> np.ndarray:
    """gemmlowp Rescale<dst>(FixedPoint<int32, src>): change the integer bits, saturating."""
    return saturating_rounding_multiply_by_pot(x, src_integer_bits - dst_integer_bits)


def rounding_half_sum(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp RoundingHalfSum<int32>: (a + b) / 2 rounded away from zero, in int64."""
    s = _i64(a) + _i64(b)
    s = s + np.where(s >= 0, 1, -1)
    return np.where(s >= 0, s >> 1, -((-s) >> 1))  # C division truncates toward zero


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    """gemmlowp: exp(a) for a in [-1/4, 0), Q0.31 in and out (Taylor series around -1/8)."""
    x = wrap_int32(_i64(a) + (1 << 28))
    x2 = mul(x, x)
    x3 = mul(x2, x)
    x4 = mul(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = wrap_int32(mul(wrap_int32(x4_over_4 + x3), _ONE_THIRD) + x2)
    poly = rounding_divide_by_pot(poly, 1)
    return wrap_int32(_EXP_MINUS_ONE_EIGHTH + mul(_EXP_MINUS_ONE_EIGHTH, wrap_int32(x + poly)))


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp exp_on_negative_values: exp(a) for a <= 0 given in Q``integer_bits``; Q0.31 out.

    The argument is split into a multiple of 1/4 and a remainder in [-1/4, 0); the remainder
    goes through the Taylor series and each set bit of the multiple multiplies by a constant.
    """
    a = _i64(a)
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    a_mod_quarter_minus_one_quarter = (a & (one_quarter - 1)) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0))
    remainder = wrap_int32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where(remainder & bit, mul(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal_q2(a: np.ndarray) -> np.ndarray:
    """The shared Newton-Raphson core of gemmlowp's 1/(1+x) helpers: ~1/((1+a)/2) in Q2.29."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap_int32(_FORTY_EIGHT_OVER_17 + mul(half_denominator, _MINUS_32_OVER_17))
    one_q2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = mul(half_denominator, x)
        one_minus = wrap_int32(one_q2 - half_denominator_times_x)
        x = wrap_int32(x + rescale(mul(x, one_minus), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1: 1/(1+a), Q0.31 in and out."""
    x = _newton_reciprocal_q2(a)
    return rescale(x, 1, 0)  # ExactMulByPot<-1> (Q2 -> Q1, same raw), then Rescale<0>


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """gemmlowp one_minus_x_over_one_plus_x_for_x_in_0_1: (1-a)/(1+a), Q0.31 in and out."""
    x = _newton_reciprocal_q2(a)
    return rescale(wrap_int32(x - (1 << 29)), 2, 0)


def logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp logistic: 1/(1+exp(-a)) for a in Q``integer_bits``, Q0.31 out."""
    a = _i64(a)
    positive = a > 0
    abs_input = np.where(positive, a, wrap_int32(-a))
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(wrap_int32(-abs_input), integer_bits))
    result_if_negative = wrap_int32(INT32_MAX - result_if_positive)
    result = np.where(positive, result_if_positive, result_if_negative)
    return np.where(a == 0, 1 << 30, result)


def tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp tanh for a in Q``integer_bits``, Q0.31 out: (1 - exp(-2|a|)) / (1 + exp(-2|a|))."""
    a = _i64(a)
    negative = a < 0
    n = np.where(negative, a, wrap_int32(-a))
    # neg_tanh_on_negative_values: ExactMulByPot<1> keeps the raw and adds one integer bit.
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    result = np.where(negative, wrap_int32(-t), t)
    return np.where(a == 0, 0, result)


def count_leading_zeros_u32(x: np.ndarray) -> np.ndarray:
    """TFLM CountLeadingZeros<uint32_t> on values in [0, 2**32): 32 for zero."""
    x = _i64(x) & 0xFFFFFFFF
    _, exp = np.frexp(x.astype(np.float64))  # exact: x < 2**53; exp = bit length for x > 0
    return np.where(x == 0, 32, 32 - exp.astype(np.int64))


def get_reciprocal(x: np.ndarray, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM GetReciprocal (common.h): 1/x for a positive Q``x_integer_digits`` value.

    Returns (reciprocal scale in Q0.31, num_bits_over_unit): x is normalised to [1, 2) by its
    leading zeros, and 1/(1 + (x_normalised - 1)) is taken with the Newton iteration.
    """
    x = _i64(x)
    headroom_plus_one = count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap_int32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


__all__ = [
    "count_leading_zeros_u32",
    "exp_on_negative_values",
    "get_reciprocal",
    "logistic",
    "mul",
    "multiply_by_quantized_multiplier_inplace",
    "one_minus_x_over_one_plus_x_for_x_in_0_1",
    "one_over_one_plus_x_for_x_in_0_1",
    "rescale",
    "rounding_half_sum",
    "saturating_rounding_multiply_by_pot",
    "srdhm_rdbp_inplace",
    "tanh",
    "wrap_int32_inplace",
]
