"""SignalStacker: TFLM's signal/micro/kernels/stacker.cc over signal/src/circular_buffer.cc.

Allocation: init reads num_channels, stacker_left_context, stacker_right_context,
stacker_step and allocates ``TFLMSignalStackerParams`` and a circular buffer of
``num_channels * (left + right + 1)`` values. Prepare takes temp tensors input, output,
output_valid. Eval appends the input frame (the first one ``left`` extra times, as padding);
when the ring holds a whole stack it is copied out and ``stacker_step`` frames dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal._circular_buffer import STATE_FIELDS, Ring, needed_memory
from tinyarena.kernels.signal._common import (
    FlexOptions,
    check_ranks_and_types,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

NAMES = ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step")


@dataclass(frozen=True)
class OpData:
    channels: int
    left: int
    right: int
    step: int
    buffer_size: int
    buffer: int  # workspace (2 * buffer_size,) int16
    state: int  # workspace (STATE_FIELDS + 1,) int64; the last field: has_first_frame


def _options(op: Operator) -> tuple[int, int, int, int]:
    options = FlexOptions.parse(op)
    channels, left, right, step = (options.element(i, n) for i, n in enumerate(NAMES))
    if channels < 1 or left < 0 or right < 0 or step < 1:
        raise KernelError(f"{op.name}: num_channels and stacker_step must be >= 1, the "
                          f"contexts >= 0")
    if step > left + right + 1:
        raise KernelError(f"{op.name}: stacker_step {step} drops more frames than a stack of "
                          f"{left + right + 1} holds (TFLM's circular buffer asserts)")
    return channels, left, right, step


def init(ctx: InitContext, op: Operator) -> None:
    channels, left, right, _ = _options(op)
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalStackerParams"))
    ctx.allocate_persistent(needed_memory(ctx.target, channels * (left + right + 1)))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y, valid = temp_tensors(ctx, op, ("input",), ("output", "output_valid"))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.INT16),
                               (y, "output", 1, TensorType.INT16),
                               (valid, "output_valid", 0, TensorType.BOOL)))
    channels, left, right, step = _options(op)
    size = channels * (left + right + 1)
    if x.shape[0] < channels or y.shape[0] < size:
        raise KernelError(f"{op.name}: the input needs num_channels ({channels}) values and "
                          f"the output a whole stack ({size})")
    return OpData(channels, left, right, step, size,
                  ctx.request_workspace((2 * size,), np.int16),
                  ctx.request_workspace((STATE_FIELDS + 1,), np.int64))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    state = ctx.workspace(data.state)
    ring = Ring(ctx.workspace(data.buffer), state[:STATE_FIELDS], data.buffer_size)
    if not ring.state[3]:
        ring.reset()
        state[STATE_FIELDS] = 0
    ring.write(ctx.tensor_data(op.inputs[0])[:data.channels])
    if not state[STATE_FIELDS]:  # the first frame is replicated left_context more times
        ring.extend(data.channels, data.left)
        state[STATE_FIELDS] = 1
    valid = ring.available() >= data.buffer_size
    if valid:
        ctx.tensor_data(op.outputs[0])[:data.buffer_size] = ring.get(data.buffer_size)
        ring.discard(data.channels * data.step)
    ctx.tensor_data(op.outputs[1])[...] = valid


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """StackerReset: an empty ring waiting for its first frame again."""
    ctx.workspace(data.state)[...] = 0


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: the ring (the same workspaces) updated by one compiled
    loop."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_stacker

    return bind_stacker(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                        ctx.tensor_data(op.outputs[1]), ctx.workspace(data.buffer),
                        ctx.workspace(data.state), data.channels, data.left, data.buffer_size,
                        data.step)

REGISTRATION = Registration("SignalStacker", init=init, prepare=prepare, eval=eval_,
                            reset=reset, bind=bind)
