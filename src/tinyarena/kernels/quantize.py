"""QUANTIZE: TFLM's quantize.cc / quantize_common.cc.

Allocation: no builtin struct; init allocates ``OpDataQuantizeReference``; prepare takes temp
tensors input and output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quantize_math import (
    QuantizeFast,
    QuantizeOpData,
    quantize,
    quantize_fast,
    quantize_fast_eval,
    quantize_op_data,
)
from tinyarena.kernels._unary import io_tensors, map_unary
from tinyarena.kernels._bound import unary_lut
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """InitQuantizeReference: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataQuantizeReference"))


@dataclass(frozen=True)
class OpData:
    """OpDataQuantizeReference plus the whole-tensor plan (None: the block-wise path)."""

    ref: QuantizeOpData
    fast: QuantizeFast | None


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """PrepareQuantizeReference, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, "QUANTIZE")
    data = quantize_op_data(inp, out)
    return OpData(data, quantize_fast(ctx, data, inp.element_count))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """The reference arithmetic of _quantize_math, written into the output view."""
    if data.fast is not None:
        quantize_fast_eval(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                           data.fast, ctx.workspace, data.ref)
        return
    ref = data.ref
    map_unary(ctx, op, lambda v: quantize(v, ref))


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """int8/uint8 in: the reference arithmetic as a 256-entry table; other integer inputs
    with the whole-tensor plan: the compiled Requantize (``native.quantize``); float32 in,
    int8/int16 out: the compiled AffineQuantize; else eval."""
    ref = data.ref
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    step = unary_lut(x, out, lambda v: quantize(v, ref), ctx)
    fast = data.fast
    if step is None and fast is not None and fast.rq is not None and native.enabled(ctx):
        from tinyarena.kernels.native.quantize import bind_requantize

        step = bind_requantize(x, out, ref.requantize_multiplier, ref.requantize_shift,
                               ref.input_zero_point, ref.output_zero_point, fast.act_min,
                               fast.act_max)
    if step is None and ref.input_type == TensorType.FLOAT32 and native.enabled(ctx) and \
            ref.output_type in (TensorType.INT8, TensorType.INT16):
        from tinyarena.kernels.native.quantize import bind_affine_quantize

        info = np.iinfo(np.int8 if ref.output_type == TensorType.INT8 else np.int16)
        step = bind_affine_quantize(x, out, float(np.float32(ref.output_scale)),
                                    ref.output_zero_point, int(info.min), int(info.max))
    return step


REGISTRATION = Registration("QUANTIZE", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data=None)
