"""SPACE_TO_DEPTH: TFLM's space_to_depth.cc (4-D, float32 and int8).

Allocation: the parser allocates ``TfLiteSpaceToDepthParams``; no init; prepare takes temp
tensors input and output, then CreateWritableTensorDimsWithCopy (a persistent 4-D
TfLiteIntArray, 20 bytes) for the output shape it computes.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.kernels.depth_to_space import check_io
from tinyarena.model.options import SpaceToDepthOptions
from tinyarena.model.types import Operator


def _block_size(op: Operator) -> int:
    options = op.options if isinstance(op.options, SpaceToDepthOptions) \
        else SpaceToDepthOptions()
    return int(options.block_size)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    shape, out_shape = check_io(ctx, op)
    size = _block_size(op)
    if size <= 0:
        raise KernelError(f"SPACE_TO_DEPTH: block_size must be positive, not {size}")
    batch, height, width, channels = shape
    if height % size or width % size:
        raise KernelError(f"SPACE_TO_DEPTH: height {height} and width {width} must be "
                          f"multiples of block_size {size}")
    ctx.allocate_persistent(4 + 4 * len(out_shape))  # CreateWritableTensorDimsWithCopy
    want = (batch, height // size, width // size, channels * size * size)
    if tuple(out_shape) != want:
        raise KernelError(f"SPACE_TO_DEPTH: the output shape is {out_shape}, TFLM computes "
                          f"{want}; fix the output tensor")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """reference_ops::SpaceToDepth: each block's pixels become (row, column, channel) depth."""
    source = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    size = _block_size(op)
    batch, height, width, depth = source.shape
    blocks = source.reshape(batch, height // size, size, width // size, size, depth)
    np.copyto(out.reshape(batch, height // size, width // size, size, size, depth),
              blocks.transpose(0, 1, 3, 2, 4, 5))


REGISTRATION = Registration("SPACE_TO_DEPTH", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteSpaceToDepthParams")
