"""SELECT_V2: TFLM's select.cc (float32, int8, int16 values; a bool condition; numpy-style
broadcasting of all three inputs up to 5-D).

Allocation: no builtin struct; init allocates the one-bool OpData (``requires_broadcast``);
prepare takes temp tensors condition, x, y, output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    required_tensor,
)
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16)


@dataclass(frozen=True)
class SelectData:
    requires_broadcast: bool


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("OpDataSelect"))


def _broadcast_shape(shapes: list[tuple[int, ...]], out: tuple[int, ...]) -> None:
    """CheckBroadcastShape: every input dimension is 1 or the output's (0 wins)."""
    rank = max(len(s) for s in shapes)
    if rank != len(out):
        raise KernelError(f"SELECT_V2: output rank {len(out)} is not the broadcast rank {rank}")
    for i in range(rank):
        dims = [s[len(s) - i - 1] if i < len(s) else 1 for s in shapes]
        biggest = 0 if min(dims) == 0 else max(dims)
        if any(d not in (1, biggest) for d in dims) or out[rank - i - 1] != biggest:
            raise KernelError(f"SELECT_V2: shapes {shapes} do not broadcast to {out}")


def prepare(ctx: PrepareContext, op: Operator) -> SelectData:
    """SelectPrepare."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise KernelError("SELECT_V2 takes three inputs (condition, x, y) and one output")
    for index in (*op.inputs, op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    cond = required_tensor(ctx, op.inputs[0], "SELECT_V2", "condition")
    x = required_tensor(ctx, op.inputs[1], "SELECT_V2", "x")
    y = required_tensor(ctx, op.inputs[2], "SELECT_V2", "y")
    out = required_tensor(ctx, op.outputs[0], "SELECT_V2", "output")
    if cond.type != TensorType.BOOL:
        raise KernelError(f"SELECT_V2: the condition must be bool, not {cond.type.name}")
    if x.type != y.type:
        raise KernelError("SELECT_V2: x and y must have the same type")
    scalars = all(t.element_count == 1 for t in (cond, x, y, out))
    same = cond.shape == x.shape == y.shape
    if same or scalars:
        return SelectData(False)
    _broadcast_shape([cond.shape, x.shape, y.shape], out.shape)
    return SelectData(True)


def eval_(ctx: EvalContext, op: Operator, data: SelectData) -> None:
    """reference_ops::Select / BroadcastSelect5DSlow: out = condition ? x : y."""
    x_t = ctx.tensor(op.inputs[1])
    if x_t is None or x_t.type not in _SUPPORTED:
        kind = "missing" if x_t is None else x_t.type.name
        raise KernelError(f"SELECT_V2 supports float32, int8 and int16, not {kind}")
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.element_count == 0:
        return
    cond = ctx.tensor_data(op.inputs[0])
    x = ctx.tensor_data(op.inputs[1])
    y = ctx.tensor_data(op.inputs[2])
    out = ctx.tensor_data(op.outputs[0])
    if data.requires_broadcast:
        np.copyto(out, np.broadcast_to(y, out.shape))
        np.copyto(out, np.broadcast_to(x, out.shape), where=np.broadcast_to(cond, out.shape))
    else:
        flat = out.reshape(-1)
        np.copyto(flat, y.reshape(-1))
        np.copyto(flat, x.reshape(-1), where=cond.reshape(-1))


REGISTRATION = Registration("SELECT_V2", init=init, prepare=prepare, eval=eval_,
                            builtin_data=None)
