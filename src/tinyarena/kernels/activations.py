"""RELU and RELU6: TFLM's activations.cc / activations_common.cc / activations.h.

Types: float32, int8, int16 (int16 RELU needs zero points of 0).

RELU on quantized tensors requantizes from the input to the output scale
(MultiplyByQuantizedMultiplier with a multiplier computed from the ratio of the float32
scales, divided in double) and clamps at the output's zero point; RELU6 on quantized tensors
only clamps the raw input values to [input zero point, quantized 6.0], ignoring the output's
quantization.

Allocation: init allocates ``ReluOpData`` (28 bytes) or ``Relu6OpData`` (8 bytes); prepare
takes temp tensors: RELU input and output, RELU6 the input only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
    round_half_away,
    tensor_quant,
)
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
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16
_SUPPORTED = ((_F32, _F32), (_I8, _I8), (_I16, _I16))


@dataclass(frozen=True)
class ReluOpData:
    """ReluParams as CalculateReluOpData fills it."""

    type: TensorType
    input_offset: int = 0
    output_offset: int = 0
    output_multiplier: int = 0
    output_shift: int = 0
    act_min: int = 0
    act_max: int = 0


@dataclass(frozen=True)
class Relu6OpData:
    type: TensorType
    zero: int = 0
    six: int = 0


def relu_init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("ReluOpData"))


def relu6_init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("Relu6OpData"))


def relu_prepare(ctx: PrepareContext, op: Operator) -> ReluOpData:
    """ReluPrepare -> CalculateReluOpData<T>."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = checked_unary_io(ctx, op, "RELU", _SUPPORTED)
    if inp.type == _F32:
        return ReluOpData(inp.type)
    iq, oq = tensor_quant(inp), tensor_quant(out)
    if inp.type == _I16 and (iq.zero_point != 0 or oq.zero_point != 0):
        raise KernelError("int16 RELU needs zero points of 0 on input and output")
    # CalculateReluOpData: the wheel divides the widened scales in double, TFLM 90b983c2 in
    # float32 first (_tflm_version); they differ on rounding boundaries.
    ratio = scale_arithmetic(ctx.target).quotient(iq.scale, oq.scale)
    multiplier, shift = quantize_multiplier(ratio)
    qmin, qmax = qrange(NUMPY_DTYPES[out.type])
    act_min = max(qmin, oq.zero_point + round_half_away(float(np.float32(0.0))))
    return ReluOpData(inp.type, iq.zero_point, oq.zero_point, multiplier, shift, act_min, qmax)


def relu6_prepare(ctx: PrepareContext, op: Operator) -> Relu6OpData:
    """Relu6Prepare: the input's zero point and FloatToQuantizedType(6.0f)."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    inp, _ = checked_unary_io(ctx, op, "RELU6", _SUPPORTED)
    if inp.type == _F32:
        return Relu6OpData(inp.type)
    iq = tensor_quant(inp)
    qmin, qmax = qrange(NUMPY_DTYPES[inp.type])
    six_real = float(np.float32(6.0) / np.float32(iq.scale))
    six = min(max(round_half_away(six_real) + iq.zero_point, qmin), qmax)
    return Relu6OpData(inp.type, iq.zero_point, six)


@c_float_env
def relu_eval(ctx: EvalContext, op: Operator, data: ReluOpData) -> None:
    """ReluEval: ReluFloat or ReluQuantized<T>."""
    if data.type == _F32:
        map_unary(ctx, op, lambda v: np.where(v < 0, np.float32(0.0), v))
    else:
        map_unary(ctx, op, lambda v: relu_quantized(v, data))


def relu_quantized(x: np.ndarray, data: ReluOpData) -> np.ndarray:
    """ReluQuantized<T>: requantize to the output scale, clamp at the output zero point."""
    scaled = multiply_by_quantized_multiplier(x.astype(np.int64) - data.input_offset,
                                              data.output_multiplier, data.output_shift)
    return np.clip(scaled + data.output_offset, data.act_min, data.act_max)


@c_float_env
def relu6_eval(ctx: EvalContext, op: Operator, data: Relu6OpData) -> None:
    """Relu6Eval: Relu6Float or Relu6Quantized<T> (val > upper ? upper : max(val, lower))."""
    if data.type == _F32:
        lower, upper = np.float32(0.0), np.float32(6.0)
    else:
        lower, upper = data.zero, data.six
    map_unary(ctx, op, lambda v: np.where(v > upper, upper, np.where(v < lower, lower, v)))


def relu_bind(ctx: EvalContext, op: Operator, data: ReluOpData) -> Step | None:
    """int8: ReluQuantized as a 256-entry table (``_bound.unary_lut``); float32: the
    compiled loop (``_bound.float_unary``); else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "RELU")
    if data.type != _I8:
        return None
    return unary_lut(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                     lambda v: relu_quantized(v, data), ctx)


def relu6_bind(ctx: EvalContext, op: Operator, data: Relu6OpData) -> Step | None:
    """int8: Relu6Quantized as a 256-entry table (``_bound.unary_lut``); float32: the
    compiled loop (``_bound.float_unary``); else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "RELU6")
    if data.type != _I8:
        return None
    lower, upper = data.zero, data.six
    return unary_lut(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                     lambda v: np.where(v > upper, upper, np.where(v < lower, lower, v)), ctx)


REGISTRATIONS = {
    "RELU": Registration("RELU", init=relu_init, prepare=relu_prepare, eval=relu_eval,
                         bind=relu_bind),
    "RELU6": Registration("RELU6", init=relu6_init, prepare=relu6_prepare, eval=relu6_eval,
                          bind=relu6_bind),
}
