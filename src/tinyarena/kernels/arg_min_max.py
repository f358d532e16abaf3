"""ARG_MAX and ARG_MIN: TFLM's arg_min_max.cc with reference_ops::ArgMinMax (float32 and int8
input, int32 axis, int32 output).

Allocation: the parser allocates ``TfLiteArgMaxParams`` / ``TfLiteArgMinParams`` (an enum);
TFLM registers neither init nor prepare, so nothing else is allocated in the arena and every
check happens at eval (tinyarena's prepare only requests Python-side scratch). The scan keeps the first index on ties; a NaN never wins a comparison, so a NaN in
first place keeps index 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType


@dataclass(frozen=True)
class ArgData:
    """Output-sized scratch workspaces (Python-side; TFLM's kernel allocates nothing)."""

    best: int  # the extreme value of each output position (input dtype)
    hit: int  # bool: this position equals the extreme
    open_: int  # bool: no index written yet


def prepare(ctx: PrepareContext, op: Operator) -> ArgData | None:
    """TFLM has no Prepare here; tinyarena only requests its scratch (no arena effect)."""
    in_t, out_t = ctx.tensor(op.inputs[0]), ctx.tensor(op.outputs[0])
    if in_t is None or out_t is None or in_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        return None  # eval reports it
    shape = (max(out_t.element_count, 1),)
    return ArgData(ctx.request_workspace(shape, NUMPY_DTYPES[in_t.type], persistent=False),
                   ctx.request_workspace(shape, np.bool_, persistent=False),
                   ctx.request_workspace(shape, np.bool_, persistent=False))


def eval_(ctx: EvalContext, op: Operator, data: ArgData | None) -> None:
    in_t, axis_t, out_t = (ctx.tensor(op.inputs[0]), ctx.tensor(op.inputs[1]),
                           ctx.tensor(op.outputs[0]))
    if axis_t is None or axis_t.type != TensorType.INT32:
        raise KernelError(f"{op.name}: the axis must be int32")
    if out_t is None or out_t.type != TensorType.INT32:
        raise KernelError(f"{op.name}: only int32 output is supported by TFLM")
    if data is None or in_t is None or in_t.type not in (TensorType.FLOAT32, TensorType.INT8):
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
    shape = source.shape[:axis] + source.shape[axis + 1:]
    if out.size != int(np.prod(shape, dtype=np.int64)):
        raise KernelError(f"{op.name}: the output shape does not drop axis {axis} of the input")
    index = out.reshape(shape)
    best = ctx.workspace(data.best)[:out.size].reshape(shape)
    hit = ctx.workspace(data.hit)[:out.size].reshape(shape)
    open_ = ctx.workspace(data.open_)[:out.size].reshape(shape)
    is_max = op.name == "ARG_MAX"
    # The reference scan keeps the first index of the extreme; a NaN never wins a comparison
    # (fmax/fmin skip it), and a NaN in first place keeps index 0.
    if source.dtype.kind == "f":
        (np.fmax if is_max else np.fmin).reduce(source, axis=axis, out=best)
    else:
        (np.maximum if is_max else np.minimum).reduce(source, axis=axis, out=best)
    index[...] = -1
    lead = (slice(None),) * axis
    for k in range(source.shape[axis]):  # one vectorised pass per position along the axis
        np.equal(source[lead + (k,)], best, out=hit)
        np.less(index, 0, out=open_)
        np.logical_and(hit, open_, out=hit)
        np.copyto(index, k, where=hit)
    if source.dtype.kind == "f":
        np.isnan(source[lead + (0,)], out=hit)
        np.copyto(index, 0, where=hit)


REGISTRATIONS = {
    "ARG_MAX": Registration("ARG_MAX", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteArgMaxParams"),
    "ARG_MIN": Registration("ARG_MIN", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteArgMinParams"),
}
