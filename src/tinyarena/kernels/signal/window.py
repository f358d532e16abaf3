"""SignalWindow: TFLM's signal/micro/kernels/window.cc and signal/src/window.cc.

Allocation: init allocates ``TFLMSignalWindowParams`` (shift, input_size); prepare takes temp
tensors input, weights, output. Eval multiplies each run of ``len(weights)`` samples by the
window, shifts right (arithmetic) and saturates to int16.
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
    check_rank,
    check_type,
    flat_size,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

SHIFT = 0  # 'shift': the only attribute


def init(ctx: InitContext, op: Operator) -> None:
    """WindowInit: the params struct; the shift comes from the flexbuffer."""
    FlexOptions.parse(op).element(SHIFT, "shift")
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalWindowParams"))


@dataclass(frozen=True)
class OpData:
    shift: int
    weight_size: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, w, y = temp_tensors(ctx, op, ("input", "weights"), ("output",))
    if len(x.shape) < 1:
        raise KernelError(f"{op.name}: the input must have at least one dimension")
    check_rank(op, w, "weights", 1)
    check_rank(op, y, "output", len(x.shape))
    for tensor, role in ((x, "input"), (w, "weights"), (y, "output")):
        check_type(op, tensor, role, TensorType.INT16)
    shift = FlexOptions.parse(op).element(SHIFT, "shift")
    weight_size = int(w.shape[0])
    n = flat_size(x)
    if weight_size <= 0 or n % weight_size or flat_size(y) < n:
        raise KernelError(f"{op.name}: the input's {n} samples must be whole windows of "
                          f"{weight_size} weights and fit the output ({flat_size(y)})")
    if not 0 <= shift < 32:
        raise KernelError(f"{op.name}: shift {shift} is outside 0..31 (a C shift by it is "
                          f"undefined)")
    return OpData(shift, weight_size)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """ApplyWindow per run of weights: (int32(x) * w) >> shift, saturated to int16."""
    x = ctx.tensor_data(op.inputs[0]).reshape(-1, data.weight_size)
    w = ctx.tensor_data(op.inputs[1]).astype(np.int32)
    raw = (x.astype(np.int32) * w) >> data.shift
    out = ctx.tensor_data(op.outputs[0]).reshape(-1)
    out[:x.size] = np.clip(raw, -32768, 32767).reshape(-1)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_window

    return bind_window(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
                       ctx.tensor_data(op.outputs[0]), data.shift)

REGISTRATION = Registration("SignalWindow", init=init, prepare=prepare, eval=eval_, bind=bind)
