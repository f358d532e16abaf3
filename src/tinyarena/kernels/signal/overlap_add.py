"""SignalOverlapAdd: TFLM's signal/micro/kernels/overlap_add.cc and signal/src/overlap_add.cc.

Allocation: init reads ``T`` (int16 or float32) and frame_step and allocates
``TFLMSignalOverlapAddParams<T>``. Prepare takes temp tensors input and output, then a pointer
array of ``outer_dims`` entries and one ``frame_size * sizeof(T)`` state buffer per outer row.

Eval: each frame is added into the row's buffer (int16 saturating, float32 plain), the first
``frame_step`` values go out and the buffer shifts left by frame_step, zero-filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal._common import (
    FlexOptions,
    check_type,
    flat_size,
    temp_tensors,
)
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

FRAME_STEP = 1  # 'frame_step' ('T' sorts first)


def _options(op: Operator) -> tuple[TensorType, int]:
    options = FlexOptions.parse(op)
    value = options.by_key("T")
    if value not in (TensorType.INT16.value, TensorType.FLOAT32.value):
        raise KernelError(f"{op.name}: option T = {value} is not int16 (7) or float32 (0), "
                          f"the types TFLM's kernel supports")
    return TensorType(value), options.element(FRAME_STEP, "frame_step")


def init(ctx: InitContext, op: Operator) -> None:
    _options(op)
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalOverlapAddParams"))


@dataclass(frozen=True)
class OpData:
    frame_size: int
    frame_step: int
    n_frames: int
    outer: int
    buffers: int  # workspace (outer, frame_size) of T


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    kind, step = _options(op)
    x, y = temp_tensors(ctx, op, ("input",), ("output",))
    if len(x.shape) != len(y.shape) + 1 or len(x.shape) < 2:
        raise KernelError(f"{op.name}: the input (frames) needs one more dimension than the "
                          f"output, and at least two")
    check_type(op, x, "input", kind)
    check_type(op, y, "output", kind)
    frame_size, n_frames = int(x.shape[-1]), int(x.shape[-2])
    outer = flat_size(x) // (frame_size * n_frames) if frame_size * n_frames else 0
    if not 1 <= step <= frame_size:
        raise KernelError(f"{op.name}: frame_step {step} must lie in 1..frame_size "
                          f"({frame_size})")
    if flat_size(y) < outer * n_frames * step:
        raise KernelError(f"{op.name}: the output is smaller than {outer * n_frames} steps "
                          f"of {step}")
    dtype = NUMPY_DTYPES[kind]
    ctx.allocate_persistent(outer * ctx.target.sizeof("void*"))
    for _ in range(outer):
        ctx.allocate_persistent(frame_size * dtype.itemsize)
    return OpData(frame_size, step, n_frames, outer,
                  ctx.request_workspace((outer, frame_size), dtype))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    x = ctx.tensor_data(op.inputs[0]).reshape(data.outer, data.n_frames, data.frame_size)
    y = ctx.tensor_data(op.outputs[0]).reshape(-1)
    buffers = ctx.workspace(data.buffers)
    step = data.frame_step
    saturate = buffers.dtype == np.int16
    for i in range(data.outer):
        buffer = buffers[i]
        for frame in range(data.n_frames):
            if saturate:
                buffer[...] = np.clip(x[i, frame].astype(np.int32) + buffer, -32768, 32767)
            else:
                with np.errstate(all="ignore"):  # C's float environment
                    buffer += x[i, frame]
            start = (i * data.n_frames + frame) * step
            y[start:start + step] = buffer[:step]
            buffer[:data.frame_size - step] = buffer[step:].copy()
            buffer[data.frame_size - step:] = 0


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """OverlapAddReset: the buffers back to zero."""
    ctx.workspace(data.buffers)[...] = 0


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: one compiled loop over the same buffer workspace."""
    if not native.enabled(ctx) or data.outer == 0:
        return None
    from tinyarena.kernels.native.signal import bind_overlap_add

    return bind_overlap_add(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                            ctx.workspace(data.buffers), data.outer, data.n_frames,
                            data.frame_size, data.frame_step)


REGISTRATION = Registration("SignalOverlapAdd", init=init, prepare=prepare, eval=eval_,
                            reset=reset, bind=bind)
