"""STRIDED_SLICE: TFLM's strided_slice.cc / strided_slice_common.cc, up to 4-D inputs.

TFLM's micro kernel honours begin_mask, end_mask and shrink_axis_mask only: it sets
ellipsis_mask and new_axis_mask to 0 and never sets the offset flag, so models using those
options get the plain begin/end interpretation here too (as in TFLM). The output shape is
checked in prepare; eval walks the 5-D padded index ranges exactly as
reference_ops::StridedSlice and writes elements in order.

Allocation: init allocates ``StridedSliceParams`` (84 bytes); prepare takes five temp tensors
(input, begin, end, strides, output).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import gather
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.options import StridedSliceOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
BEGIN = 1
END = 2
STRIDES = 3
OUTPUT = 0
MAX_DIM = 4  # kMaxDim in strided_slice_common.cc
_PADDED_DIMS = 5  # reference_ops::StridedSlice pads every shape to 5-D

_INT_MIN = -(1 << 31)
_INT_MAX = (1 << 31) - 1
_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32,
              TensorType.BOOL)


@dataclass(frozen=True)
class OpData:
    """StridedSliceParams after padding to 5-D: per-axis index ranges to gather."""

    starts: tuple[int, ...]
    stops: tuple[int, ...]
    strides: tuple[int, ...]


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if hi < v else lo if v < lo else v


def _start_for_axis(begin: int, stride: int, axis_size: int, begin_masked: bool) -> int:
    """strided_slice::StartForAxis (used by Prepare's shape check)."""
    if axis_size == 0:
        return 0
    start = begin
    if begin_masked:
        start = _INT_MIN if stride > 0 else _INT_MAX
    if start < 0:
        start += axis_size
    return _clamp(start, 0, axis_size) if stride > 0 else _clamp(start, -1, axis_size - 1)


def _stop_for_axis(end: int, stride: int, axis_size: int, end_masked: bool, shrink: bool,
                   start: int) -> int:
    """strided_slice::StopForAxis (used by Prepare's shape check)."""
    if axis_size == 0:
        return 0
    if shrink:
        return start + 1
    stop = end
    if end_masked:
        stop = _INT_MAX if stride > 0 else _INT_MIN
    if stop < 0:
        stop += axis_size
    return _clamp(stop, 0, axis_size) if stride > 0 else _clamp(stop, -1, axis_size - 1)


def _eval_start(begin: int, stride: int, axis_size: int, begin_masked: bool) -> int:
    """strided_slice::StridedSliceStartForAxis (used by eval)."""
    start = begin + axis_size if begin < 0 else begin
    start = _clamp(start, 0, axis_size) if stride > 0 else _clamp(start, -1, axis_size - 1)
    if begin_masked:
        start = 0 if stride > 0 else axis_size - 1
    return start


def _eval_stop(end: int, stride: int, axis_size: int, end_masked: bool, shrink: bool,
               start: int) -> int:
    """strided_slice::StridedSliceEndForAxis (used by eval; offset is always false in TFLM)."""
    if shrink:
        return start if start >= axis_size else start + 1
    stop = end + axis_size if end < 0 else end
    stop = _clamp(stop, 0, axis_size) if stride > 0 else _clamp(stop, -1, axis_size - 1)
    if end_masked:
        stop = axis_size if stride > 0 else -1
    return stop


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("StridedSliceParams"))


def _const_ints(ctx: PrepareContext, index: int, what: str, count: int) -> list[int]:
    t = ctx.tensor(index)
    if t is None or t.data is None:
        raise KernelError(f"STRIDED_SLICE: non-constant {what} tensor is not supported; make it "
                          "a constant")
    values = [int(v) for v in np.asarray(t.data).reshape(-1)]
    if len(values) < count:
        raise KernelError(f"STRIDED_SLICE: {what} has {len(values)} entries, needs {count}")
    return values[:count]


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """StridedSlicePrepare: BuildStridedSliceParams, CheckOutputSize, then the 5-D padding."""
    if len(op.inputs) != 4 or len(op.outputs) != 1:
        raise KernelError("STRIDED_SLICE takes four inputs (input, begin, end, strides) and one "
                          "output")
    for index in (*op.inputs, op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[INPUT], "STRIDED_SLICE", "input")
    out = required_tensor(ctx, op.outputs[OUTPUT], "STRIDED_SLICE", "output")
    dims = len(inp.shape)
    if dims > MAX_DIM:
        raise KernelError(f"STRIDED_SLICE: input dim should not exceed {MAX_DIM}")
    begin = _const_ints(ctx, op.inputs[BEGIN], "begin", dims)
    end = _const_ints(ctx, op.inputs[END], "end", dims)
    strides = _const_ints(ctx, op.inputs[STRIDES], "strides", dims)
    options = op.options if isinstance(op.options, StridedSliceOptions) \
        else StridedSliceOptions()
    bm, em, sm = options.begin_mask, options.end_mask, options.shrink_axis_mask
    expected: list[int] = []
    for axis in range(dims):
        stride = strides[axis]
        if stride == 0:
            raise KernelError("STRIDED_SLICE: stride value has to be non-zero")
        shrink = bool(sm & (1 << axis))
        start = _start_for_axis(begin[axis], stride, inp.shape[axis], bool(bm & (1 << axis)))
        stop = _stop_for_axis(end[axis], stride, inp.shape[axis], bool(em & (1 << axis)),
                              shrink, start)
        if shrink:
            stop = start + 1
        length = max(0, math.ceil(np.float32(stop - start) / np.float32(stride)))
        if not shrink:
            expected.append(int(length))
    if tuple(out.shape) != tuple(expected):
        raise KernelError(f"STRIDED_SLICE: output shape {out.shape} should be {tuple(expected)}")
    # StridedSlicePadIndices: leading axes become full [0, 1) ranges, masks shift left.
    pad = _PADDED_DIMS - dims
    shape = (1,) * pad + tuple(inp.shape)
    begin5, end5, strides5 = [0] * pad + begin, [1] * pad + end, [1] * pad + strides
    bm5 = (bm << pad) | ((1 << pad) - 1)
    em5 = (em << pad) | ((1 << pad) - 1)
    sm5 = sm << pad
    starts, stops = [], []
    for axis in range(_PADDED_DIMS):
        shrink = bool(sm5 & (1 << axis))
        start = _eval_start(begin5[axis], strides5[axis], shape[axis], bool(bm5 & (1 << axis)))
        stops.append(_eval_stop(end5[axis], strides5[axis], shape[axis], bool(em5 & (1 << axis)),
                                shrink, start))
        starts.append(start)
    return OpData(tuple(starts), tuple(stops), tuple(strides5))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """reference_ops::StridedSlice: gather the 5-D index ranges in row-major order."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is not None and t.type not in _SUPPORTED:
        raise KernelError(f"STRIDED_SLICE does not support type {t.type.name}")
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    x5 = x.reshape((1,) * (_PADDED_DIMS - x.ndim) + x.shape)
    ranges = [np.arange(a, b, s) for a, b, s in zip(data.starts, data.stops, data.strides)]
    picked = x5[np.ix_(*ranges)].reshape(-1)
    flat = out.reshape(-1)
    n = min(picked.size, flat.size)
    flat[:n] = picked[:n]


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """eval's gather with its element indices computed once (the ranges are constants)."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is not None and t.type not in _SUPPORTED:
        return None  # eval raises the error
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if not (x.flags.c_contiguous and out.flags.c_contiguous) or x.dtype != out.dtype:
        return None
    shape5 = (1,) * (_PADDED_DIMS - x.ndim) + x.shape
    ranges = [np.arange(a, b, s) for a, b, s in zip(data.starts, data.stops, data.strides)]
    picked = np.arange(x.size, dtype=np.int64).reshape(shape5)[np.ix_(*ranges)].reshape(-1)
    if picked.size != out.size:
        return None  # eval copies what fits
    return gather(out, x, picked)


REGISTRATION = Registration("STRIDED_SLICE", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteStridedSliceParams")
