"""DIV: TFLM's div.cc and reference/div.h.

Types: float32, int32 and int8 (quantized); the type is checked when the op runs (DivEval),
so a model TFLM allocates is always sized.

* float32: x1 / x2 (IEEE, one rounding), then the fused activation clamp (max then min; NaN
  passes, as std::max/std::min let it). Division by zero gives inf or NaN as in C.
* int32: C's truncating division, then the activation clamp. A zero divisor, or INT32_MIN / -1,
  traps (SIGFPE) in TFLM; here they raise KernelError instead of crashing.
* int8 (DivElementwise): both offsets applied, the signs moved so the divisor is positive,
  the divisor's reciprocal from GetReciprocal (Q0.31 plus a shift), the dividend normalised
  by its leading sign bits, multiplied (MultiplyByQuantizedMultiplierGreaterThanOne), then
  scaled by QuantizeMultiplier(s1 / (s2 * s_out)) (the scales combined as the target's TFLM
  version does: in double on the wheel, in float32 on 90b983c2; see ``div_params``) with the
  total shift, offset and clamped. A zero divisor (x2 at its zero point) is not checked by TFLM:
  its GetReciprocal(0) is ported with x86's shift masking.
  The 65536 possible input pairs are tabulated at prepare, so eval is one lookup per element.

Allocation: init allocates OpDataDiv (seven int32, 28 bytes); prepare takes input1, input2 and
the output as temp tensors; the parser allocates TfLiteDivParams (the activation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._binary_io import (
    BinaryShapes,
    activation_min_max,
    allocate_binary_temps,
    bind_float_binary,
    binary_shapes,
    binary_tensors,
    binary_views,
    int8_pairs,
    map_binary_blocks,
    same_types,
)
from tinyarena.kernels._fixedpoint import count_leading_zeros_u32, get_reciprocal
from tinyarena.kernels import native
from tinyarena.kernels._elementwise import broadcast_plan
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    INT32_MIN,
    calculate_activation_range_float,
    calculate_activation_range_int,
    calculate_activation_range_quantized,
    multiply_by_quantized_multiplier_greater_than_one,
    quantize_multiplier,
    saturating_rounding_doubling_high_mul,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels._tflm_version import WHEEL, ScaleArithmetic, scale_arithmetic
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.options import DivOptions
from tinyarena.model.types import Operator, TensorType


@dataclass(frozen=True)
class DivParams:
    """OpDataDiv's quantized fields (int8 only)."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    act_min: int
    act_max: int
    multiplier: int
    shift: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    shapes: BinaryShapes
    activation: str
    table: int = -1  # int8: workspace handle of the (256, 256) result table


def count_leading_sign_bits(x: np.ndarray) -> np.ndarray:
    """CountLeadingSignBits<int32> (GCC's __builtin_clrsb; 31 for zero)."""
    x = np.asarray(x, np.int64)
    return count_leading_zeros_u32(np.where(x >= 0, x, ~x)) - 1


def quantized_div(x1: np.ndarray, x2: np.ndarray, p: DivParams) -> np.ndarray:
    """DivElementwise's per-element arithmetic, vectorised (int64 holding int32 values)."""
    a = np.asarray(x1, np.int64) + p.input1_offset
    b = np.asarray(x2, np.int64) + p.input2_offset
    a, b = np.broadcast_arrays(a, b)
    flip = b < 0
    a = np.where(flip, -a, a)
    b = np.where(flip, -b, b)
    inv, recip_shift = get_reciprocal(b, 31)
    headroom = count_leading_sign_bits(a)
    unscaled = multiply_by_quantized_multiplier_greater_than_one(a, inv, headroom)
    total_shift = p.shift - recip_shift - headroom
    scaled = rounding_divide_by_pot_x86(saturating_rounding_doubling_high_mul(
        unscaled, p.multiplier), -total_shift)
    result = wrap_int32(p.output_offset + scaled)
    return np.clip(result, p.act_min, p.act_max)


def rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT<int32> for any exponent, as the wheel's x86-64 code runs it.

    DivElementwise's total shift can leave 0..31 (a dividend with 31 sign bits and a large
    divisor), which the C code does not guard: the mask ``(1ll << e) - 1`` is computed with the
    64-bit shift count masked to 6 bits and truncated to int32, and ``x >> e`` with the count
    masked to 5 bits. Inside 0..31 this is the ordinary rounding shift.
    """
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    k = e & 63
    mask = np.where(k >= 32, -1, (np.int64(1) << np.minimum(k, 31)) - 1)
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> (e & 31)) + (remainder > threshold)


def div_params(in1_q: tuple[float, int], in2_q: tuple[float, int], out_q: tuple[float, int],
               activation: str, arith: ScaleArithmetic = WHEEL) -> DivParams:
    """CalculateOpDataDiv for int8. The scales are combined as the target's TFLM version does
    (``_tflm_version``): the wheel's results are those of double arithmetic (measured: scales
    whose float32 quotient rounds to another multiplier give the double one's outputs), while
    div.cc at 90b983c2, the Cortex-M builds' commit, spells it in float."""
    act_min, act_max = calculate_activation_range_quantized(activation, out_q[0], out_q[1],
                                                            np.int8)
    s1, s2, so = (np.float32(s) for s in (in1_q[0], in2_q[0], out_q[0]))
    with np.errstate(all="ignore"):  # zero scales give inf, as in C
        real = arith.quotient(float(s1), arith.product(float(s2), float(so)))
    multiplier, shift = quantize_multiplier(real)
    return DivParams(-in1_q[1], -in2_q[1], out_q[1], act_min, act_max, multiplier, shift)


def init(ctx: InitContext, op: Operator) -> None:
    """DivInit: the OpDataDiv."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataDiv"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """DivPrepare: the three temp tensors, then CalculateOpDataDiv."""
    allocate_binary_temps(ctx, op)
    in1, in2, out = binary_tensors(ctx, op)
    same_types(op, in1, in2, out)
    shapes = binary_shapes(op, in1, in2, out)
    options = op.options if isinstance(op.options, DivOptions) else DivOptions()
    activation = options.fused_activation_function
    if out.type == TensorType.INT32:
        for t in (in1, in2):
            if t.quantization is not None and len(t.quantization.scale):
                raise KernelError(f"int32 DIV needs unquantized inputs; tensor {t.name!r} has "
                                  "quantization parameters (TFLM refuses them)")
    if out.type != TensorType.INT8:
        return OpData(out.type, shapes, activation)
    params = div_params(tensor_quant(in1), tensor_quant(in2), tensor_quant(out), activation,
                        scale_arithmetic(ctx.target))
    a, b = int8_pairs()
    table = quantized_div(a, b, params).astype(np.int8)
    handle = ctx.request_workspace(table.shape, np.int8, initial=table)
    return OpData(out.type, shapes, activation, handle)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """DivEval: switch on the output type."""
    x1, x2, out = binary_views(ctx, op, data.shapes)
    if data.type == TensorType.FLOAT32:
        lo, hi = calculate_activation_range_float(data.activation)
        map_binary_blocks(lambda a, b: activation_min_max(np.divide(a, b, dtype=np.float32),
                                                          lo, hi), x1, x2, out)
    elif data.type == TensorType.INT32:
        lo_i, hi_i = calculate_activation_range_int(data.activation, np.int32)
        map_binary_blocks(lambda a, b: np.clip(int32_divide(a, b), lo_i, hi_i), x1, x2, out)
    elif data.type == TensorType.INT8:
        table = ctx.workspace(data.table)
        map_binary_blocks(lambda a, b: table[a.view(np.uint8), b.view(np.uint8)], x1, x2, out)
    else:
        raise KernelError(f"DIV supports float32, int32 and int8 in TFLM, not "
                          f"{data.type.name.lower()}")


_TRAP = ("int32 DIV by zero (or INT32_MIN / -1): TFLM traps on it; keep the divisor "
         "non-zero")


def int32_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's int32 division (truncating); KernelError where TFLM would trap (SIGFPE)."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    if np.any(b64 == 0) or np.any((a64 == INT32_MIN) & (b64 == -1)):
        raise KernelError(_TRAP)
    return np.abs(a64) // np.abs(b64) * np.sign(a64) * np.sign(b64)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """With compiled kernels on: float32 as ``native.float_binary``'s quotient and clamp
    (``_binary_io.bind_float_binary``); the integer types in ``native.binary``: int8 looks its
    pairs up in the prepared table, int32 divides (raising where TFLM traps); else eval."""
    if data.type == TensorType.FLOAT32:
        lo_f, hi_f = calculate_activation_range_float(data.activation)
        return bind_float_binary(ctx, op, data.shapes, lo_f, hi_f)
    if data.type not in (TensorType.INT8, TensorType.INT32) or not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.binary import bind_divide_int32, bind_table_binary

    plan = broadcast_plan(data.shapes.shape1, data.shapes.shape2)
    x1 = ctx.tensor_data(op.inputs[0])
    x2 = ctx.tensor_data(op.inputs[1])
    out = ctx.tensor_data(op.outputs[0])
    if data.type == TensorType.INT8:
        table = ctx.workspace(data.table)
        if not table.flags.c_contiguous:
            return None
        return bind_table_binary(table.reshape(-1), x1, x2, out, plan.shape1, plan.shape2,
                                 plan.shape_out)
    lo, hi = calculate_activation_range_int(data.activation, np.int32)
    return bind_divide_int32(x1, x2, out, int(lo), int(hi), plan.shape1, plan.shape2,
                             plan.shape_out, _TRAP)


REGISTRATION = Registration("DIV", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteDivParams")
