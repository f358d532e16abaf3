"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_ALL: TFLM's reduce.cc / reduce_common.cc.

Allocation: the parser allocates ``TfLiteReducerParams``; init allocates ``OpDataReduce``;
prepare (PrepareMeanOrSumHelper) takes temp tensors input, output, axis, requests an int32
accumulator of the output's size for int8/int16 input, then int scratch arrays of the input
rank and of the axis count, then PrepareSimple takes input, axis (and output for int8) again.
REDUCE_MAX / REDUCE_MIN (PrepareMinMaxHelper) run PrepareSimple first, then take input, output,
axis and request the two int scratch arrays; REDUCE_ALL (PrepareAllHelper) takes input, output,
axis, then PrepareSimple, then the same two scratch arrays.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels._reduce_math import ReduceOpData, reduce, reduce_op_data, workspace_layout
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    required_tensor,
)
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


def eval_(ctx: EvalContext, op: Operator, data: ReduceOpData) -> None:
    """EvalMeanHelper / EvalSumHelper (see _reduce_math.reduce); the axis is read at eval."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    axis = ctx.tensor_data(op.inputs[AXIS])
    work = ctx.workspace(data.workspace) if data.workspace >= 0 else None
    reduce(ctx.tensor_data(op.inputs[INPUT]), axis, data, out, work)


@dataclass(frozen=True)
class MinMaxData:
    """OpDataReduce's fields that REDUCE_MAX/MIN/ALL read: the quantization to compare."""

    input_quant: tuple[float, int]
    output_quant: tuple[float, int]


def _prepare_simple(ctx: PrepareContext, op: Operator) -> None:
    """PrepareSimple: temp input and axis (and output for int8); two inputs, one output."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes two inputs (input, axis) and one output")
    ctx.allocate_temp_tensor(op.inputs[AXIS])
    axis = required_tensor(ctx, op.inputs[AXIS], op.name, "axis")
    if axis.type != TensorType.INT32:
        raise KernelError(f"{op.name}: the axis tensor must be int32, not {axis.type.name}")
    source = required_tensor(ctx, op.inputs[INPUT], op.name, "input")
    if source.type == TensorType.INT8:
        ctx.allocate_temp_tensor(op.outputs[OUTPUT])


def _request_iter_scratch(ctx: PrepareContext, op: Operator) -> MinMaxData:
    source = required_tensor(ctx, op.inputs[INPUT], op.name, "input")
    out = required_tensor(ctx, op.outputs[OUTPUT], op.name, "output")
    axis = required_tensor(ctx, op.inputs[AXIS], op.name, "axis")
    ctx.request_scratch(4 * len(source.shape))  # scratch_input_iter_idx
    ctx.request_scratch(4 * axis.element_count)  # scratch_resolved_axis_idx
    return MinMaxData(tensor_quant(source), tensor_quant(out))


def prepare_min_max(ctx: PrepareContext, op: Operator) -> MinMaxData:
    """PrepareMinMaxHelper."""
    _prepare_simple(ctx, op)
    for index in (op.inputs[INPUT], op.outputs[OUTPUT], op.inputs[AXIS]):
        ctx.allocate_temp_tensor(index)
    return _request_iter_scratch(ctx, op)


def prepare_all(ctx: PrepareContext, op: Operator) -> MinMaxData:
    """PrepareAllHelper: a bool input only."""
    for index in (op.inputs[INPUT], op.outputs[OUTPUT], op.inputs[AXIS]):
        ctx.allocate_temp_tensor(index)
    source = required_tensor(ctx, op.inputs[INPUT], op.name, "input")
    if source.type != TensorType.BOOL:
        raise KernelError(f"REDUCE_ALL takes a bool input, not {source.type.name}")
    _prepare_simple(ctx, op)
    return _request_iter_scratch(ctx, op)


def _reduced_rows(source: np.ndarray, axis_values: np.ndarray, name: str) -> np.ndarray:
    """ResolveAxis (negative axes, duplicates dropped), then the input as (outputs, reduced)
    with each row in the order ReduceGeneric visits it (row-major over the reduced axes)."""
    rank = source.ndim
    axes: list[int] = []
    for value in axis_values.reshape(-1).tolist():
        current = value + rank if value < 0 else value
        if not 0 <= current < rank:
            raise KernelError(f"{name}: axis {value} is out of range for a rank-{rank} input")
        if current not in axes:
            axes.append(current)
    reduced = sorted(axes)
    kept = [d for d in range(rank) if d not in reduced]
    moved = np.transpose(source, kept + reduced)
    count = int(np.prod([source.shape[d] for d in reduced], dtype=np.int64))
    outputs = int(np.prod([source.shape[d] for d in kept], dtype=np.int64))
    return moved.reshape(outputs, count)


def _signed_zero_of_first(rows: np.ndarray, result: np.ndarray) -> np.ndarray:
    """A float max/min of zero keeps the sign of the first zero met (``in > current`` never
    replaces +0 by -0 or the reverse); NaN never replaces anything."""
    zero = result == 0
    if not zero.any():
        return result
    is_zero = rows[zero] == 0
    first = np.argmax(is_zero, axis=1)
    picked = rows[zero][np.arange(first.size), first]
    result = result.copy()
    result[zero] = picked
    return result


def eval_min_max(ctx: EvalContext, op: Operator, data: MinMaxData) -> None:
    """EvalMinMaxHelper -> ReduceGeneric with lowest()/max() as the initial value."""
    in_t, out_t = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if in_t is None or out_t is None or in_t.type != out_t.type:
        raise KernelError(f"{op.name}: input and output types must match")
    if in_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError(f"{op.name} supports float32 and int8 only, not {in_t.type.name}")
    if in_t.type == TensorType.INT8 and data.input_quant != data.output_quant:
        raise KernelError(f"int8 {op.name} needs the output quantized exactly like the input "
                          f"(same scale and zero point)")
    source = ctx.tensor_data(op.inputs[INPUT])
    rows = _reduced_rows(source, np.asarray(ctx.tensor_data(op.inputs[AXIS])), op.name)
    is_max = op.name == "REDUCE_MAX"
    if in_t.type == TensorType.FLOAT32:
        info = np.finfo(np.float32)
        initial = np.float32(info.min if is_max else info.max)
        fold = np.fmax if is_max else np.fmin  # skips NaN like ``in > current`` does
        result = fold.reduce(rows, axis=1, initial=initial).astype(np.float32)
        result = _signed_zero_of_first(rows, result)
    else:
        bound = np.iinfo(np.int8)
        result = (rows.max(axis=1, initial=bound.min) if is_max
                  else rows.min(axis=1, initial=bound.max)).astype(np.int8)
    _write(ctx.tensor_data(op.outputs[OUTPUT]), result, op.name)


def eval_all(ctx: EvalContext, op: Operator, data: MinMaxData) -> None:
    """EvalAllHelper -> ReduceGeneric<bool> with ``in && current`` from true."""
    in_t, out_t = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if in_t is None or out_t is None or in_t.type != out_t.type:
        raise KernelError("REDUCE_ALL: input and output types must match")
    source = ctx.tensor_data(op.inputs[INPUT])
    rows = _reduced_rows(source, np.asarray(ctx.tensor_data(op.inputs[AXIS])), op.name)
    _write(ctx.tensor_data(op.outputs[OUTPUT]), np.all(rows, axis=1), op.name)


def _write(out: np.ndarray, result: np.ndarray, name: str) -> None:
    if out.size != result.size:
        raise KernelError(f"{name}: the output holds {out.size} values, the reduction gives "
                          f"{result.size}; fix the output shape")
    out.reshape(-1)[...] = result


REGISTRATIONS = {
    "MEAN": Registration("MEAN", init=init, prepare=prepare, eval=eval_,
                         builtin_data="TfLiteReducerParams"),
    "SUM": Registration("SUM", init=init, prepare=prepare, eval=eval_,
                        builtin_data="TfLiteReducerParams"),
    "REDUCE_MAX": Registration("REDUCE_MAX", init=init, prepare=prepare_min_max,
                               eval=eval_min_max, builtin_data="TfLiteReducerParams"),
    "REDUCE_MIN": Registration("REDUCE_MIN", init=init, prepare=prepare_min_max,
                               eval=eval_min_max, builtin_data="TfLiteReducerParams"),
    "REDUCE_ALL": Registration("REDUCE_ALL", init=init, prepare=prepare_all, eval=eval_all,
                               builtin_data="TfLiteReducerParams"),
}
