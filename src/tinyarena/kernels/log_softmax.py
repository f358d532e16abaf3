"""LOG_SOFTMAX: TFLM's log_softmax.cc and reference/log_softmax.h, over the last axis.

Types: float32 and int8 (checked when the op runs; int8 parameters are set in Prepare).

* float32: max = std::max over the row from the lowest float (NaNs skipped), the sum of
  expf(x - max) left to right in float32 (glibc's expf, ported bit for bit), log_sum =
  logf(sum), then (x - max) - log_sum. logf is taken as the float64 log rounded to float32,
  which is glibc's logf except on rare inputs (1 ulp of log_sum; see the tests).
* int8 (LogSoftmaxQuantized): output scale 16/256 and zero point 127 are required. Per row,
  diffs to the row maximum are scaled to Q5.26 (PreprocessLogSoftmaxScalingExp, beta 1), the
  exps (exp_on_negative_values) summed in Q12.19, log_x_for_x_greater_than_or_equal_to_1
  gives the log in Q5.26, and each output is (diff - log) rounded to Q4 + 127, clamped; diffs
  below the adjusted diff_min give -128.

Allocation: LogSoftmaxPrepare takes input and output as temp tensors and, for int8 only,
allocates LogSoftmaxOpData (five int32 and two size_t) persistently; no Init, no builtin
options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import (
    count_leading_zeros_u32,
    exp_on_negative_values,
    mul,
    one_over_one_plus_x_for_x_in_0_1,
    rescale,
    rounding_half_sum,
)
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._libm import expf_for
from tinyarena.kernels._quant import (
    INT32_MAX,
    INT32_MIN,
    calculate_input_radius,
    multiply_by_quantized_multiplier,
    quantize_multiplier_smaller_than_one_exp,
    rounding_divide_by_pot,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels._softmax_math import _preprocess_softmax_scaling
from tinyarena.kernels._unary import map_row_chunks
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
INPUT_INTEGER_BITS = 5  # kScaledDiffIntegerBits / kInputIntegerBits
ACCUMULATION_INTEGER_BITS = 12
OUTPUT_INTEGER_BITS = 4
OUTPUT_SCALE = np.float32(16.0 / 256)
OUTPUT_ZERO_POINT = 127

# log_x_for_x_greater_than_or_equal_to_1_impl's Q0.31 constants
_LOG_2 = 1488522236
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 536870912
_ALPHA_N = 117049297
_ALPHA_D = 127690142
_ALPHA_I = 1057819769
_ALPHA_F = 638450708


@dataclass(frozen=True)
class QuantParams:
    """LogSoftmaxOpData's arithmetic fields."""

    input_multiplier: int
    input_left_shift: int
    reverse_scaling_divisor: int
    reverse_scaling_right_shift: int
    diff_min: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    depth: int
    params: QuantParams | None
    libm: str = "glibc"  # float: the build's C library (std::exp)


def _srmpot_param(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOTParam for exponents >= 0 (a saturating left shift)."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    threshold = (np.int64(1) << (31 - e)) - 1
    result = wrap_int32(x << e)
    result = np.where(x > threshold, INT32_MAX, result)
    result = np.where(x < -threshold, INT32_MIN, result)
    return np.where(e == 0, x, result)


def _saturate(x: np.ndarray) -> np.ndarray:
    return np.clip(x, INT32_MIN, INT32_MAX)


def log_x_for_x_greater_than_or_equal_to_1(x: np.ndarray, input_bits: int,
                                           output_bits: int) -> np.ndarray:
    """log(x) for positive FixedPoint<int32, input_bits> raws, FixedPoint<int32, output_bits>
    out (common.h log_x_for_x_greater_than_or_equal_to_1_impl)."""
    accum = output_bits + 1
    shifted_quarter = rescale(np.int64(_ONE_QUARTER), 0, accum)
    z_a = np.asarray(x, np.int64)
    z_a_headroom_plus_1 = count_leading_zeros_u32(z_a)
    r_a_tmp = _srmpot_param(z_a, z_a_headroom_plus_1 - 1)
    r_a_raw = _srmpot_param(mul(r_a_tmp, _SQRT_HALF), 1)
    z_a_pow_2_adj = _saturate(_srmpot_param(input_bits - z_a_headroom_plus_1, 31 - accum)
                              + shifted_quarter)
    z_b = mul(z_a, _SQRT_HALF)
    z_b_headroom = count_leading_zeros_u32(z_b) - 1
    r_b_raw = _srmpot_param(z_a, z_b_headroom)
    z_b_pow_2_adj = _saturate(_srmpot_param(input_bits - z_b_headroom, 31 - accum)
                              - shifted_quarter)
    r = np.minimum(r_a_raw, r_b_raw)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = wrap_int32(r - _SQRT_SQRT_HALF)
    q = wrap_int32(q + q)
    common_sq = mul(q, q)
    num = wrap_int32(mul(q, r) + mul(mul(q, common_sq), _ALPHA_N))
    denom_minus_one = wrap_int32(
        mul(p, wrap_int32(wrap_int32(_ALPHA_I + q) + mul(_ALPHA_D, common_sq)))
        + mul(_ALPHA_F, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rescale(num, 0, accum)
    total = wrap_int32(mul(z_pow_2_adj, _LOG_2) + mul(num_scaled, recip_denom))
    return rescale(total, accum, output_bits)


def quant_params(input_scale: float) -> QuantParams:
    """CalculateOpData's int8 branch: PreprocessLogSoftmaxScalingExp and the diff_min."""
    multiplier, left_shift = _preprocess_softmax_scaling(1.0, float(np.float32(input_scale)))
    real_reverse = (1 << (31 - left_shift)) / float(multiplier)
    divisor, reverse_left_shift = quantize_multiplier_smaller_than_one_exp(real_reverse)
    diff_min = -calculate_input_radius(INPUT_INTEGER_BITS, left_shift)
    return QuantParams(multiplier, left_shift, divisor, -reverse_left_shift, diff_min)


def log_softmax_int8(rows: np.ndarray, p: QuantParams) -> np.ndarray:
    """LogSoftmaxQuantized<int8_t> on (outer, depth) rows."""
    x = rows.astype(np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    diff_q5 = multiply_by_quantized_multiplier(diff, p.input_multiplier, p.input_left_shift)
    exps = rescale(exp_on_negative_values(diff_q5, INPUT_INTEGER_BITS), 0,
                   ACCUMULATION_INTEGER_BITS)
    sum_q12 = wrap_int32(np.sum(np.where(diff >= p.diff_min, exps, 0), axis=1, keepdims=True))
    log_sum_q5 = log_x_for_x_greater_than_or_equal_to_1(sum_q12, ACCUMULATION_INTEGER_BITS,
                                                        INPUT_INTEGER_BITS)
    shifted = wrap_int32(log_sum_q5 + INT32_MIN)
    adjusted_diff_min = np.maximum(p.diff_min - 1, multiply_by_quantized_multiplier(
        shifted, p.reverse_scaling_divisor, -p.reverse_scaling_right_shift))
    out = rounding_divide_by_pot(wrap_int32(diff_q5 - log_sum_q5),
                                 31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS) + 127
    out = np.clip(out, -128, 127)
    return np.where(diff > adjusted_diff_min, out, -128).astype(np.int8)


def log_softmax_float(rows: np.ndarray, libm: str = "glibc") -> np.ndarray:
    """reference_ops::LogSoftmax<float> on (outer, depth) rows; ``libm``: the build's C
    library, whose expf std::exp calls (``_libm.expf_for``)."""
    f32 = np.float32
    row_max = np.fmax(np.fmax.reduce(rows, axis=1, keepdims=True), np.finfo(f32).min)
    shifted = np.subtract(rows, row_max, dtype=f32)
    total = np.cumsum(expf_for(libm)(shifted), axis=1, dtype=f32)[:, -1:]
    log_sum = np.log(total.astype(np.float64)).astype(f32)
    return np.subtract(shifted, log_sum, dtype=f32)


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """LogSoftmaxPrepare (CalculateOpData)."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"LOG_SOFTMAX takes one input and one output; got {len(op.inputs)} "
                          f"and {len(op.outputs)}")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError("LOG_SOFTMAX needs an input and an output tensor")
    if inp.type != out.type or tuple(inp.shape) != tuple(out.shape):
        raise KernelError(f"LOG_SOFTMAX: input {inp.type.name.lower()}{inp.shape} and output "
                          f"{out.type.name.lower()}{out.shape} must have one type and shape")
    depth = int(inp.shape[-1]) if len(inp.shape) else 1
    if inp.type != TensorType.INT8:
        return OpData(inp.type, depth, None, str(getattr(ctx.target, "libm", "glibc")))
    ctx.allocate_persistent(ctx.target.sizeof("LogSoftmaxOpData"))
    out_q = tensor_quant(out)
    if np.float32(out_q.scale) != OUTPUT_SCALE or out_q.zero_point != OUTPUT_ZERO_POINT:
        raise KernelError("int8 LOG_SOFTMAX needs the output scale 16/256 and zero point 127 "
                          f"(TFLM requires them); got {out_q.scale} and {out_q.zero_point}")
    return OpData(inp.type, depth, quant_params(tensor_quant(inp).scale))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """LogSoftmaxEval."""
    x, out = ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT])
    depth = max(data.depth, 1)
    rows, out_rows = x.reshape(-1, depth), out.reshape(-1, depth)
    if data.type == TensorType.FLOAT32:
        map_row_chunks(lambda r: log_softmax_float(r, data.libm), rows, out_rows)
    elif data.type == TensorType.INT8 and data.params is not None:
        params = data.params
        map_row_chunks(lambda r: log_softmax_int8(r, params), rows, out_rows)
    else:
        raise KernelError("LOG_SOFTMAX supports float32 and int8 in TFLM, not "
                          f"{data.type.name.lower()}")


REGISTRATION = Registration("LOG_SOFTMAX", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
