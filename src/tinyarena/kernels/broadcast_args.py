"""BROADCAST_ARGS: TFLM's broadcast_args.cc. The broadcast shape of two shape vectors (int32
or int64), aligned at the end; a missing dimension counts as 1.

Allocation: no builtin struct, no init; prepare takes temp tensors shape1, shape2, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """BroadcastArgsPrepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("BROADCAST_ARGS takes two inputs and one output")
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    tensors = [required_tensor(ctx, op.inputs[0], op.name, "shape1"),
               required_tensor(ctx, op.inputs[1], op.name, "shape2"),
               required_tensor(ctx, op.outputs[0], op.name, "output")]
    if tensors[0].type not in (TensorType.INT32, TensorType.INT64):
        raise KernelError("BROADCAST_ARGS takes int32 or int64 shapes")
    if any(t.type != tensors[0].type for t in tensors):
        raise KernelError("BROADCAST_ARGS: both shapes and the output need the same type")
    if any(len(t.shape) != 1 for t in tensors):
        raise KernelError("BROADCAST_ARGS: shapes and output must be 1-D")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """reference_ops::BroadcastArgs, walking from the last dimension."""
    out = ctx.tensor_data(op.outputs[0])
    n = out.size
    if n == 0:
        return
    # TFLM reads each dimension into an int: int64 shapes are truncated to 32 bits.
    shapes = []
    for index in op.inputs[:2]:
        t = ctx.tensor(index)
        values = (ctx.tensor_data(index).reshape(-1).astype(np.int64) if t is not None
                  and t.element_count else np.zeros(0, np.int64))
        values = values.astype(np.int32).astype(np.int64)
        padded = np.ones(n, dtype=np.int64)
        take = min(n, values.size)
        if take:
            padded[n - take:] = values[values.size - take:]
        shapes.append(padded)
    first, second = shapes
    clash = (first != 1) & (second != 1) & (first != second)
    if clash.any():
        raise KernelError(f"BROADCAST_ARGS: shapes {first.tolist()} and {second.tolist()} do not "
                          f"broadcast")
    out[...] = np.where(first == 1, second, first).astype(out.dtype)


REGISTRATION = Registration("BROADCAST_ARGS", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
