"""DEPTH_TO_SPACE: TFLM's depth_to_space.cc (4-D, float32 and int8, TensorFlow's DCR order).

Allocation: the parser allocates ``TfLiteDepthToSpaceParams``; no init; prepare takes temp
tensors input and output, then CreateWritableTensorDimsWithCopy (a persistent 4-D
TfLiteIntArray, 20 bytes) for the output shape it computes.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.options import DepthToSpaceOptions
from tinyarena.model.types import Operator, TensorType


def block_size(op: Operator) -> int:
    options = op.options if isinstance(op.options, DepthToSpaceOptions) \
        else DepthToSpaceOptions()
    return int(options.block_size)


def check_io(ctx: PrepareContext, op: Operator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The part of both ops' Prepare before the shape arithmetic: (input, output) shapes."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes one input and one output")
    ctx.allocate_temp_tensor(op.inputs[0])
    inp = required_tensor(ctx, op.inputs[0], op.name, "input")
    ctx.allocate_temp_tensor(op.outputs[0])
    out = required_tensor(ctx, op.outputs[0], op.name, "output")
    if len(inp.shape) != 4:
        raise KernelError(f"{op.name} needs a 4-D input, not {inp.shape}")
    if out.type not in (TensorType.FLOAT32, TensorType.INT8) or inp.type != out.type:
        raise KernelError(f"{op.name} supports float32 and int8 with matching input and output")
    return inp.shape, out.shape


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """CalculateOpData."""
    shape, out_shape = check_io(ctx, op)
    size = block_size(op)
    if size <= 0:
        raise KernelError(f"DEPTH_TO_SPACE: block_size must be positive, not {size}")
    batch, height, width, channels = shape
    if channels % (size * size):
        raise KernelError(f"DEPTH_TO_SPACE: depth {channels} is not a multiple of "
                          f"{size * size}")
    ctx.allocate_persistent(4 + 4 * len(out_shape))  # CreateWritableTensorDimsWithCopy
    want = (batch, height * size, width * size, channels // (size * size))
    if tuple(out_shape) != want:
        raise KernelError(f"DEPTH_TO_SPACE: the output shape is {out_shape}, TFLM computes "
                          f"{want}; fix the output tensor")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """reference_ops::DepthToSpace: depth splits as (block row, block column, channel)."""
    source = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    size = block_size(op)
    batch, height, width, _ = source.shape
    depth = out.shape[3]
    blocks = source.reshape(batch, height, width, size, size, depth).transpose(0, 1, 3, 2, 4, 5)
    np.copyto(out.reshape(batch, height, size, width, size, depth), blocks)


REGISTRATION = Registration("DEPTH_TO_SPACE", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteDepthToSpaceParams")
