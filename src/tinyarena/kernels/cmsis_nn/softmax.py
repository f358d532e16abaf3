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
from tinyarena.kernels.cmsis_nn._overlap import ALL_ISAS, OverlapRule
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

# -- overlap rules (optimize/safety.py) --
# TFLM cmsis_nn/softmax.cc SoftmaxEval, int8 in and out -> arm_softmax_s8
# (Source/SoftmaxFunctions/arm_softmax_s8.c): per row, a pass for the maximum and one for the
# sum of exponentials read the row only; the last pass reads input[i] and then writes
# output[i] (MVE: vldrbq_s32 of 4 then vstrbq_s32 of the same 4, lines 59-97 of the
# function; without MVE, or with GCC 12.2 (ARM_GCC_12_2_ICE, Include/Internal/
# arm_nn_compiler.h:158), arm_nn_softmax_common_s8: output_s8[col] after input[col]).
# int8 -> int16 (arm_softmax_s8_s16) changes the element size: not in place.
OVERLAP_RULES = (
    OverlapRule("SOFTMAX:INT8", ALL_ISAS, "in-place",
                "arm_softmax_s8.c (last pass: input[i] then output[i]); "
                "arm_nn_softmax_common_s8.c",
                "each row is read whole twice, then element i is written after reading it"),
)
