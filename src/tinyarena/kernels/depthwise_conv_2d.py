"""DEPTHWISE_CONV_2D: TFLM's depthwise_conv.cc / depthwise_conv_common.cc.

Allocation: the parser allocates ``TfLiteDepthwiseConvParams``; init allocates ``OpDataConv``;
prepare takes temp tensors output, input, filter, allocates two per-channel arrays of 4 * C
bytes (C = filter dim 3, always), takes input, filter, bias, output again
(CalculateOpDataDepthwiseConv), and requests an unpack scratch for int4 filters.
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import DepthwiseData, depthwise_eval, depthwise_op_data
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
FILTER = 1
BIAS = 2
OUTPUT = 0
QUANTIZED_DIMENSION = 3  # kDepthwiseConvQuantizedDimension


def init(ctx: InitContext, op: Operator) -> None:
    """DepthwiseConvInit: the OpData (the same OpDataConv as CONV_2D)."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> DepthwiseData:
    """DepthwiseConvPrepare, allocation side."""
    bias = op.inputs[BIAS] if len(op.inputs) > BIAS else -1
    for index in (op.outputs[OUTPUT], op.inputs[INPUT], op.inputs[FILTER]):
        ctx.allocate_temp_tensor(index)
    weights = ctx.tensor(op.inputs[FILTER])
    channels = weights.shape[QUANTIZED_DIMENSION] if weights is not None else 0
    ctx.allocate_persistent(4 * channels)  # per_channel_output_multiplier
    ctx.allocate_persistent(4 * channels)  # per_channel_output_shift
    for index in (op.inputs[INPUT], op.inputs[FILTER], bias, op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    if weights is not None and weights.type == TensorType.INT4:
        ctx.request_scratch(weights.element_count)
    return depthwise_op_data(ctx, op)


REGISTRATION = Registration("DEPTHWISE_CONV_2D", init=init, prepare=prepare,
                            eval=depthwise_eval,
                            builtin_data="TfLiteDepthwiseConvParams")
