"""ARG_MAX and ARG_MIN: TFLM's arg_min_max.cc with reference_ops::ArgMinMax (float32 and int8
input, int32 axis, int32 output).

Allocation: the parser allocates ``TfLiteArgMaxParams`` / ``TfLiteArgMinParams`` (an enum);
TFLM registers neither init nor prepare, so nothing else is allocated and every check happens
at eval. The scan keeps the first index on ties; a NaN never wins a comparison, so a NaN in
first place keeps index 0.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, Registration
from tinyarena.model.types import Operator, TensorType


def _first_best(rows: np.ndarray, is_max: bool) -> np.ndarray:
    """The index the reference scan (``if (cmp(curr, best))``) ends on, for each row."""
    if rows.dtype.kind != "f":
        return np.argmax(rows, axis=1) if is_max else np.argmin(rows, axis=1)
    best = (np.fmax if is_max else np.fmin).reduce(rows, axis=1)
    index = np.argmax(rows == best[:, None], axis=1)
    return np.where(np.isnan(rows[:, 0]), 0, index)


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    in_t, axis_t, out_t = (ctx.tensor(op.inputs[0]), ctx.tensor(op.inputs[1]),
                           ctx.tensor(op.outputs[0]))
    if axis_t is None or axis_t.type != TensorType.INT32:
        raise KernelError(f"{op.name}: the axis must be int32")
    if out_t is None or out_t.type != TensorType.INT32:
        raise KernelError(f"{op.name}: only int32 output is supported by TFLM")
    if in_t is None or in_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        kind = "missing" if in_t is None else in_t.type.name
        raise KernelError(f"{op.name} supports float32 and int8 input, not {kind}")
    source = ctx.tensor_data(op.inputs[0])
    rank = source.ndim
    axis = int(ctx.tensor_data(op.inputs[1]).reshape(-1)[0])
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise KernelError(f"{op.name}: axis out of range for a rank-{rank} input")
    out = ctx.tensor_data(op.outputs[0])
    if out.size == 0:
        return
    if source.shape[axis] == 0:
        raise KernelError(f"{op.name}: the reduced axis is empty")
    is_max = op.name == "ARG_MAX"
    target = out.reshape(source.shape[:axis] + source.shape[axis + 1:])
    if source.dtype.kind != "f" or not np.isnan(np.max(source)):
        # No NaN: numpy's first index of the extreme is the reference scan's answer.
        found = np.argmax(source, axis=axis) if is_max else np.argmin(source, axis=axis)
        np.copyto(target, found, casting="unsafe")
        return
    rows = np.moveaxis(source, axis, -1).reshape(-1, source.shape[axis])
    target.reshape(-1)[...] = _first_best(rows, is_max).astype(np.int32)


REGISTRATIONS = {
    "ARG_MAX": Registration("ARG_MAX", init=None, prepare=None, eval=eval_,
                            builtin_data="TfLiteArgMaxParams"),
    "ARG_MIN": Registration("ARG_MIN", init=None, prepare=None, eval=eval_,
                            builtin_data="TfLiteArgMinParams"),
}
