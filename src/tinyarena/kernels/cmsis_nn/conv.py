"""CONV_2D with CMSIS-NN: TFLM's kernels/cmsis_nn/conv.cc.

Allocation: init allocates the cmsis_nn OpData (``OpDataConv`` + ``buffer_idx``); prepare takes
temp tensors input, filter, output (its "bias" temp reads output slot 2, which a one-output node
lacks, so it is never taken), allocates the two per-channel arrays only for int8/int16 input
(the reference kernel also does for float), takes input, filter, bias, output again
(CalculateOpDataConv), and requests CMSIS-NN's convolution buffer when it is not empty:
``arm_convolve_wrapper_s8_get_buffer_size`` for int8, ``..._s16_...`` for int16. No int4
unpack buffer (CMSIS-NN reads packed int4 filters).

Arithmetic: the reference kernel's (``eval`` below), which CMSIS-NN's int8/int16 convolutions
are designed to reproduce.
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import ConvData, bind_conv2d, conv2d_eval, conv2d_op_data
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._conv_prepare import conv_params, take_conv_tensors
from tinyarena.kernels.cmsis_nn._overlap import ALL_ISAS, OverlapRule
from tinyarena.model.options import Conv2DOptions
from tinyarena.model.types import Operator, TensorType

QUANTIZED_DIMENSION = 0


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataConv"))


def prepare(ctx: PrepareContext, op: Operator) -> ConvData:
    """Prepare (cmsis_nn/conv.cc), allocation side, then the reference op data."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    source, weights, output = take_conv_tensors(ctx, op, QUANTIZED_DIMENSION)
    data = conv2d_op_data(ctx, op)  # validates shapes and types before they are read below
    if source is not None and source.type in (TensorType.INT8, TensorType.INT16) \
            and weights is not None and output is not None:
        size = _buffer_size(isa, op, source.type, source.shape, weights.shape, output.shape)
        if size > 0:
            ctx.request_scratch(size)
    return data


def _buffer_size(isa: str, op: Operator, dtype: TensorType, in_shape: tuple[int, ...],
                 f_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> int:
    opts = op.options if isinstance(op.options, Conv2DOptions) else Conv2DOptions()
    params = conv_params(opts, in_shape, f_shape)
    inp = bs.Dims(*in_shape)
    flt = bs.Dims(1, f_shape[1], f_shape[2], f_shape[3])
    out = bs.Dims(*out_shape)
    if dtype == TensorType.INT8:
        return bs.convolve_wrapper_s8(isa, params, inp, flt, out)
    return bs.convolve_wrapper_s16(isa, inp, flt)


# -- eval (cmsis-run) --
# CMSIS-NN's int8 and int16 convolutions (arm_convolve_wrapper_s8/s16: im2col, 1x1, 1xN and
# MVE paths) sum the same integers and requantise with arm_nn_requantize / its MVE and s64
# forms, which round exactly as TFLM's MultiplyByQuantizedMultiplier; float falls back to the
# reference kernel. So the reference arithmetic is reused. Checked: every conv_int8/int16 sweep
# and person_detect/kws_ref_model on m3 (plain C), m4 (DSP) and m55 (MVE) builds
# (tests/oracle/test_device_outputs.py).
# The reference kernel's bound steps (the compiled kernel when the interpreter runs them)
# reproduce that eval: reused too.
eval_ = conv2d_eval

REGISTRATION = Registration("CONV_2D", init=init, prepare=prepare, eval=eval_,
                            bind=bind_conv2d, builtin_data="TfLiteConvParams")

# -- overlap rules (optimize/safety.py) --
# int8, one group: TFLM cmsis_nn/conv.cc EvalQuantizedPerChannel -> arm_convolve_wrapper_s8
# (Source/ConvolutionFunctions/arm_convolve_wrapper_s8.c), which picks by
# arm_nn_is_convolve_1x1 / _1x1_fast / _1_x_n (Include/arm_nnsupportfunctions.h:125-159).
OVERLAP_RULES = (
    # arm_convolve_s8.c lines 142-291: im2col of 2 output pixels (C, DSP: lhs_rows == 2, then
    # arm_nn_mat_mult_kernel_s8_s16 over the scratch buffer) or 4 (MVE: lhs_rows == 4, then
    # arm_nn_mat_mult_nt_t_s8 on the buffer); the input is read only by the im2col copies, so
    # each block of whole pixels is written after all its reads; the odd pixel left over
    # likewise (lines 303-381). Groups > 1 loop groups outermost (line 142): not this key.
    OverlapRule("CONV_2D:INT8:im2col", ALL_ISAS, "margin",
                "arm_convolve_s8.c:142-381 (im2col blocks of 2 / MVE 4 pixels)",
                "each block of whole output pixels is written after its im2col copy"),
    # arm_convolve_1_x_n_s8.c: without MVE it calls arm_convolve_s8 (the #else branch).
    OverlapRule("CONV_2D:INT8:1xN", frozenset({"plain", "dsp"}), "margin",
                "arm_convolve_1_x_n_s8.c #else branch -> arm_convolve_s8",
                "falls back to arm_convolve_s8's im2col blocks"),
    # arm_convolve_1x1_s8_fast.c:176 -> arm_nn_mat_mult_nt_t_s8 on the input itself, all
    # n*h*w pixels as lhs rows. C and DSP (arm_nn_mat_mult_nt_t_s8.c:230, 626): the outer
    # loop walks output-channel pairs (rhs_rows_idx += 2) and re-reads every input pixel
    # for each pair, writing channels 2k, 2k+1 of every pixel in pass k: any output byte
    # over the input is written before the input's last read. Forbidden.
    OverlapRule("CONV_2D:INT8:1x1", frozenset({"plain", "dsp"}), "none",
                "arm_nn_mat_mult_nt_t_s8.c:230,626 (DSP/C: output-channel pairs outermost)",
                "the int8 1x1 convolution walks output-channel pairs outermost and re-reads "
                "every input pixel for each pair (arm_nn_mat_mult_nt_t_s8), so any output "
                "byte over its input is written before that input's last read"),
    # MVE (arm_nn_mat_mult_nt_t_s8.c:67-150): blocks of 4 lhs rows (pixels): for each output
    # channel i the 4 rows are re-read whole, then channel i of the 4 pixels is stored
    # (vstrbq_scatter_offset_s32, line 146); then the rows left over one at a time
    # (lines 153-223: channel i of one row, stored 4 channels at a time). Reads and writes
    # interleave inside each block, blocks follow one another: block rule, 4-pixel blocks.
    OverlapRule("CONV_2D:INT8:1x1", frozenset({"mve"}), "block",
                "arm_nn_mat_mult_nt_t_s8.c:67-223 (MVE: 4-pixel blocks, channels inside)",
                "inside each block of 4 pixels every channel re-reads the block's input",
                "mve4"),
    # Strided 1x1 (arm_convolve_1x1_s8.c:74-108): one arm_nn_mat_mult_nt_t_s8 call per
    # output row (lhs_rows = output_w, lhs stride c*stride_w): C/DSP channel pairs outermost
    # inside the row (the whole row is one block), MVE 4-pixel blocks inside the row.
    OverlapRule("CONV_2D:INT8:1x1s", frozenset({"plain", "dsp"}), "block",
                "arm_convolve_1x1_s8.c:74-108 + arm_nn_mat_mult_nt_t_s8.c:230,626",
                "each output row is written in output-channel pairs while its input row is "
                "re-read", "row"),
    OverlapRule("CONV_2D:INT8:1x1s", frozenset({"mve"}), "block",
                "arm_convolve_1x1_s8.c:74-108 + arm_nn_mat_mult_nt_t_s8.c:67-223",
                "4-pixel blocks inside each output row", "row-mve4"),
)
"""CMSIS-NN's int8 convolution paths (``_overlap``). Not derived (so refused): the MVE 1xN
path (its right-padded pixels copy input after the unpadded ones are written), int16
(arm_convolve_wrapper_s16), grouped convolutions (groups outermost)."""
