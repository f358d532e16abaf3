"""SVDF with CMSIS-NN: TFLM's kernels/cmsis_nn/svdf.cc.

Allocation: init allocates ``CmsisNnOpDataSvdf``; prepare makes the reference kernel's temps and
scratch requests (int8: 4 * batch * num_filters, then 4 * batch * num_units; float: the first
only), then, for int8 on MVE, ``arm_svdf_s8_get_buffer_size`` (4 * num_filters) as a persistent
kernel-sum array with ``KERNELS_OPTIMIZED_FOR_SPEED`` or a third scratch without it. Plain C and
DSP builds add nothing. Arithmetic: the reference kernel's.
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels import svdf as reference
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.model.types import Operator, TensorType


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataSvdf"))


def prepare(ctx: PrepareContext, op: Operator) -> reference.OpData:
    """CmsisNnPrepareSvdf: the reference allocations, then MVE's kernel sums."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    data = reference.prepare(ctx, op)
    source = ctx.tensor(op.inputs[reference.INPUT])
    feature = ctx.tensor(op.inputs[reference.WEIGHTS_FEATURE])
    if source is None or feature is None or source.type != TensorType.INT8:
        return data
    size = bs.svdf_s8(isa, feature.shape[0])
    if size > 0 and ctx.target.kernels_optimized_for_speed:
        if feature.data is None:
            raise KernelError("SVDF with CMSIS-NN (KERNELS_OPTIMIZED_FOR_SPEED) needs a "
                              "constant weights_feature tensor")
        ctx.allocate_persistent(size)  # kernel_sums
    elif size > 0:
        ctx.request_scratch(size)
    return data


# -- eval (cmsis-run) --
# arm_svdf_s8 / arm_svdf_state_s16_s8: feature dot products requantised to the state with
# arm_nn_requantize, time dot products plus bias requantised to the output: the reference's
# integers and rounding; reused. Checked: keyword_scrambled(_8bit) on all three ISAs.
eval_ = reference.eval_

REGISTRATION = Registration("SVDF", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteSVDFParams")
