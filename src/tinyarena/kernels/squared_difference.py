"""SQUARED_DIFFERENCE: TFLM's squared_difference.cc.

Types: float32, int32, int8 and int16 (switching on the output type when the op runs).

* float32: d = x1 - x2, then d * d, both in float32 (two roundings, as in C).
* int32: the same in wrapping int32 arithmetic.
* int8 / int16 (PrepareQuantized, SquaredDifference<T>): each input is offset, shifted left
  (7 bits for int8, none for int16), scaled by QuantizeMultiplierSmallerThanOneExp of
  s_i / (2 max(s1, s2)), the scaled difference squared in int32 and scaled by
  QuantizeMultiplier((2 max)^2 / (2^(2 shift) s_out)), offset and clamped to the type.
  int8 pairs are tabulated at prepare (65536 entries).

Allocation: init allocates the kernel's OpData (a bool plus ArithmeticParams: 112 bytes on
every profile, int64 members aligned to 8); prepare takes input1, input2 and output as temp
tensors; no builtin options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._binary_io import (
    BinaryShapes,
    allocate_binary_temps,
    bind_float_binary,
    binary_shapes,
    binary_tensors,
    binary_views,
    int8_pairs,
    map_binary_blocks,
)
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    qrange,
    quantize_multiplier,
    quantize_multiplier_smaller_than_one_exp,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.types import Operator, TensorType


@dataclass(frozen=True)
class SquaredDifferenceParams:
    """The ArithmeticParams fields PrepareQuantized sets."""

    input1_offset: int
    input2_offset: int
    output_offset: int
    left_shift: int
    input1_multiplier: int
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    shapes: BinaryShapes
    params: SquaredDifferenceParams | None = None
    table: int = -1


def quantized_params(q1: tuple[float, int], q2: tuple[float, int], qo: tuple[float, int],
                     left_shift: int, dtype: np.dtype) -> SquaredDifferenceParams:
    """PrepareQuantized (doubles from the float32 scales, as in C)."""
    s1, s2, so = (float(np.float32(s)) for s in (q1[0], q2[0], qo[0]))
    twice_max = 2.0 * max(s1, s2)
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(s1 / twice_max)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(s2 / twice_max)
    denominator = float(np.float32(np.float32(1 << (left_shift * 2)) * np.float32(so)))
    mo, sho = quantize_multiplier(twice_max * twice_max / denominator)
    lo, hi = qrange(dtype)
    return SquaredDifferenceParams(-q1[1], -q2[1], qo[1], left_shift, m1, sh1, m2, sh2, mo, sho,
                                   lo, hi)


def quantized_squared_difference(x1: np.ndarray, x2: np.ndarray,
                                 p: SquaredDifferenceParams) -> np.ndarray:
    """SquaredDifference<T>(x, y, params), vectorised with int32 wrapping where C wraps."""
    v1 = wrap_int32((np.asarray(x1, np.int64) + p.input1_offset) << p.left_shift)
    v2 = wrap_int32((np.asarray(x2, np.int64) + p.input2_offset) << p.left_shift)
    scaled1 = multiply_by_quantized_multiplier_smaller_than_one_exp(v1, p.input1_multiplier,
                                                                    p.input1_shift)
    scaled2 = multiply_by_quantized_multiplier_smaller_than_one_exp(v2, p.input2_multiplier,
                                                                    p.input2_shift)
    diff = wrap_int32(scaled1 - scaled2)
    squared = wrap_int32(diff * diff)
    raw = wrap_int32(multiply_by_quantized_multiplier(squared, p.output_multiplier,
                                                      p.output_shift) + p.output_offset)
    return np.clip(raw, p.act_min, p.act_max)


def init(ctx: InitContext, op: Operator) -> None:
    """SquaredDifferenceInit: the OpData (requires_broadcast + ArithmeticParams)."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataSquaredDifference"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """SquaredDifferencePrepare: temps, input types equal, quantized parameters."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"SQUARED_DIFFERENCE takes two inputs and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    allocate_binary_temps(ctx, op)
    in1, in2, out = binary_tensors(ctx, op)
    if in1.type != in2.type:
        raise KernelError(f"SQUARED_DIFFERENCE: input types {in1.type.name.lower()} and "
                          f"{in2.type.name.lower()} differ; TFLM requires them equal")
    shapes = binary_shapes(op, in1, in2, out)
    q1, q2, qo = tensor_quant(in1), tensor_quant(in2), tensor_quant(out)
    if in1.type == TensorType.INT8:
        for zp in (q1[1], q2[1], qo[1]):
            if not -128 <= zp <= 127:
                raise KernelError(f"int8 SQUARED_DIFFERENCE: zero point {zp} is outside int8")
        params = quantized_params(q1, q2, qo, 7, np.dtype(np.int8))
        a, b = int8_pairs()
        table = quantized_squared_difference(a, b, params).astype(np.int8)
        handle = ctx.request_workspace(table.shape, np.int8, initial=table)
        return OpData(out.type, shapes, params, handle)
    if in1.type == TensorType.INT16:
        if (q1[1], q2[1], qo[1]) != (0, 0, 0):
            raise KernelError("int16 SQUARED_DIFFERENCE needs zero points of 0 on every tensor")
        return OpData(out.type, shapes, quantized_params(q1, q2, qo, 0, np.dtype(np.int16)))
    return OpData(out.type, shapes)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """SquaredDifferenceEval: switch on the output type."""
    x1, x2, out = binary_views(ctx, op, data.shapes)
    params = data.params
    if data.type == TensorType.FLOAT32:
        map_binary_blocks(_float_squared_difference, x1, x2, out)
    elif data.type == TensorType.INT32:
        map_binary_blocks(_int32_squared_difference, x1, x2, out)
    elif data.type == TensorType.INT8 and data.table >= 0:
        table = ctx.workspace(data.table)
        map_binary_blocks(lambda a, b: table[a.view(np.uint8), b.view(np.uint8)], x1, x2, out)
    elif data.type == TensorType.INT16 and params is not None:
        map_binary_blocks(lambda a, b: quantized_squared_difference(a, b, params), x1, x2, out)
    else:
        raise KernelError("SQUARED_DIFFERENCE supports float32, int32, int16 and int8 in TFLM "
                          f"(with matching input types), not {data.type.name.lower()}")


def _float_squared_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        diff = np.subtract(a, b, dtype=np.float32)
        return np.multiply(diff, diff, dtype=np.float32)


def _int32_squared_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    diff = wrap_int32(a.astype(np.int64) - b.astype(np.int64))
    return wrap_int32(diff * diff)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """float32 and int32 with compiled kernels on: ``native.float_binary``'s loops
    (``_binary_io.bind_float_binary``); else eval."""
    if data.type not in (TensorType.FLOAT32, TensorType.INT32):
        return None
    return bind_float_binary(ctx, op, data.shapes)


REGISTRATION = Registration("SQUARED_DIFFERENCE", init=init, prepare=prepare, eval=eval_,
                            bind=bind, builtin_data=None)
