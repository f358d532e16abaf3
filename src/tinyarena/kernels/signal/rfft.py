"""SignalRfft: TFLM's signal/micro/kernels/rfft.cc with signal/src/rfft_{int16,int32,float}.cc.

Allocation: init reads ``T`` (the TFLite tensor type, by key) and ``fft_length`` (position 1
of the sorted options) and allocates ``TfLiteAudioFrontendRfftParams<T>``, then the kissfft
state (``kiss_fftr_alloc``'s size for that type and length) as a second persistent buffer.
Prepare takes temp tensors input and output and requests a scratch buffer of
``fft_length * sizeof(T)`` (the zero-padded work area).

Eval: each row of ``input_length`` samples is copied into the work area (the arena scratch,
as in TFLM), zero-padded to ``fft_length`` and transformed by ``kiss_fftr``; row r writes
``fft_length / 2 + 1`` complex values at complex offset ``r * output_length``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.kernels.signal import _kiss_fft
from tinyarena.kernels.signal._common import (
    FlexOptions,
    check_type,
    flat_size,
    temp_tensors,
)
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

FFT_LENGTH = 1  # 'fft_length' ('T' sorts first)
Step = Callable[[], None]
TYPES = {TensorType.INT16: "int16", TensorType.INT32: "int32", TensorType.FLOAT32: "float32"}


def fft_type(op: Operator) -> TensorType:
    """RfftInitAll's switch on ``T``; TFLM returns a null OpData (and then crashes) for other
    types."""
    value = FlexOptions.parse(op).by_key("T")
    try:
        kind = TensorType(value)
    except ValueError:
        kind = None
    if kind not in TYPES:
        raise KernelError(f"{op.name}: option T = {value} is not int16 (7), int32 (2) or "
                          f"float32 (0), the types TFLM's kernel supports")
    return kind


def fft_options(op: Operator) -> tuple[TensorType, int]:
    """``T`` and ``fft_length`` as Rfft's and Irfft's Init and Prepare both read them."""
    return fft_type(op), FlexOptions.parse(op).element(FFT_LENGTH, "fft_length")


def init_options(op: Operator) -> tuple[TensorType, int]:
    """Init's reading of the options (Rfft and Irfft): fft_length must suit kiss_fftr_alloc."""
    kind, fft_length = fft_options(op)
    if fft_length < 2 or fft_length & 1:
        raise KernelError(f"{op.name}: fft_length {fft_length} must be even and >= 2 "
                          f"(kiss_fftr_alloc refuses it and TFLM then crashes)")
    return kind, fft_length


def prepare_io(ctx: PrepareContext, op: Operator, kind: TensorType) -> tuple[Tensor, Tensor]:
    """Rfft's and Irfft's Prepare checks: one temp input and output of the same rank, both of
    type ``T``."""
    x, y = temp_tensors(ctx, op, ("input",), ("output",))
    if len(x.shape) != len(y.shape) or not x.shape:
        raise KernelError(f"{op.name}: input and output must have the same rank (>= 1)")
    check_type(op, x, "input", kind)
    check_type(op, y, "output", kind)
    return x, y


def plan_tables(ctx: PrepareContext, kind: TensorType, fft_length: int,
                inverse: bool) -> tuple[_kiss_fft.PlanShell | None, str | None]:
    """The kissfft plan with its tables as read-only workspaces, or None and the reason the
    wheel cannot run this length."""
    reason = _kiss_fft.supported(fft_length)
    if reason is not None:
        return None, reason
    return _kiss_fft.make_plan(TYPES[kind], fft_length, inverse=inverse).shell(
        lambda a: ctx.request_workspace(a.shape, a.dtype, initial=a)), None


def init(ctx: InitContext, op: Operator) -> None:
    kind, fft_length = init_options(op)
    ctx.allocate_persistent(ctx.target.sizeof("TfLiteAudioFrontendRfftParams"))
    ctx.allocate_persistent(_kiss_fft.needed_memory(ctx.target, TYPES[kind], fft_length))


@dataclass(frozen=True)
class OpData:
    plan: _kiss_fft.PlanShell | None  # None: the wheel cannot run this length (reason)
    reason: str | None
    fft_length: int
    input_length: int
    output_length: int  # complex values per output row
    rows: int
    scratch: int
    dtype: np.dtype


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    kind, fft_length = fft_options(op)
    x, y = prepare_io(ctx, op, kind)
    dtype = NUMPY_DTYPES[kind]
    scratch = ctx.request_scratch(fft_length * dtype.itemsize)
    input_length, output_length = int(x.shape[-1]), int(y.shape[-1]) // 2
    rows = flat_size(x) // input_length if input_length else 0
    if input_length > fft_length:
        raise KernelError(f"{op.name}: rows of {input_length} samples do not fit fft_length "
                          f"{fft_length} (TFLM's zero padding would have a negative size)")
    bins = fft_length // 2 + 1
    if rows and (rows - 1) * output_length + bins > flat_size(y) // 2:
        raise KernelError(f"{op.name}: {rows} rows of {bins} complex bins do not fit the "
                          f"output {y.shape} (TFLM would write past it)")
    plan, reason = plan_tables(ctx, kind, fft_length, inverse=False)
    return OpData(plan, reason, fft_length, input_length, output_length, rows, scratch, dtype)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    if data.plan is None:
        raise KernelError(f"{op.name} (operator {op.index}) cannot run: {data.reason}")
    if data.rows == 0:
        return
    x = ctx.tensor_data(op.inputs[0]).reshape(data.rows, data.input_length)
    frames = np.zeros((data.rows, data.fft_length), data.dtype)
    frames[:, :data.input_length] = x
    work = ctx.scratch(data.scratch)[:data.fft_length * data.dtype.itemsize].view(data.dtype)
    work[...] = frames[-1]  # the work area keeps the last row, as TFLM leaves it
    with np.errstate(all="ignore"):  # C's float environment: inf and NaN pass silently
        re, im = _kiss_fft.kiss_fftr(data.plan.plan(ctx.workspace), frames)
    out = ctx.tensor_data(op.outputs[0]).reshape(-1)
    bins = data.fft_length // 2 + 1
    step = 2 * data.output_length
    for row in range(data.rows):  # rows may overlap when output_length < bins (C order)
        seg = out[row * step: row * step + 2 * bins]
        seg[0::2] = re[row]
        seg[1::2] = im[row]


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """With compiled kernels on: kiss_fftr over every row in one compiled call
    (``native.signal``); eval otherwise, and for the lengths the wheel cannot run."""
    if not native.enabled(ctx) or data.plan is None or data.rows == 0:
        return None
    from tinyarena.kernels.native.signal import bind_rfft

    work = ctx.scratch(data.scratch)[:data.fft_length * data.dtype.itemsize].view(data.dtype)
    return bind_rfft(data.plan.plan(ctx.workspace), ctx.tensor_data(op.inputs[0]),
                     ctx.tensor_data(op.outputs[0]), work, data.rows, data.input_length,
                     data.output_length)


REGISTRATION = Registration("SignalRfft", init=init, prepare=prepare, eval=eval_, bind=bind)
