"""SHAPE: TFLM's shape.cc. Writes the input's dimensions into an int32 vector.

Allocation: the parser allocates ``TfLiteShapeParams`` (an enum: 1 byte with -fshort-enums);
no init; prepare only checks the input and output counts (no temp tensors). Only int32 output
is supported at eval, whatever ``out_type`` says.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ShapePrepare: one input, one output."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError("SHAPE takes one input and one output")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """ShapeEval -> ExtractShape: the input's dims, one int32 each."""
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.type != TensorType.INT32:
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"SHAPE: output type {kind} is not supported; TFLM writes int32 only")
    in_t = ctx.tensor(op.inputs[0])
    dims = np.asarray(() if in_t is None else in_t.shape, dtype=np.int32)
    if dims.size == 0:  # a scalar's shape is empty: nothing to write (nor any storage)
        return
    out = ctx.tensor_data(op.outputs[0]).reshape(-1)
    if out.size < dims.size:
        raise KernelError(f"SHAPE: the output holds {out.size} values but the input has rank "
                          f"{dims.size}; fix the output shape")
    out[:dims.size] = dims


REGISTRATION = Registration("SHAPE", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteShapeParams")
