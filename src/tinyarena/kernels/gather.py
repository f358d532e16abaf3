"""GATHER: TFLM's gather.cc (float32 and int8 data, int32 positions, axis and batch_dims,
negative ones counted from the end).

Allocation: the parser allocates ``TfLiteGatherParams``; no init; prepare takes temp tensors
input, positions, output, then CreateWritableTensorDimsWithCopy gives the output a persistent
copy of its dims (a TfLiteIntArray of the output's rank: 4 + 4 * rank bytes), which prepare
overwrites with the shape it computes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.options import GatherOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
POSITIONS = 1
OUTPUT = 0


@dataclass(frozen=True)
class GatherData:
    axis: int
    batch_dims: int


def prepare(ctx: PrepareContext, op: Operator) -> GatherData:
    """GatherPrepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("GATHER takes two inputs (params, indices) and one output")
    for index in (op.inputs[INPUT], op.inputs[POSITIONS], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[INPUT], "GATHER", "input")
    coords = required_tensor(ctx, op.inputs[POSITIONS], "GATHER", "positions")
    out = required_tensor(ctx, op.outputs[OUTPUT], "GATHER", "output")
    if coords.type != TensorType.INT32:
        raise KernelError(f"GATHER: positions of type {coords.type.name} are not supported; "
                          f"TFLM takes int32")
    if inp.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError(f"GATHER supports float32 and int8, not {inp.type.name}")
    options = op.options if isinstance(op.options, GatherOptions) else GatherOptions()
    rank, coords_rank = len(inp.shape), len(coords.shape)
    axis = options.axis + rank if options.axis < 0 else options.axis
    if not 0 <= axis < rank:
        raise KernelError(f"GATHER: axis {options.axis} is out of range for rank {rank}")
    batch_dims = options.batch_dims
    if batch_dims < 0:
        batch_dims += coords_rank
    if not (batch_dims <= axis and 0 <= batch_dims < rank and batch_dims <= coords_rank):
        raise KernelError(f"GATHER: batch_dims {options.batch_dims} does not fit axis {axis} "
                          f"and the positions' rank {coords_rank}")
    if inp.shape[:batch_dims] != coords.shape[:batch_dims]:
        raise KernelError("GATHER: the batch dimensions of input and positions differ")
    ctx.allocate_persistent(4 + 4 * len(out.shape))  # CreateWritableTensorDimsWithCopy
    want = inp.shape[:axis] + coords.shape[batch_dims:] + inp.shape[axis + 1:]
    if tuple(out.shape) != want:
        raise KernelError(f"GATHER: the output shape is {out.shape} but TFLM computes {want}; "
                          f"fix the output tensor")
    return GatherData(axis, batch_dims)


def eval_(ctx: EvalContext, op: Operator, data: GatherData) -> None:
    """Gather<InputT, int32>: one memcpy of ``inner`` values per (batch, outer, coord)."""
    source = ctx.tensor_data(op.inputs[INPUT])
    coords = ctx.tensor_data(op.inputs[POSITIONS])
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if out_t is not None and out_t.element_count == 0:
        return
    out = ctx.tensor_data(op.outputs[OUTPUT])
    axis, batch_dims = data.axis, data.batch_dims
    axis_size = source.shape[axis]
    if coords.size and (coords.min() < 0 or coords.max() >= axis_size):
        raise KernelError(f"GATHER: a position is outside [0, {axis_size}) along axis {axis}; "
                          f"TFLM would read out of bounds")
    batch = int(np.prod(source.shape[:batch_dims], dtype=np.int64))
    outer = int(np.prod(source.shape[batch_dims:axis], dtype=np.int64))
    inner = int(np.prod(source.shape[axis + 1:], dtype=np.int64))
    n_coords = coords.size // max(batch, 1)
    src = source.reshape(batch, outer, axis_size, inner)
    dst = out.reshape(batch, outer, n_coords, inner)
    idx = coords.reshape(batch, n_coords)
    for b in range(batch):  # one memcpy-like take per batch (range checked above: no buffer)
        np.take(src[b], idx[b], axis=1, out=dst[b], mode="clip")


REGISTRATION = Registration("GATHER", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteGatherParams")
