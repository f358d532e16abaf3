"""CONV_2D: TFLM's conv.cc / conv_common.cc.

Allocation: the parser allocates ``TfLiteConvParams``; init allocates ``OpDataConv``; prepare
takes temp tensors output, input, filter (ConvPrepare), allocates two per-channel arrays of
4 * C_out bytes (always, float included), takes input, filter, bias, output again
(CalculateOpDataConv), and requests an unpack scratch for int4 filters.
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import ConvData, conv2d_eval, conv2d_op_data
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
FILTER = 1
BIAS = 2
OUTPUT = 0
QUANTIZED_DIMENSION = 0  # kConvQuantizedDimension: output channels are filter dim 0


def init(ctx: InitContext, op: Operator) -> None:
    """ConvInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> ConvData:
    """ConvPrepare (conv_common.cc), allocation side."""
    bias = op.inputs[BIAS] if len(op.inputs) > BIAS else -1
    for index in (op.outputs[OUTPUT], op.inputs[INPUT], op.inputs[FILTER]):
        ctx.allocate_temp_tensor(index)
    weights = ctx.tensor(op.inputs[FILTER])
    channels = weights.shape[QUANTIZED_DIMENSION] if weights is not None else 0
    ctx.allocate_persistent(4 * channels)  # per_channel_output_multiplier
    ctx.allocate_persistent(4 * channels)  # per_channel_output_shift
    # CalculateOpDataConv
    for index in (op.inputs[INPUT], op.inputs[FILTER], bias, op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    if weights is not None and weights.type == TensorType.INT4:
        ctx.request_scratch(weights.element_count)
    return conv2d_op_data(ctx, op)


REGISTRATION = Registration("CONV_2D", init=init, prepare=prepare, eval=conv2d_eval,
                            builtin_data="TfLiteConvParams")
