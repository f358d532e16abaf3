"""FILL: TFLM's fill.cc (float32, int32, int8 values; the dims input must be constant and
equal to the output shape).

Allocation: no builtin struct, no init; prepare takes temp tensors dims, value, output.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """FillPrepare."""
    ctx.allocate_temp_tensor(op.inputs[0])
    dims = required_tensor(ctx, op.inputs[0], "FILL", "dims")
    ctx.allocate_temp_tensor(op.inputs[1])
    value = required_tensor(ctx, op.inputs[1], "FILL", "value")
    ctx.allocate_temp_tensor(op.outputs[0])
    out = required_tensor(ctx, op.outputs[0], "FILL", "output")
    if len(value.shape) != 0:
        raise KernelError("FILL: the value must be a scalar")
    if value.type != out.type:
        raise KernelError("FILL: value and output types differ")
    if dims.data is None:
        raise KernelError("FILL: non-constant dims tensor is not supported by TFLM; make it a "
                          "constant")
    if dims.type not in (TensorType.INT8, TensorType.INT16, TensorType.INT32, TensorType.INT64):
        raise KernelError(f"FILL: dims of type {dims.type.name} are not supported")
    if len(dims.shape) != 1 or [int(v) for v in np.asarray(dims.data).reshape(-1)] \
            != list(out.shape):
        raise KernelError(f"FILL: dims must equal the output shape {out.shape}")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    t = ctx.tensor(op.inputs[1])
    if t is None or t.type not in (TensorType.FLOAT32, TensorType.INT32, TensorType.INT8):
        kind = "missing" if t is None else t.type.name
        raise KernelError(f"FILL supports float32, int32 and int8 values, not {kind}")
    out = ctx.tensor_data(op.outputs[0])
    if out.size:
        out[...] = ctx.tensor_data(op.inputs[1]).reshape(-1)[0]


REGISTRATION = Registration("FILL", init=None, prepare=prepare, eval=eval_, builtin_data=None)
