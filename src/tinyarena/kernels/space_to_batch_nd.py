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
from tinyarena.kernels.batch_to_space_nd import block_phase, check_io, eval_views
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("SpaceToBatchParams"))


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    x, y, bh, bw, top, left = eval_views(ctx, op)
    batch, height, width, depth = x.shape
    out_batch, out_h, out_w, _ = y.shape
    if bh < 1 or bw < 1 or out_batch != batch * bh * bw or top < 0 or left < 0:
        raise KernelError(f"SPACE_TO_BATCH_ND: output batch {out_batch} is not the input batch "
                          f"{batch} times the block {bh}x{bw}")
    y[...] = 0  # the padding bytes
    blocks = y.reshape(bh, bw, batch, out_h, out_w, depth)
    for sh in range(bh):  # output batch block (sh, sw) reads padded rows/columns sh, sw mod block
        rows = block_phase(sh, top, bh, out_h, height)
        for sw in range(bw):
            cols = block_phase(sw, left, bw, out_w, width)
            np.copyto(blocks[sh, sw][:, rows[0]:rows[0] + rows[2], cols[0]:cols[0] + cols[2]],
                      x[:, rows[1]::bh, cols[1]::bw][:, :rows[2], :cols[2]])


REGISTRATION = Registration("SPACE_TO_BATCH_ND", init=init, prepare=check_io, eval=eval_,
                            builtin_data=None)
