"""DEPTHWISE_CONV_2D with ESP-NN: esp-tflite-micro's kernels/esp_nn/depthwise_conv.cc.

Allocation: init allocates esp's NodeData (``OpDataConv`` + ``buffer_idx``, 60 bytes); prepare
makes the reference DepthwiseConvPrepare's allocations and then, for int8 input, requests
``esp_nn_get_depthwise_conv_scratch_size`` bytes when positive, passing the model's
``depth_multiplier`` as ``ch_mult`` (``_prepare``).

Arithmetic: the reference kernel's (esp-nn's int8 depthwise convolution reproduces it; int16,
int4 and float run TFLM's reference code). Checked against the esp-oracle's outputs.
"""

from __future__ import annotations

from tinyarena.kernels import depthwise_conv_2d as reference
from tinyarena.kernels._conv_kernels import DepthwiseData, bind_depthwise, depthwise_eval
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.esp_nn import _scratch_sizes as ss
from tinyarena.kernels.esp_nn._prepare import request_esp_nn_scratch
from tinyarena.model.options import DepthwiseConv2DOptions
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    """Init: esp's NodeData."""
    ctx.allocate_persistent(ctx.target.sizeof("EspNnNodeDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> DepthwiseData:
    """Prepare: the reference allocations, then esp-nn's scratch for int8 input."""
    data = reference.prepare(ctx, op)
    opts = op.options if isinstance(op.options, DepthwiseConv2DOptions) \
        else DepthwiseConv2DOptions()
    request_esp_nn_scratch(ctx, op, ss.DEPTHWISE_CONV, (opts.stride_w, opts.stride_h),
                           data.padding, opts.depth_multiplier)
    return data


REGISTRATION = Registration("DEPTHWISE_CONV_2D", init=init, prepare=prepare,
                            eval=depthwise_eval, bind=bind_depthwise,
                            builtin_data="TfLiteDepthwiseConvParams")
