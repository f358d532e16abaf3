"""SOFTMAX with CMSIS-NN: TFLM's kernels/cmsis_nn/softmax.cc.

Allocation: init allocates ``CMSISNNSoftmaxParams`` (``SoftmaxParams`` + num_rows, row_size);
prepare is the reference one (temps input, output; two 1026-byte LUTs for int16 input, from the
shared CalculateSoftmaxParams). Arithmetic: the reference kernel's.
"""

from __future__ import annotations

from tinyarena.kernels import softmax as reference
from tinyarena.kernels._softmax_math import SoftmaxOpData
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CMSISNNSoftmaxParams"))


def prepare(ctx: PrepareContext, op: Operator) -> SoftmaxOpData:
    """Prepare: the reference allocations (temps, int16 LUTs)."""
    bs.check_isa(ctx.target.cmsis_nn_isa)
    return reference.prepare(ctx, op)


# -- eval (cmsis-run) --
# arm_softmax_s8 / arm_softmax_s8_s16 / arm_softmax_s16 are TFLM's fixed-point softmax (the
# same exp-on-negative-values, reciprocal and the LUTs CalculateSoftmaxParams builds); reused.
# Checked: softmax_int8/int16 sweeps and every shared int8 model's SOFTMAX on all three ISAs.
eval_ = reference.eval_

REGISTRATION = Registration("SOFTMAX", init=init, prepare=prepare, eval=eval_,
                            bind=reference.bind, builtin_data="TfLiteSoftmaxParams")
