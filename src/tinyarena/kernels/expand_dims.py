"""EXPAND_DIMS: TFLM's expand_dims.cc. A data copy; the output shape is checked, not computed.

Allocation: no init, no builtin struct; prepare takes three temp tensors (input, axis, output).
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import bind_copy_input
from tinyarena.kernels._elementwise import copy_if_distinct
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

INPUT = 0
AXIS = 1
OUTPUT = 0

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT16, TensorType.INT8)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ExpandDimsPrepare: constant int32 axis; output = input with a 1 inserted at axis."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("EXPAND_DIMS takes two inputs (data, axis) and one output")
    for index in (op.inputs[INPUT], op.inputs[AXIS], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[INPUT], "EXPAND_DIMS", "input")
    axis_t = required_tensor(ctx, op.inputs[AXIS], "EXPAND_DIMS", "axis")
    out = required_tensor(ctx, op.outputs[OUTPUT], "EXPAND_DIMS", "output")
    if axis_t.data is None:
        raise KernelError("EXPAND_DIMS: non-constant axis tensor is not supported; make it a "
                          "constant")
    if len(axis_t.shape) > 1:
        raise KernelError("EXPAND_DIMS: the axis tensor must hold a single element")
    if axis_t.type != TensorType.INT32:
        raise KernelError(f"EXPAND_DIMS: axis type {axis_t.type.name} not supported; use int32")
    axis = int(np.asarray(axis_t.data).reshape(-1)[0])
    rank = len(inp.shape)
    if axis < 0:
        axis += rank + 1
    if not 0 <= axis <= rank:
        raise KernelError(f"EXPAND_DIMS: axis {axis} out of range for rank {rank}")
    expected = inp.shape[:axis] + (1,) + inp.shape[axis:]
    if tuple(out.shape) != expected:
        raise KernelError(f"EXPAND_DIMS: output shape {out.shape} should be {expected}")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """ExpandDimsEval: element copy (float32, int16, int8 only)."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is not None and t.type not in _SUPPORTED:
        raise KernelError(f"EXPAND_DIMS supports int8, int16 and float32, not {t.type.name}")
    copy_if_distinct(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]))


REGISTRATION = Registration("EXPAND_DIMS", init=None, prepare=prepare, eval=eval_,
                            bind=bind_copy_input,
                            builtin_data=None)
