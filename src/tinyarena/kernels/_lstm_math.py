"""UNIDIRECTIONAL_SEQUENCE_LSTM arithmetic, bit-exact with TFLM's lstm_eval.{h,cc} and
lstm_eval_common.cc (the standard LSTM only: no peephole, projection, layer norm or CIFG).

Three kernels, chosen by the activation and weight types:

* float32 (``EvalLstm<float, float, float, float>``): float32 fully-connected sums accumulated
  sequentially over the reduction axis (the C loop order), float32 logistic with TFLM's cutoffs
  and float32 tanh.
* 8x8->16 (int8 activations, int8 weights, int16 cell state, int32 bias) and 16x8->16 (int16
  activations, int8 weights, int16 cell, int64 bias): gate pre-activations in Q3.12, TFLM's
  int16 sigmoid/tanh (the 256-entry ``sigmoid_table_uint16`` with linear interpolation), gate
  outputs in Q0.15, the cell state at a power-of-two scale.

Every step is vectorised over the batch (batches are independent rows, whether the model is
time-major or batch-major), and the only Python loop is the recurrence over time steps (plus,
for float32, the reduction axis of each dot product, to keep float32 summation order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._libm import tanhf
from tinyarena.kernels._lut import SIGMOID_TABLE_UINT16
from tinyarena.kernels._quant import (
    QuantParams,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    quantize_multiplier,
    wrap_int32,
)

F32 = np.float32
GATES = ("forget", "input", "cell", "output")
# Input tensor indices of each gate's (input weights, recurrent weights, bias), lstm_shared.h.
GATE_TENSORS = {"input": (1, 5, 12), "forget": (2, 6, 13), "cell": (3, 7, 14),
                "output": (4, 8, 15)}
GATE_PREACT_SCALE = 2.0 ** -12  # nonlinear_input_scale: Q3.12
GATE_OUTPUT_SCALE = 2.0 ** -15  # nonlinear_output_scale: Q0.15
_INT16_MIN, _INT16_MAX = -32768, 32767
_SIGMOID_TABLE = SIGMOID_TABLE_UINT16.astype(np.int64)


# ----------------------------------------------------------------------------------------------
# Prepare: quantization parameters (lstm_eval_common.cc)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FcQuant:
    """FullyConnectedParamsQuantized for one gate FC (output: int16 at 2^-12, zero point 0)."""

    input_offset: int
    weights_offset: int
    multiplier: int
    shift: int


@dataclass(frozen=True)
class MulQuant:
    """CreateInterGateMulParams: one multiplier, an output offset and the output's type range."""

    multiplier: int
    shift: int
    output_offset: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class LstmQuant:
    """OpDataLSTM's integer fields: per-gate FC parameters, inter-gate muls, cell info."""

    input_fc: dict[str, FcQuant]
    recurrent_fc: dict[str, FcQuant]
    forget_cell_mul: MulQuant
    input_mul: MulQuant
    output_mul: MulQuant
    cell_state_scale_power: int
    quantized_cell_clip: int


def fc_quant(inp: QuantParams, weight: QuantParams) -> FcQuant:
    """CalculateOpDataFullyConnected with a bias of nullptr and the Q3.12 int16 output.

    GetQuantizedConvolutionMultipler as the pinned wheel computes it: both float32 scales
    widened to double, multiplied and divided by the output scale in double. (The repository
    snapshot rounds the product to float32 first; see test_multiplier_drift.py.)
    """
    product = float(F32(inp.scale)) * float(F32(weight.scale))
    m, s = quantize_multiplier(product / float(F32(GATE_PREACT_SCALE)))
    return FcQuant(-inp.zero_point, -weight.zero_point, m, s)


def inter_gate_mul(scale1: float, scale2: float, out_scale: float, out_bits: int,
                   out_zp: int = 0) -> MulQuant:
    """CreateInterGateMulParams: double(s1) * double(s2) / double(out), range of the output type."""
    m, s = quantize_multiplier(float(F32(scale1)) * float(F32(scale2)) / float(F32(out_scale)))
    lo, hi = (-128, 127) if out_bits == 8 else (_INT16_MIN, _INT16_MAX)
    return MulQuant(m, s, out_zp, lo, hi)


def checked_log2(x: float) -> int:
    """CheckedLog2: round(log(x) / log(2)) in float32; requires a power-of-two scale."""
    x_log2 = F32(math.log(float(F32(x)))) * (F32(1.0) / F32(math.log(2.0)))
    rounded = F32(math.floor(abs(float(x_log2)) + 0.5) * (1 if x_log2 >= 0 else -1))
    if not abs(float(x_log2 - rounded)) < 1e-3:
        raise KernelError(f"LSTM: cell state scale {x} must be a power of two")
    return int(rounded)


def lstm_quant(input_q: QuantParams, hidden_q: QuantParams, hidden_bits: int,
               cell_scale: float, cell_clip: float,
               weights: dict[str, tuple[QuantParams, QuantParams]]) -> LstmQuant:
    """PrepareGateParametersInteger + CreateLstmCellStateInfo."""
    input_fc = {g: fc_quant(input_q, weights[g][0]) for g in GATES}
    recurrent_fc = {g: fc_quant(hidden_q, weights[g][1]) for g in GATES}
    power = checked_log2(cell_scale)
    clip = float(F32(cell_clip)) / float(F32(cell_scale))
    quantized_clip = int(min(max(clip, -32768.0), 32767.0))  # static_cast<int16_t> truncates
    return LstmQuant(
        input_fc, recurrent_fc,
        inter_gate_mul(GATE_OUTPUT_SCALE, cell_scale, cell_scale, 16),
        inter_gate_mul(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, cell_scale, 16),
        inter_gate_mul(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, hidden_q.scale, hidden_bits,
                       hidden_q.zero_point),
        power, quantized_clip)


# ----------------------------------------------------------------------------------------------
# Integer building blocks (lstm_eval.cc lstm_internal, reference_integer_ops)
# ----------------------------------------------------------------------------------------------


def int16_sigmoid(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic(0, 0, ...) on Q3.12 int16: LUT, 9-bit interpolation."""
    v = x.astype(np.int64) * 3  # power-of-two case: multiplier 3 << 0, no shift
    a = np.abs(v)
    uh = a >> 9
    idx = np.minimum(uh, 254)
    ua, ub = _SIGMOID_TABLE[idx], _SIGMOID_TABLE[idx + 1]
    res = np.where(uh >= 255, 0x7FFF << 10, (ua << 9) + (a & 0x1FF) * (ub - ua))
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return (res >> 10).astype(np.int16)


def int16_tanh(x: np.ndarray, scale_power: int) -> np.ndarray:
    """lstm_internal::Tanh -> reference_integer_ops::Tanh on an int16 input at 2^scale_power."""
    left_shift = 15 + scale_power - 3
    if left_shift < 0:
        multiplier, shift = 3, -left_shift
    else:
        multiplier, shift = 3 << left_shift, 0
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    v = wrap_int32(x.astype(np.int64) * multiplier + rnd) >> shift
    a = np.abs(v)
    uh = a >> 8
    idx = np.minimum(uh, 254)
    ua, ub = _SIGMOID_TABLE[idx], _SIGMOID_TABLE[idx + 1]
    res = np.where(uh >= 255, 0xFFFF << 8, (ua << 8) + (a & 0xFF) * (ub - ua))
    res = np.where(v >= 0, res - (1 << 23) + (1 << 7), -res + (1 << 23) + (1 << 7) - 1)
    return (res >> 8).astype(np.int16)


def _fc_int(x: np.ndarray, w_offset: np.ndarray, bias: np.ndarray | None, q: FcQuant,
            wide_bias: bool) -> np.ndarray:
    """reference_integer_ops::FullyConnected to int16 (full range, output offset 0).

    ``w_offset`` is the weight matrix with its offset already added (int64). With int32 bias
    (8x8) the accumulator is a wrapping int32 and the int32 MultiplyByQuantizedMultiplier
    applies; with int64 bias (16x8) the int64 accumulator and the int64 variant.
    """
    acc = (x.astype(np.int64) + q.input_offset) @ w_offset.T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    if wide_bias:
        scaled = multiply_by_quantized_multiplier_int64(acc, q.multiplier, q.shift)
    else:
        scaled = multiply_by_quantized_multiplier(wrap_int32(acc), q.multiplier, q.shift)
    return np.clip(scaled, _INT16_MIN, _INT16_MAX)


def _add_sat16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """lstm_internal::AddElementWise: saturating int16 sum."""
    return np.clip(a.astype(np.int64) + b.astype(np.int64), _INT16_MIN, _INT16_MAX)


def _mul_int(a: np.ndarray, b: np.ndarray, q: MulQuant) -> np.ndarray:
    """reference_integer_ops::MulElementwise with zero input offsets."""
    prod = a.astype(np.int64) * b.astype(np.int64)
    res = multiply_by_quantized_multiplier(prod, q.multiplier, q.shift) + q.output_offset
    return np.clip(res, q.act_min, q.act_max)


@dataclass(frozen=True)
class LstmWeights:
    """Per gate: input weights, recurrent weights (int64, offsets added; float32 as stored),
    and the input-FC bias (None when absent)."""

    input_w: dict[str, np.ndarray]
    recurrent_w: dict[str, np.ndarray]
    bias: dict[str, np.ndarray | None]


def _at(a: np.ndarray, t: int, time_major: bool) -> np.ndarray:
    """Time step ``t`` of a (T, B, ...) or (B, T, ...) array, as a (B, ...) view."""
    return a[t] if time_major else a[:, t]


def lstm_integer(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, out: np.ndarray,
                 w: LstmWeights, q: LstmQuant, time_major: bool, cell_activation: str,
                 cell_clip: float, wide_bias: bool) -> None:
    """EvalLstm for the integer kernels; updates ``hidden`` and ``cell`` in place.

    ``x``: (T, B, I) or (B, T, I); ``hidden``/``cell``: B * S values; ``out`` like ``x`` with S.
    """
    steps = x.shape[0] if time_major else x.shape[1]
    batch = x.shape[1] if time_major else x.shape[0]
    h = hidden.reshape(batch, -1)
    c = cell.reshape(batch, -1)
    out3 = out.reshape(out.shape[0], out.shape[1], -1)
    out_info = np.iinfo(hidden.dtype)

    def gate(name: str, xt: np.ndarray, act: str) -> np.ndarray:
        pre = _add_sat16(
            _fc_int(xt, w.input_w[name], w.bias[name], q.input_fc[name], wide_bias),
            _fc_int(h, w.recurrent_w[name], None, q.recurrent_fc[name], wide_bias))
        if act == "SIGMOID":
            return int16_sigmoid(pre)
        if act == "TANH":
            return int16_tanh(pre, -12)  # CalculateLstmGate: scale power -12, no shift
        raise KernelError(f"LSTM: cell gate activation {act} is not supported (TANH or SIGMOID)")

    for t in range(steps):
        xt = _at(x, t, time_major)
        forget = gate("forget", xt, "SIGMOID")
        inp = gate("input", xt, "SIGMOID")
        cgate = gate("cell", xt, cell_activation)
        new_c = _add_sat16(_mul_int(forget, c, q.forget_cell_mul),
                           _mul_int(inp, cgate, q.input_mul))
        if cell_clip > 0:
            new_c = np.clip(new_c, -q.quantized_cell_clip, q.quantized_cell_clip)
        c[...] = new_c
        og = gate("output", xt, "SIGMOID")
        hid = _mul_int(int16_tanh(c, q.cell_state_scale_power), og, q.output_mul)
        h[...] = np.clip(hid, out_info.min, out_info.max)
        _at(out3, t, time_major)[...] = h


# ----------------------------------------------------------------------------------------------
# float32
# ----------------------------------------------------------------------------------------------


def _fc_float(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """reference_ops::FullyConnected: float32 dot products summed in input order."""
    total = np.zeros((x.shape[0], w.shape[0]), dtype=F32)
    for d in range(x.shape[1]):
        total += x[:, d][:, None] * w[:, d][None, :]
    if bias is not None:
        total = total + bias[None, :]
    return total


def float_sigmoid(v: np.ndarray) -> np.ndarray:
    """reference_ops::Logistic<float>: 1 above 16.619..., exp(x) below -9, else 1/(1+exp(-x))."""
    e_neg = np.exp(-v.astype(np.float64)).astype(F32)
    e_pos = np.exp(v.astype(np.float64)).astype(F32)
    mid = F32(1) / (F32(1) + e_neg)
    res = np.where(v > F32(16.619047164916992188), F32(1), np.where(v < F32(-9), e_pos, mid))
    return res.astype(F32)


def float_tanh(v: np.ndarray) -> np.ndarray:
    """std::tanh on float32: glibc's tanhf, ported bit-exactly in ``_libm``."""
    return tanhf(v)


def lstm_float(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, out: np.ndarray,
               w: LstmWeights, time_major: bool, cell_activation: str, cell_clip: float) -> None:
    """EvalLstm<float, ...>; updates ``hidden`` and ``cell`` in place."""
    steps = x.shape[0] if time_major else x.shape[1]
    batch = x.shape[1] if time_major else x.shape[0]
    h = hidden.reshape(batch, -1)
    c = cell.reshape(batch, -1)
    out3 = out.reshape(out.shape[0], out.shape[1], -1)
    clip = F32(cell_clip)

    def gate(name: str, xt: np.ndarray, act: str) -> np.ndarray:
        pre = _fc_float(xt, w.input_w[name], w.bias[name]) + _fc_float(h, w.recurrent_w[name],
                                                                      None)
        if act == "SIGMOID":
            return float_sigmoid(pre)
        if act == "TANH":
            return float_tanh(pre)
        raise KernelError(f"LSTM: cell gate activation {act} is not supported (TANH or SIGMOID)")

    for t in range(steps):
        xt = _at(x, t, time_major)
        forget = gate("forget", xt, "SIGMOID")
        inp = gate("input", xt, "SIGMOID")
        cgate = gate("cell", xt, cell_activation)
        new_c = forget * c + inp * cgate
        if cell_clip > 0:
            new_c = np.maximum(np.minimum(clip, new_c), -clip)
        c[...] = new_c
        og = gate("output", xt, "SIGMOID")
        h[...] = float_tanh(c) * og
        _at(out3, t, time_major)[...] = h


__all__ = [
    "GATES",
    "GATE_TENSORS",
    "FcQuant",
    "LstmQuant",
    "LstmWeights",
    "MulQuant",
    "fc_quant",
    "float_sigmoid",
    "float_tanh",
    "int16_sigmoid",
    "int16_tanh",
    "lstm_float",
    "lstm_integer",
    "lstm_quant",
]
