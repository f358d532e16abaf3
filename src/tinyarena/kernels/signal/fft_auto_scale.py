"""SignalFftAutoScale: TFLM's signal/micro/kernels/fft_auto_scale_{kernel,common}.cc and
signal/src/fft_auto_scale.cc, max_abs.cc.

Allocation: no init (no OpData); prepare takes temp tensors input, output, scale_bits.
Eval finds the input's largest magnitude with MaxAbs16's running comparison, shifts every
sample left by the headroom ``16 - msb(max) - 1`` (0 when negative) and writes that shift.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.kernels.signal._common import (
    check_ranks_and_types,
    most_significant_bit,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    x, y, bits = temp_tensors(ctx, op, ("input",), ("output", "scale_bits"))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.INT16),
                               (y, "output", 1, TensorType.INT16),
                               (bits, "scale_bits", 0, TensorType.INT32)))
    if y.shape[0] > x.shape[0]:
        raise KernelError(f"{op.name}: TFLM scales output-length ({y.shape[0]}) samples, more "
                          f"than the input holds ({x.shape[0]})")


def max_abs16(x: np.ndarray) -> int:
    """MaxAbs16's int16 running value: ``if v > max: max = v; elif -v > max: max = -v``.

    Without -32768 that is max(|x|). Negating -32768 stores -32768 again, so after its last
    occurrence the running value restarts below every sample: it follows the samples while
    they rise and stay negative, and from the first sample that breaks that run on it is the
    largest magnitude of the rest.
    """
    v = x.astype(np.int32)
    low = np.flatnonzero(v == -32768)
    if low.size == 0:
        return int(np.abs(v).max(initial=0))
    tail = v[low[-1] + 1:]
    if tail.size == 0:
        return -32768
    if tail[0] >= 0:
        return int(np.abs(tail).max())
    rising = (tail[1:] > tail[:-1]) & (tail[1:] < 0)
    breaks = np.flatnonzero(~rising)
    if breaks.size == 0:
        return int(tail[-1])
    return int(np.abs(tail[breaks[0] + 1:]).max())


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    y = ctx.tensor_data(op.outputs[0])
    x = ctx.tensor_data(op.inputs[0])[:y.shape[0]]
    peak = max_abs16(x)
    # MostSignificantBit32 sees the int16 sign-extended to uint32 (32 for a negative value).
    msb = int(most_significant_bit(np.array([peak & 0xFFFFFFFF], np.uint64), 32)[0])
    scale_bits = max(16 - msb - 1, 0)
    y[...] = (x.astype(np.int32) << scale_bits).astype(np.int16)  # int * 2**k, truncated
    ctx.tensor_data(op.outputs[1])[...] = scale_bits


def bind(ctx: EvalContext, op: Operator, data: None) -> Callable[[], None] | None:
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_fft_auto_scale

    return bind_fft_auto_scale(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                               ctx.tensor_data(op.outputs[1]))

REGISTRATION = Registration("SignalFftAutoScale", prepare=prepare, eval=eval_, bind=bind)
