"""CUMSUM: TFLM's cumsum.cc with reference_ops::CumSum (float32 and int8; exclusive and
reverse; the axis tensor is read at eval, negative counted from the end).

Allocation: the parser allocates ``TfLiteCumsumParams`` (two bools); no init; prepare takes
temp tensors input, axis, output and, for int8 only, allocates the nine-int32 OpData
persistently (the multipliers of the ADD-style rescaling with a left shift of 20).

The int8 arithmetic starts each running sum from the rescaled input offset rather than from
zero (the reference code does ``accumulator = input1_offset`` before scaling), and the int32
running sum wraps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._quant import (
    calculate_activation_range_quantized,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier_smaller_than_one_exp,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.options import CumsumOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
AXIS = 1
OUTPUT = 0
LEFT_SHIFT = 20  # kCumSumIntegerShift
CHUNK = 1024  # int8 lanes are rescaled this many values at a time (int64 temporaries)


@dataclass(frozen=True)
class CumsumData:
    """OpData (int8 only; zeros for float32)."""

    input_offset: int = 0
    output_offset: int = 0
    input_multiplier: int = 0
    input_shift: int = 0
    output_multiplier: int = 0
    output_shift: int = 0
    act_min: int = -128
    act_max: int = 127


def prepare(ctx: PrepareContext, op: Operator) -> CumsumData:
    """CalculateOpData."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("CUMSUM takes two inputs (input, axis) and one output")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[AXIS])
    inp = required_tensor(ctx, op.inputs[INPUT], "CUMSUM", "input")
    axis = required_tensor(ctx, op.inputs[AXIS], "CUMSUM", "axis")
    if inp.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError(f"CUMSUM supports float32 and int8, not {inp.type.name}")
    if axis.type != TensorType.INT32 or axis.element_count != 1:
        raise KernelError("CUMSUM: the axis must be one int32 value")
    if len(inp.shape) < 1:
        raise KernelError("CUMSUM needs an input of rank 1 or more")
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    out = required_tensor(ctx, op.outputs[OUTPUT], "CUMSUM", "output")
    if out.type != inp.type or out.shape != inp.shape:
        raise KernelError("CUMSUM: the output must have the input's type and shape")
    if inp.type != TensorType.INT8:
        return CumsumData()
    ctx.allocate_persistent(ctx.target.sizeof("OpDataCumSum"))
    qi, qo = tensor_quant(inp), tensor_quant(out)
    twice_max_input_scale = 2 * float(qi.scale)
    real_output = twice_max_input_scale / ((1 << LEFT_SHIFT) * float(qo.scale))
    if not 0.0 < real_output < 1.0:  # QuantizeMultiplierSmallerThanOneExp: TFLM aborts
        raise KernelError(f"int8 CUMSUM: 2 * input scale / (2**{LEFT_SHIFT} * output scale) is "
                          f"{real_output:g}, TFLM needs it in (0, 1); raise the output scale")
    in_mult, in_shift = quantize_multiplier_smaller_than_one_exp(
        float(qi.scale) / twice_max_input_scale)
    out_mult, out_shift = quantize_multiplier_smaller_than_one_exp(real_output)
    act_min, act_max = calculate_activation_range_quantized("NONE", qo.scale, qo.zero_point,
                                                            "int8")
    return CumsumData(-qi.zero_point, qo.zero_point, in_mult, in_shift, out_mult, out_shift,
                      act_min, act_max)


def _scaled(x: np.ndarray, data: CumsumData) -> np.ndarray:
    return multiply_by_quantized_multiplier_smaller_than_one_exp(
        x, data.input_multiplier, data.input_shift)


def eval_(ctx: EvalContext, op: Operator, data: CumsumData) -> None:
    options = op.options if isinstance(op.options, CumsumOptions) else CumsumOptions()
    source = ctx.tensor_data(op.inputs[INPUT])
    rank = source.ndim
    axis = int(ctx.tensor_data(op.inputs[AXIS]).reshape(-1)[0])
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise KernelError(f"CUMSUM: axis out of range for a rank-{rank} input")
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if out.size == 0:
        return
    lanes = source.reshape(int(np.prod(source.shape[:axis], dtype=np.int64)), source.shape[axis],
                           -1)
    if source.dtype == np.float32:
        # Sequential float32 adds from +0.0, straight into the output (adding +0.0 afterwards
        # turns numpy's leading -0.0 into TFLM's +0.0).
        dst = out.reshape(lanes.shape)
        if options.reverse:
            lanes, dst = lanes[:, ::-1, :], dst[:, ::-1, :]
        with np.errstate(all="ignore"):  # overflow to inf, inf - inf: as TFLM, silently
            if options.exclusive:
                dst[:, :1, :] = 0
                np.cumsum(lanes[:, :-1, :], axis=1, dtype=np.float32, out=dst[:, 1:, :])
            else:
                np.cumsum(lanes, axis=1, dtype=np.float32, out=dst)
            np.add(dst, np.float32(0.0), out=dst)
        return
    dst = out.reshape(lanes.shape)
    if options.reverse:
        lanes, dst = lanes[:, ::-1, :], dst[:, ::-1, :]
    # int8, a block of lanes at a time: the int64 temporaries stay small whatever the input.
    outer, depth, inner = lanes.shape
    per_lane = max(depth, 1)
    if per_lane * inner <= CHUNK:  # whole outer rows at a time
        rows = max(1, CHUNK // (per_lane * max(inner, 1)))
        for o in range(0, outer, rows):
            _cumsum_int8(lanes[o:o + rows], dst[o:o + rows], data, options.exclusive)
        return
    cols = max(1, CHUNK // per_lane)
    for o in range(outer):
        for i in range(0, inner, cols):
            _cumsum_int8(lanes[o:o + 1, :, i:i + cols], dst[o:o + 1, :, i:i + cols], data,
                         options.exclusive)


def _cumsum_int8(lane: np.ndarray, dst: np.ndarray, data: CumsumData, exclusive: bool) -> None:
    """reference_ops::CumSum (int8) on one block (outer, depth, inner) of lanes."""
    start = int(_scaled(np.int64(data.input_offset) << LEFT_SHIFT, data))
    scaled_y = _scaled((lane.astype(np.int64) + data.input_offset) << LEFT_SHIFT, data)
    running = np.cumsum(scaled_y, axis=1) + start
    if exclusive:
        running = np.concatenate([np.full_like(running[:, :1], start), running[:, :-1]],
                                 axis=1)
    raw = multiply_by_quantized_multiplier_smaller_than_one_exp(
        wrap_int32(running), data.output_multiplier, data.output_shift) + data.output_offset
    np.copyto(dst, np.clip(raw, data.act_min, data.act_max), casting="unsafe")


REGISTRATION = Registration("CUMSUM", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteCumsumParams")
