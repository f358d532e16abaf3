"""LEAKY_RELU: TFLM's leaky_relu.cc / leaky_relu_common.cc and reference/leaky_relu.h.

Types: float32, int8, int16. Quantized inputs are requantized with one of two multipliers:
input_scale/output_scale for x >= zero point, alpha * input_scale/output_scale otherwise (both
computed in double from the float32 scales and alpha, as the pinned wheel does). A negative
alpha multiplies by |multiplier| and negates.

Allocation: init allocates ``LeakyReluOpData`` (24 bytes); prepare takes two temp tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
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
from tinyarena.model.options import LeakyReluOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16
_SUPPORTED = ((_F32, _F32), (_I8, _I8), (_I16, _I16))


@dataclass(frozen=True)
class OpData:
    """LeakyReluOpData (plus alpha from the builtin params for the float path)."""

    type: TensorType
    alpha: float = 0.0
    output_multiplier_alpha: int = 0
    output_shift_alpha: int = 0
    output_multiplier_identity: int = 0
    output_shift_identity: int = 0
    input_zero_point: int = 0
    output_zero_point: int = 0


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("OpDataLeakyRelu"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """LeakyReluPrepare -> CalculateOpDataLeakyRelu."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = checked_unary_io(ctx, op, "LEAKY_RELU", _SUPPORTED)
    options = op.options if isinstance(op.options, LeakyReluOptions) else LeakyReluOptions()
    alpha = np.float32(options.alpha)
    if inp.type == _F32:
        return OpData(inp.type, float(alpha))
    iq, oq = tensor_quant(inp), tensor_quant(out)
    # CalculateOpDataLeakyRelu: in * alpha / out and in / out, in double on widened values
    # (the wheel) or in float32 (TFLM 90b983c2), see _tflm_version.
    sa = scale_arithmetic(ctx.target)
    alpha_mult, alpha_shift = quantize_multiplier(
        sa.quotient(sa.product(iq.scale, float(alpha)), oq.scale))
    id_mult, id_shift = quantize_multiplier(sa.quotient(iq.scale, oq.scale))
    return OpData(inp.type, float(alpha), alpha_mult, alpha_shift, id_mult, id_shift,
                  iq.zero_point, oq.zero_point)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """LeakyReluEval: reference_ops::LeakyRelu (float) or QuantizeLeakyRelu<T>."""
    if data.type == _F32:
        alpha = np.float32(data.alpha)
        map_unary(ctx, op, lambda v: np.where(v > 0, v, v * alpha))
    else:
        map_unary(ctx, op, lambda v: leaky_relu_quantized(v, data))


def leaky_relu_quantized(x: np.ndarray, data: OpData) -> np.ndarray:
    """QuantizeLeakyRelu<T>: identity or alpha multiplier by the sign of x - zero point."""
    v = x.astype(np.int64) - data.input_zero_point
    identity = multiply_by_quantized_multiplier(v, data.output_multiplier_identity,
                                                data.output_shift_identity)
    scaled_alpha = multiply_by_quantized_multiplier(
        v, abs(data.output_multiplier_alpha), data.output_shift_alpha)
    if data.output_multiplier_alpha < 0:  # negative alpha: |multiplier|, then negate
        scaled_alpha = -scaled_alpha
    qmin, qmax = qrange(NUMPY_DTYPES[data.type])
    return np.clip(np.where(v >= 0, identity, scaled_alpha) + data.output_zero_point,
                   qmin, qmax)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """int8: QuantizeLeakyRelu as a 256-entry table (``_bound.unary_lut``); float32: the
    compiled loop (``_bound.float_unary``); else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "LEAKY_RELU", alpha=data.alpha)
    if data.type != _I8:
        return None
    return unary_lut(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     lambda v: leaky_relu_quantized(v, data), ctx)


REGISTRATION = Registration("LEAKY_RELU", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteLeakyReluParams")
