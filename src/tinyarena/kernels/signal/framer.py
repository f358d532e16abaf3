"""SignalFramer: TFLM's signal/micro/kernels/framer.cc over signal/src/circular_buffer.cc.

Allocation: init reads frame_size, frame_step, prefill and allocates
``TFLMSignalFramerParams``. Prepare takes temp tensors input, output, output_valid, then
allocates two pointer arrays of ``outer_dims`` entries (state buffers, circular buffers) and,
per outer row, a circular buffer of capacity ``frame_size`` rounded up to a multiple of
``frame_step``. With prefill the ring starts with ``frame_size - frame_step`` zeros.

Eval: each input row holds ``n_frames`` steps; each step is appended and, when a whole frame
is buffered, copied out and the ring advanced by one step; otherwise output_valid is false
and that frame's output is left as it was.
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
    check_rank,
    check_type,
    flat_size,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

FRAME_SIZE, FRAME_STEP, PREFILL = 0, 1, 2


def _options(op: Operator) -> tuple[int, int, bool]:
    options = FlexOptions.parse(op)
    size = options.element(FRAME_SIZE, "frame_size")
    step = options.element(FRAME_STEP, "frame_step")
    prefill = bool(options.element(PREFILL, "prefill"))
    if size < 1 or step < 1:
        raise KernelError(f"{op.name}: frame_size {size} and frame_step {step} must be >= 1")
    return size, step, prefill


def init(ctx: InitContext, op: Operator) -> None:
    _options(op)
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalFramerParams"))


@dataclass(frozen=True)
class OpData:
    frame_size: int
    frame_step: int
    prefill: bool
    outer: int
    n_frames: int
    capacity: int
    buffers: int  # workspace (outer, 2 * capacity) int16
    states: int  # workspace (outer, STATE_FIELDS) int64


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y, valid = temp_tensors(ctx, op, ("input",), ("output", "output_valid"))
    if len(x.shape) + 1 != len(y.shape) or not x.shape:
        raise KernelError(f"{op.name}: the output needs one more dimension than the input")
    check_rank(op, valid, "output_valid", 0)
    check_type(op, x, "input", TensorType.INT16)
    check_type(op, y, "output", TensorType.INT16)
    check_type(op, valid, "output_valid", TensorType.BOOL)
    size, step, prefill = _options(op)
    inner = int(x.shape[-1])
    if inner < step or inner % step:
        raise KernelError(f"{op.name}: the input's last dimension {inner} must be a multiple "
                          f"of frame_step {step}")
    if prefill and size < step:
        raise KernelError(f"{op.name}: prefill with frame_size {size} < frame_step {step} "
                          f"means a negative number of zeros; the wheel fails AllocateTensors")
    outer = flat_size(x) // inner
    n_frames = inner // step
    if flat_size(y) < outer * n_frames * size:
        raise KernelError(f"{op.name}: the output holds {flat_size(y)} values, fewer than "
                          f"{outer * n_frames} frames of {size}")
    capacity = (size + step - 1) // step * step
    return OpData(size, step, prefill, outer, n_frames, capacity,
                  *allocate_row_rings(ctx, outer, capacity))


def _rings(ctx: EvalContext, data: OpData) -> list[Ring]:
    buffers, states = ctx.workspace(data.buffers), ctx.workspace(data.states)
    rings = [Ring(buffers[i], states[i], data.capacity) for i in range(data.outer)]
    for ring in rings:
        if not ring.state[3]:  # FramerResetState, as Prepare and Reset run it
            ring.reset()
            if data.prefill:
                ring.write_zeros(data.frame_size - data.frame_step)
    return rings


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    x = ctx.tensor_data(op.inputs[0]).reshape(data.outer, data.n_frames, data.frame_step)
    y = ctx.tensor_data(op.outputs[0]).reshape(-1)
    valid = True
    for i, ring in enumerate(_rings(ctx, data)):
        for frame in range(data.n_frames):
            ring.write(x[i, frame])
            if ring.available() >= data.frame_size:
                start = (i * data.n_frames + frame) * data.frame_size
                y[start:start + data.frame_size] = ring.get(data.frame_size)
                ring.discard(data.frame_step)
            else:
                valid = False
    ctx.tensor_data(op.outputs[1])[...] = valid


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """FramerReset: the rings are set up again (prefill included) at the next eval."""
    ctx.workspace(data.states)[...] = 0


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: the rings (the same workspaces, so reset and the numpy path
    see the same state) updated by one compiled loop."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_framer

    return bind_framer(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                       ctx.tensor_data(op.outputs[1]), ctx.workspace(data.buffers),
                       ctx.workspace(data.states), data.outer, data.n_frames, data.frame_step,
                       data.frame_size, data.capacity, data.prefill)

REGISTRATION = Registration("SignalFramer", init=init, prepare=prepare, eval=eval_,
                            reset=reset, bind=bind)
