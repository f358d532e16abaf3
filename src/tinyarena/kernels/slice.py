"""SLICE: TFLM's slice.cc with reference_ops::Slice (begin and size, int32 or int64; a size
of -1 means "to the end").

Allocation: no builtin struct, no init; prepare takes temp tensors input, begin, size, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import gather
from tinyarena.kernels.base import (
    EvalContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
BEGIN = 1
SIZE = 2
OUTPUT = 0
MAX_DIM = 5
_SUPPORTED = (TensorType.FLOAT32, TensorType.INT32, TensorType.INT8, TensorType.INT16,
              TensorType.BOOL)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """SlicePrepare: three inputs, one output, four temp tensors."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise KernelError("SLICE takes three inputs (input, begin, size) and one output")
    for index in (op.inputs[INPUT], op.inputs[BEGIN], op.inputs[SIZE], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[INPUT], "SLICE", "input")
    if len(inp.shape) > MAX_DIM:
        raise KernelError(f"SLICE supports at most {MAX_DIM} dimensions")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """SliceEval: begins/sizes front-padded to 5-D, then the sequential copy."""
    in_t = ctx.tensor(op.inputs[INPUT])
    begin_t = ctx.tensor(op.inputs[BEGIN])
    if in_t is None or in_t.type not in _SUPPORTED:
        kind = "missing" if in_t is None else in_t.type.name
        raise KernelError(f"SLICE supports float32, int32, int8, int16 and bool, not {kind}")
    if begin_t is None or begin_t.type not in (TensorType.INT32, TensorType.INT64):
        raise KernelError("SLICE: begin and size must be int32 or int64")
    source = ctx.tensor_data(op.inputs[INPUT])
    rank = source.ndim
    begins = np.asarray(ctx.tensor_data(op.inputs[BEGIN])).reshape(-1)[:rank].astype(np.int64)
    sizes = np.asarray(ctx.tensor_data(op.inputs[SIZE])).reshape(-1)[:rank].astype(np.int64)
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if out_t is not None and out_t.element_count == 0:
        return
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if rank == 0:
        out.reshape(-1)[0] = source.reshape(-1)[0]
        return
    index = []
    for dim in range(rank):
        start = int(begins[dim])
        stop = source.shape[dim] if sizes[dim] == -1 else start + int(sizes[dim])
        if not 0 <= start <= stop <= source.shape[dim]:
            raise KernelError(f"SLICE: begin {start} size {int(sizes[dim])} do not fit dimension "
                              f"{dim} of the input shape {source.shape}")
        index.append(slice(start, stop))
    part = source[tuple(index)]
    if part.size != out.size:
        raise KernelError(f"SLICE: the slice holds {part.size} values, the output {out.size}; "
                          f"fix the output shape")
    np.copyto(out.reshape(part.shape), part)


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """Constant begin and size: eval's copy as byte pieces fixed at bind (``_bound.gather``);
    anything eval would refuse, or an output sharing the input's memory, runs eval."""
    in_t, begin_t, size_t = (ctx.tensor(op.inputs[i]) for i in (INPUT, BEGIN, SIZE))
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if in_t is None or in_t.type not in _SUPPORTED or begin_t is None or size_t is None or \
            begin_t.type not in (TensorType.INT32, TensorType.INT64) or \
            begin_t.data is None or size_t.data is None or out_t is None or \
            out_t.element_count == 0:
        return None
    source = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    rank = source.ndim
    if rank == 0 or source.dtype != out.dtype or np.may_share_memory(source, out) or \
            not (source.flags.c_contiguous and out.flags.c_contiguous):
        return None
    begins = np.asarray(begin_t.data).reshape(-1)[:rank].astype(np.int64)
    sizes = np.asarray(size_t.data).reshape(-1)[:rank].astype(np.int64)
    if begins.size != rank or sizes.size != rank:
        return None
    ranges = []
    for dim in range(rank):
        start = int(begins[dim])
        stop = source.shape[dim] if sizes[dim] == -1 else start + int(sizes[dim])
        if not 0 <= start <= stop <= source.shape[dim]:
            return None
        ranges.append(np.arange(start, stop))
    picked = np.arange(source.size, dtype=np.int64).reshape(source.shape)[np.ix_(*ranges)]
    if picked.size != out.size:
        return None
    return gather(out, source, picked.reshape(-1))


REGISTRATION = Registration("SLICE", init=None, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data=None)
