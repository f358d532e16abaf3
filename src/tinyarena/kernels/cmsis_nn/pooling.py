"""AVERAGE_POOL_2D and MAX_POOL_2D with CMSIS-NN: TFLM's kernels/cmsis_nn/pooling.cc.

Allocation: init allocates the cmsis_nn OpData (``OpDataPooling`` + ``buffer_idx``) for both
ops; MaxPrepare is the reference PoolingPrepare (temps input, output); AveragePrepare runs
PoolingPrepare, takes input and output again, and for int8/int16 requests
``arm_avgpool_s8/s16_get_buffer_size`` when not empty (DSP: 4 * channels; plain C, MVE: none).

Arithmetic: the reference kernels'.
"""

from __future__ import annotations

from tinyarena.kernels import pooling as reference
from tinyarena.kernels._pooling_math import PoolOpData
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._overlap import ALL_ISAS, OverlapRule
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataPooling"))


def max_prepare(ctx: PrepareContext, op: Operator) -> PoolOpData:
    """MaxPrepare: PoolingPrepare."""
    bs.check_isa(ctx.target.cmsis_nn_isa)
    return reference.prepare(ctx, op)


def average_prepare(ctx: PrepareContext, op: Operator) -> PoolOpData:
    """AveragePrepare: PoolingPrepare, then CMSIS-NN's accumulator buffer."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    data = reference.prepare(ctx, op)
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    source, output = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if source is not None and output is not None \
            and source.type in (TensorType.INT8, TensorType.INT16):
        size = bs.avgpool(isa, output.shape[3])
        if size > 0:
            ctx.request_scratch(size)
    return data


# -- eval (cmsis-run) --
# arm_avgpool_s8/s16 round the window mean half away from zero ((sum +- count/2) / count) and
# arm_max_pool_s8/s16 take the maximum, as the reference; reused. Checked: avg pool_int8/int16
# sweeps, kws_ref_model, person_detect (MAX_POOL_2D was not measured by the device oracle).
average_eval = reference.average_eval
max_eval = reference.max_eval

REGISTRATIONS = {
    "AVERAGE_POOL_2D": Registration("AVERAGE_POOL_2D", init=init, prepare=average_prepare,
                                    eval=average_eval, bind=reference.average_bind,
                                    builtin_data="TfLitePoolParams"),
    "MAX_POOL_2D": Registration("MAX_POOL_2D", init=init, prepare=max_prepare, eval=max_eval,
                                bind=reference.max_bind, builtin_data="TfLitePoolParams"),
}

# -- overlap rules (optimize/safety.py) --
# TFLM cmsis_nn/pooling.cc: int8 AVERAGE_POOL_2D -> arm_avgpool_s8, MAX_POOL_2D ->
# arm_max_pool_s8 (Source/PoolingFunctions).
OVERLAP_RULES = (
    # arm_avgpool_s8.c: DSP: the window of a pixel summed into the scratch buffer, then the
    # pixel's channels written; C: per element, window then write; MVE: per pixel and 16
    # channels, window then store: the reference order coarsened.
    OverlapRule("AVERAGE_POOL_2D:INT8", ALL_ISAS, "margin",
                "arm_avgpool_s8.c (DSP scratch sum per pixel; C per element; MVE 16 channels)",
                "each pixel (or channel chunk) is written after its window is read"),
    # arm_max_pool_s8.c (function from line 150): per output pixel, arm_memcpy_s8 of the first
    # valid tap into the output pixel, then compare_and_replace_if_larger_q7 with each later
    # tap, keeping the running maximum in the output; clamp_output on the output only after
    # the batch. The pixel's output bytes are written while its window is still read: block
    # rule, one pixel.
    OverlapRule("MAX_POOL_2D:INT8", ALL_ISAS, "block",
                "arm_max_pool_s8.c: arm_memcpy_s8 then compare_and_replace_if_larger_q7 "
                "per output pixel",
                "the running maximum lives in the output pixel while its window is read",
                "pixel"),
)
"""CMSIS-NN's int8 pooling paths (``_overlap``); int16 is not derived (refused)."""
