"""CONV_2D: TFLM's conv.cc / conv_common.cc.

Allocation: the parser allocates ``TfLiteConvParams``; init allocates ``OpDataConv``; prepare
takes temp tensors output, input, filter (ConvPrepare), allocates two per-channel arrays of
4 * C_out bytes (always, float included), takes input, filter, bias, output again
(CalculateOpDataConv), and requests an unpack scratch for int4 filters.
"""

from __future__ import annotations

from tinyarena.kernels._conv_common import allocate_conv_prepare
from tinyarena.kernels._conv_kernels import ConvData, bind_conv2d, conv2d_eval, conv2d_op_data
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

QUANTIZED_DIMENSION = 0  # kConvQuantizedDimension: output channels are filter dim 0


def init(ctx: InitContext, op: Operator) -> None:
    """ConvInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> ConvData:
    """ConvPrepare (conv_common.cc), allocation side."""
    allocate_conv_prepare(ctx, op, QUANTIZED_DIMENSION)
    return conv2d_op_data(ctx, op)


REGISTRATION = Registration("CONV_2D", init=init, prepare=prepare, eval=conv2d_eval,
                            bind=bind_conv2d,
                            builtin_data="TfLiteConvParams")
