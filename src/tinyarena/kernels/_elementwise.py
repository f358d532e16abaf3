"""Arithmetic shared by the binary element-wise kernels ADD, SUB and MUL, bit-exact with TFLM.

TFLM's reference kernels broadcast with ``BroadcastBinaryOpSimple`` (numpy rules, up to 8 dims in
the reference loop, 6 in the kernels' names), so numpy broadcasting gives the same element
pairing. What needs care is the arithmetic per element:

* quantized ADD/SUB (int8 and int16 alike in TFLM's micro kernels): each input is offset,
  shifted left by 20 (int8) or 15 (int16), scaled by its own Q31 multiplier, summed, then
  scaled by the output multiplier (``AddFunc`` / ``BroadcastQuantSubSlow``). Because the
  per-input part depends on one input only, it is computed on each input's own (unbroadcast)
  shape and only the sum is broadcast.
* quantized MUL: (x1 - zp1) * (x2 - zp2) scaled by one multiplier (``MulElementwise``).
* float32: one IEEE float32 operation per element then a clamp, which numpy reproduces
  exactly (the result is rounded once either way).
* int32: wrapping arithmetic, clamped by the activation range (SUB, MUL) or not at all (ADD).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._quant import (
    QuantParams,
    calculate_activation_range_quantized,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier,
    quantize_multiplier_smaller_than_one_exp,
    wrap_int32,
)
from tinyarena.model.types import Tensor

# Largest rank TFLM's BroadcastBinaryOpSimple handles (kMaxRank in broadcast_loop.h).
MAX_BROADCAST_RANK = 8


def tensor_quant(t: Tensor) -> QuantParams:
    """The tensor's TfLiteQuantizationParams (first scale and zero point; 0/0 if unquantized)."""
    q = t.quantization
    if q is None or len(q.scale) == 0:
        return QuantParams(0.0, 0)
    zp = int(q.zero_point[0]) if len(q.zero_point) else 0
    return QuantParams(float(np.float32(q.scale[0])), zp)


def broadcast_output_shape(op_name: str, shape1: tuple[int, ...], shape2: tuple[int, ...],
                           output: tuple[int, ...]) -> None:
    """Check that the two input shapes broadcast to the output's shape as TFLM requires."""
    rank = max(len(shape1), len(shape2), len(output))
    if rank > MAX_BROADCAST_RANK:
        raise KernelError(f"{op_name}: rank {rank} exceeds TFLM's broadcast limit of "
                          f"{MAX_BROADCAST_RANK}; reshape the tensors to fewer dimensions")
    try:
        shape = np.broadcast_shapes(shape1, shape2)
    except ValueError:
        raise KernelError(f"{op_name}: input shapes {shape1} and {shape2} do not broadcast; "
                          "make every dimension equal or 1") from None
    if int(np.prod(shape)) != int(np.prod(output)):
        raise KernelError(f"{op_name}: inputs broadcast to {tuple(shape)} but the output has shape "
                          f"{output}; fix the output tensor's shape")


# ----------------------------------------------------------------------------------------------
# Quantized ADD / SUB (add_common.cc CalculateOpDataAdd, sub_common.cc CalculateOpDataSub)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddSubParams:
    """TFLM's ArithmeticParams for the general quantized add/sub path."""

    left_shift: int
    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def add_sub_params(in1: QuantParams, in2: QuantParams, out: QuantParams, dtype: np.dtype,
                   activation: str, *, subtract: bool) -> AddSubParams:
    """CalculateOpDataAdd / CalculateOpDataSub for int8 and int16 outputs.

    ADD computes the doubled maximum input scale and the real multipliers in double; SUB
    computes the doubled maximum and both divisions in float32 before widening to double.
    The difference can move a multiplier by one unit, so each is ported as written.
    """
    left_shift = 15 if np.dtype(dtype) == np.int16 else 20
    s1, s2, so = np.float32(in1.scale), np.float32(in2.scale), np.float32(out.scale)
    if so == 0 or max(s1, s2) == 0:
        raise KernelError("quantized ADD/SUB needs non-zero input and output scales; "
                          "quantize the tensors")
    if subtract:
        twice_max = np.float32(2) * max(s1, s2)
        real1 = float(np.float32(s1 / twice_max))
        real2 = float(np.float32(s2 / twice_max))
        real_out = float(np.float32(twice_max / (np.float32(1 << left_shift) * so)))
    else:
        twice_max_d = 2.0 * float(max(s1, s2))
        real1 = float(s1) / twice_max_d
        real2 = float(s2) / twice_max_d
        real_out = twice_max_d / (float(1 << left_shift) * float(so))
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(real1) if real1 < 1.0 else (0, 0)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(real2) if real2 < 1.0 else (0, 0)
    if real1 >= 1.0 or real2 >= 1.0:  # only for a zero scale on the other input; TFLM asserts
        raise KernelError("quantized ADD/SUB input scale ratio out of range; check the scales")
    mo, sho = quantize_multiplier_smaller_than_one_exp(real_out)
    act_min, act_max = calculate_activation_range_quantized(activation, out.scale,
                                                            out.zero_point, dtype)
    return AddSubParams(left_shift, -in1.zero_point, m1, sh1, -in2.zero_point, m2, sh2,
                        out.zero_point, mo, sho, act_min, act_max)


def _scaled_input(x: np.ndarray, offset: int, left_shift: int, multiplier: int,
                  shift: int) -> np.ndarray:
    """One input's contribution in AddFunc: ((x + offset) << left_shift) scaled (int64)."""
    shifted = (x.astype(np.int64) + offset) << left_shift
    return multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, multiplier, shift)


def quantized_add_sub(x1: np.ndarray, x2: np.ndarray, p: AddSubParams, out: np.ndarray, *,
                      subtract: bool) -> None:
    """reference_integer_ops AddFunc / BroadcastQuantSubSlow, vectorised, written into ``out``."""
    a = _scaled_input(x1, p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift)
    b = _scaled_input(x2, p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift)
    raw = a - b if subtract else a + b
    raw = raw.reshape(np.broadcast_shapes(a.shape, b.shape))
    res = multiply_by_quantized_multiplier_smaller_than_one_exp(
        wrap_int32(raw), p.output_multiplier, p.output_shift)
    res += p.output_offset
    np.clip(res, p.act_min, p.act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# Quantized MUL (mul_common.cc CalculateOpDataMul, integer_ops/mul.h MulElementwise)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MulParams:
    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def mul_params(in1: QuantParams, in2: QuantParams, out: QuantParams, dtype: np.dtype,
               activation: str) -> MulParams:
    """CalculateOpDataMul: one multiplier in1_scale * in2_scale / out_scale, in double."""
    if out.scale == 0:
        raise KernelError("quantized MUL needs a non-zero output scale; quantize the output")
    real = float(np.float32(in1.scale)) * float(np.float32(in2.scale)) / float(
        np.float32(out.scale))
    m, s = quantize_multiplier(real)
    act_min, act_max = calculate_activation_range_quantized(activation, out.scale,
                                                            out.zero_point, dtype)
    if np.dtype(dtype) == np.int16 and (in1.zero_point or in2.zero_point or out.zero_point):
        raise KernelError("int16 MUL needs zero points of 0 on both inputs and the output")
    return MulParams(-in1.zero_point, -in2.zero_point, out.zero_point, m, s, act_min, act_max)


def quantized_mul(x1: np.ndarray, x2: np.ndarray, p: MulParams, out: np.ndarray) -> None:
    """MulElementwise / BroadcastMul6DSlow: ((x1 + o1) * (x2 + o2)) rescaled, offset, clamped."""
    a = x1.astype(np.int64) + p.input1_offset
    b = x2.astype(np.int64) + p.input2_offset
    prod = wrap_int32(a * b)
    res = multiply_by_quantized_multiplier(prod, p.output_multiplier, p.output_shift)
    res += p.output_offset
    np.clip(res, p.act_min, p.act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# float32 and int32
# ----------------------------------------------------------------------------------------------

FloatOp = Callable[..., np.ndarray]


def float_binary(ufunc: np.ufunc, x1: np.ndarray, x2: np.ndarray, act_min: float,
                 act_max: float, out: np.ndarray) -> None:
    """One float32 operation per element, then ActivationFunctionWithMinMax (max, then min)."""
    res = ufunc(x1, x2, dtype=np.float32)
    res = np.minimum(np.maximum(res, np.float32(act_min)), np.float32(act_max))
    out[...] = res.reshape(out.shape)


def int32_binary(ufunc: np.ufunc, x1: np.ndarray, x2: np.ndarray, act_min: int, act_max: int,
                 out: np.ndarray) -> None:
    """Wrapping int32 arithmetic (computed in int64, wrapped), then the activation clamp."""
    res = wrap_int32(ufunc(x1.astype(np.int64), x2.astype(np.int64)))
    np.clip(res, act_min, act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# Data movement for the view-like kernels (RESHAPE, SQUEEZE, EXPAND_DIMS)
# ----------------------------------------------------------------------------------------------


def copy_if_distinct(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy ``src``'s elements into ``dst`` in flat order unless both are the same memory.

    TFLM's reshape skips the memcpy when input and output share a data pointer (an in-place
    plan); copying a buffer onto itself would be harmless but wasted work.
    """
    if src.size != dst.size:
        raise KernelError(f"cannot copy {src.size} elements into a tensor of {dst.size}; "
                          "the input and output element counts must match")
    if src.ctypes.data == dst.ctypes.data and src.nbytes == dst.nbytes:
        return
    dst.reshape(-1)[...] = src.reshape(-1)


__all__ = [
    "AddSubParams",
    "copy_if_distinct",
    "MAX_BROADCAST_RANK",
    "MulParams",
    "add_sub_params",
    "broadcast_output_shape",
    "float_binary",
    "int32_binary",
    "mul_params",
    "quantized_add_sub",
    "quantized_mul",
    "tensor_quant",
]
