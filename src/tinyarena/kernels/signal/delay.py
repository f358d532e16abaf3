"""SignalDelay: TFLM's signal/micro/kernels/delay.cc over signal/src/circular_buffer.cc.

Allocation: init reads delay_length and allocates ``TFLMSignalFrontendDelayParams``. Prepare
takes temp tensors input and output, then two pointer arrays of ``outer_dims`` entries and,
per outer row, a circular buffer of capacity ``frame_size + delay_length`` that starts with
``delay_length`` zeros. Eval: each row is appended, the oldest ``frame_size`` values are
copied out and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal._circular_buffer import Ring, allocate_row_rings
from tinyarena.kernels.signal._common import (
    FlexOptions,
    check_type,
    flat_size,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

DELAY_LENGTH = 0  # 'delay_length'


def _delay(op: Operator) -> int:
    delay = FlexOptions.parse(op).element(DELAY_LENGTH, "delay_length")
    if delay < 0:
        raise KernelError(f"{op.name}: delay_length {delay} is negative")
    return delay


def init(ctx: InitContext, op: Operator) -> None:
    _delay(op)
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalFrontendDelayParams"))


@dataclass(frozen=True)
class OpData:
    delay: int
    frame_size: int
    outer: int
    capacity: int
    buffers: int
    states: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y = temp_tensors(ctx, op, ("input",), ("output",))
    check_type(op, x, "input", TensorType.INT16)
    check_type(op, y, "output", TensorType.INT16)
    if not x.shape or x.shape[-1] == 0:
        raise KernelError(f"{op.name}: the input needs a non-empty last dimension")
    if flat_size(y) < flat_size(x):
        raise KernelError(f"{op.name}: the output is smaller than the input")
    delay = _delay(op)
    frame = int(x.shape[-1])
    outer = flat_size(x) // frame
    capacity = frame + delay
    return OpData(delay, frame, outer, capacity, *allocate_row_rings(ctx, outer, capacity))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    x = ctx.tensor_data(op.inputs[0]).reshape(data.outer, data.frame_size)
    y = ctx.tensor_data(op.outputs[0]).reshape(-1)
    buffers, states = ctx.workspace(data.buffers), ctx.workspace(data.states)
    for i in range(data.outer):
        ring = Ring(buffers[i], states[i], data.capacity)
        if not ring.state[3]:  # Prepare's (and DelayReset's) initial zeros
            ring.reset()
            ring.write_zeros(data.delay)
        ring.write(x[i])
        y[i * data.frame_size:(i + 1) * data.frame_size] = ring.get(data.frame_size)
        ring.discard(data.frame_size)


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """DelayReset: back to ``delay_length`` zeros at the next eval."""
    ctx.workspace(data.states)[...] = 0


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: the rings (the same workspaces) updated by one compiled
    loop."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_delay

    return bind_delay(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                      ctx.workspace(data.buffers), ctx.workspace(data.states), data.outer,
                      data.frame_size, data.delay, data.capacity)

REGISTRATION = Registration("SignalDelay", init=init, prepare=prepare, eval=eval_,
                            reset=reset, bind=bind)
