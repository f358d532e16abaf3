"""ADD_N: TFLM's add_n.cc and reference/add_n.h. float32 and int8, two or more inputs of one
shape and type.

* float32: per element, x = 0 then x += input_j in input order, in float32 (so -0.0 inputs
  sum to +0.0, and inf + -inf is NaN).
* int8: every input is offset, shifted left by 20 and scaled by QuantizeMultiplierSmaller-
  ThanOneExp(s / 2s); the accumulator starts at the scaled input offset (TFLM's "x = 0" is
  the offset, not zero), adds each scaled input in wrapping int32, is scaled by
  QuantizeMultiplierSmallerThanOneExp(2s / (2^20 s_out)), offset and clamped.

Allocation: prepare takes input 0 and the output as temp tensors, then each further input;
float32 requests a scratch buffer of one pointer per input; int8 allocates its OpData (ten
int32, 40 bytes) persistently and requests the same scratch. No builtin options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    calculate_activation_range_quantized,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier_smaller_than_one_exp,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

OUTPUT = 0
INTEGER_SHIFT = 20  # kAddNIntegerShift
BLOCK = 4096  # elements per block of an eval


@dataclass(frozen=True)
class AddNParams:
    input_offset: int
    output_offset: int
    input_multiplier: int
    input_shift: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    params: AddNParams | None


def add_n_params(s_in: float, zp_in: int, s_out: float, zp_out: int) -> AddNParams:
    """CalculateOpData's int8 branch (doubles from the float32 scales)."""
    s_in, s_out = float(np.float32(s_in)), float(np.float32(s_out))
    twice_max = 2 * s_in
    mi, si = quantize_multiplier_smaller_than_one_exp(s_in / twice_max)
    mo, so = quantize_multiplier_smaller_than_one_exp(twice_max / ((1 << INTEGER_SHIFT) * s_out))
    lo, hi = calculate_activation_range_quantized("NONE", s_out, zp_out, np.int8)
    return AddNParams(-zp_in, zp_out, mi, si, mo, so, lo, hi)


def add_n_int8(inputs: list[np.ndarray], p: AddNParams) -> np.ndarray:
    """reference_ops::AddN for int8, vectorised over elements."""
    def scaled(v: np.ndarray | int) -> np.ndarray:
        shifted = wrap_int32((np.asarray(v, np.int64) + p.input_offset) << INTEGER_SHIFT)
        return multiply_by_quantized_multiplier_smaller_than_one_exp(
            shifted, p.input_multiplier, p.input_shift)

    acc = np.broadcast_to(scaled(0), inputs[0].shape).astype(np.int64)
    for x in inputs:
        acc = wrap_int32(acc + scaled(x))
    raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
        acc, p.output_multiplier, p.output_shift) + p.output_offset
    return np.clip(raw, p.act_min, p.act_max).astype(np.int8)


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """Prepare (CalculateOpData)."""
    if len(op.inputs) < 2 or len(op.outputs) != 1:
        raise KernelError(f"ADD_N takes at least two inputs and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    ctx.allocate_temp_tensor(op.inputs[0])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    first, out = ctx.tensor(op.inputs[0]), ctx.tensor(op.outputs[OUTPUT])
    if first is None or out is None:
        raise KernelError("ADD_N needs its input and output tensors")
    if first.type != out.type:
        raise KernelError(f"ADD_N: input type {first.type.name.lower()} differs from output "
                          f"type {out.type.name.lower()}")
    q_first = tensor_quant(first)
    for index in op.inputs[1:]:
        ctx.allocate_temp_tensor(index)
        t = ctx.tensor(index)
        if t is None:
            raise KernelError("ADD_N needs every input tensor")
        if tuple(t.shape) != tuple(first.shape) or t.type != first.type:
            raise KernelError(f"ADD_N: every input must have the shape and type of the first "
                              f"({first.shape}, {first.type.name.lower()}); tensor {t.name!r} "
                              f"has {t.shape}, {t.type.name.lower()}")
        if first.type == TensorType.INT8 and tensor_quant(t) != q_first:
            raise KernelError(f"int8 ADD_N needs one scale and zero point on every input; "
                              f"tensor {t.name!r} differs from the first")
    pointers = ctx.target.sizeof("void*") * len(op.inputs)
    if out.type == TensorType.FLOAT32:
        ctx.request_scratch(pointers)
        return OpData(out.type, None)
    if out.type == TensorType.INT8:
        ctx.allocate_persistent(ctx.target.sizeof("OpDataAddN"))
        ctx.request_scratch(pointers)
        q_out = tensor_quant(out)
        return OpData(out.type, add_n_params(q_first.scale, q_first.zero_point, q_out.scale,
                                             q_out.zero_point))
    raise KernelError(f"ADD_N supports float32 and int8 in TFLM, not {out.type.name.lower()}")


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """Eval: EvalAddN<float> or EvalAddNQuantized<int8_t>."""
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(-1)
    inputs = [ctx.tensor_data(i).reshape(-1) for i in op.inputs]
    params = data.params
    for start in range(0, out.size, BLOCK):  # bounded temporaries whatever the tensor size
        block = [x[start:start + BLOCK] for x in inputs]
        if params is None:  # x = 0, then x += input_j: the output is the accumulator
            acc = out[start:start + BLOCK]
            acc[...] = 0.0
            for x in block:
                acc += x
        else:
            out[start:start + BLOCK] = add_n_int8(block, params)


REGISTRATION = Registration("ADD_N", init=None, prepare=prepare, eval=eval_, builtin_data=None)
