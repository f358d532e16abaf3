"""BROADCAST_TO: TFLM's broadcast_to.cc (any non-string type, up to 5-D; the constant shape
input must equal the output's shape).

Allocation: no builtin struct, no init; prepare takes temp tensors input, shape, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

MAX_DIMS = 5


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """BroadcastToPrepare and ValidateOutputTensor."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("BROADCAST_TO takes two inputs (input, shape) and one output")
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[0], op.name, "input")
    shape = required_tensor(ctx, op.inputs[1], op.name, "shape")
    out = required_tensor(ctx, op.outputs[0], op.name, "output")
    if len(inp.shape) > MAX_DIMS:
        raise KernelError("BroadcastTo only supports 1-5D tensor.")
    if shape.type not in (TensorType.INT32, TensorType.INT64):
        raise KernelError("BROADCAST_TO: the shape must be int32 or int64")
    if inp.type != out.type or inp.type == TensorType.STRING:
        raise KernelError("BROADCAST_TO: input and output types must match (no strings)")
    if shape.data is None:
        raise KernelError("BROADCAST_TO: non-constant shape tensor is not supported by TFLM; "
                          "make it a constant")
    values = [int(v) for v in np.asarray(shape.data).reshape(-1)]
    if len(shape.shape) != 1 or len(out.shape) != len(values):
        raise KernelError("Output must match with the expected shape dimension.")
    if len(inp.shape) > len(out.shape) or len(out.shape) > MAX_DIMS:
        raise KernelError("Output shape must be broadcastable from input shape.")
    extra = len(out.shape) - len(inp.shape)
    if any(d != 1 and d != values[extra + i] for i, d in enumerate(inp.shape)):
        raise KernelError("Output shape must be broadcastable from input shape.")
    if list(out.shape) != values:
        raise KernelError(f"BROADCAST_TO: the output shape {out.shape} is not the shape input "
                          f"{values}")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    out = ctx.tensor_data(op.outputs[0])
    if out.size == 0:
        return
    np.copyto(out, np.broadcast_to(ctx.tensor_data(op.inputs[0]), out.shape))


REGISTRATION = Registration("BROADCAST_TO", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
