"""SignalPCAN: TFLM's signal/micro/kernels/pcan.cc and signal/src/pcan_argc_fixed.cc.

Allocation: init reads ``snr_shift`` and allocates ``TfLitePcanParams``; prepare takes temp
tensors input, noise_estimate, gain_lut, output. Eval (ApplyPcanAutoGainControlFixed): the
gain is a piecewise-quadratic lookup of the noise estimate (WideDynamicFunction), the SNR is
``(uint64(channel) * gain) >> snr_shift`` and the output its PcanShrink.
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
    most_significant_bit,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

SNR_SHIFT = 0  # 'snr_shift'
SNR_BITS = 12  # kPcanSnrBits
OUTPUT_BITS = 6  # kPcanOutputBits
U64 = np.uint64


def init(ctx: InitContext, op: Operator) -> None:
    FlexOptions.parse(op).element(SNR_SHIFT, "snr_shift")
    ctx.allocate_persistent(ctx.target.sizeof("TfLitePcanParams"))


@dataclass(frozen=True)
class OpData:
    snr_shift: int
    channels: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, noise, lut, y = temp_tensors(ctx, op, ("input", "noise_estimate", "gain_lut"),
                                    ("output",))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.UINT32),
                               (noise, "noise_estimate", 1, TensorType.UINT32),
                               (lut, "gain_lut", 1, TensorType.INT16),
                               (y, "output", 1, TensorType.UINT32)))
    shift = FlexOptions.parse(op).element(SNR_SHIFT, "snr_shift")
    if not 0 <= shift < 64:
        raise KernelError(f"{op.name}: snr_shift {shift} is outside 0..63 (undefined C shift)")
    channels = int(x.shape[0])
    if y.shape[0] != channels or noise.shape[0] < channels:
        raise KernelError(f"{op.name}: output and noise estimate must match the input's "
                          f"{channels} channels")
    return OpData(shift, channels)


def wide_dynamic_function(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """WideDynamicFunction: lut[x] for x <= 2, else a quadratic in the 10 bits below the
    leading one, from the three LUT entries of that octave; the int16 result (int32 C
    arithmetic, wrapping as the compiled code does)."""
    x = x.astype(U64)
    interval = most_significant_bit(x, 32)
    base = np.where(x <= 2, x.astype(np.int64), 4 * interval - 6)
    top = int(base.max(initial=0)) + (2 if bool((x > 2).any()) else 0)
    if top >= lut.shape[0]:
        raise KernelError(f"PCAN: a noise estimate of {int(x.max())} reads gain_lut[{top}], "
                          f"past its {lut.shape[0]} entries (TFLM would read past the table)")
    c = lut.astype(np.int64)
    up = np.maximum(11 - interval, 0).astype(U64)
    down = np.maximum(interval - 11, 0).astype(U64)
    shifted = np.where(interval < 11, (x << up) & U64(0xFFFFFFFF), x >> down)
    frac = (shifted & U64(0x3FF)).astype(np.int64)
    big = x > 2
    l0 = c[np.where(big, base, 0)]
    l1 = c[np.where(big, base + 1, 0)]
    l2 = c[np.where(big, base + 2, 0)]
    result = (l2 * frac) >> 5
    result = _i32(result + _i32(l1 << 5))
    result = _i32(result * frac)
    result = _i32(result + (1 << 14)) >> 15
    result = result + l0
    gain = ((result + 32768) & 0xFFFF) - 32768  # (int16)result
    return np.where(big, gain, c[np.where(big, 0, base)])


def _i32(v: np.ndarray) -> np.ndarray:
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def pcan_shrink(snr: np.ndarray) -> np.ndarray:
    """PcanShrink: x**2 / 4 below 2 (in Q12 -> Q6), x - 1 above."""
    small = snr < U64(2 << SNR_BITS)
    square = (snr * snr) >> U64(2 + 2 * SNR_BITS - OUTPUT_BITS)
    linear = (snr >> U64(SNR_BITS - OUTPUT_BITS)) - U64(1 << OUTPUT_BITS)
    return np.where(small, square, linear & U64(0xFFFFFFFF))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    n = data.channels
    x = ctx.tensor_data(op.inputs[0])[:n].astype(U64)
    noise = ctx.tensor_data(op.inputs[1])[:n]
    lut = ctx.tensor_data(op.inputs[2])
    gain = wide_dynamic_function(noise, lut).astype(np.int64).astype(U64) & U64(0xFFFFFFFF)
    snr = ((x * gain) >> U64(data.snr_shift)) & U64(0xFFFFFFFF)
    ctx.tensor_data(op.outputs[0])[...] = pcan_shrink(snr).astype(np.uint32)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: the gain lookup and shrink in one compiled loop (eval still
    raises when a noise estimate reads past the gain table)."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_pcan

    return bind_pcan(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
                     ctx.tensor_data(op.inputs[2]), ctx.tensor_data(op.outputs[0]),
                     data.channels, data.snr_shift, lambda: eval_(ctx, op, data))

REGISTRATION = Registration("SignalPCAN", init=init, prepare=prepare, eval=eval_, bind=bind)
