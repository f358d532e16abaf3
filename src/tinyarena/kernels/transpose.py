"""TRANSPOSE: TFLM's transpose.cc / transpose_common.cc.

Allocation: no builtin struct, no init; prepare takes temp tensors input, perm and output
(TransposeContext).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import (
    EvalContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
PERM = 1
OUTPUT = 0


MAX_DIMS = 5  # TransposePrepare's limit
_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16)


@dataclass(frozen=True)
class OpData:
    """TransposeParams: the permutation (read once from the constant perm tensor)."""

    perm: tuple[int, ...]


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """TransposePrepare: TransposeContext's temp tensors, then the checks."""
    for index in (op.inputs[INPUT], op.inputs[PERM], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("TRANSPOSE takes two inputs (data, perm) and one output")
    inp = required_tensor(ctx, op.inputs[INPUT], "TRANSPOSE", "input")
    perm_t = required_tensor(ctx, op.inputs[PERM], "TRANSPOSE", "perm")
    out = required_tensor(ctx, op.outputs[OUTPUT], "TRANSPOSE", "output")
    rank = len(inp.shape)
    if rank > MAX_DIMS:
        raise KernelError("Transpose op only supports 1D-5D input arrays.")
    if inp.type != out.type:
        raise KernelError("TRANSPOSE: input and output types differ")
    if perm_t.data is None:
        raise KernelError("TRANSPOSE: non-constant perm tensor is not supported; make it a "
                          "constant")
    if len(perm_t.shape) != 1 or perm_t.shape[0] != rank:
        raise KernelError(f"TRANSPOSE: perm must be a 1-D tensor of {rank} entries")
    perm = tuple(int(p) for p in np.asarray(perm_t.data).reshape(-1))
    if any(not 0 <= p < rank for p in perm):
        raise KernelError("Transpose op permutations array is out of bounds.")
    return OpData(perm)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """TransposeEval -> reference_ops::Transpose (float32, int8, int16)."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is not None and t.type not in _SUPPORTED:
        raise KernelError(f"TRANSPOSE supports float32, int8 and int16, not {t.type.name}")
    out = ctx.tensor_data(op.outputs[OUTPUT])
    out[...] = np.transpose(ctx.tensor_data(op.inputs[INPUT]), data.perm).reshape(out.shape)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """float32/int8/int16 with compiled kernels on: ``native.transpose``'s loop; else eval."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is None or t.type not in _SUPPORTED or not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.transpose import bind_transpose

    return bind_transpose(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                          data.perm)


REGISTRATION = Registration("TRANSPOSE", init=None, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data=None)
