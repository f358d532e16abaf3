"""CONCATENATION: TFLM's concatenation.cc (no rescaling: int8 inputs must share the output's
scale and zero point, int16 zero points must be 0).

Allocation: init allocates ``OpDataConcatenation`` (80 bytes on the wheel, which is built with
compression: 40 without, 24 on arm32); prepare takes temp tensors for input 0 and the output,
then one more per input (input 0 again), n + 2 in all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import MAX_RUNS, copy_pieces
from tinyarena.kernels import native
from tinyarena.kernels.native import quiet
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.options import ConcatenationOptions
from tinyarena.model.types import Operator, TensorType

OUTPUT = 0
MAX_INPUTS = 10  # kMaxInputNum
MAX_DIMS = 6  # RuntimeShape::kMaxSmallSize

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32,
              TensorType.INT64, TensorType.BOOL)


@dataclass(frozen=True)
class OpData:
    """ConcatenationParams: the positive axis."""

    axis: int


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("OpDataConcatenation"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """ConcatenationPrepare: type checks, quantization checks, the positive axis."""
    ctx.allocate_temp_tensor(op.inputs[0])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    first = required_tensor(ctx, op.inputs[0], "CONCATENATION", "first input")
    out = required_tensor(ctx, op.outputs[OUTPUT], "CONCATENATION", "output")
    options = op.options if isinstance(op.options, ConcatenationOptions) \
        else ConcatenationOptions()
    if options.fused_activation_function != "NONE":
        raise KernelError("CONCATENATION with a fused activation is not supported by TFLM")
    if first.type not in _SUPPORTED:
        raise KernelError(f"CONCATENATION does not support type {first.type.name}")
    if out.type != first.type:
        raise KernelError("CONCATENATION: output type must equal the input type")
    if len(op.inputs) > MAX_INPUTS:
        raise KernelError(f"CONCATENATION supports at most {MAX_INPUTS} inputs; split it")
    out_q = tensor_quant(out)
    for index in op.inputs:
        ctx.allocate_temp_tensor(index)
        t = ctx.tensor(index)
        if t is None or t.type != first.type:
            raise KernelError("CONCATENATION: all inputs must have the same type")
        if len(t.shape) > MAX_DIMS:
            raise KernelError(f"CONCATENATION supports at most {MAX_DIMS} dimensions")
        if first.type == TensorType.INT8 and tensor_quant(t) != out_q:
            raise KernelError("int8 CONCATENATION needs every input quantized exactly like the "
                              "output (same scale and zero point); requantize the inputs")
        if first.type == TensorType.INT16 and tensor_quant(t)[1] != 0:
            raise KernelError("int16 CONCATENATION needs zero points of 0")
    if first.type == TensorType.INT16 and out_q[1] != 0:
        raise KernelError("int16 CONCATENATION needs an output zero point of 0")
    rank = len(out.shape)
    axis = options.axis + rank if options.axis < 0 else options.axis
    if not 0 <= axis < max(rank, 1):
        raise KernelError(f"CONCATENATION: axis {options.axis} out of range for rank {rank}")
    total = 0
    for index in op.inputs:
        shape = required_tensor(ctx, index, "CONCATENATION", "input").shape
        if len(shape) != rank or any(shape[j] != out.shape[j] for j in range(rank) if j != axis):
            raise KernelError(f"CONCATENATION: input shape {shape} does not fit output "
                              f"{out.shape} along axis {axis}")
        total += shape[axis]
    if rank and total != out.shape[axis]:
        raise KernelError(f"CONCATENATION: inputs add up to {total} along axis {axis}, output "
                          f"has {out.shape[axis]}")
    return OpData(axis)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """reference_ops::Concatenation: copy each input's slab in turn."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    parts = [ctx.tensor_data(i) for i in op.inputs]
    if out.ndim == 0:
        out[...] = parts[0]
        return
    np.concatenate(parts, axis=data.axis, out=out)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """The same copies as byte pieces fixed at bind time: input j's slab of every outer row
    (a 2-D strided copy per input when there are many such slabs)."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    parts = [ctx.tensor_data(i) for i in op.inputs]
    if out.ndim == 0 or not all(p.flags.c_contiguous for p in (out, *parts)):
        return None
    outer = int(np.prod(out.shape[:data.axis], dtype=np.int64))
    inner = int(np.prod(out.shape[data.axis + 1:], dtype=np.int64)) * out.dtype.itemsize
    row = out.shape[data.axis] * inner
    if outer * len(parts) > 4 * MAX_RUNS:
        sizes = [p.shape[data.axis] * inner for p in parts]
        if native.enabled(ctx):
            from tinyarena.kernels.native.concat import bind_concat_rows

            step = bind_concat_rows(out, parts, outer, sizes)
            if step is not None:
                return step
        return _strided_copies(out, parts, outer, row, sizes)
    pieces = []
    for o in range(outer):
        at = o * row
        for p in parts:
            size = p.shape[data.axis] * inner
            pieces.append((out, at, p, o * size, size))
            at += size
    return copy_pieces(pieces)


def _strided_copies(out: np.ndarray, parts: list[np.ndarray], outer: int, row: int,
                    sizes: list[int]) -> Step:
    """Many small pieces (a concatenation along an inner axis): one 2-D byte copy per input,
    its ``outer`` rows of ``size`` bytes into a column band of the output's rows. Byte copies
    raise no float warnings, so the step is quiet."""
    dst = out.reshape(-1).view(np.uint8).reshape(outer, row)
    pairs = []
    at = 0
    for p, size in zip(parts, sizes):
        if size:
            pairs.append((dst[:, at:at + size], p.reshape(-1).view(np.uint8).reshape(outer, size)))
        at += size
    copyto = np.copyto

    def step() -> None:
        for d, s in pairs:
            copyto(d, s)
    return quiet(step)


REGISTRATION = Registration("CONCATENATION", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteConcatenationParams")
