"""PRELU: TFLM's prelu.cc, prelu_common.cc and reference/prelu.h.

Types: float32 (alpha float32), int8 (alpha int8), int16 (alpha int8); checked when the op
runs (PreluEval), except the int16 output's int8 alpha, which Prepare requires.

* float32 (BroadcastPrelu4DSlowFloat): ``x >= 0 ? x : x * alpha`` (so -0.0 and NaN pass as
  they are), alpha broadcast against the input, at most 4-D.
* int8 / int16 (BroadcastPrelu4DSlow): x + input offset; a non-negative value is scaled by
  QuantizeMultiplier(s_in / s_out), a negative one multiplied by (alpha + alpha offset) and
  scaled by QuantizeMultiplier(s_in * s_alpha / s_out) (doubles from the float32 scales); plus
  the output zero point, clamped to the type.

Allocation: init allocates PreluParams (seven int32: 28 bytes on every profile); prepare takes
input, alpha and output as temp tensors; no builtin options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._binary_io import (
    BinaryShapes,
    allocate_binary_temps,
    binary_shapes,
    binary_tensors,
    binary_views,
    map_binary_blocks,
)
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
    tensor_quant,
)
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

FLOAT_MAX_RANK = 4  # BroadcastPrelu4DSlowFloat extends every shape to 4-D


@dataclass(frozen=True)
class PreluParams:
    input_offset: int
    alpha_offset: int
    output_offset: int
    multiplier_1: int
    shift_1: int
    multiplier_2: int
    shift_2: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    alpha_type: TensorType
    shapes: BinaryShapes
    params: PreluParams | None


def prelu_params(s_in: float, s_alpha: float, s_out: float, zp_in: int, zp_alpha: int,
                 zp_out: int) -> PreluParams:
    """CalculatePreluParams."""
    s_in, s_alpha, s_out = (float(np.float32(s)) for s in (s_in, s_alpha, s_out))
    m1, sh1 = quantize_multiplier(s_in / s_out)
    m2, sh2 = quantize_multiplier(s_in * s_alpha / s_out)
    return PreluParams(-zp_in, -zp_alpha, zp_out, m1, sh1, m2, sh2)


def quantized_prelu(x: np.ndarray, alpha: np.ndarray, p: PreluParams,
                    dtype: np.dtype) -> np.ndarray:
    """The reference lambda, vectorised over the broadcast pair."""
    value = np.asarray(x, np.int64) + p.input_offset
    alpha_value = np.asarray(alpha, np.int64) + p.alpha_offset
    value, alpha_value = np.broadcast_arrays(value, alpha_value)
    positive = multiply_by_quantized_multiplier(value, p.multiplier_1, p.shift_1)
    negative = multiply_by_quantized_multiplier(value * alpha_value, p.multiplier_2, p.shift_2)
    out = np.where(value >= 0, positive, negative) + p.output_offset
    lo, hi = qrange(dtype)
    return np.clip(out, lo, hi)


def init(ctx: InitContext, op: Operator) -> None:
    """PreluInit: the PreluParams."""
    ctx.allocate_persistent(ctx.target.sizeof("PreluParams"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """PreluPrepare: temps input, alpha, output; the quantized parameters."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"PRELU takes an input and an alpha tensor and one output; got "
                          f"{len(op.inputs)} inputs and {len(op.outputs)} outputs")
    allocate_binary_temps(ctx, op)
    inp, alpha, out = binary_tensors(ctx, op)
    shapes = binary_shapes(op, inp, alpha, out)
    params = None
    if out.type in (TensorType.INT8, TensorType.INT16):
        (s_in, zp_in), (s_a, zp_a), (s_out, zp_out) = (tensor_quant(t) for t in (inp, alpha, out))
        params = prelu_params(s_in, s_a, s_out, zp_in, zp_a, zp_out)
        if out.type == TensorType.INT16 and alpha.type != TensorType.INT8:
            raise KernelError("int16 PRELU needs an int8 alpha tensor (TFLM requires it); got "
                              f"{alpha.type.name.lower()}")
    return OpData(inp.type, alpha.type, shapes, params)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """PreluEval: switch on the input type."""
    x, alpha, out = binary_views(ctx, op, data.shapes)
    if data.type == TensorType.FLOAT32 and data.alpha_type == TensorType.FLOAT32:
        if len(data.shapes.shape_out) > FLOAT_MAX_RANK:
            raise KernelError(f"float32 PRELU handles at most {FLOAT_MAX_RANK} dimensions in "
                              f"TFLM; got shape {data.shapes.shape_out}")
        map_binary_blocks(lambda a, b: np.where(a >= 0, a, np.multiply(a, b, dtype=np.float32)),
                          x, alpha, out)
        return
    if data.type in (TensorType.INT8, TensorType.INT16) and data.alpha_type == TensorType.INT8 \
            and data.params is not None:
        dtype = np.dtype(NUMPY_DTYPES[data.type])
        params = data.params
        map_binary_blocks(lambda a, b: quantized_prelu(a, b, params, dtype), x, alpha, out)
        return
    raise KernelError(f"PRELU supports float32 (float32 alpha), int8 and int16 (int8 alpha) "
                      f"in TFLM; got {data.type.name.lower()} with a "
                      f"{data.alpha_type.name.lower()} alpha")


REGISTRATION = Registration("PRELU", init=init, prepare=prepare, eval=eval_, builtin_data=None)
