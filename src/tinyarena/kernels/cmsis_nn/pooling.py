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
