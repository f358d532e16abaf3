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
    y[...] = 0  # the padding bytes
    blocks = y.reshape(bh, bw, batch, out_h, out_w, depth)
    for sh in range(bh):  # output batch block (sh, sw) reads padded rows/columns sh, sw mod block
        rows = _phase(sh, top, bh, out_h, height)
        for sw in range(bw):
            cols = _phase(sw, left, bw, out_w, width)
            np.copyto(blocks[sh, sw][:, rows[0]:rows[0] + rows[2], cols[0]:cols[0] + cols[2]],
                      x[:, rows[1]::bh, cols[1]::bw][:, :rows[2], :cols[2]])


def _phase(shift: int, pad: int, block: int, out_size: int, size: int) -> tuple[int, int, int]:
    """Output positions o (0 <= o < out_size) read input o * block + shift - pad when that lies
    in [0, size): (first output position, first input position, how many)."""
    first_out = max(0, -(-(pad - shift) // block))
    first_in = first_out * block + shift - pad
    if first_out >= out_size or first_in >= size:
        return 0, 0, 0
    count = min(out_size - first_out, (size - 1 - first_in) // block + 1)
    return first_out, first_in, count


REGISTRATION = Registration("SPACE_TO_BATCH_ND", init=init, prepare=check_io, eval=eval_,
                            builtin_data=None)
