"""AVERAGE_POOL_2D and MAX_POOL_2D: TFLM's pooling.cc / pooling_common.cc.

Allocation: the parser allocates ``TfLitePoolParams``; init allocates ``OpDataPooling``;
prepare takes temp tensors input and output. Reference kernels request no scratch.
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """PoolInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataPooling"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """PoolingPrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    return None


REGISTRATIONS = {
    "AVERAGE_POOL_2D": Registration("AVERAGE_POOL_2D", init=init, prepare=prepare, eval=None,
                                    builtin_data="TfLitePoolParams"),
    "MAX_POOL_2D": Registration("MAX_POOL_2D", init=init, prepare=prepare, eval=None,
                                builtin_data="TfLitePoolParams"),
}
