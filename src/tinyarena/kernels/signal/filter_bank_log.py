"""SignalFilterBankLog: TFLM's signal/micro/kernels/filter_bank_log.cc and
signal/src/filter_bank_log.cc, log.cc.

Allocation: init reads input_correction_bits and output_scale and allocates
``TFLMSignalLogParams``; prepare takes temp tensors input and output. Eval: for each channel
shifted left by the correction bits (uint32), the fixed-point natural log Log32 (integer part
from the leading bit, fraction from a 129-entry table with linear interpolation) scaled by
output_scale, capped at INT16_MAX; 0 for values <= 1.
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

INPUT_CORRECTION_BITS = 0  # 'input_correction_bits'
OUTPUT_SCALE = 1  # 'output_scale'
LOG_SCALE_LOG2 = 16
LOG_SEGMENTS_LOG2 = 7
LOG_COEFF = 45426
U64 = np.uint64
# log.cc's kLogLut: log2(1 + x) - x in Q16 at 128 segments (plus two padding entries)
LOG_LUT = np.array([
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797,
    2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549,
    4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444,
    5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626,
    5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203,
    5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875,
    2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094,
    963, 830, 695, 559, 421, 282, 142, 0, 0], dtype=np.int64)


def init(ctx: InitContext, op: Operator) -> None:
    options = FlexOptions.parse(op)
    options.element(INPUT_CORRECTION_BITS, "input_correction_bits")
    options.element(OUTPUT_SCALE, "output_scale")
    ctx.allocate_persistent(ctx.target.sizeof("TFLMSignalLogParams"))


@dataclass(frozen=True)
class OpData:
    correction_bits: int
    output_scale: int


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    x, y = temp_tensors(ctx, op, ("input",), ("output",))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.UINT32),
                               (y, "output", 1, TensorType.INT16)))
    options = FlexOptions.parse(op)
    bits = options.element(INPUT_CORRECTION_BITS, "input_correction_bits")
    if not 0 <= bits < 32:
        raise KernelError(f"{op.name}: input_correction_bits {bits} is outside 0..31 (the C "
                          f"shift of a uint32 by it is undefined)")
    if y.shape[0] < x.shape[0]:
        raise KernelError(f"{op.name}: the output is shorter than the input's {x.shape[0]} "
                          f"channels")
    return OpData(bits, options.element(OUTPUT_SCALE, "output_scale") & 0xFFFFFFFF)


def log32(x: np.ndarray, out_scale: int) -> np.ndarray:
    """Log32 on uint32 values > 1, as uint64 holding the uint32 result."""
    x = x.astype(np.int64)
    integer = most_significant_bit(x, 32) - 1
    frac = x - (np.int64(1) << integer)  # int32 in C: x < 2**32 keeps it in range
    frac = ((frac + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    up = np.maximum(LOG_SCALE_LOG2 - integer, 0)
    down = np.maximum(integer - LOG_SCALE_LOG2, 0)
    frac = np.where(integer < LOG_SCALE_LOG2, frac << up, frac >> down)
    base_seg = frac >> (LOG_SCALE_LOG2 - LOG_SEGMENTS_LOG2)
    seg_unit = (1 << LOG_SCALE_LOG2) >> LOG_SEGMENTS_LOG2
    c0 = LOG_LUT[base_seg]
    c1 = LOG_LUT[base_seg + 1]
    rel_pos = ((c1 - c0) * (frac - seg_unit * base_seg)) >> LOG_SCALE_LOG2
    fraction = (frac + c0 + rel_pos) & 0xFFFFFFFF
    log2 = ((integer << LOG_SCALE_LOG2) + fraction) & 0xFFFFFFFF
    round_ = 1 << (LOG_SCALE_LOG2 - 1)
    loge = ((log2.astype(U64) * U64(LOG_COEFF) + U64(round_)) >> U64(16)) & U64(0xFFFFFFFF)
    scaled = (U64(out_scale) * loge + U64(round_)) & U64(0xFFFFFFFF)  # uint32 arithmetic
    return scaled >> U64(LOG_SCALE_LOG2)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    x = ctx.tensor_data(op.inputs[0])
    scaled = (x.astype(U64) << U64(data.correction_bits)) & U64(0xFFFFFFFF)
    big = scaled > 1
    logs = log32(np.where(big, scaled, U64(2)), data.output_scale)
    out = np.where(big, np.minimum(logs, U64(32767)), U64(0))
    ctx.tensor_data(op.outputs[0])[:x.shape[0]] = out.astype(np.int16)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Callable[[], None] | None:
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_filter_bank_log

    return bind_filter_bank_log(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                                LOG_LUT, data.correction_bits, data.output_scale)

REGISTRATION = Registration("SignalFilterBankLog", init=init, prepare=prepare, eval=eval_,
                            bind=bind)
