"""SignalIrfft: TFLM's signal/micro/kernels/irfft.cc with signal/src/irfft_{int16,int32,
float}.cc.

Allocation: init reads ``T`` and ``fft_length`` and allocates
``TfLiteAudioFrontendIrfftParams`` and the inverse kissfft state (for float, preceded by an
``IrfftFloatState``); prepare takes temp tensors input and output; no scratch.

Eval: each row of ``fft_length / 2 + 1`` complex bins goes through ``kiss_fftri`` into
``fft_length`` samples at offset ``row * output_length``; the float version then divides
every sample by fft_length (kissfft's inverse is unscaled; the fixed-point ones scale down at
every stage instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal import _kiss_fft
from tinyarena.kernels.signal._common import flat_size
from tinyarena.kernels.signal.rfft import (
    TYPES,
    fft_options,
    init_options,
    plan_tables,
    prepare_io,
)
from tinyarena.model.types import NUMPY_DTYPES, Operator


def init(ctx: InitContext, op: Operator) -> None:
    kind, fft_length = init_options(op)
    ctx.allocate_persistent(ctx.target.sizeof("TfLiteAudioFrontendIrfftParams"))
    state = _kiss_fft.needed_memory(ctx.target, TYPES[kind], fft_length)
    if TYPES[kind] == "float32":
        state += ctx.target.sizeof("IrfftFloatState")
    ctx.allocate_persistent(state)


@dataclass(frozen=True)
class OpData:
    plan: _kiss_fft.PlanShell | None  # None: the wheel cannot run this length (reason)
    reason: str | None
    fft_length: int
    input_length: int  # complex values per input row
    output_length: int
    rows: int
    dtype: np.dtype


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    kind, fft_length = fft_options(op)
    x, y = prepare_io(ctx, op, kind)
    input_length, output_length = int(x.shape[-1]) // 2, int(y.shape[-1])
    rows = (flat_size(x) // 2) // input_length if input_length else 0
    bins = fft_length // 2 + 1
    if rows and input_length < bins:
        raise KernelError(f"{op.name}: rows of {input_length} complex values hold fewer than "
                          f"the {bins} bins kiss_fftri reads")
    if rows and (rows - 1) * output_length + fft_length > flat_size(y):
        raise KernelError(f"{op.name}: {rows} rows of {fft_length} samples do not fit the "
                          f"output {y.shape} (TFLM would write past it)")
    plan, reason = plan_tables(ctx, kind, fft_length, inverse=True)
    return OpData(plan, reason, fft_length, input_length, output_length, rows,
                  NUMPY_DTYPES[kind])


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    if data.plan is None:
        raise KernelError(f"{op.name} (operator {op.index}) cannot run: {data.reason}")
    if data.rows == 0:
        return
    bins = data.fft_length // 2 + 1
    x = ctx.tensor_data(op.inputs[0]).reshape(data.rows, data.input_length, 2)[:, :bins]
    with np.errstate(all="ignore"):  # C's float environment: inf and NaN pass silently
        samples = _kiss_fft.kiss_fftri(data.plan.plan(ctx.workspace), x[:, :, 0], x[:, :, 1])
        if data.plan.kind == "float32":
            samples = samples / np.float32(data.fft_length)
    out = ctx.tensor_data(op.outputs[0]).reshape(-1)
    for row in range(data.rows):  # rows may overlap when output_length < fft_length
        start = row * data.output_length
        out[start:start + data.fft_length] = samples[row]


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: kiss_fftri over every row in one compiled call
    (``native.signal``); eval otherwise, and for the lengths the wheel cannot run."""
    if not native.enabled(ctx) or data.plan is None or data.rows == 0:
        return None
    from tinyarena.kernels.native.signal import bind_irfft

    return bind_irfft(data.plan.plan(ctx.workspace), ctx.tensor_data(op.inputs[0]),
                      ctx.tensor_data(op.outputs[0]), data.rows, data.input_length,
                      data.output_length)


REGISTRATION = Registration("SignalIrfft", init=init, prepare=prepare, eval=eval_, bind=bind)
