"""RESHAPE: TFLM's reshape.cc / reshape_common.cc.

Allocation: the parser allocates ``TfLiteReshapeParams``; no init; prepare takes temp tensors
input and output (ReshapeOutput).
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import bind_copy_input
from tinyarena.kernels._elementwise import copy_if_distinct
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """PrepareReshapeReference -> ReshapeOutput, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    if len(op.inputs) not in (1, 2) or len(op.outputs) != 1:
        raise KernelError("RESHAPE takes one or two inputs and one output")
    inp = required_tensor(ctx, op.inputs[INPUT], "RESHAPE", "input")
    out = required_tensor(ctx, op.outputs[OUTPUT], "RESHAPE", "output")
    shape = tuple(out.shape)
    if len(op.inputs) == 1 and shape == (0,):  # legacy scalar: a [0] shape means rank 0
        shape = ()
    if shape.count(-1) > 1:
        raise KernelError("RESHAPE: at most one output dimension may be -1")
    known = 1
    for d in shape:
        known *= d if d != -1 else 1
    count = inp.element_count
    if -1 in shape:
        # CreateWritableTensorDimsWithCopy: a persistent TfLiteIntArray for the resolved dims.
        ctx.allocate_persistent(4 + 4 * len(shape))
        known *= count // known if known else 0
    if inp.type != out.type:
        raise KernelError("RESHAPE: input and output types differ")
    if known != count:
        raise KernelError(f"RESHAPE: output shape {out.shape} holds {known} elements, the input "
                          f"{count}; fix the output shape")
    return None


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """EvalReshapeReference: memcpy unless input and output share their data pointer."""
    copy_if_distinct(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]))


REGISTRATION = Registration("RESHAPE", init=None, prepare=prepare, eval=eval_,
                            bind=bind_copy_input,
                            builtin_data="TfLiteReshapeParams")
