"""MEAN and SUM: TFLM's reduce.cc / reduce_common.cc.

Allocation: the parser allocates ``TfLiteReducerParams``; init allocates ``OpDataReduce``;
prepare (PrepareMeanOrSumHelper) takes temp tensors input, output, axis, requests an int32
accumulator of the output's size for int8/int16 input, then int scratch arrays of the input
rank and of the axis count, then PrepareSimple takes input, axis (and output for int8) again.
"""

from __future__ import annotations

import dataclasses

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._reduce_math import ReduceOpData, reduce, reduce_op_data, workspace_layout
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
AXIS = 1
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """InitReduce: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataReduce"))


def prepare(ctx: PrepareContext, op: Operator) -> ReduceOpData | None:
    """PrepareMeanOrSumHelper, allocation side."""
    for index in (op.inputs[INPUT], op.outputs[OUTPUT], op.inputs[AXIS]):
        ctx.allocate_temp_tensor(index)
    source, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    axis = ctx.tensor(op.inputs[AXIS])
    if source is None or out is None or axis is None:
        return None
    if source.type in (TensorType.INT8, TensorType.INT16):
        ctx.request_scratch(4 * out.element_count)  # scratch_accumulator_idx
    ctx.request_scratch(4 * len(source.shape))  # scratch_input_iter_idx
    ctx.request_scratch(4 * axis.element_count)  # scratch_resolved_axis_idx
    # PrepareSimple
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[AXIS])
    if source.type == TensorType.INT8:
        ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    data = reduce_op_data(op.name, source, out, axis)
    # The eval buffer is made once: exact for a constant axis, worst case for one read at eval.
    shape, dtype = workspace_layout(data, source.shape, axis.data)
    # Scratch: eval copies the input in and uses the spare row as a temporary, every time.
    return dataclasses.replace(data, workspace=ctx.request_workspace(shape, dtype,
                                                                     persistent=False))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: ReduceOpData) -> None:
    """EvalMeanHelper / EvalSumHelper (see _reduce_math.reduce); the axis is read at eval."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    axis = ctx.tensor_data(op.inputs[AXIS])
    work = ctx.workspace(data.workspace) if data.workspace >= 0 else None
    reduce(ctx.tensor_data(op.inputs[INPUT]), axis, data, out, work)


REGISTRATIONS = {
    "MEAN": Registration("MEAN", init=init, prepare=prepare, eval=eval_,
                         builtin_data="TfLiteReducerParams"),
    "SUM": Registration("SUM", init=init, prepare=prepare, eval=eval_,
                        builtin_data="TfLiteReducerParams"),
}
