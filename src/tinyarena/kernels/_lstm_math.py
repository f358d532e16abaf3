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

The four gates' weights are stacked at prepare (:class:`LstmPlan`), so each time step makes one
recurrent product for all gate units; the input FCs, which do not depend on the state, are
computed for all time steps at once before the recurrence. Python loops: the time steps, and
for float32 the input FC's reduction axis (once per eval, to keep C's summation order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import wrap_int32_inplace
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._libm import expf_for, tanhf
from tinyarena.kernels._lut import SIGMOID_TABLE_UINT16
from tinyarena.kernels._quant import (
    ChannelRequant,
    QuantParams,
    clip_inplace,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    requantize_inplace,
    requantize_int64_inplace,
    wrap_int32,
)
from tinyarena.kernels._tflm_version import WHEEL, ScaleArithmetic
from tinyarena.kernels._unary import checked_log2
from tinyarena.kernels.base import PrepareContext

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


def fc_quant(inp: QuantParams, weight: QuantParams, arithmetic: ScaleArithmetic = WHEEL
             ) -> FcQuant:
    """CalculateOpDataFullyConnected with a bias of nullptr and the Q3.12 int16 output.

    GetQuantizedConvolutionMultipler: the product of the two float32 scales (in double by the
    wheel, 8f6596d; rounded to float32 by TFLM 90b983c2, see ``_tflm_version``), divided by the
    output scale in double.
    """
    product = arithmetic.product(inp.scale, weight.scale)
    m, s = quantize_multiplier(product / float(F32(GATE_PREACT_SCALE)))
    return FcQuant(-inp.zero_point, -weight.zero_point, m, s)


def inter_gate_mul(scale1: float, scale2: float, out_scale: float, out_bits: int,
                   out_zp: int = 0) -> MulQuant:
    """CreateInterGateMulParams: double(s1) * double(s2) / double(out), range of the output type."""
    m, s = quantize_multiplier(float(F32(scale1)) * float(F32(scale2)) / float(F32(out_scale)))
    lo, hi = (-128, 127) if out_bits == 8 else (_INT16_MIN, _INT16_MAX)
    return MulQuant(m, s, out_zp, lo, hi)


def lstm_quant(input_q: QuantParams, hidden_q: QuantParams, hidden_bits: int,
               cell_scale: float, cell_clip: float,
               weights: dict[str, tuple[QuantParams, QuantParams]],
               arithmetic: ScaleArithmetic = WHEEL) -> LstmQuant:
    """PrepareGateParametersInteger + CreateLstmCellStateInfo."""
    input_fc = {g: fc_quant(input_q, weights[g][0], arithmetic) for g in GATES}
    recurrent_fc = {g: fc_quant(hidden_q, weights[g][1], arithmetic) for g in GATES}
    is_pot, power = checked_log2(cell_scale)
    if not is_pot:
        raise KernelError(f"LSTM: cell state scale {cell_scale} must be a power of two")
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


def _add_sat16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """lstm_internal::AddElementWise: saturating int16 sum."""
    return np.clip(a.astype(np.int64) + b.astype(np.int64), _INT16_MIN, _INT16_MAX)


def _mul_int(a: np.ndarray, b: np.ndarray, q: MulQuant) -> np.ndarray:
    """reference_integer_ops::MulElementwise with zero input offsets."""
    prod = a.astype(np.int64) * b.astype(np.int64)
    res = multiply_by_quantized_multiplier(prod, q.multiplier, q.shift) + q.output_offset
    return np.clip(res, q.act_min, q.act_max)


# Gate order of the stacked weight matrices: the three sigmoid gates first, so one activation
# call covers them, then the cell gate with its configurable activation.
STACKED = ("forget", "input", "output", "cell")


@dataclass(frozen=True)
class LstmPlan:
    """What every eval needs, fixed at prepare.

    The four gates' weights are stacked in ``STACKED`` order and transposed, so one product of
    a row of activations with ``w_in`` (I, 4S) or ``w_rec`` (S, 4S) yields every gate unit at
    once: float32 as stored, or int64 with the weight offset added. ``bias`` (4S,): float32 or
    int64, zero for a gate without bias (TFLM then adds a zero, which changes nothing: its sums
    start at +0 and so are never -0). The integer kernels rescale each FC per column with the
    gate's multiplier (``in_rq``/``rec_rq``, int16 range). ``workspaces``: scratch handles, see
    :func:`lstm_plan`.
    """

    kind: str  # "float", "8x8_16" or "16x8_16"
    time_major: bool
    steps: int
    batch: int
    n_input: int
    n_state: int
    w_in: np.ndarray
    w_rec: np.ndarray
    bias: np.ndarray
    input_offset: int
    hidden_offset: int
    in_rq: ChannelRequant | None
    rec_rq: ChannelRequant | None
    workspaces: tuple[int, ...]
    libm: str = "glibc"  # float: the build's C library (std::exp), see _libm.expf_for
    fused: bool = False  # float FC sums as fused multiply-adds (the target's ``float_fma``)


GateArrays = dict[str, tuple[np.ndarray, np.ndarray, "np.ndarray | None"]]


def lstm_plan(ctx: PrepareContext, kind: str, time_major: bool, x_shape: tuple[int, ...],
              n_state: int, weights: GateArrays, quant: LstmQuant | None) -> LstmPlan:
    """Stack the gates' weights and request the eval scratch (Python-side workspaces).

    ``weights[g]`` = (input weights (S, I), recurrent weights (S, S), bias (S,) or None), float32
    as stored or int64 with the weight offsets added. Scratch (all rewritten each eval): the
    input FC of every time step at once (N = steps * batch rows, 4S columns) and a product
    buffer; per step the recurrent products and the gate values.
    """
    steps, batch = (x_shape[0], x_shape[1]) if time_major else (x_shape[1], x_shape[0])
    n_input, rows, cols = x_shape[2], steps * batch, 4 * n_state

    def request(shape: tuple[int, ...], dtype: type) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    w_in = np.ascontiguousarray(np.concatenate([weights[g][0] for g in STACKED], axis=0).T)
    w_rec = np.ascontiguousarray(np.concatenate([weights[g][1] for g in STACKED], axis=0).T)
    if kind == "float":
        bias = np.concatenate([np.zeros(n_state, F32) if weights[g][2] is None
                               else np.asarray(weights[g][2], F32) for g in STACKED])
        ws_float = (request((rows, cols), F32), request((rows, cols), F32),
                    request((batch, n_state + 1, cols), F32), request((batch, cols), F32))
        return LstmPlan(kind, time_major, steps, batch, n_input, n_state, w_in.astype(F32),
                        w_rec.astype(F32), bias, 0, 0, None, None, ws_float,
                        libm=ctx.target.libm,
                        fused=bool(getattr(ctx.target, "float_fma", False)))
    if quant is None:
        raise KernelError(f"LSTM: the {kind} kernel needs the quantization parameters of its "
                          "gates; none were computed")
    bias = np.concatenate([np.zeros(n_state, np.int64) if weights[g][2] is None
                           else np.asarray(weights[g][2], np.int64) for g in STACKED])

    def rescale(fc: dict[str, FcQuant]) -> ChannelRequant:
        mult = np.repeat([fc[g].multiplier for g in STACKED], n_state)
        shift = np.repeat([fc[g].shift for g in STACKED], n_state)
        return ChannelRequant.make(mult, shift, 0, _INT16_MIN, _INT16_MAX)

    i64 = np.int64
    ws = (request((rows, n_input), i64), request((rows, cols), i64), request((rows, cols), i64),
          request((batch, n_state), i64), request((batch, cols), i64),
          request((batch, cols), i64))
    return LstmPlan(kind, time_major, steps, batch, n_input, n_state, w_in.astype(i64),
                    w_rec.astype(i64), bias, quant.input_fc["forget"].input_offset,
                    quant.recurrent_fc["forget"].input_offset, rescale(quant.input_fc),
                    rescale(quant.recurrent_fc), ws)


def _at(a: np.ndarray, t: int, time_major: bool) -> np.ndarray:
    """Time step ``t`` of a (T, B, ...) or (B, T, ...) array, as a (B, ...) view."""
    return a[t] if time_major else a[:, t]


def _fc_rescale(acc: np.ndarray, rq: ChannelRequant, tmp: np.ndarray, wide: bool) -> None:
    """The end of reference_integer_ops::FullyConnected to int16 (output offset 0), in place.

    8x8: the accumulator is a wrapping int32 and the int32 MultiplyByQuantizedMultiplier
    applies; 16x8 (int64 bias): the int64 accumulator and the int64 variant.
    """
    if wide:
        requantize_int64_inplace(acc, rq, acc)
    else:
        wrap_int32_inplace(acc)
        requantize_inplace(acc, rq, acc, tmp)


def lstm_integer(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, out: np.ndarray,
                 plan: LstmPlan, q: LstmQuant, cell_activation: str, cell_clip: float,
                 ws: Callable[[int], np.ndarray]) -> None:
    """EvalLstm for the integer kernels; updates ``hidden`` and ``cell`` in place.

    ``x``: (T, B, I) or (B, T, I); ``hidden``/``cell``: B * S values; ``out`` like ``x`` with S.
    The input FCs do not depend on the state, so all time steps' are computed at once (one
    exact int64 product, bias, per-gate rescale); each step then costs one recurrent product
    for all four gates.
    """
    x64, pre, tmp, h64, rec, rtmp = (ws(h) for h in plan.workspaces)
    s, wide = plan.n_state, plan.kind == "16x8_16"
    np.copyto(x64, x.reshape(x64.shape))
    x64 += plan.input_offset
    np.matmul(x64, plan.w_in, out=pre)
    pre += plan.bias
    assert plan.in_rq is not None and plan.rec_rq is not None
    _fc_rescale(pre, plan.in_rq, tmp, wide)
    pre3 = pre.reshape(x.shape[0], x.shape[1], 4 * s)
    h = hidden.reshape(plan.batch, s)
    c = cell.reshape(plan.batch, s)
    out3 = out.reshape(out.shape[0], out.shape[1], s)
    for t in range(plan.steps):
        np.copyto(h64, h)
        h64 += plan.hidden_offset
        np.matmul(h64, plan.w_rec, out=rec)
        _fc_rescale(rec, plan.rec_rq, rtmp, wide)
        rec += _at(pre3, t, plan.time_major)  # AddElementWise: saturating int16 sum
        clip_inplace(rec, _INT16_MIN, _INT16_MAX)
        sig = int16_sigmoid(rec[:, :3 * s])
        if cell_activation == "SIGMOID":
            cgate = int16_sigmoid(rec[:, 3 * s:])
        elif cell_activation == "TANH":
            cgate = int16_tanh(rec[:, 3 * s:], -12)  # CalculateLstmGate: scale power -12
        else:
            raise KernelError(f"LSTM: cell gate activation {cell_activation} is not supported "
                              "(TANH or SIGMOID)")
        new_c = _add_sat16(_mul_int(sig[:, :s], c, q.forget_cell_mul),
                           _mul_int(sig[:, s:2 * s], cgate, q.input_mul))
        if cell_clip > 0:
            clip_inplace(new_c, -q.quantized_cell_clip, q.quantized_cell_clip)
        c[...] = new_c
        h[...] = _mul_int(int16_tanh(c, q.cell_state_scale_power), sig[:, 2 * s:],
                          q.output_mul)  # clamped to the hidden type's range
        _at(out3, t, plan.time_major)[...] = h


# ----------------------------------------------------------------------------------------------
# float32
# ----------------------------------------------------------------------------------------------


def float_sigmoid(v: np.ndarray, libm: str = "glibc") -> np.ndarray:
    """reference_ops::Logistic<float>: 1 above 16.619..., exp(x) below -9, else 1/(1+exp(-x)),
    with std::exp(float) as the build's C library computes it (``_libm.expf_for``), evaluated
    once per element on whichever argument its branch needs."""
    low = v < F32(-9)
    e = expf_for(libm)(np.where(low, v, -v))
    mid = F32(1) / (F32(1) + e)
    res = np.where(v > F32(16.619047164916992188), F32(1), np.where(low, e, mid))
    return res.astype(F32)


def float_tanh(v: np.ndarray) -> np.ndarray:
    """std::tanh on float32: glibc's tanhf, ported bit-exactly in ``_libm``."""
    return tanhf(v)


def lstm_float(x: np.ndarray, hidden: np.ndarray, cell: np.ndarray, out: np.ndarray,
               plan: LstmPlan, cell_activation: str, cell_clip: float,
               ws: Callable[[int], np.ndarray]) -> None:
    """EvalLstm<float, ...>; updates ``hidden`` and ``cell`` in place.

    reference_ops::FullyConnected sums each output in float32 as ``total = 0; total += x[d] *
    w[d]`` for d in order, then adds the bias. Kept exactly, vectorised over every other axis:
    the input FCs of all time steps at once by a loop over d on (N, 4S) arrays, and per step
    the recurrent FC as the products (prefixed by a +0 row) accumulated in order along d with
    np.add.accumulate, which is sequential. The gate order of one step is then
    (input FC + bias) + recurrent FC, as AddElementWise adds them.
    """
    pre, prod, rec, gates = (ws(h) for h in plan.workspaces)
    s = plan.n_state
    xs = x.reshape(-1, plan.n_input)
    pre.fill(0)
    for d in range(plan.n_input):
        if plan.fused:  # reference_ops::FullyConnected's total += a * b as one fmaf
            pre[...] = fma32(xs[:, d:d + 1], plan.w_in[d], pre)
            continue
        np.multiply(xs[:, d:d + 1], plan.w_in[d], out=prod)
        pre += prod
    pre += plan.bias
    pre3 = pre.reshape(x.shape[0], x.shape[1], 4 * s)
    h = hidden.reshape(plan.batch, s)
    c = cell.reshape(plan.batch, s)
    out3 = out.reshape(out.shape[0], out.shape[1], s)
    clip = F32(cell_clip)
    for t in range(plan.steps):
        if plan.fused:
            total = rec[:, s, :]
            total.fill(0)
            for j in range(s):
                total[...] = fma32(h[:, j:j + 1], plan.w_rec[j], total)
        else:
            rec[:, 0, :] = 0
            np.multiply(h[:, :, None], plan.w_rec, out=rec[:, 1:, :])
            np.add.accumulate(rec, axis=1, out=rec)
        np.add(_at(pre3, t, plan.time_major), rec[:, s, :], out=gates)
        gates[:, :3 * s] = float_sigmoid(gates[:, :3 * s], plan.libm)
        if cell_activation == "SIGMOID":
            gates[:, 3 * s:] = float_sigmoid(gates[:, 3 * s:], plan.libm)
        elif cell_activation == "TANH":
            gates[:, 3 * s:] = float_tanh(gates[:, 3 * s:])
        else:
            raise KernelError(f"LSTM: cell gate activation {cell_activation} is not supported "
                              "(TANH or SIGMOID)")
        new_c = gates[:, :s] * c + gates[:, s:2 * s] * gates[:, 3 * s:]
        if cell_clip > 0:
            new_c = np.maximum(np.minimum(clip, new_c), -clip)
        c[...] = new_c
        h[...] = float_tanh(c) * gates[:, 2 * s:3 * s]
        _at(out3, t, plan.time_major)[...] = h


__all__ = [
    "GATES",
    "GATE_TENSORS",
    "STACKED",
    "FcQuant",
    "LstmPlan",
    "LstmQuant",
    "MulQuant",
    "fc_quant",
    "float_sigmoid",
    "float_tanh",
    "int16_sigmoid",
    "int16_tanh",
    "lstm_float",
    "lstm_integer",
    "lstm_plan",
    "lstm_quant",
]
