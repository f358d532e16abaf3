"""REVERSE_V2: TFLM's reverse.cc (int32, float32, uint8, int8, int16, int64, bool; the axes,
negative counted from the end, must be contiguous once sorted).

Allocation: no builtin struct, no init; prepare takes temp tensors input, axis, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

MAX_DIMS = 6  # RuntimeShape::kMaxSmallSize
_SUPPORTED = (TensorType.INT32, TensorType.FLOAT32, TensorType.UINT8, TensorType.INT8,
              TensorType.INT16, TensorType.INT64, TensorType.BOOL)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ReverseV2Prepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("REVERSE_V2 takes two inputs (input, axis) and one output")
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[0], op.name, "input")
    axis = required_tensor(ctx, op.inputs[1], op.name, "axis")
    out = required_tensor(ctx, op.outputs[0], op.name, "output")
    if len(axis.shape) != 1 or len(inp.shape) > MAX_DIMS or len(inp.shape) < axis.element_count:
        raise KernelError("REVERSE_V2: the axis must be a vector no longer than the input rank")
    if inp.type not in _SUPPORTED:
        raise KernelError(f"REVERSE_V2 does not support type {inp.type.name}")
    if axis.type != TensorType.INT32:
        raise KernelError("REVERSE_V2: the axis must be int32")
    if inp.type != out.type:
        raise KernelError("REVERSE_V2: input and output types differ")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """ReverseV2Eval -> reference_ops::Reverse over the sorted, contiguous axes."""
    source = ctx.tensor_data(op.inputs[0])
    rank = source.ndim
    axes = []
    for value in ctx.tensor_data(op.inputs[1]).reshape(-1).tolist():
        current = value + rank if value < 0 else value
        if not 0 <= current < rank:
            raise KernelError(f"REVERSE_V2: axis {value} is out of range for rank {rank}")
        axes.append(current)
    axes.sort()
    if not axes or any(b != a + 1 for a, b in zip(axes, axes[1:])):
        raise KernelError(f"REVERSE_V2: axes {axes} are not contiguous; TFLM reverses only "
                          f"contiguous axes")
    out = ctx.tensor_data(op.outputs[0])
    if out.size:
        np.copyto(out, np.flip(source, axis=tuple(axes)))


REGISTRATION = Registration("REVERSE_V2", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
