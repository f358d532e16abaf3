"""L2_NORMALIZATION: TFLM's l2norm.cc, reference/l2normalization.h and
reference/integer_ops/l2normalization.h. Over the last axis, at most 4-D.

* float32: the squares summed left to right in float32, sqrtf, std::max with epsilon 1e-6
  (a NaN norm passes), then each value divided by the norm.
* int8: the squares of (x - zero point) summed in int32, GetInvSqrtQuantizedMultiplierExp
  (reverse shift -1), then MultiplyByQuantizedMultiplier(x - zp, multiplier, shift + 7),
  clamped to int8. The output is therefore in units of 1/128 whatever its quantization.

Allocation: init allocates L2NormalizationParams (one int32); prepare takes input and output
as temp tensors, and refuses ranks above 4, types other than float32/int8 and any fused
activation (TFLM's Prepare does); the parser allocates TfLiteL2NormParams.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import multiply_by_quantized_multiplier, tensor_quant, wrap_int32
from tinyarena.kernels._unary import map_row_chunks
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.elementwise_unary import inv_sqrt_quantized_multiplier_exp
from tinyarena.model.options import L2NormOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
MAX_RANK = 4
EPSILON = np.float32(1e-6)
OUTPUT_SCALE_BITS = 7  # kOutputScale: int8 outputs are in Q0.7


@dataclass(frozen=True)
class OpData:
    type: TensorType
    input_zero_point: int
    depth: int
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)


def l2norm_float(rows: np.ndarray, fused: bool = False) -> np.ndarray:
    """reference_ops::L2Normalization on (outer, depth) float32 rows; ``fused``: each
    ``squared_l2_norm += val * val`` one fused multiply-add (a build with ``float_fma``)."""
    if fused:
        total = np.zeros((rows.shape[0], 1), np.float32)
        for c in range(rows.shape[1]):
            total = fma32(rows[:, c:c + 1], rows[:, c:c + 1], total)
    else:
        squares = np.multiply(rows, rows, dtype=np.float32)
        total = np.cumsum(squares, axis=1, dtype=np.float32)[:, -1:]  # left to right, as in C
    norm = np.sqrt(total)
    norm = np.where(norm < EPSILON, EPSILON, norm)  # std::max(norm, epsilon)
    return np.divide(rows, norm, dtype=np.float32)


def l2norm_int8(rows: np.ndarray, zero_point: int) -> np.ndarray:
    """reference_integer_ops::L2Normalization on (outer, depth) int8 rows."""
    diff = rows.astype(np.int64) - zero_point
    acc = wrap_int32(np.sum(diff * diff, axis=1, keepdims=True))
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(np.maximum(acc, 0), -1)
    out = multiply_by_quantized_multiplier(diff, multiplier, shift + OUTPUT_SCALE_BITS)
    return np.clip(out, -128, 127).astype(np.int8)


def init(ctx: InitContext, op: Operator) -> None:
    """L2NormInit: the L2NormalizationParams."""
    ctx.allocate_persistent(ctx.target.sizeof("L2NormalizationParams"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """L2NormPrepare."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"L2_NORMALIZATION takes one input and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError("L2_NORMALIZATION needs an input and an output tensor")
    if len(inp.shape) > MAX_RANK:
        raise KernelError(f"L2_NORMALIZATION handles at most {MAX_RANK} dimensions in TFLM; "
                          f"the input has shape {inp.shape}")
    if out.type not in (TensorType.FLOAT32, TensorType.INT8) or inp.type != out.type:
        raise KernelError(f"L2_NORMALIZATION supports float32 and int8 (input and output of "
                          f"one type) in TFLM; got {inp.type.name.lower()} -> "
                          f"{out.type.name.lower()}")
    options = op.options if isinstance(op.options, L2NormOptions) else L2NormOptions()
    if options.fused_activation_function != "NONE":
        raise KernelError("L2_NORMALIZATION takes no fused activation in TFLM; got "
                          f"{options.fused_activation_function}")
    if inp.element_count != out.element_count:
        raise KernelError(f"L2_NORMALIZATION: input shape {inp.shape} and output shape "
                          f"{out.shape} differ; fix the output tensor's shape")
    zero_point = tensor_quant(inp).zero_point if inp.type == TensorType.INT8 else 0
    depth = int(inp.shape[-1]) if len(inp.shape) else 1
    fused = inp.type == TensorType.FLOAT32 and bool(getattr(ctx.target, "float_fma", False))
    return OpData(inp.type, zero_point, depth, fused)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """L2NormEval."""
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    depth = max(data.depth, 1)
    rows, out_rows = x.reshape(-1, depth), out.reshape(-1, depth)
    if data.type == TensorType.FLOAT32:
        map_row_chunks(lambda r: l2norm_float(r, data.fused), rows, out_rows)
    else:
        map_row_chunks(lambda r: l2norm_int8(r, data.input_zero_point), rows, out_rows)


REGISTRATION = Registration("L2_NORMALIZATION", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteL2NormParams")
