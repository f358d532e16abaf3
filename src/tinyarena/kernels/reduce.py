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
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels import native
from tinyarena.kernels._reduce_math import (
    ReduceOpData,
    mean_multiplier,
    reduce,
    reduce_op_data,
    resolve_axes,
    workspace_layout,
)
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
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


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: ReduceOpData) -> None:
    """EvalMeanHelper / EvalSumHelper (see _reduce_math.reduce); the axis is read at eval."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    axis = ctx.tensor_data(op.inputs[AXIS])
    work = ctx.workspace(data.workspace) if data.workspace >= 0 else None
    reduce(ctx.tensor_data(op.inputs[INPUT]), axis, data, out, work)


def bind(ctx: EvalContext, op: Operator, data: ReduceOpData) -> Step | None:
    """MEAN or SUM over a constant, contiguous run of axes with compiled kernels on: the
    loops of ``native.reduce`` (int8/int16, float32); else eval."""
    axis = ctx.tensor(op.inputs[AXIS])
    if data is None or not native.enabled(ctx) or axis is None or axis.data is None:
        return None
    source = ctx.tensor_data(op.inputs[INPUT])
    if source.ndim == 0:
        return None
    from tinyarena.kernels.native.reduce import bind_mean_or_sum, bind_mean_or_sum_float

    axes = resolve_axes(axis.data, source.ndim, data.op)
    if data.type == TensorType.FLOAT32:
        return bind_mean_or_sum_float(source, ctx.tensor_data(op.outputs[OUTPUT]), axes,
                                      data.op == "MEAN")
    count = int(np.prod([source.shape[i] for i in axes], dtype=np.int64))
    if count == 0:
        return None
    multiplier, shift = mean_multiplier(count, data)
    return bind_mean_or_sum(source, ctx.tensor_data(op.outputs[OUTPUT]), axes, multiplier,
                            shift, data.input_zero_point, data.output_zero_point)


@dataclass(frozen=True)
class MinMaxData:
    """OpDataReduce's fields that REDUCE_MAX/MIN/ALL read: the quantization to compare."""

    input_quant: tuple[float, int]
    output_quant: tuple[float, int]
    nan_mask: int = -1  # float32: scratch of the input's size for the NaN-skipping reduction


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
    mask = -1
    if source.type == TensorType.FLOAT32:  # written whole before it is read
        mask = ctx.request_workspace((source.element_count,), np.bool_, persistent=False)
    return MinMaxData(tensor_quant(source), tensor_quant(out), mask)


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


def _resolve_axes(source: np.ndarray, axis_values: np.ndarray, name: str) -> tuple[int, ...]:
    """ResolveAxis: negative axes counted from the end, duplicates dropped (sorted)."""
    rank = source.ndim
    axes: set[int] = set()
    for value in axis_values.reshape(-1).tolist():
        current = value + rank if value < 0 else value
        if not 0 <= current < rank:
            raise KernelError(f"{name}: axis {value} is out of range for a rank-{rank} input")
        axes.add(current)
    return tuple(sorted(axes))


def _output_view(source: np.ndarray, axes: tuple[int, ...], out: np.ndarray,
                 name: str) -> np.ndarray:
    kept = tuple(d for i, d in enumerate(source.shape) if i not in axes)
    if out.size != int(np.prod(kept, dtype=np.int64)):
        raise KernelError(f"{name}: the output holds {out.size} values, the reduction gives "
                          f"{int(np.prod(kept, dtype=np.int64))}; fix the output shape")
    return out.reshape(kept)


def _fix_signed_zeros(source: np.ndarray, axes: tuple[int, ...], result: np.ndarray) -> None:
    """A float max/min of zero keeps the sign of the first zero met in ReduceGeneric's
    row-major walk (``in > current`` never replaces +0 by -0 or the reverse). Only outputs
    that are zero are looked at again."""
    zero = result == 0
    if not zero.any():
        return
    kept = [d for d in range(source.ndim) if d not in axes]
    rows = np.transpose(source, kept + list(axes)).reshape(result.size, -1)[zero.reshape(-1)]
    first = np.argmax(rows == 0, axis=1)
    result[zero] = rows[np.arange(first.size), first]


@c_float_env
def eval_min_max(ctx: EvalContext, op: Operator, data: MinMaxData) -> None:
    """EvalMinMaxHelper -> ReduceGeneric with lowest()/max() as the initial value, reduced in
    place into the output (no copy of the input)."""
    in_t, out_t = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if in_t is None or out_t is None or in_t.type != out_t.type:
        raise KernelError(f"{op.name}: input and output types must match")
    if in_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError(f"{op.name} supports float32 and int8 only, not {in_t.type.name}")
    if in_t.type == TensorType.INT8 and data.input_quant != data.output_quant:
        raise KernelError(f"int8 {op.name} needs the output quantized exactly like the input "
                          f"(same scale and zero point)")
    source = ctx.tensor_data(op.inputs[INPUT])
    axes = _resolve_axes(source, np.asarray(ctx.tensor_data(op.inputs[AXIS])), op.name)
    result = _output_view(source, axes, ctx.tensor_data(op.outputs[OUTPUT]), op.name)
    is_max = op.name == "REDUCE_MAX"
    if in_t.type == TensorType.FLOAT32:
        info = np.finfo(np.float32)
        initial = np.float32(info.min if is_max else info.max)
        fold = np.fmax if is_max else np.fmin
        # ``in > current`` skips every NaN; np.fmax/fmin skip quiet ones but return a
        # signaling NaN (IEEE maxNum), so an input holding a NaN (its sum is NaN; infinities
        # of both signs are a false alarm) is reduced with the NaNs masked out (the mask in
        # the workspace made at prepare)
        if np.isnan(np.add.reduce(source, axis=None)):
            mask = ctx.workspace(data.nan_mask).reshape(source.shape) if data.nan_mask >= 0 \
                else np.empty(source.shape, np.bool_)
            np.equal(source, source, out=mask)
            fold.reduce(source, axis=axes, initial=initial, out=result, where=mask)
        else:
            fold.reduce(source, axis=axes, initial=initial, out=result)
        _fix_signed_zeros(source, axes, result)
    else:
        bound = np.iinfo(np.int8)
        if is_max:
            np.maximum.reduce(source, axis=axes, initial=bound.min, out=result)
        else:
            np.minimum.reduce(source, axis=axes, initial=bound.max, out=result)


def eval_all(ctx: EvalContext, op: Operator, data: MinMaxData) -> None:
    """EvalAllHelper -> ReduceGeneric<bool> with ``in && current`` from true."""
    in_t, out_t = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if in_t is None or out_t is None or in_t.type != out_t.type:
        raise KernelError("REDUCE_ALL: input and output types must match")
    source = ctx.tensor_data(op.inputs[INPUT])
    axes = _resolve_axes(source, np.asarray(ctx.tensor_data(op.inputs[AXIS])), op.name)
    result = _output_view(source, axes, ctx.tensor_data(op.outputs[OUTPUT]), op.name)
    np.logical_and.reduce(source, axis=axes, out=result)


REGISTRATIONS = {
    "MEAN": Registration("MEAN", init=init, prepare=prepare, eval=eval_, bind=bind,
                         builtin_data="TfLiteReducerParams"),
    "SUM": Registration("SUM", init=init, prepare=prepare, eval=eval_, bind=bind,
                        builtin_data="TfLiteReducerParams"),
    "REDUCE_MAX": Registration("REDUCE_MAX", init=init, prepare=prepare_min_max,
                               eval=eval_min_max, builtin_data="TfLiteReducerParams"),
    "REDUCE_MIN": Registration("REDUCE_MIN", init=init, prepare=prepare_min_max,
                               eval=eval_min_max, builtin_data="TfLiteReducerParams"),
    "REDUCE_ALL": Registration("REDUCE_ALL", init=init, prepare=prepare_all, eval=eval_all,
                               builtin_data="TfLiteReducerParams"),
}
