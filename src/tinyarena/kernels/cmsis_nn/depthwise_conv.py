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
from tinyarena.kernels.cmsis_nn._overlap import ALL_ISAS, OverlapRule
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

# -- overlap rules (optimize/safety.py) --
# int8, batch 1: TFLM cmsis_nn/depthwise_conv.cc EvalQuantizedPerChannel ->
# arm_depthwise_conv_wrapper_s8 (Source/ConvolutionFunctions/arm_depthwise_conv_wrapper_s8.c):
# multiplier 1, batch 1, no dilation -> arm_depthwise_conv_3x3_s8 (3x3, padding <= 1; not on
# MVE) or arm_depthwise_conv_s8_opt; otherwise arm_depthwise_conv_s8. On MVE one input
# channel with more than 8 outputs becomes a convolution (arm_depthwise_conv_to_conv_s8).
_PLAIN_DSP = frozenset({"plain", "dsp"})
OVERLAP_RULES = (
    # arm_depthwise_conv_3x3_s8.c:95-260: per output pixel, per 4 channels: the 3x3 windows of
    # those 4 channels (arm_nn_read_s8x4 of exactly those channels), then the 4 outputs;
    # leftover channels one by one: the reference order in blocks of consecutive elements.
    OverlapRule("DEPTHWISE_CONV_2D:INT8:3x3", _PLAIN_DSP, "margin",
                "arm_depthwise_conv_3x3_s8.c:95-260 (per pixel, 4 channels at a time)",
                "each 4-channel block of a pixel is written after its windows are read"),
    # arm_depthwise_conv_s8_opt.c: DSP branch (lines 160-404): the pixel's whole window into
    # the scratch buffer (col_buffer), then all its channels; plain C (line 407): calls
    # arm_depthwise_conv_s8.
    OverlapRule("DEPTHWISE_CONV_2D:INT8:opt", _PLAIN_DSP, "margin",
                "arm_depthwise_conv_s8_opt.c:160-404 (DSP), :407 (C -> generic)",
                "each pixel's window is copied to the scratch buffer before its outputs"),
    # arm_depthwise_conv_s8.c: element by element in the reference order, or 4 multiplier
    # channels at a time, every ISA.
    OverlapRule("DEPTHWISE_CONV_2D:INT8:generic", ALL_ISAS, "margin",
                "arm_depthwise_conv_s8.c (reference order, 4 multiplier channels at a time)",
                "reference order coarsened to blocks of consecutive outputs"),
    OverlapRule("DEPTHWISE_CONV_2D:INT8:1ch", _PLAIN_DSP, "margin",
                "arm_depthwise_conv_wrapper_s8.c: multiplier > 1 -> arm_depthwise_conv_s8",
                "the generic kernel's order"),
    # MVE arm_depthwise_conv_s8_opt.c:46-155: the outer loop walks blocks of CH_IN_BLOCK_MVE
    # (124, Include/arm_nnsupportfunctions.h:65) channels; inside one block, 4 pixels'
    # windows are copied to the scratch buffer (lhs_buffer) and then those 4 pixels' outputs
    # are written (arm_nn_depthwise_conv_nt_t_s8), leftover pixels likewise. With at most 124
    # channels there is one channel block: whole-pixel blocks written after their reads.
    OverlapRule("DEPTHWISE_CONV_2D:INT8:3x3:c<=124", frozenset({"mve"}), "margin",
                "arm_depthwise_conv_s8_opt.c:46-155 (MVE), CH_IN_BLOCK_MVE = 124",
                "one channel block: 4-pixel im2col blocks written after their copies"),
    OverlapRule("DEPTHWISE_CONV_2D:INT8:opt:c<=124", frozenset({"mve"}), "margin",
                "arm_depthwise_conv_s8_opt.c:46-155 (MVE), CH_IN_BLOCK_MVE = 124",
                "one channel block: 4-pixel im2col blocks written after their copies"),
    # With more than 124 channels the MVE kernel writes channel block 0 of every pixel before
    # it reads channel block 1 of the first pixel: forbidden.
    OverlapRule("DEPTHWISE_CONV_2D:INT8:3x3", frozenset({"mve"}), "none",
                "arm_depthwise_conv_s8_opt.c:58-60 (MVE: channel blocks of 124 outermost)",
                "with more than 124 channels the MVE depthwise kernel walks 124-channel "
                "blocks outermost, writing every pixel of a block before reading the next"),
    OverlapRule("DEPTHWISE_CONV_2D:INT8:opt", frozenset({"mve"}), "none",
                "arm_depthwise_conv_s8_opt.c:58-60 (MVE: channel blocks of 124 outermost)",
                "with more than 124 channels the MVE depthwise kernel walks 124-channel "
                "blocks outermost, writing every pixel of a block before reading the next"),
)
"""CMSIS-NN's int8 depthwise paths (``_overlap``); int16 and int4 are not derived (refused)."""
