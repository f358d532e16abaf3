"""SOFTMAX arithmetic: TFLM's CalculateSoftmaxParams (softmax_common.cc) and reference/softmax.h.

Types (as TFLM's reference kernel): float32; int8 -> int8 (output zero point -128, scale
1/256); int8 -> int16 (zero point -32768, scale 1/65536); int16 -> int16 (zero points 0,
output scale 1/32768).

int8 input runs gemmlowp's fixed-point exp (Q5.26 differences, Q12 accumulator) and
reciprocal; int16 input runs two 513-entry LUTs (exp on [-10, 0] and 1/(1+x)) with
interpolation; float32 computes exp(beta * (x - max)) and divides by the float32 running sum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import (
    count_leading_zeros_u32,
    exp_on_negative_values,
    get_reciprocal,
)
from tinyarena.kernels._libm import expf_for
from tinyarena.kernels._lut import lut_lookup_int16, softmax_int16_luts
from tinyarena.kernels._quant import (
    calculate_input_radius,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_greater_than_one,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels._unary import map_row_chunks, require_same_size, require_types
from tinyarena.model.options import SoftmaxOptions
from tinyarena.model.types import Operator, Tensor, TensorType

_SCALED_DIFF_INTEGER_BITS = 5  # Q5.26 input differences (reference_ops::Softmax)
_ACCUMULATION_INTEGER_BITS = 12
_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16
_SUPPORTED = ((_F32, _F32), (_I8, _I8), (_I8, _I16), (_I16, _I16))
_FORTY_EIGHT_OVER_17 = 1515870810  # 48/17 in Q2.29 (gemmlowp's Newton start)
_MINUS_32_OVER_17 = -1010580540  # -32/17 in Q2.29
# Up to this many rows, int8 softmax takes each row's reciprocal in Python integers (a few
# microseconds a row) rather than vectorised (about 130 us of numpy passes whatever the count).
SMALL_ROWS = 16


@dataclass(frozen=True)
class SoftmaxOpData:
    """SoftmaxParams as CalculateSoftmaxParams fills it."""

    input_type: TensorType
    output_type: TensorType
    beta: float = 1.0
    input_multiplier: int = 0
    input_left_shift: int = 0
    diff_min: int = 0
    # int8 input: per (max - x) in 0..255, the fixed-point exp, its accumulator contribution
    # and whether it is above diff_min; built at prepare by the element-wise arithmetic.
    exp_table: np.ndarray | None = None
    contrib_table: np.ndarray | None = None
    valid_table: np.ndarray | None = None
    # int8 input with a last axis of 2: the output for every x - other in -255..255 (index
    # + 255), in the output type; each output depends on that difference only.
    pair_table: np.ndarray | None = None
    libm: str = "glibc"  # float: the build's C library (std::exp), see _libm.expf_for


def _near(value: float, target: float, tol: float) -> bool:
    return abs(value - target) <= tol


def softmax_op_data(op: Operator, inp: Tensor, out: Tensor) -> SoftmaxOpData:
    """CalculateSoftmaxParams: type checks, output quantization checks and the multipliers."""
    if len(inp.shape) < 1:
        raise KernelError("SOFTMAX input must have at least one dimension")
    require_types("SOFTMAX", inp, out, _SUPPORTED)
    require_same_size("SOFTMAX", inp, out)
    options = op.options if isinstance(op.options, SoftmaxOptions) else SoftmaxOptions()
    beta = float(np.float32(options.beta))
    iq, oq = tensor_quant(inp), tensor_quant(out)
    if inp.type == _I16:
        if iq.zero_point != 0 or oq.zero_point != 0:
            raise KernelError("int16 SOFTMAX needs zero points of 0 on input and output")
        if not _near(oq.scale, 1.0 / 32768, 0.001 / 32768):
            raise KernelError(f"int16 SOFTMAX needs an output scale of 1/32768, got {oq.scale}")
        multiplier, shift = quantize_multiplier(iq.scale * beta / (10.0 / 65535.0))
        return SoftmaxOpData(inp.type, out.type, beta, multiplier, shift)
    if inp.type == _I8:
        if out.type == _I16:
            if oq.zero_point != -32768 or not _near(oq.scale, 1.0 / 65536, 0.001 / 65536):
                raise KernelError("int8->int16 SOFTMAX needs output zero point -32768 and "
                                  f"scale 1/65536, got {oq.zero_point} and {oq.scale}")
        elif oq.zero_point != -128 or np.float32(oq.scale) != np.float32(1.0 / 256):
            raise KernelError("int8 SOFTMAX needs output zero point -128 and scale 1/256, got "
                              f"{oq.zero_point} and {oq.scale}")
        multiplier, shift = _preprocess_softmax_scaling(beta, iq.scale)
        radius = calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, shift)
        exp, contrib, valid = _int8_tables(multiplier, shift, -radius)
        data = SoftmaxOpData(inp.type, out.type, beta, multiplier, shift, diff_min=-radius,
                             exp_table=exp, contrib_table=contrib, valid_table=valid)
        if inp.shape[-1] == 2:
            data = replace(data, pair_table=_int8_pair_table(data))
        return data
    return SoftmaxOpData(inp.type, out.type, beta)


def _preprocess_softmax_scaling(beta: float, input_scale: float) -> tuple[int, int]:
    """TFLM PreprocessSoftmaxScaling with 5 integer bits (QuantizeMultiplierGreaterThanOne)."""
    real = min(beta * input_scale * float(1 << (31 - _SCALED_DIFF_INTEGER_BITS)),
               float((1 << 31) - 1))
    if not real > 1.0:
        raise KernelError(f"SOFTMAX beta * input scale = {beta * input_scale} is too small for "
                          "TFLM's int8 kernel (it needs beta * scale * 2**26 > 1)")
    return quantize_multiplier(real)


def softmax(x: np.ndarray, data: SoftmaxOpData, out: np.ndarray) -> None:
    """SoftmaxEval's arithmetic over the last axis, written into ``out`` a few rows at a time."""
    depth = x.shape[-1] if x.ndim else 1
    rows = x.reshape(-1, depth)
    out_rows = out.reshape(-1, depth)
    if data.input_type == _F32:
        map_row_chunks(lambda r: _softmax_float(r, data.beta, data.libm), rows, out_rows)
    elif data.input_type == _I8:
        bits = 16 if data.output_type == _I16 else 8
        if data.pair_table is not None and depth == 2:
            table = data.pair_table
            if rows.shape[0] <= SMALL_ROWS:
                table.take(_pair_index(rows), out=out_rows)
            else:
                map_row_chunks(lambda r: table[_pair_index(r)], rows, out_rows)
        elif rows.shape[0] <= SMALL_ROWS and data.exp_table is not None \
                and data.contrib_table is not None:
            out_rows[...] = _softmax_int8_small(rows, data.exp_table, data.contrib_table, bits)
        else:
            map_row_chunks(lambda r: _softmax_int8(r, data, bits), rows, out_rows)
    else:
        map_row_chunks(lambda r: _softmax_int16(r, data), rows, out_rows)


def _softmax_float(rows: np.ndarray, beta: float, libm: str = "glibc") -> np.ndarray:
    """reference_ops::Softmax<float>: std::exp(float) (the build's C library's expf, ported
    bit-exactly in ``_libm``), sequential float32 sum, then divide."""
    f32 = np.float32
    # max = std::max(max, x) from the lowest float: a NaN never becomes the maximum
    row_max = np.fmax(np.fmax.reduce(rows, axis=1, keepdims=True), np.finfo(f32).min)
    diff = (rows - row_max) * f32(beta)
    exp = expf_for(libm)(diff)
    # left to right, as the C loop (sum = sum + exp: with NaNs, x86 keeps the sum's, and so
    # does numpy; NaN sign bits match the wheel's, see tests/kernels/test_float_specials.py)
    total = np.cumsum(exp, axis=1, dtype=f32)[:, -1:]
    return exp / total


def _int8_pair_table(data: SoftmaxOpData) -> np.ndarray:
    """Every output of a two-element int8 softmax row, by x - other + 255 (x - other in
    -255..255): the table arithmetic run once on the rows (t, 0)."""
    bits = 16 if data.output_type == _I16 else 8
    diffs = np.arange(-255, 256, dtype=np.int64)[:, None]
    rows = np.concatenate([diffs, np.zeros_like(diffs)], axis=1)
    table = _softmax_int8(rows, data, bits)[:, 0].astype(np.int16 if bits == 16 else np.int8)
    table.setflags(write=False)
    return table


def _pair_index(rows: np.ndarray) -> np.ndarray:
    """For rows of two int8 values: each value minus the other, plus 255 (pair_table index)."""
    index = rows.astype(np.intp)
    index -= rows[:, ::-1]
    index += 255
    return index


def _int8_tables(multiplier: int, shift: int, diff_min: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """reference_ops::Softmax's per-element steps for every int8 difference x - max (0..-255).

    They depend on the difference only, so they are computed once here with the same
    arithmetic as :func:`_softmax_int8_reference` and looked up at eval. The exp table holds 0
    for differences below diff_min (see :func:`_softmax_int8_output`).
    """
    diff = -np.arange(256, dtype=np.int64)
    valid = diff >= diff_min
    rescaled = multiply_by_quantized_multiplier_greater_than_one(diff, multiplier, shift)
    # Zero below diff_min: the output step then gives exactly the output minimum there, the
    # value the reference selects for those elements, so eval needs no select.
    exp = np.where(valid, exp_on_negative_values(rescaled, _SCALED_DIFF_INTEGER_BITS), 0)
    contrib = rounding_divide_by_pot(exp, _ACCUMULATION_INTEGER_BITS)
    for table in (exp, contrib, valid):
        table.setflags(write=False)
    return exp, contrib, valid


def _softmax_int8(rows: np.ndarray, data: SoftmaxOpData, out_bits: int) -> np.ndarray:
    """reference_ops::Softmax<int8_t, int8_t/int16_t> with the per-difference steps looked up
    in the prepare-time tables; the per-row sum and reciprocal as in the reference."""
    if data.exp_table is None or data.contrib_table is None or data.valid_table is None:
        return _softmax_int8_reference(rows, data, out_bits)
    if rows.shape[0] <= SMALL_ROWS:
        return _softmax_int8_small(rows, data.exp_table, data.contrib_table, out_bits)
    x = rows.astype(np.int64)
    index = x.max(axis=1, keepdims=True) - x  # 0..255
    exp = data.exp_table[index]
    sum_of_exps = wrap_int32(data.contrib_table[index].sum(axis=1))
    return _softmax_int8_output(exp, sum_of_exps, data.valid_table[index], out_bits)


def _softmax_int8_small(rows: np.ndarray, exp_table: np.ndarray, contrib_table: np.ndarray,
                        out_bits: int) -> np.ndarray:
    """:func:`_softmax_int8` for a few rows: the same arithmetic, with each row's GetReciprocal
    in Python integers (:func:`_reciprocal_scalar`) instead of some forty numpy passes, and the
    output step as in-place passes (all values are non-negative there, which makes
    SaturatingRoundingDoublingHighMul and RoundingDivideByPOT plain rounding shifts)."""
    index = rows.astype(np.intp)
    np.subtract(index.max(axis=1, keepdims=True), index, out=index)  # 0..255
    exp = exp_table[index]
    sums = contrib_table[index].sum(axis=1).tolist()
    out_min = -(1 << (out_bits - 1))
    scale: int | np.ndarray  # one row: Python ints; several rows: a column of int64 per row
    exponent: int | np.ndarray
    if len(sums) == 1:
        scale, exponent = _output_scaling(sums[0], out_bits)
    else:
        pairs = [_output_scaling(total, out_bits) for total in sums]
        scale = np.array([[p[0]] for p in pairs], dtype=np.int64)
        exponent = np.array([[p[1]] for p in pairs], dtype=np.int64)
    # SaturatingRoundingDoublingHighMul(scale, exp): scale and exp are in [0, 2**31), so the
    # product stays below 2**62 and never saturates.
    exp *= scale
    exp += 1 << 30
    exp >>= 31
    # RoundingDivideByPOT(., exponent) with exponent >= 1 (see _output_scaling) on x >= 0.
    exp += np.left_shift(1, exponent - 1)
    exp >>= exponent
    exp += out_min
    # Above out_min already (exp >= 0); an exp of 0 (below diff_min) gives out_min.
    np.minimum(exp, -out_min - 1, out=exp)
    return exp


def _output_scaling(sum_of_exps: int, out_bits: int) -> tuple[int, int]:
    """A row's reciprocal scale and output exponent from its accumulated exps.

    The sum includes the maximum's exp, RoundingDivideByPOT(INT32_MAX, 12) = 2**19, so it has at
    most 12 leading zeros and the exponent is at least 31 - 16 = 15.
    """
    shifted_scale, num_bits_over_unit = _reciprocal_scalar(_wrap32(sum_of_exps),
                                                           _ACCUMULATION_INTEGER_BITS)
    return shifted_scale, num_bits_over_unit + 31 - out_bits


# gemmlowp's fixed point on Python ints (one row's reciprocal): the forms of _fixedpoint and
# _quant, which hold int32 values in int64 and mirror gemmlowp's C, written for scalars.

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _wrap32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _srdhm(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul: the floor form of _quant's docstring, saturated."""
    return min((a * b + (1 << 30)) >> 31, _INT32_MAX)


def _mul_by_pot(x: int, exponent: int) -> int:
    """SaturatingRoundingMultiplyByPOT for exponent > 0: saturating left shift."""
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return _INT32_MAX
    if x < -threshold:
        return _INT32_MIN
    return _wrap32(x << exponent)


def _reciprocal_scalar(x: int, x_integer_digits: int) -> tuple[int, int]:
    """TFLM GetReciprocal on one int32 value: the Newton iteration of gemmlowp's
    one_over_one_plus_x_for_x_in_0_1 (as :func:`_fixedpoint.get_reciprocal`)."""
    u = x & 0xFFFFFFFF
    headroom_plus_one = 32 - u.bit_length()
    shifted = (u << headroom_plus_one) & 0xFFFFFFFF
    a = _wrap32(shifted - (1 << 31))
    # RoundingHalfSum(a, INT32_MAX): (a + b + 1) / 2 truncated, or (a + b - 1) / 2 below zero.
    total = a + _INT32_MAX
    half_denominator = (total + 1) >> 1 if total >= 0 else -((1 - total) >> 1)
    est = _wrap32(_FORTY_EIGHT_OVER_17 + _srdhm(half_denominator, _MINUS_32_OVER_17))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - _srdhm(half_denominator, est))
        est = _wrap32(est + _mul_by_pot(_srdhm(est, one_minus), 2))
    return _mul_by_pot(est, 1), x_integer_digits - headroom_plus_one


def _softmax_int8_reference(rows: np.ndarray, data: SoftmaxOpData, out_bits: int) -> np.ndarray:
    """reference_ops::Softmax<int8_t, int8_t/int16_t>: gemmlowp fixed-point exp and 1/sum."""
    x = rows.astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    valid = diff >= data.diff_min
    rescaled = multiply_by_quantized_multiplier_greater_than_one(
        diff, data.input_multiplier, data.input_left_shift)
    exp = exp_on_negative_values(rescaled, _SCALED_DIFF_INTEGER_BITS)
    contrib = np.where(valid, rounding_divide_by_pot(exp, _ACCUMULATION_INTEGER_BITS), 0)
    sum_of_exps = wrap_int32(contrib.sum(axis=1))
    return _softmax_int8_output(exp, sum_of_exps, valid, out_bits)


def _softmax_int8_output(exp: np.ndarray, sum_of_exps: np.ndarray, valid: np.ndarray,
                         out_bits: int) -> np.ndarray:
    """The end of reference_ops::Softmax<int8_t, ...>: each exp times the row's reciprocal sum
    (GetReciprocal), rescaled to ``out_bits`` and offset to the output range; differences below
    diff_min (``valid`` false) give the output minimum."""
    shifted_scale, num_bits_over_unit = get_reciprocal(sum_of_exps, _ACCUMULATION_INTEGER_BITS)
    exponent = num_bits_over_unit + 31 - out_bits
    unsat = rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shifted_scale[:, None], exp), exponent[:, None])
    out_min = -(1 << (out_bits - 1))
    out_max = (1 << (out_bits - 1)) - 1
    shifted = np.clip(unsat + out_min, out_min, out_max)
    return np.where(valid, shifted, out_min)


def _softmax_int16(rows: np.ndarray, data: SoftmaxOpData) -> np.ndarray:
    """reference_ops::SoftmaxInt16: exp LUT, Q16.15 sum, 1/(1+x) LUT, rounding rescale."""
    exp_lut, recip_lut = softmax_int16_luts()
    x = rows.astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(diff, data.input_multiplier, data.input_left_shift)
    sym = np.clip(scaled + 32767, -32768, 32767)
    exp = lut_lookup_int16(sym, exp_lut)
    sum_of_exps = wrap_int32(exp.sum(axis=1))
    headroom_plus_one = count_leading_zeros_u32(sum_of_exps)
    shifted_sum = ((sum_of_exps << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    sym_sum = np.clip(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal = lut_lookup_int16(sym_sum, recip_lut)
    right_shift = (31 - headroom_plus_one)[:, None]
    rounding = np.int64(1) << (right_shift - 1)
    result = (exp * reciprocal[:, None] + rounding) >> right_shift
    return np.clip(result, 0, 32767)


__all__ = ["SoftmaxOpData", "softmax", "softmax_op_data"]
