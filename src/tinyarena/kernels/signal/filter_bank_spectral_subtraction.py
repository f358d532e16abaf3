"""SignalFilterBankSpectralSubtraction: TFLM's
signal/micro/kernels/filter_bank_spectral_subtraction.cc and
signal/src/filter_bank_spectral_subtraction.cc.

Allocation: init reads the nine options (sorted: alternate_one_minus_smoothing,
alternate_smoothing, clamping, min_signal_remaining, num_channels, one_minus_smoothing,
smoothing, smoothing_bits, spectral_subtraction_bits) and allocates
``TFLMSignalSpectralSubtractionParams`` and the noise estimate, ``4 * num_channels`` bytes.
Prepare takes temp tensors input, output, noise_estimate and zeroes the estimate.

The noise estimate is state: a low-pass filter over invokes, kept here in a persistent
workspace and copied to the second output after every eval. The kernel's Reset (called by
MicroInterpreter::Reset) zeroes it again.
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
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType

U64 = np.uint64
NAMES = ("alternate_one_minus_smoothing", "alternate_smoothing", "clamping",
         "min_signal_remaining", "num_channels", "one_minus_smoothing", "smoothing",
         "smoothing_bits", "spectral_subtraction_bits")


@dataclass(frozen=True)
class Config:
    """SpectralSubtractionConfig (the int32 options stored into uint32 fields)."""

    alternate_one_minus_smoothing: int
    alternate_smoothing: int
    clamping: bool
    min_signal_remaining: int
    num_channels: int
    one_minus_smoothing: int
    smoothing: int
    smoothing_bits: int
    spectral_subtraction_bits: int


def config(op: Operator) -> Config:
    options = FlexOptions.parse(op)
    raw = [options.element(i, name) for i, name in enumerate(NAMES)]
    u = [v & 0xFFFFFFFF for v in raw]  # the uint32 fields
    cfg = Config(u[0], u[1], bool(raw[2]), u[3], raw[4], u[5], u[6], u[7], u[8])
    if cfg.num_channels < 0:
        raise KernelError(f"{op.name}: num_channels {cfg.num_channels} is negative")
    if cfg.smoothing_bits >= 32 or cfg.spectral_subtraction_bits >= 64:
        raise KernelError(f"{op.name}: smoothing_bits {cfg.smoothing_bits} or "
                          f"spectral_subtraction_bits {cfg.spectral_subtraction_bits} is too "
                          f"large a C shift (undefined)")
    return cfg


def init(ctx: InitContext, op: Operator) -> None:
    cfg = config(op)
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalSpectralSubtractionParams"))
    ctx.allocate_persistent(cfg.num_channels * 4)


@dataclass(frozen=True)
class OpData:
    config: Config
    noise: int  # persistent workspace: the noise estimate (uint32 per channel)


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y, noise = temp_tensors(ctx, op, ("input",), ("output", "noise_estimate"))
    for tensor, role in ((x, "input"), (y, "output"), (noise, "noise_estimate")):
        check_rank(op, tensor, role, 1)
        check_type(op, tensor, role, TensorType.UINT32)
    cfg = config(op)
    n = cfg.num_channels
    if min(x.shape[0], y.shape[0]) < n or noise.shape[0] > n:
        raise KernelError(f"{op.name}: input and output need num_channels ({n}) values and "
                          f"the noise estimate at most that many (TFLM copies its size)")
    return OpData(cfg, ctx.request_workspace((n,), np.uint32))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    cfg = data.config
    n = cfg.num_channels
    state = ctx.workspace(data.noise)
    x = ctx.tensor_data(op.inputs[0])[:n].astype(U64)
    odd = (np.arange(n) & 1).astype(bool)
    smoothing = np.where(odd, cfg.alternate_smoothing, cfg.smoothing).astype(U64)
    one_minus = np.where(odd, cfg.alternate_one_minus_smoothing,
                         cfg.one_minus_smoothing).astype(U64)
    bits = U64(cfg.spectral_subtraction_bits)
    signal = (x << U64(cfg.smoothing_bits)) & U64(0xFFFFFFFF)
    noise = ((signal * smoothing + state.astype(U64) * one_minus) >> bits) & U64(0xFFFFFFFF)
    estimate = np.minimum(noise, signal)
    if cfg.clamping:
        noise = estimate
    floor = ((x * U64(cfg.min_signal_remaining)) >> bits) & U64(0xFFFFFFFF)
    subtracted = (signal - estimate) >> U64(cfg.smoothing_bits)
    state[...] = noise.astype(np.uint32)
    ctx.tensor_data(op.outputs[0])[:n] = np.maximum(subtracted, floor).astype(np.uint32)
    out_noise = ctx.tensor_data(op.outputs[1])
    out_noise[...] = state[:out_noise.shape[0]]


def reset(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """FilterBankSpectralSubtractionReset: the noise estimate back to zero."""
    ctx.workspace(data.noise)[...] = 0


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    """With compiled kernels on: one compiled loop updating the same noise-estimate
    workspace (so reset, and a switch between paths, see the same state)."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native import signal as compiled

    cfg = data.config
    params = np.zeros(compiled.SS_SIZE, np.int64)
    params[compiled.SS_CHANNELS] = cfg.num_channels
    params[compiled.SS_SMOOTHING] = cfg.smoothing
    params[compiled.SS_ONE_MINUS] = cfg.one_minus_smoothing
    params[compiled.SS_ALT_SMOOTHING] = cfg.alternate_smoothing
    params[compiled.SS_ALT_ONE_MINUS] = cfg.alternate_one_minus_smoothing
    params[compiled.SS_SMOOTHING_BITS] = cfg.smoothing_bits
    params[compiled.SS_BITS] = cfg.spectral_subtraction_bits
    params[compiled.SS_MIN_REMAINING] = cfg.min_signal_remaining
    params[compiled.SS_CLAMPING] = int(cfg.clamping)
    return compiled.bind_spectral_subtraction(
        ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
        ctx.tensor_data(op.outputs[1]), ctx.workspace(data.noise), params)

REGISTRATION = Registration("SignalFilterBankSpectralSubtraction", init=init, prepare=prepare,
                            eval=eval_, reset=reset, bind=bind)
