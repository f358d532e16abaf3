"""BATCH_TO_SPACE_ND: TFLM's batch_to_space_nd.cc with reference_ops::BatchToSpaceND (3-D or
4-D, float32 and int8; a 3-D tensor is treated as (batch, height, 1, depth)).

Allocation: no builtin struct, no init; prepare takes temp tensors input and output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

MIN_DIMS = 3
MAX_DIMS = 4


def check_io(ctx: PrepareContext, op: Operator) -> None:
    """The shared Prepare of BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes three inputs and one output")
    ctx.allocate_temp_tensor(op.inputs[0])
    ctx.allocate_temp_tensor(op.outputs[0])
    inp = required_tensor(ctx, op.inputs[0], op.name, "input")
    out = required_tensor(ctx, op.outputs[0], op.name, "output")
    for t in (inp, out):
        if not MIN_DIMS <= len(t.shape) <= MAX_DIMS:
            raise KernelError(f"{op.name} supports 3-D and 4-D tensors, not {t.shape}")
    if inp.type != out.type:
        raise KernelError(f"{op.name}: input and output types differ")


def as_4d(array: np.ndarray) -> np.ndarray:
    """ExtendShapeBatchToSpace / ExtendShapeSpaceToBatch: (b, h, d) -> (b, h, 1, d)."""
    return array if array.ndim == 4 else array.reshape(array.shape[0], array.shape[1], 1,
                                                       array.shape[2])


def block_and_edges(ctx: EvalContext, op: Operator, rank: int) -> tuple[int, int, int, int]:
    """(block height, block width, top, left) from the block-shape and crops/paddings inputs."""
    block = ctx.tensor_data(op.inputs[1]).reshape(-1)
    edges = ctx.tensor_data(op.inputs[2]).reshape(-1)
    if rank == 4:
        return int(block[0]), int(block[1]), int(edges[0]), int(edges[2])
    return int(block[0]), 1, int(edges[0]), 0


def check_type(ctx: EvalContext, op: Operator) -> None:
    t = ctx.tensor(op.inputs[0])
    if t is None or t.type not in (TensorType.FLOAT32, TensorType.INT8):
        kind = "missing" if t is None else t.type.name
        raise KernelError(f"{op.name} supports float32 and int8, not {kind}")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    check_type(ctx, op)
    source = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    bh, bw, top, left = block_and_edges(ctx, op, source.ndim)
    x = as_4d(source)
    y = as_4d(out)
    batch, height, width, depth = x.shape
    out_batch = y.shape[0]
    if bh < 1 or bw < 1 or batch != out_batch * bh * bw:
        raise KernelError(f"BATCH_TO_SPACE_ND: input batch {batch} is not the output batch "
                          f"{out_batch} times the block {bh}x{bw}")
    if not (0 <= top and 0 <= left and top + y.shape[1] <= height * bh
            and left + y.shape[2] <= width * bw):
        raise KernelError(f"BATCH_TO_SPACE_ND: crops ({top}, {left}) do not fit the output "
                          f"{y.shape[1:3]} in {(height * bh, width * bw)}; fix the output shape "
                          f"or the crops")
    blocks = x.reshape(bh, bw, out_batch, height, width, depth)
    for sh in range(bh):  # input batch block (sh, sw) fills output rows/columns sh, sw mod block
        rows = _phase(sh, top, bh, height, y.shape[1])
        for sw in range(bw):
            cols = _phase(sw, left, bw, width, y.shape[2])
            np.copyto(y[:, rows[0]::bh, cols[0]::bw][:, :rows[2], :cols[2]],
                      blocks[sh, sw][:, rows[1]:rows[1] + rows[2], cols[1]:cols[1] + cols[2]])


def _phase(shift: int, crop: int, block: int, size: int, out_size: int) -> tuple[int, int, int]:
    """For input positions i (0 <= i < size) landing at i * block + shift - crop inside
    [0, out_size): (first output position, first input position, how many)."""
    first_in = max(0, -(-(crop - shift) // block))
    first_out = first_in * block + shift - crop
    if first_out >= out_size or first_in >= size:
        return 0, 0, 0
    count = min(size - first_in, (out_size - 1 - first_out) // block + 1)
    return first_out, first_in, count


REGISTRATION = Registration("BATCH_TO_SPACE_ND", init=None, prepare=check_io, eval=eval_,
                            builtin_data=None)
