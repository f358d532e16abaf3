"""SignalEnergy: TFLM's signal/micro/kernels/energy.cc and signal/src/energy.cc.

Allocation: init allocates ``TFLMSignalEnergyParams`` (end_index, start_index from the
flexbuffer, in that sorted order); prepare takes temp tensors input and output. Eval writes
``real**2 + imag**2`` of the int16 complex spectrum to ``output[start_index:end_index]`` only:
the other output elements keep whatever the arena held, as in TFLM.
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
    check_ranks_and_types,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

END_INDEX = 0  # 'end_index'
START_INDEX = 1  # 'start_index'


def init(ctx: InitContext, op: Operator) -> None:
    options = FlexOptions.parse(op)
    options.element(END_INDEX, "end_index")
    options.element(START_INDEX, "start_index")
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalEnergyParams"))


@dataclass(frozen=True)
class OpData:
    start: int
    end: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y = temp_tensors(ctx, op, ("input",), ("output",))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.INT16),
                               (y, "output", 1, TensorType.UINT32)))
    options = FlexOptions.parse(op)
    start = options.element(START_INDEX, "start_index")
    end = options.element(END_INDEX, "end_index")
    if start < end and (start < 0 or end > min(x.shape[0] // 2, y.shape[0])):
        raise KernelError(f"{op.name}: bins {start}..{end} lie outside the input's "
                          f"{x.shape[0] // 2} complex values or the output's {y.shape[0]} "
                          f"elements")
    return OpData(start, end)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """SpectrumToEnergy: int32 real*real + imag*imag, stored as uint32 (the sum of two
    (-32768)**2 wraps to 2**31 as in the wheel)."""
    if data.start >= data.end:
        return
    spectrum = ctx.tensor_data(op.inputs[0]).reshape(-1, 2)[data.start:data.end]
    wide = spectrum.astype(np.int64)
    energy = wide[:, 0] * wide[:, 0] + wide[:, 1] * wide[:, 1]
    ctx.tensor_data(op.outputs[0])[data.start:data.end] = (energy & 0xFFFFFFFF).astype(np.uint32)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    if not native.enabled(ctx) or data.start >= data.end:
        return None
    from tinyarena.kernels.native.signal import bind_energy

    return bind_energy(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                       data.start, data.end)

REGISTRATION = Registration("SignalEnergy", init=init, prepare=prepare, eval=eval_, bind=bind)
