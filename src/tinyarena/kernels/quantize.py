"""QUANTIZE: TFLM's quantize.cc / quantize_common.cc.

Allocation: no builtin struct; init allocates ``OpDataQuantizeReference``; prepare takes temp
tensors input and output.
"""

from __future__ import annotations

from tinyarena.kernels._quantize_math import QuantizeOpData, quantize, quantize_op_data
from tinyarena.kernels._unary import io_tensors, map_unary
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """InitQuantizeReference: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataQuantizeReference"))


def prepare(ctx: PrepareContext, op: Operator) -> QuantizeOpData:
    """PrepareQuantizeReference, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, "QUANTIZE")
    return quantize_op_data(inp, out)


def eval_(ctx: EvalContext, op: Operator, data: QuantizeOpData) -> None:
    """The reference arithmetic of _quantize_math, written into the output view."""
    map_unary(ctx, op, lambda v: quantize(v, data))


REGISTRATION = Registration("QUANTIZE", init=init, prepare=prepare, eval=eval_,
                            builtin_data=None)
