"""CONV_2D with ESP-NN: esp-tflite-micro's kernels/esp_nn/conv.cc.

Allocation: init allocates esp's NodeData (``OpDataConv`` + ``buffer_idx``, 60 bytes); prepare
makes the reference ConvPrepare's allocations (temps output, input, filter; the per-channel
arrays; temps for CalculateOpDataConv; the int4 unpack scratch) and then, for int8 input,
requests ``esp_nn_get_conv_scratch_size`` bytes when positive (``_prepare``).

Arithmetic: the reference kernel's. esp-nn's int8 convolution (``esp_nn_conv_s8``, ANSI C and
the generic ``_opt`` code) sums the same integers and requantises as TFLM does; int8 with
dilation, int16, int4 and float run TFLM's reference code in this file. Checked against the
esp-oracle's outputs (tests/oracle/test_esp_oracle.py).
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import ConvData, bind_conv2d, conv2d_eval
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels import conv_2d as reference
from tinyarena.kernels.esp_nn import _scratch_sizes as ss
from tinyarena.kernels.esp_nn._prepare import request_esp_nn_scratch
from tinyarena.model.options import Conv2DOptions
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    """Init: esp's NodeData."""
    ctx.allocate_persistent(ctx.target.sizeof("EspNnNodeDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> ConvData:
    """Prepare: the reference allocations, then esp-nn's scratch for int8 input."""
    data = reference.prepare(ctx, op)
    opts = op.options if isinstance(op.options, Conv2DOptions) else Conv2DOptions()
    request_esp_nn_scratch(ctx, op, ss.CONV, (opts.stride_w, opts.stride_h), data.padding)
    return data


REGISTRATION = Registration("CONV_2D", init=init, prepare=prepare, eval=conv2d_eval,
                            bind=bind_conv2d, builtin_data="TfLiteConvParams")
