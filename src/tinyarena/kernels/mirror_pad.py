"""MIRROR_PAD: TFLM's mirror_pad.cc (REFLECT or SYMMETRIC, float32 and int8, int32 or int64
paddings).

Allocation: the parser allocates ``TfLiteMirrorPaddingParams`` (an enum); init allocates
``OpDataMirrorPad`` (five ints); prepare takes temp tensors input, paddings, output and
requests two scratch arrays of ``4 * rank`` bytes (the per-dimension element counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    required_tensor,
)
from tinyarena.model.options import MirrorPadOptions
from tinyarena.model.types import Operator, TensorType


@dataclass(frozen=True)
class MirrorPadData:
    """OpDataMirrorPad.offset: 1 for REFLECT (the edge is not repeated), 0 for SYMMETRIC."""

    offset: int


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("OpDataMirrorPad"))


def prepare(ctx: PrepareContext, op: Operator) -> MirrorPadData:
    """MirrorPadPrepare."""
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[0], "MIRROR_PAD", "input")
    pads = required_tensor(ctx, op.inputs[1], "MIRROR_PAD", "paddings")
    if len(pads.shape) != 2 or pads.shape[0] != len(inp.shape):
        raise KernelError(f"MIRROR_PAD: paddings must have shape ({len(inp.shape)}, 2)")
    options = op.options if isinstance(op.options, MirrorPadOptions) else MirrorPadOptions()
    rank = len(inp.shape)
    ctx.request_scratch(4 * rank)  # output_dims_num_elements
    ctx.request_scratch(4 * rank)  # input_dims_num_elements
    return MirrorPadData(1 if options.mode == "REFLECT" else 0)


def source_positions(out_size: int, left: int, size: int, offset: int) -> np.ndarray:
    """GetInputDimension for every output position along one dimension."""
    p = np.arange(out_size, dtype=np.int64)
    before = left + offset - 1 - np.minimum(p, left - 1)
    rest = p - left
    beyond = rest - size
    after_origin = size - (1 + offset)
    after = after_origin - np.minimum(beyond, after_origin)
    return np.where(p < left, before, np.where(rest >= size, after, rest))


def eval_(ctx: EvalContext, op: Operator, data: MirrorPadData) -> None:
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"MIRROR_PAD supports float32 and int8, not {kind}")
    source = ctx.tensor_data(op.inputs[0])
    pads = np.asarray(ctx.tensor_data(op.inputs[1])).astype(np.int64).reshape(-1, 2)
    out = ctx.tensor_data(op.outputs[0])
    rank = source.ndim
    if rank == 0:
        out[...] = source
        return
    lefts = [int(pads[d, 0]) for d in range(rank)]
    interior = tuple(slice(lefts[d], lefts[d] + source.shape[d]) for d in range(rank))
    for dim in range(rank):
        positions = source_positions(out.shape[dim], lefts[dim], source.shape[dim], data.offset)
        if positions.size and (positions.min() < 0 or positions.max() >= source.shape[dim]):
            raise KernelError(f"MIRROR_PAD: padding {pads[dim].tolist()} is too large for "
                              f"dimension {dim} of size {source.shape[dim]}")
    np.copyto(out[interior], source)
    # The index map is separable: mirror one dimension at a time, from the output itself
    # (dimensions already done in full, later ones on their interior), with views only.
    for dim in range(rank):
        _mirror_dimension(out, dim, lefts[dim], source.shape[dim], data.offset, interior)


def _mirror_dimension(out: np.ndarray, dim: int, left: int, size: int, offset: int,
                      interior: tuple[slice, ...]) -> None:
    def part(along: slice) -> np.ndarray:
        index = tuple(slice(None) if k < dim else (along if k == dim else interior[k])
                      for k in range(out.ndim))
        return out[index]

    right = out.shape[dim] - left - size
    if left:  # GetInputDimension: padded p < left reads input left + offset - 1 - p
        np.copyto(part(slice(0, left)),
                  np.flip(part(slice(left + offset, 2 * left + offset)), axis=dim))
    if right <= 0:
        return
    if right <= size - offset:  # p = size + j reads size - 1 - offset - j
        end = left + size - offset
        np.copyto(part(slice(left + size, left + size + right)),
                  np.flip(part(slice(end - right, end)), axis=dim), casting="no")
    else:  # pads beyond the input repeat index 0 (TFLM's min() clamp): the general map
        wanted = left + source_positions(out.shape[dim], left, size, offset)[left + size:]
        np.copyto(part(slice(left + size, None)), np.take(part(slice(None)), wanted, axis=dim))


REGISTRATION = Registration("MIRROR_PAD", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteMirrorPaddingParams")
