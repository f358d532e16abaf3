"""What cmsis_nn/conv.cc and cmsis_nn/depthwise_conv.cc do alike in Prepare.

Both take temp tensors input, filter and output, allocate the two per-channel arrays only for
int8/int16 input (the reference kernels also do for float), then take input, filter, bias and
output again for CalculateOpData; and both size CMSIS-NN's buffer from the same ``cmsis_nn_conv
_params`` (strides, TFLM's padding, dilations). They differ in the filter dimension that counts
the channels and in which buffer they request, which stay in the two kernels. The reference
kernels' counterpart, ``_conv_common.allocate_conv_prepare``, differs (temps output first,
per-channel arrays for float too, an int4 unpack scratch), so it is not reused here.
"""

from __future__ import annotations

from tinyarena.kernels._conv_common import (
    CONV_BIAS,
    CONV_FILTER,
    CONV_INPUT,
    CONV_OUTPUT,
    compute_padding_height_width,
)
from tinyarena.kernels.base import PrepareContext
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.model.options import Conv2DOptions, DepthwiseConv2DOptions
from tinyarena.model.types import Operator, Tensor, TensorType


def take_conv_tensors(ctx: PrepareContext, op: Operator, quantized_dimension: int
                      ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The allocation side of the two Prepares up to CalculateOpData; the input, filter and
    output tensors (None where the model lacks one; the reference op data reports that)."""
    bias = op.inputs[CONV_BIAS] if len(op.inputs) > CONV_BIAS else -1
    for index in (op.inputs[CONV_INPUT], op.inputs[CONV_FILTER], op.outputs[CONV_OUTPUT]):
        ctx.allocate_temp_tensor(index)
    source, weights = ctx.tensor(op.inputs[CONV_INPUT]), ctx.tensor(op.inputs[CONV_FILTER])
    output = ctx.tensor(op.outputs[CONV_OUTPUT])
    if source is not None and weights is not None \
            and source.type in (TensorType.INT8, TensorType.INT16):
        channels = weights.shape[quantized_dimension]
        ctx.allocate_persistent(4 * channels)  # per_channel_output_multiplier
        ctx.allocate_persistent(4 * channels)  # per_channel_output_shift
    for index in (op.inputs[CONV_INPUT], op.inputs[CONV_FILTER], bias, op.outputs[CONV_OUTPUT]):
        ctx.allocate_temp_tensor(index)
    return source, weights, output


def conv_params(opts: Conv2DOptions | DepthwiseConv2DOptions, in_shape: tuple[int, ...],
                f_shape: tuple[int, ...]) -> bs.ConvParams:
    """cmsis_nn_conv_params / cmsis_nn_dw_conv_params as the buffer-size functions read them:
    strides, the padding TFLM computes for these shapes, dilations."""
    padding, _, _ = compute_padding_height_width(
        opts.stride_h, opts.stride_w, opts.dilation_h_factor, opts.dilation_w_factor,
        in_shape[1], in_shape[2], f_shape[1], f_shape[2], opts.padding)
    return bs.ConvParams(opts.stride_h, opts.stride_w, padding.height, padding.width,
                         opts.dilation_h_factor, opts.dilation_w_factor)
