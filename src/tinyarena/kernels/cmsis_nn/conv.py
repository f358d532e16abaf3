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
