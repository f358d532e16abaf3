"""ABS, SIN, COS, LOG, SQRT, RSQRT, SQUARE, LOGICAL_NOT: TFLM's elementwise.cc.

Types: ABS float32, int8 and int16 (int16 either quantized, with zero points 0, or plain
integers); RSQRT float32, int8 and int16 (the repository snapshot's IsRsqrtSupportedType
refuses int16, the pinned wheel accepts it and runs RsqrtEvalQuantized<int16_t>); SIN, COS,
LOG, SQRT, SQUARE float32 only; LOGICAL_NOT bool. (NEG lives in TFLM's neg.cc, not here.)

Arithmetic:

* quantized ABS (AbsEvalQuantized): |x - input zero point|, rescaled by input_scale /
  output_scale only when the scales differ, plus the output zero point, clamped.
* quantized RSQRT (RsqrtEvalQuantized, int8 and int16): the integer inverse square root
  GetInvSqrtQuantizedMultiplierExp of x - input zero point, applied to 1 shifted left by 20,
  then rescaled by 1 / (sqrt(input_scale) * output_scale) and shifted back; a zero input gives
  the type's maximum, a negative one (x below the zero point) fails the invoke.
* float32: SQRT is IEEE sqrt and RSQRT is 1.0f / sqrtf(x), both correctly rounded, as numpy's
  float32 ufuncs are; SQUARE is one float32 multiply; ABS is fabsf. SIN, COS and LOG call the
  C library's sinf/cosf/logf: they are computed here in float64 and rounded to float32 (the
  correctly rounded result; see the test module for the ulp bound measured against the wheel).

The int8 paths (256 possible inputs) are lookup tables built at prepare with the vectorised
arithmetic, so eval is one gather per element.

Allocation: ABS and RSQRT allocate ``OpDataAbsRsqrt`` (28 bytes) in init; every op takes two
temp tensors (input, output) in prepare; no builtin options struct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import count_leading_zeros_u32, mul, rescale
from tinyarena.kernels._quant import (
    INT32_MAX,
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
    rounding_divide_by_pot,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels._tflm_version import WHEEL, ScaleArithmetic, scale_arithmetic
from tinyarena.kernels._unary import map_chunks
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8, _I16, _BOOL = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.BOOL

# IsAbsSupportedType, IsRsqrtSupportedType, IsNumericSupportedType, IsLogicalSupportedType
SUPPORTED: dict[str, tuple[TensorType, ...]] = {
    "ABS": (_F32, _I8, _I16),
    "RSQRT": (_F32, _I8, _I16),
    "SIN": (_F32,),
    "COS": (_F32,),
    "LOG": (_F32,),
    "SQRT": (_F32,),
    "SQUARE": (_F32,),
    "LOGICAL_NOT": (_BOOL,),
}

# RsqrtEvalQuantized's kShift: 1 << 20 keeps the inverse square root an integer.
_RSQRT_SHIFT = 20


@dataclass(frozen=True)
class OpData:
    """OpDataAbsRsqrt (for ABS and RSQRT), plus the op name and the int8 lookup table."""

    op: str
    type: TensorType
    quantized: bool = False
    multiplier: int = 0
    shift: int = 0
    input_offset: int = 0
    output_offset: int = 0
    needs_rescale: bool = False
    table: int = -1  # workspace handle of the int8 table indexed by uint8(x), or -1


def _first_quant(t: Tensor) -> tuple[float, int] | None:
    """The tensor's params, or None if unquantized (TFLM marks a tensor quantized when its
    flatbuffer quantization has a non-empty scale list)."""
    q = t.quantization
    return None if q is None or len(q.scale) == 0 else tensor_quant(t)


def abs_multiplier(input_scale: float, output_scale: float,
                   arithmetic: ScaleArithmetic = WHEEL) -> tuple[int, int]:
    """SetAbsOutputMultiplier: QuantizeMultiplier(input_scale / output_scale).

    The quotient of the two float32 scales is taken in double by the wheel (8f6596d:
    tests/kernels/test_elementwise_unary.py checks it on scales where they differ) and in
    float32 by TFLM 90b983c2; ``arithmetic`` is the target's (``_tflm_version``).
    """
    return quantize_multiplier(arithmetic.quotient(input_scale, output_scale))


def rsqrt_multiplier(input_scale: float, output_scale: float,
                     arithmetic: ScaleArithmetic = WHEEL) -> tuple[int, int]:
    """SetRsqrtOutputMultiplier: QuantizeMultiplier(1 / (sqrt(input_scale) * output_scale)).

    sqrt and the product in double (the wheel) or float32 (TFLM 90b983c2), as for ABS; the
    reciprocal is in double in both.
    """
    sa = arithmetic
    return quantize_multiplier(1.0 / sa.product(sa.sqrt(input_scale), output_scale))


def inv_sqrt_quantized_multiplier_exp(value: np.ndarray,
                                      reverse_shift: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """GetInvSqrtQuantizedMultiplierExp, vectorised over int32 values >= 0 (common.h).

    Values 0 and 1 give (INT32_MAX, 0). Others are normalised into [2**27, 2**29) by pairs of
    bits, and 1/sqrt is found by five Newton-Raphson steps in Q3.28 fixed point starting from
    1, scaled by sqrt(2)/2; a negative exponent is folded into the multiplier (wrapping, as the
    C shift does). Returns (multiplier, shift) as int64 arrays, the shift times reverse_shift.
    """
    v = np.asarray(value, dtype=np.int64)
    small = v <= 1
    x_in = np.where(small, 2, v)
    out_shift = np.full(x_in.shape, 11, dtype=np.int64)
    for _ in range(2):  # int32 inputs need at most two divisions by 4 to fall below 2**29
        big = x_in >= (1 << 29)
        x_in = np.where(big, x_in // 4, x_in)
        out_shift += big
    pairs = (count_leading_zeros_u32(x_in) - 1) // 2 - 1
    out_shift -= pairs
    x_in = x_in << (2 * pairs)
    # the F3 input (raw x >> 1) halved by SaturatingRoundingMultiplyByPOT<-1>
    half_input = rounding_divide_by_pot(x_in >> 1, 1)
    half_three = (1 << 28) + (1 << 27)  # 1.5 in Q3.28
    x = np.full(x_in.shape, 1 << 28, dtype=np.int64)  # F3::One()
    for _ in range(5):
        x3 = rescale(mul(mul(x, x), x), 9, 3)
        x = rescale(wrap_int32(mul(half_three, x) - mul(half_input, x3)), 6, 3)
    x = mul(x, 1518500250)  # sqrt(2)/2 in Q0.31
    negative = out_shift < 0
    x = np.where(negative, wrap_int32(x << np.where(negative, -out_shift, 0)), x)
    out_shift = np.where(negative, 0, out_shift)
    x = np.where(small, INT32_MAX, x)
    out_shift = np.where(small, 0, out_shift)
    return x, out_shift * reverse_shift


def abs_quantized(x: np.ndarray, data: OpData) -> np.ndarray:
    """AbsEvalQuantized<T>: |x - zp_in|, rescaled when the scales differ, + zp_out, clamped."""
    value = np.abs(x.astype(np.int64) - data.input_offset)
    if data.needs_rescale:
        value = multiply_by_quantized_multiplier(value, data.multiplier, data.shift)
    lo, hi = qrange(NUMPY_DTYPES[data.type])
    return np.clip(value + data.output_offset, lo, hi)


def rsqrt_quantized(x: np.ndarray, data: OpData) -> np.ndarray:
    """RsqrtEvalQuantized<T> for values at or above the zero point (validate_input_func
    rejects the others before this runs)."""
    value = x.astype(np.int64) - data.input_offset
    inv_mult, inv_shift = inv_sqrt_quantized_multiplier_exp(np.maximum(value, 0))
    scaled = multiply_by_quantized_multiplier(np.ones_like(value), inv_mult,
                                              inv_shift + _RSQRT_SHIFT)
    out = multiply_by_quantized_multiplier(scaled, data.multiplier,
                                           data.shift - _RSQRT_SHIFT) + data.output_offset
    lo, hi = qrange(NUMPY_DTYPES[data.type])
    return np.where(value == 0, hi, np.clip(out, lo, hi))


def _int8_table(fn: Callable[[np.ndarray, OpData], np.ndarray], data: OpData) -> np.ndarray:
    """fn over all 256 int8 values, indexed by their uint8 bit pattern."""
    values = np.arange(256, dtype=np.uint8).view(np.int8)
    return fn(values, data).astype(np.int8)


def init(ctx: InitContext, op: Operator) -> None:
    """ElementWiseAbsRsqrtInit (ABS, RSQRT only): the OpDataAbsRsqrt."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataAbsRsqrt"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """GenericPrepare / PrepareAbsRsqrt: temp input then output tensor, type checks, and for
    quantized ABS/RSQRT the offsets and the multiplier."""
    name = op.name
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"{name} takes exactly one input and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError(f"{name} needs an input and an output tensor")
    if inp.type != out.type:
        raise KernelError(f"{name}: input type {inp.type.name.lower()} differs from output type "
                          f"{out.type.name.lower()}; TFLM requires them equal")
    allowed = SUPPORTED[name]
    if inp.type not in allowed:
        names = ", ".join(t.name.lower() for t in allowed)
        raise KernelError(f"{name} does not support {inp.type.name.lower()} in TFLM; "
                          f"supported: {names}")
    if inp.element_count != out.element_count:
        raise KernelError(f"{name}: input shape {inp.shape} and output shape {out.shape} have "
                          "different element counts; fix the output tensor's shape")
    iq = _first_quant(inp)
    if name == "RSQRT" and inp.type == _I16 and iq is None:
        # Prepare sets no parameters for an unquantized int16 input, yet RsqrtEval runs the
        # quantized arithmetic: with the wheel's zeroed OpData every output is 0, except the
        # maximum for a zero input (the tests check this against the wheel).
        return OpData(name, inp.type, True)
    if name not in ("ABS", "RSQRT") or inp.type == _F32 or (inp.type == _I16 and iq is None):
        return OpData(name, inp.type)
    oq = _first_quant(out)
    if iq is None or oq is None:
        raise KernelError(f"{inp.type.name.lower()} {name} needs per-tensor quantization "
                          "(scale, zero point) on both input and output")
    (s_in, zp_in), (s_out, zp_out) = iq, oq
    if inp.type == _I16 and (zp_in != 0 or zp_out != 0):
        raise KernelError(f"int16 {name} needs zero points of 0 (got {zp_in} and {zp_out})")
    needs_rescale = s_in != s_out
    mult, shift = 0, 0
    if name == "ABS" and needs_rescale:
        mult, shift = abs_multiplier(s_in, s_out, scale_arithmetic(ctx.target))
    elif name == "RSQRT":
        mult, shift = rsqrt_multiplier(s_in, s_out, scale_arithmetic(ctx.target))
    data = OpData(name, inp.type, True, mult, shift, zp_in, zp_out, needs_rescale)
    if inp.type != _I8:
        return data
    table = _int8_table(abs_quantized if name == "ABS" else rsqrt_quantized, data)
    handle = ctx.request_workspace(table.shape, np.int8, initial=table)
    return OpData(name, inp.type, True, mult, shift, zp_in, zp_out, needs_rescale, handle)


def _float_libm(fn: np.ufunc) -> Callable[[np.ndarray], np.ndarray]:
    """sinf/cosf/logf: the float64 function rounded once to float32. Outside the domain
    (log of a negative number or -inf, sin or cos of an infinity) glibc returns the x86
    default NaN, whose sign bit is set; a NaN input comes back as it went in (quieted)."""
    def apply(v: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            y = fn(v.astype(np.float64)).astype(np.float32)
        invalid = np.isnan(y) & ~np.isnan(v)
        return np.where(invalid, _DEFAULT_NAN, y) if invalid.any() else y
    return apply


_DEFAULT_NAN = np.array([0xFFC00000], np.uint32).view(np.float32)[0]


_LIBM: dict[str, np.ufunc] = {"SIN": np.sin, "COS": np.cos, "LOG": np.log}


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """AbsEval, SinEval, CosEval, LogEval, SqrtEval, RsqrtEval, SquareEval, LogicalNotEval."""
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    name = data.op
    if data.type == _BOOL:
        np.logical_not(x, out=out.reshape(x.shape))
        return
    if data.type == _F32:
        dst = out.reshape(x.shape)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if name == "ABS":
                np.abs(x, out=dst)
            elif name == "SQRT":
                np.sqrt(x, out=dst)
            elif name == "RSQRT":
                np.sqrt(x, out=dst)
                np.divide(np.float32(1.0), dst, out=dst)
            elif name == "SQUARE":
                np.multiply(x, x, out=dst)
            else:
                map_chunks(_float_libm(_LIBM[name]), x, out)
        return
    if name == "RSQRT" and x.min() < data.input_offset:
        raise KernelError("RSQRT is only defined for inputs at or above the zero point "
                          f"({data.input_offset}); TFLM fails the invoke on negative values")
    if data.table >= 0:  # int8: table lookup by bit pattern, in blocks (take makes intp indices)
        table = ctx.workspace(data.table)
        map_chunks(lambda v: table[v.view(np.uint8)], x, out)
        return
    if not data.quantized:  # int16 ABS without quantization: std::abs, cast back to int16
        np.abs(x, out=out.reshape(x.shape))  # wraps -32768 to itself, as the cast does
        return
    fn = abs_quantized if name == "ABS" else rsqrt_quantized
    map_chunks(lambda v: fn(v, data), x, out)


REGISTRATIONS: dict[str, Registration] = {
    name: Registration(name, init=init if name in ("ABS", "RSQRT") else None, prepare=prepare,
                       eval=eval_, builtin_data=None)
    for name in SUPPORTED
}
