"""TRANSPOSE_CONV with CMSIS-NN: TFLM's kernels/cmsis_nn/transpose_conv.cc.

Allocation: init allocates the cmsis_nn OpData (``ConvParams``, three scratch indices, two
per-channel pointers); prepare is the reference one (temps, per-channel arrays, CalculateOpData's
temps and int16-bias conversion buffer) except for int8 input, which requests two buffers in
place of the reference accumulator: ``arm_transpose_conv_s8_get_buffer_size`` and
``arm_transpose_conv_s8_get_reverse_conv_buffer_size``, both requested even when empty. int16
keeps the reference 8 * output elements. Arithmetic: the reference kernel's.
"""

from __future__ import annotations

from tinyarena.kernels import transpose_conv as reference
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._context import ScratchRewrite
from tinyarena.model.options import TransposeConvOptions
from tinyarena.model.types import Operator, TensorType


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataTransposeConv"))


def prepare(ctx: PrepareContext, op: Operator) -> reference.OpData:
    """Prepare: the reference allocations with CMSIS-NN's two int8 buffers."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    source = ctx.tensor(op.inputs[reference.INPUT])
    if source is None or source.type != TensorType.INT8:
        return reference.prepare(ctx, op)

    def cmsis_buffers(number: int, nbytes: int) -> tuple[int, ...]:
        return _int8_buffers(ctx, op, isa) if number == 0 else (nbytes,)

    return reference.prepare(ScratchRewrite(ctx, cmsis_buffers), op)


def _int8_buffers(ctx: PrepareContext, op: Operator, isa: str) -> tuple[int, int]:
    opts = op.options if isinstance(op.options, TransposeConvOptions) \
        else TransposeConvOptions()
    source = ctx.tensor(op.inputs[reference.INPUT])
    weights = ctx.tensor(op.inputs[reference.FILTER])
    output = ctx.tensor(op.outputs[reference.OUTPUT])
    assert source is not None and weights is not None and output is not None  # prepare checked
    depth = weights.shape[0]
    inp = bs.Dims(source.shape[0], source.shape[1], source.shape[2], source.shape[3])
    flt = bs.Dims(depth, weights.shape[1], weights.shape[2], source.shape[3])
    out = bs.Dims(source.shape[0], output.shape[1], output.shape[2], depth)
    return (bs.transpose_conv_s8(isa, opts.stride_h, opts.stride_w, inp, flt, out),
            bs.transpose_conv_reverse_s8(opts.stride_h, opts.stride_w, inp, flt))


# -- eval (cmsis-run) --
# arm_transpose_conv_s8: bias-initialised int32 accumulators scattered per input pixel, then
# arm_nn_requantize (MVE: arm_requantize_mve_32x4) per channel: the reference's integers and
# rounding; reused (not measured by the device oracle).
eval_ = reference.eval_

REGISTRATION = Registration("TRANSPOSE_CONV", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteTransposeConvParams")
