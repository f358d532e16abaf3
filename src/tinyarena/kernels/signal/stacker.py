"""SignalStacker: TFLM's signal/micro/kernels/stacker.cc over signal/src/circular_buffer.cc.

Allocation: init reads num_channels, stacker_left_context, stacker_right_context,
stacker_step and allocates ``TFLMSignalStackerParams`` and a circular buffer of
``num_channels * (left + right + 1)`` values. Prepare takes temp tensors input, output,
output_valid. Eval appends the input frame (the first one ``left`` extra times, as padding);
when the ring holds a whole stack it is copied out and ``stacker_step`` frames dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal._circular_buffer import STATE_FIELDS, Ring, needed_memory
from tinyarena.kernels.signal._common import (
    FlexOptions,
    check_io,
    check_rank,
    check_type,
    temp_input,
    temp_output,
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
    check_io(op, 1, 2)
    x = temp_input(ctx, op, 0, "input")
    y = temp_output(ctx, op, 0, "output")
    valid = temp_output(ctx, op, 1, "output_valid")
    check_rank(op, x, "input", 1)
    check_rank(op, y, "output", 1)
    check_rank(op, valid, "output_valid", 0)
    check_type(op, x, "input", TensorType.INT16)
    check_type(op, y, "output", TensorType.INT16)
    check_type(op, valid, "output_valid", TensorType.BOOL)
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


REGISTRATION = Registration("SignalStacker", init=init, prepare=prepare, eval=eval_,
                            reset=reset)
