"""DEQUANTIZE: TFLM's dequantize.cc / dequantize_common.cc.

Allocation: no builtin struct; init allocates ``DequantizeOpData``; prepare takes temp tensors
input and output.
"""

from __future__ import annotations

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quantize_math import DequantizeOpData, dequantize, dequantize_op_data
from tinyarena.kernels._unary import io_tensors, map_unary
from tinyarena.kernels._bound import unary_lut
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """DequantizeInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("DequantizeOpData"))


def prepare(ctx: PrepareContext, op: Operator) -> DequantizeOpData:
    """DequantizePrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, "DEQUANTIZE")
    return dequantize_op_data(inp, out)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: DequantizeOpData) -> None:
    """The reference arithmetic of _quantize_math, written into the output view."""
    map_unary(ctx, op, lambda v: dequantize(v, data))


def bind(ctx: EvalContext, op: Operator, data: DequantizeOpData) -> Step | None:
    """int8/uint8 in: the reference arithmetic as a 256-entry float32 table
    (``_bound.unary_lut``); int16: eval."""
    return unary_lut(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     lambda v: dequantize(v, data), ctx)


REGISTRATION = Registration("DEQUANTIZE", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data=None)
