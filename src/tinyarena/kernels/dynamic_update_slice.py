"""DYNAMIC_UPDATE_SLICE: TFLM's dynamic_update_slice.cc (float32, int8, int16, int32
operands; int32 or int64 start indices, each clamped to [0, operand - update]).

Allocation: no builtin struct, no init; prepare takes temp tensors operand, update, start
indices, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise KernelError("DYNAMIC_UPDATE_SLICE takes three inputs (operand, update, start "
                          "indices) and one output")
    names = ("operand", "update", "start indices")
    tensors = []
    for index, name in zip(op.inputs, names):
        ctx.allocate_temp_tensor(index)
        tensors.append(required_tensor(ctx, index, op.name, name))
    ctx.allocate_temp_tensor(op.outputs[0])
    required_tensor(ctx, op.outputs[0], op.name, "output")
    operand, update, start = tensors
    if operand.type != update.type:
        raise KernelError("DYNAMIC_UPDATE_SLICE: operand and update types differ")
    if start.type not in (TensorType.INT32, TensorType.INT64) or len(start.shape) != 1 \
            or start.shape[0] != len(operand.shape):
        raise KernelError("DYNAMIC_UPDATE_SLICE: start indices must be an int32/int64 vector "
                          "with one entry per operand dimension")
    if len(update.shape) != len(operand.shape) or any(
            u > o for u, o in zip(update.shape, operand.shape)):
        raise KernelError("DYNAMIC_UPDATE_SLICE: the update must fit inside the operand")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    t = ctx.tensor(op.inputs[0])
    if t is None or t.type not in _SUPPORTED:
        kind = "missing" if t is None else t.type.name
        raise KernelError(f"DYNAMIC_UPDATE_SLICE supports float32, int8, int16 and int32, not "
                          f"{kind}")
    operand = ctx.tensor_data(op.inputs[0])
    update = ctx.tensor_data(op.inputs[1])
    out = ctx.tensor_data(op.outputs[0])
    if operand.size == update.size:
        np.copyto(out.reshape(-1), update.reshape(-1))
        return
    if not np.may_share_memory(out, operand):
        np.copyto(out, operand)
    if update.size == 0:
        return
    starts = ctx.tensor_data(op.inputs[2]).reshape(-1).astype(np.int64)
    index = []
    for dim in range(operand.ndim):
        begin = int(min(max(0, starts[dim]), operand.shape[dim] - update.shape[dim]))
        index.append(slice(begin, begin + update.shape[dim]))
    out[tuple(index)] = update


REGISTRATION = Registration("DYNAMIC_UPDATE_SLICE", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
