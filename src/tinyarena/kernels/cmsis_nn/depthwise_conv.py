"""DEPTHWISE_CONV_2D with CMSIS-NN: TFLM's kernels/cmsis_nn/depthwise_conv.cc.

Allocation: init allocates the cmsis_nn OpData (``OpDataConv`` + ``buffer_idx``); prepare takes
temp tensors input, filter, output, allocates the two per-channel arrays (4 * C_out bytes,
filter dim 3) only for int8/int16 input, takes input, filter, bias, output again
(CalculateOpDataDepthwiseConv), and for int8 input requests CMSIS-NN's buffer when it is not
empty (``arm_depthwise_conv_wrapper_s8/s4_get_buffer_size``). int16 input requests nothing.

Arithmetic: the reference kernel's (``eval`` below).
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import (
    DepthwiseData,
    bind_depthwise,
    depthwise_eval,
    depthwise_op_data,
)
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._conv_prepare import conv_params, take_conv_tensors
from tinyarena.model.options import DepthwiseConv2DOptions
from tinyarena.model.types import Operator, TensorType

QUANTIZED_DIMENSION = 3


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> DepthwiseData:
    """Prepare (cmsis_nn/depthwise_conv.cc), allocation side, then the reference op data."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    source, weights, output = take_conv_tensors(ctx, op, QUANTIZED_DIMENSION)
    data = depthwise_op_data(ctx, op)
    if source is not None and weights is not None and output is not None \
            and source.type == TensorType.INT8:
        size = _buffer_size(isa, op, weights.type, source.shape, weights.shape, output.shape)
        if size > 0:
            ctx.request_scratch(size)
    return data


def _buffer_size(isa: str, op: Operator, filter_type: TensorType, in_shape: tuple[int, ...],
                 f_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> int:
    opts = op.options if isinstance(op.options, DepthwiseConv2DOptions) \
        else DepthwiseConv2DOptions()
    params = conv_params(opts, in_shape, f_shape)
    depth = out_shape[3]
    inp = bs.Dims(in_shape[0], in_shape[1], in_shape[2], in_shape[3])
    flt = bs.Dims(1, f_shape[1], f_shape[2], depth)
    out = bs.Dims(in_shape[0], out_shape[1], out_shape[2], depth)
    if filter_type == TensorType.INT4:
        return bs.depthwise_wrapper_s4(isa, params, inp, flt, out)
    return bs.depthwise_wrapper_s8(isa, params, inp, flt, out)


# -- eval (cmsis-run) --
# arm_depthwise_conv_wrapper_s8 (3x3 fast kernel, generic, MVE) and arm_depthwise_conv_s16:
# the same integer sums and rounding as the reference (see conv.py); reused. Checked: every
# dw_int8/int16 sweep, kws_ref_model, micro_speech_quantized, person_detect on all three ISAs.
# The reference kernel's bound steps (compiled when the interpreter runs them) too.
eval_ = depthwise_eval

REGISTRATION = Registration("DEPTHWISE_CONV_2D", init=init, prepare=prepare, eval=eval_,
                            bind=bind_depthwise, builtin_data="TfLiteDepthwiseConvParams")
