"""DEPTHWISE_CONV_2D: TFLM's depthwise_conv.cc / depthwise_conv_common.cc.

Allocation: the parser allocates ``TfLiteDepthwiseConvParams``; init allocates ``OpDataConv``;
prepare takes temp tensors output, input, filter, allocates two per-channel arrays of 4 * C
bytes (C = filter dim 3, always), takes input, filter, bias, output again
(CalculateOpDataDepthwiseConv), and requests an unpack scratch for int4 filters.
"""

from __future__ import annotations

from tinyarena.kernels._conv_common import allocate_conv_prepare
from tinyarena.kernels._conv_kernels import (
    DepthwiseData,
    bind_depthwise,
    depthwise_eval,
    depthwise_op_data,
)
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

QUANTIZED_DIMENSION = 3  # kDepthwiseConvQuantizedDimension


def init(ctx: InitContext, op: Operator) -> None:
    """DepthwiseConvInit: the OpData (the same OpDataConv as CONV_2D)."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> DepthwiseData:
    """DepthwiseConvPrepare, allocation side."""
    allocate_conv_prepare(ctx, op, QUANTIZED_DIMENSION)
    return depthwise_op_data(ctx, op)


REGISTRATION = Registration("DEPTHWISE_CONV_2D", init=init, prepare=prepare,
                            eval=depthwise_eval, bind=bind_depthwise,
                            builtin_data="TfLiteDepthwiseConvParams")
