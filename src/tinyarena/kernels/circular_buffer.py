"""CIRCULAR_BUFFER (custom op): TFLM's circular_buffer.cc and circular_buffer_common.cc.

A streaming buffer for strided convolutions: each invoke shifts the int8 output
[1, num_slots, H, W] one slot towards the start and appends the input [1, 1, H, W] at the
end. Every ``cycles_max``-th invoke it lets the graph continue; otherwise it returns
kTfLiteAbort, which skips the rest of the invoke (the wheel still reports success).

``cycles_max`` is the custom options' flexbuffer map element 0 (by sorted key; 'cycles_max').
Absent or <= 0, Prepare picks 1 for 5, 13 or 25 slots and 2 otherwise. TFLM also picks 1 for
an output of [.., 2, 96] when a process-wide counter of such Prepare calls reaches 5; that
counter spans every interpreter in the process and is not emulated (tinyarena uses 2).
:func:`reset` restarts the stride count, as TFLM's CircularBufferReset, once Registration has
the reset hook (it is wired automatically when the field exists).

Allocation: init allocates OpDataCircularBuffer (two int, 8 bytes); prepare takes input and
output as temp tensors; a custom op has no builtin data. int8 only (checked in Prepare).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from flatbuffers import flexbuffers

from tinyarena.errors import KernelError
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    InvokeAbort,
    PrepareContext,
    Registration,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
CYCLES_MAX_INDEX = 0  # kCircularBufferCyclesMaxIndex
SINGLE_CYCLE_SLOTS = (5, 13, 25)


@dataclass(frozen=True)
class OpData:
    cycles_max: int
    depth: int  # elements per slot (H * W)
    counter: int  # persistent workspace: invokes since the last one that let the graph run


def options_cycles_max(op: Operator) -> int:
    """CircularBufferInit: the options map's element 0 as int32, or 0 without options."""
    if not op.custom_options:
        return 0
    try:
        root = flexbuffers.GetRoot(bytes(op.custom_options))
        values = root.AsMap.Values
        value = values[CYCLES_MAX_INDEX].AsInt
    except Exception as exc:  # malformed options: name the op and the problem
        raise KernelError(f"CIRCULAR_BUFFER: cannot read its custom options as a flexbuffer "
                          f"map ({type(exc).__name__}: {exc}); rebuild the model's options")
    return int(np.array(value).astype(np.int64).astype(np.int32))


def init(ctx: InitContext, op: Operator) -> None:
    """CircularBufferInit: the OpDataCircularBuffer."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataCircularBuffer"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """CircularBufferPrepare."""
    if not op.inputs or not op.outputs:
        raise KernelError("CIRCULAR_BUFFER needs one input and one output")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError("CIRCULAR_BUFFER needs one input and one output")
    if len(inp.shape) != 4 or len(out.shape) != 4:
        raise KernelError(f"CIRCULAR_BUFFER needs a 4-D input [1, 1, H, W] and output "
                          f"[1, slots, H, W]; got {inp.shape} and {out.shape}")
    n_in, one, h_in, w_in = inp.shape
    n_out, slots, h_out, w_out = out.shape
    if n_in != n_out or one != 1 or h_in != h_out or w_in != w_out:
        raise KernelError(f"CIRCULAR_BUFFER: input {inp.shape} does not fit output {out.shape} "
                          "(TFLM requires [N, 1, H, W] into [N, slots, H, W])")
    if inp.type != out.type or inp.type != TensorType.INT8:
        raise KernelError(f"CIRCULAR_BUFFER supports int8 only in TFLM; got "
                          f"{inp.type.name.lower()} -> {out.type.name.lower()}")
    cycles_max = options_cycles_max(op)
    if cycles_max <= 0:
        cycles_max = 1 if slots in SINGLE_CYCLE_SLOTS else 2
    counter = ctx.request_workspace((1,), np.int64)
    return OpData(cycles_max, int(h_out) * int(w_out), counter)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """CircularBufferEval: shift, append, then continue or abort the invoke."""
    x = ctx.tensor_data(op.inputs[INPUT]).reshape(-1)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(-1)
    depth = data.depth
    incoming = x[:depth].copy()  # the input may share memory with the output
    out[:out.size - depth] = out[depth:].copy()  # memmove
    out[out.size - depth:] = incoming
    counter = ctx.workspace(data.counter)
    counter[0] += 1
    if counter[0] != data.cycles_max:  # --cycles_until_run != 0
        raise InvokeAbort()
    counter[0] = 0


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """CircularBufferReset: the stride count starts again (cycles_until_run = cycles_max).

    Registered as the kernel's reset where ``Registration`` has that hook (ops-signal's
    ``Registration.reset``, called by ``Interpreter.reset``)."""
    ctx.workspace(data.counter)[0] = 0


def _registration() -> Registration:
    hooks: dict[str, Any] = {}
    if "reset" in Registration.__dataclass_fields__:  # the hook exists from ops-signal's merge
        hooks["reset"] = reset
    return Registration("CIRCULAR_BUFFER", init=init, prepare=prepare, eval=eval_,
                        builtin_data=None, **hooks)


REGISTRATION = _registration()
