"""SPLIT and SPLIT_V: TFLM's split.cc and split_v.cc. Pure data movement.

Allocation: the parser allocates ``TfLiteSplitParams`` / ``TfLiteSplitVParams``; no init (no
OpData); prepare takes one temp tensor, the axis (input 0 for SPLIT, input 2 for SPLIT_V),
which must be constant. Eval walks the input once, handing each output its slab in turn
(SplitImpl), so the split sizes come from the output shapes, never from SPLIT_V's
``size_splits`` tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import MAX_RUNS, copy_pieces, gather
from tinyarena.kernels.native import quiet
from tinyarena.kernels.base import (
    EvalContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32)


@dataclass(frozen=True)
class SplitData:
    """Which input holds the data and which the (constant) axis."""

    data_input: int
    axis_input: int


def _prepare(ctx: PrepareContext, op: Operator, data_input: int, axis_input: int,
             name: str) -> SplitData:
    if name == "SPLIT_V" and len(op.inputs) != 3:
        raise KernelError("SPLIT_V takes three inputs (input, size_splits, axis)")
    if len(op.inputs) <= axis_input:
        raise KernelError(f"{name} needs its axis input (input {axis_input})")
    ctx.allocate_temp_tensor(op.inputs[axis_input])
    axis = required_tensor(ctx, op.inputs[axis_input], name, "axis")
    if axis.data is None:
        raise KernelError(f"{name}: non-constant axis tensor is not supported by TFLM; make the "
                          f"axis a constant")
    return SplitData(data_input, axis_input)


def prepare_split(ctx: PrepareContext, op: Operator) -> SplitData:
    """SplitPrepare: the axis is input 0."""
    return _prepare(ctx, op, 1, 0, "SPLIT")


def prepare_split_v(ctx: PrepareContext, op: Operator) -> SplitData:
    """SplitVPrepare: three inputs, the axis is input 2."""
    return _prepare(ctx, op, 0, 2, "SPLIT_V")


def eval_(ctx: EvalContext, op: Operator, data: SplitData) -> None:
    """SplitEval / SplitVEval -> SplitImpl: per outer index, each output's slab in turn."""
    tensor = ctx.tensor(op.inputs[data.data_input])
    if tensor is None or tensor.type not in _SUPPORTED:
        kind = "missing" if tensor is None else tensor.type.name
        raise KernelError(f"{op.name} supports float32, int8, int16 and int32, not {kind}")
    source = ctx.tensor_data(op.inputs[data.data_input])
    rank = source.ndim
    axis = int(np.asarray(ctx.tensor_data(op.inputs[data.axis_input])).reshape(-1)[0])
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise KernelError(f"{op.name}: axis out of range for a rank-{rank} input")
    outer = int(np.prod(source.shape[:axis], dtype=np.int64))
    inner = int(np.prod(source.shape[axis + 1:], dtype=np.int64))
    outputs = [ctx.tensor_data(i) for i in op.outputs]
    if any(o.ndim != rank for o in outputs):
        raise KernelError(f"{op.name}: every output needs the input's rank {rank}")
    if op.name == "SPLIT":  # SplitImpl sizes every slab from output 0
        widths = [outputs[0].shape[axis]] * len(outputs)
    else:
        widths = [o.shape[axis] for o in outputs]
    if sum(widths) * outer * inner > source.size or any(
            o.size != outer * w * inner for o, w in zip(outputs, widths)):
        raise KernelError(f"{op.name}: the output shapes do not split the input along axis "
                          f"{axis}; fix the output tensors")
    flat = source.reshape(outer, -1)
    start = 0
    for out, width in zip(outputs, widths):  # views only: nothing allocated per invoke
        size = width * inner
        np.copyto(out.reshape(outer, size), flat[:, start:start + size])
        start += size


def bind(ctx: EvalContext, op: Operator, data: SplitData) -> Step | None:
    """eval's slabs as byte pieces fixed at bind (the axis is a constant): one quiet step;
    anything eval would refuse, many small pieces, or outputs sharing the input's memory
    run eval."""
    tensor = ctx.tensor(op.inputs[data.data_input])
    axis_t = ctx.tensor(op.inputs[data.axis_input])
    if tensor is None or tensor.type not in _SUPPORTED or axis_t is None or axis_t.data is None:
        return None
    source = ctx.tensor_data(op.inputs[data.data_input])
    rank = source.ndim
    axis = int(np.asarray(axis_t.data).reshape(-1)[0])
    axis = axis + rank if axis < 0 else axis
    outputs = [ctx.tensor_data(i) for i in op.outputs]
    if not 0 <= axis < rank or any(o.ndim != rank or o.dtype != source.dtype for o in outputs) \
            or not all(a.flags.c_contiguous for a in (source, *outputs)) \
            or any(np.may_share_memory(source, o) for o in outputs):
        return None
    outer = int(np.prod(source.shape[:axis], dtype=np.int64))
    inner = int(np.prod(source.shape[axis + 1:], dtype=np.int64))
    widths = [outputs[0].shape[axis]] * len(outputs) if op.name == "SPLIT" else \
        [o.shape[axis] for o in outputs]
    if sum(widths) * outer * inner > source.size or \
            any(o.size != outer * w * inner for o, w in zip(outputs, widths)):
        return None
    if outer * len(outputs) > 4 * MAX_RUNS:  # many small slabs: one gather per output
        columns = np.arange(source.size, dtype=np.int64).reshape(outer, -1)
        steps, start = [], 0
        for out, width in zip(outputs, widths):
            size = width * inner
            steps.append(gather(out, source, columns[:, start:start + size].reshape(-1)))
            start += size
        return _all(steps)
    item = source.dtype.itemsize
    row = source.size // max(outer, 1) * item
    pieces = []
    for o in range(outer):
        start = o * row
        for out, width in zip(outputs, widths):
            size = width * inner * item
            pieces.append((out, o * size, source, start, size))
            start += size
    return copy_pieces(pieces)


def _all(steps: list[Step]) -> Step:
    def each() -> None:
        for step in steps:
            step()
    return quiet(each)


REGISTRATIONS = {
    "SPLIT": Registration("SPLIT", init=None, prepare=prepare_split, eval=eval_, bind=bind,
                          builtin_data="TfLiteSplitParams"),
    "SPLIT_V": Registration("SPLIT_V", init=None, prepare=prepare_split_v, eval=eval_,
                            bind=bind, builtin_data="TfLiteSplitVParams"),
}
