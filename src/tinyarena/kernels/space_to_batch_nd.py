"""SPACE_TO_BATCH_ND: TFLM's space_to_batch_nd.cc with reference_ops::SpaceToBatchND (3-D or
4-D, float32 and int8).

Allocation: no builtin struct; init allocates ``SpaceToBatchParams`` (one int32,
``output_offset``); prepare takes temp tensors input and output. TFLM never sets
``output_offset``, and the padding is a byte fill with it: the wheel pads with zero bytes (a
fresh arena), and so does this port, whatever the output's zero point.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, InitContext, Registration
from tinyarena.kernels.batch_to_space_nd import as_4d, block_and_edges, check_io, check_type
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("SpaceToBatchParams"))


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    check_type(ctx, op)
    source = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    bh, bw, top, left = block_and_edges(ctx, op, source.ndim)
    x = as_4d(source)
    y = as_4d(out)
    batch, height, width, depth = x.shape
    out_batch, out_h, out_w, _ = y.shape
    if bh < 1 or bw < 1 or out_batch != batch * bh * bw or top < 0 or left < 0:
        raise KernelError(f"SPACE_TO_BATCH_ND: output batch {out_batch} is not the input batch "
                          f"{batch} times the block {bh}x{bw}")
    padded = np.zeros((batch, out_h * bh, out_w * bw, depth), dtype=x.dtype)
    rows = min(height, max(out_h * bh - top, 0))
    cols = min(width, max(out_w * bw - left, 0))
    padded[:, top:top + rows, left:left + cols, :] = x[:, :rows, :cols, :]
    blocks = padded.reshape(batch, out_h, bh, out_w, bw, depth).transpose(2, 4, 0, 1, 3, 5)
    y[...] = blocks.reshape(y.shape)


REGISTRATION = Registration("SPACE_TO_BATCH_ND", init=init, prepare=check_io, eval=eval_,
                            builtin_data=None)
