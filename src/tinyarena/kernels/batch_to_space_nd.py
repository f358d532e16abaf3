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


def eval_views(ctx: EvalContext, op: Operator
               ) -> tuple[np.ndarray, np.ndarray, int, int, int, int]:
    """The start of both ops' Eval: the type check, then input and output as 4-D views and
    (block height, block width, top, left)."""
    check_type(ctx, op)
    source = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    bh, bw, top, left = block_and_edges(ctx, op, source.ndim)
    return as_4d(source), as_4d(out), bh, bw, top, left


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    x, y, bh, bw, top, left = eval_views(ctx, op)
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
        rows = block_phase(sh, top, bh, height, y.shape[1])
        for sw in range(bw):
            cols = block_phase(sw, left, bw, width, y.shape[2])
            np.copyto(y[:, rows[1]::bh, cols[1]::bw][:, :rows[2], :cols[2]],
                      blocks[sh, sw][:, rows[0]:rows[0] + rows[2], cols[0]:cols[0] + cols[2]])


def block_phase(shift: int, edge: int, block: int, grid_size: int,
                dense_size: int) -> tuple[int, int, int]:
    """The index map of both ops along one spatial axis, for batch block ``shift``: position
    g of a block (0 <= g < grid_size) is position g * block + shift - edge of the dense tensor
    (BATCH_TO_SPACE_ND's output with ``edge`` its crop, SPACE_TO_BATCH_ND's input with ``edge``
    its padding) when that lies in [0, dense_size). Returns (first block position, first dense
    position, how many)."""
    first_grid = max(0, -(-(edge - shift) // block))
    first_dense = first_grid * block + shift - edge
    if first_dense >= dense_size or first_grid >= grid_size:
        return 0, 0, 0
    count = min(grid_size - first_grid, (dense_size - 1 - first_dense) // block + 1)
    return first_grid, first_dense, count


REGISTRATION = Registration("BATCH_TO_SPACE_ND", init=None, prepare=check_io, eval=eval_,
                            builtin_data=None)
