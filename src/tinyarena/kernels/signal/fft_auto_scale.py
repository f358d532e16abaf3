"""SignalFftAutoScale: TFLM's signal/micro/kernels/fft_auto_scale_{kernel,common}.cc and
signal/src/fft_auto_scale.cc, max_abs.cc.

Allocation: no init (no OpData); prepare takes temp tensors input, output, scale_bits.
Eval finds the input's largest magnitude with MaxAbs16's running comparison, shifts every
sample left by the headroom ``16 - msb(max) - 1`` (0 when negative) and writes that shift.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.kernels.signal._common import (
    check_io,
    check_rank,
    check_type,
    most_significant_bit,
    temp_input,
    temp_output,
)
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    check_io(op, 1, 2)
    x = temp_input(ctx, op, 0, "input")
    y = temp_output(ctx, op, 0, "output")
    bits = temp_output(ctx, op, 1, "scale_bits")
    check_rank(op, x, "input", 1)
    check_rank(op, y, "output", 1)
    check_rank(op, bits, "scale_bits", 0)
    check_type(op, x, "input", TensorType.INT16)
    check_type(op, y, "output", TensorType.INT16)
    check_type(op, bits, "scale_bits", TensorType.INT32)
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


REGISTRATION = Registration("SignalFftAutoScale", prepare=prepare, eval=eval_)
