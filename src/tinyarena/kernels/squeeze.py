"""SQUEEZE: TFLM's squeeze.cc. A pure data copy; the output shape comes from the model.

Allocation: no init (no OpData); prepare takes two temp tensors (input, output).
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import bind_copy_input
from tinyarena.kernels._elementwise import copy_if_distinct
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.options import SqueezeOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
MAX_SQUEEZE_DIMS = 8  # SqueezePrepare's max_squeeze_dims


def squeezed_axes(shape: tuple[int, ...], squeeze_dims: tuple[int, ...]) -> list[bool]:
    """SqueezePrepare: which input axes go away (all size-1 axes when none are named)."""
    rank = len(shape)
    if not squeeze_dims:
        return [d == 1 for d in shape]
    flags = [False] * rank
    for axis in squeeze_dims:
        current = axis + rank if axis < 0 else axis
        if not (0 <= current < rank and shape[current] == 1):
            raise KernelError(f"SQUEEZE: squeeze_dims entry {axis} does not name a size-1 axis "
                              f"of the input shape {shape}")
        flags[current] = True
    return flags


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """SqueezePrepare: SqueezeContext allocates input and output temp tensors, then checks."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError("SQUEEZE takes one input and one output")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp = required_tensor(ctx, op.inputs[INPUT], "SQUEEZE", "input")
    out = required_tensor(ctx, op.outputs[OUTPUT], "SQUEEZE", "output")
    if len(inp.shape) > MAX_SQUEEZE_DIMS:
        raise KernelError(f"SQUEEZE supports at most {MAX_SQUEEZE_DIMS} input dimensions")
    options = op.options if isinstance(op.options, SqueezeOptions) else SqueezeOptions()
    flags = squeezed_axes(inp.shape, tuple(options.squeeze_dims))
    kept = [d for d, gone in zip(inp.shape, flags) if not gone]
    if len(out.shape) < len(kept) or any(o < i for o, i in zip(out.shape, kept)):
        raise KernelError(f"SQUEEZE: output shape {out.shape} is smaller than the squeezed input "
                          f"shape {tuple(kept)}; fix the output tensor")
    if inp.type == TensorType.STRING:
        raise KernelError("SQUEEZE does not support string tensors")
    if inp.tflm_nbytes != out.tflm_nbytes:
        raise KernelError("SQUEEZE: input and output byte sizes differ; fix the output shape")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """SqueezeEval: memcpy of the input's bytes into the output."""
    copy_if_distinct(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]))


REGISTRATION = Registration("SQUEEZE", init=None, prepare=prepare, eval=eval_,
                            bind=bind_copy_input,
                            builtin_data="TfLiteSqueezeParams")
