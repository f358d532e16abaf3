"""SignalFilterBank: TFLM's signal/micro/kernels/filter_bank.cc and signal/src/filter_bank.cc.

Allocation: init reads ``num_channels`` and allocates ``TFLMSignalFilterBankParams``, then the
work area of ``(num_channels + 1)`` uint64 accumulators (persistent). Prepare takes the seven
temp tensors one after another (input, weights, unweights, channel_frequency_starts,
channel_weight_starts, channel_widths, output).

Eval (FilterbankAccumulateChannels): channel i sums ``weights * energy`` over its band plus
the ``unweights * energy`` of channel i - 1's band, in uint64 arithmetic (int16 weights are
sign-extended, sums wrap modulo 2**64); channel 0 is scratch and the output gets 1..n.
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
    check_io,
    check_rank,
    check_type,
    temp_input,
    temp_output,
)
from tinyarena.model.types import Operator, TensorType

NUM_CHANNELS = 0  # 'num_channels'
ROLES = ("input", "weights", "unweights", "channel_frequency_starts", "channel_weight_starts",
         "channel_widths")
U64 = np.uint64


def init(ctx: InitContext, op: Operator) -> None:
    channels = FlexOptions.parse(op).element(NUM_CHANNELS, "num_channels")
    if channels < 0:
        raise KernelError(f"{op.name}: num_channels {channels} is negative")
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalFilterBankParams"))
    ctx.allocate_persistent((channels + 1) * 8)


@dataclass(frozen=True)
class OpData:
    channels: int
    outputs: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    check_io(op, 6, 1)
    for i, role in enumerate(ROLES):
        tensor = temp_input(ctx, op, i, role)
        check_rank(op, tensor, role, 1)
        check_type(op, tensor, role, TensorType.UINT32 if i == 0 else TensorType.INT16)
    y = temp_output(ctx, op, 0, "output")
    check_rank(op, y, "output", 1)
    check_type(op, y, "output", TensorType.UINT64)
    channels = FlexOptions.parse(op).element(NUM_CHANNELS, "num_channels")
    for i in (3, 4, 5):
        t = ctx.tensor(op.inputs[i])
        assert t is not None
        if t.shape[0] < channels + 1:
            raise KernelError(f"{op.name}: {ROLES[i]} holds {t.shape[0]} values but TFLM reads "
                              f"num_channels + 1 = {channels + 1}")
    if y.shape[0] > channels:
        raise KernelError(f"{op.name}: the output has {y.shape[0]} channels, more than "
                          f"num_channels {channels} (TFLM would copy past its work area)")
    return OpData(channels, int(y.shape[0]))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    energy, weights, unweights, freq_starts, weight_starts, widths = (
        ctx.tensor_data(i) for i in op.inputs)
    n = data.channels + 1
    fs = freq_starts[:n].astype(np.int64)
    ws = weight_starts[:n].astype(np.int64)
    width = np.maximum(widths[:n].astype(np.int64), 0)
    total = int(width.sum())
    # One flat run of (spectrum index, weight index) per channel band, channel after channel.
    channel = np.repeat(np.arange(n), width)
    offset = np.arange(total) - np.repeat(np.cumsum(width) - width, width)
    spec_index = fs[channel] + offset
    weight_index = ws[channel] + offset
    if total and (spec_index.min() < 0 or spec_index.max() >= energy.shape[0]
                  or weight_index.min() < 0 or weight_index.max() >= weights.shape[0]
                  or weight_index.max() >= unweights.shape[0]):
        raise KernelError(f"{op.name}: a channel band reaches outside the spectrum or the "
                          f"weights (TFLM would read past them); check the band tensors")
    e = energy[spec_index].astype(U64)
    wsum = _band_sums(weights[weight_index].astype(np.int64).astype(U64) * e, width)
    usum = _band_sums(unweights[weight_index].astype(np.int64).astype(U64) * e, width)
    acc = wsum.copy()
    acc[1:] += usum[:-1]  # each channel also takes the previous band's unweighted energy
    ctx.tensor_data(op.outputs[0])[...] = acc[1:1 + data.outputs]


def _band_sums(products: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Sum of each channel's run of products, modulo 2**64 (uint64 cumsum differences)."""
    ends = np.cumsum(width)
    cumulative = np.concatenate([np.zeros(1, U64), np.cumsum(products, dtype=U64)])
    return cumulative[ends] - cumulative[ends - width]


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on and constant weights and bands (as the front end's are):
    the channel sums in one compiled loop."""
    if not native.enabled(ctx):
        return None
    tensors = [ctx.tensor(i) for i in op.inputs[1:]]
    if not all(t is not None and t.is_constant for t in tensors):
        return None
    from tinyarena.kernels.native.signal import bind_filter_bank

    x, weights, unweights, freq_starts, weight_starts, widths = (
        ctx.tensor_data(i) for i in op.inputs)
    return bind_filter_bank(x, weights, unweights, freq_starts, weight_starts, widths,
                            ctx.tensor_data(op.outputs[0]), data.channels)

REGISTRATION = Registration("SignalFilterBank", init=init, prepare=prepare, eval=eval_,
                            bind=bind)
