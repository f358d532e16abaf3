"""ZEROS_LIKE: TFLM's zeros_like.cc (int64, int32, int8, float32).

Allocation: no builtin struct, no init; prepare takes temp tensors input and output.
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.INT64, TensorType.INT32, TensorType.INT8, TensorType.FLOAT32)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError("ZEROS_LIKE takes one input and one output")
    ctx.allocate_temp_tensor(op.inputs[0])
    required_tensor(ctx, op.inputs[0], "ZEROS_LIKE", "input")
    ctx.allocate_temp_tensor(op.outputs[0])
    required_tensor(ctx, op.outputs[0], "ZEROS_LIKE", "output")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    t = ctx.tensor(op.inputs[0])
    if t is None or t.type not in _SUPPORTED:
        kind = "missing" if t is None else t.type.name
        raise KernelError(f"ZEROS_LIKE supports int64, int32, int8 and float32, not {kind}")
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.element_count != t.element_count:
        raise KernelError("ZEROS_LIKE: input and output shapes differ")
    if t.element_count:
        ctx.tensor_data(op.outputs[0])[...] = 0


REGISTRATION = Registration("ZEROS_LIKE", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
