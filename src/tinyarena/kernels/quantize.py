"""QUANTIZE: TFLM's quantize.cc / quantize_common.cc.

Allocation: no builtin struct; init allocates ``OpDataQuantizeReference``; prepare takes temp
tensors input and output.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

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


REGISTRATION = Registration("QUANTIZE", init=init, prepare=prepare, eval=eval_,
                            builtin_data=None)
