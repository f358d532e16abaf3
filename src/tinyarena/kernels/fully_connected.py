"""FULLY_CONNECTED: TFLM's fully_connected.cc / fully_connected_common.cc.

Allocation: the parser allocates ``TfLiteFullyConnectedParams``; init allocates
``OpDataFullyConnected``; prepare takes temp tensors input, filter, bias (when present),
output, requests an unpack scratch for int4 filters, and allocates per-channel multiplier and
shift arrays when the input is quantized and the filter has several scales.
"""

from __future__ import annotations

from tinyarena.kernels._conv_kernels import (
    FullyConnectedData,
    bind_fully_connected,
    fully_connected_eval,
    fully_connected_op_data,
)
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
WEIGHTS = 1
BIAS = 2
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """FullyConnectedInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataFullyConnected"))


def prepare(ctx: PrepareContext, op: Operator) -> FullyConnectedData:
    """FullyConnectedPrepare, then CalculateOpDataFullyConnected's persistent arrays."""
    bias = op.inputs[BIAS] if len(op.inputs) > BIAS else -1
    for index in (op.inputs[INPUT], op.inputs[WEIGHTS], bias, op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    source, weights = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.inputs[WEIGHTS])
    if weights is not None and weights.type == TensorType.INT4:
        ctx.request_scratch(weights.element_count)
    scales = 0 if weights is None or weights.quantization is None else len(
        weights.quantization.scale)
    if source is not None and source.type != TensorType.FLOAT32 and scales > 1:
        ctx.allocate_persistent(4 * scales)  # per_channel_output_multiplier
        ctx.allocate_persistent(4 * scales)  # per_channel_output_shift
    return fully_connected_op_data(ctx, op)


REGISTRATION = Registration("FULLY_CONNECTED", init=init, prepare=prepare,
                            eval=fully_connected_eval, bind=bind_fully_connected,
                            builtin_data="TfLiteFullyConnectedParams")
