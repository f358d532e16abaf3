"""GATHER_ND: TFLM's gather_nd.cc (float32 and int8 params, int32 indices, at most 5 index
components).

Allocation: no builtin struct, no init; prepare takes temp tensors params, indices, output,
then CreateWritableTensorDimsWithCopy: a persistent TfLiteIntArray of the output's rank
(4 + 4 * rank bytes). Eval copies one slice per index tuple from the flat offset the tuple
gives; TFLM only checks that the whole slice lies inside params, so do we.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

PARAMS = 0
INDICES = 1
OUTPUT = 0
MAX_INDICES_ND = 5


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """GatherNdPrepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("GATHER_ND takes two inputs (params, indices) and one output")
    for index in (op.inputs[PARAMS], op.inputs[INDICES], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    params = required_tensor(ctx, op.inputs[PARAMS], "GATHER_ND", "params")
    indices = required_tensor(ctx, op.inputs[INDICES], "GATHER_ND", "indices")
    out = required_tensor(ctx, op.outputs[OUTPUT], "GATHER_ND", "output")
    if params.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError(f"GATHER_ND supports float32 and int8 params, not {params.type.name}")
    if indices.type != TensorType.INT32:
        raise KernelError(f"GATHER_ND takes int32 indices, not {indices.type.name}")
    if len(params.shape) < 1 or len(indices.shape) < 1:
        raise KernelError("GATHER_ND: params and indices need at least one dimension")
    nd = indices.shape[-1]
    if nd > len(params.shape):
        raise KernelError(f"GATHER_ND: index depth {nd} exceeds the params' rank")
    if nd > MAX_INDICES_ND:
        raise KernelError(f"GATHER_ND supports index depths up to {MAX_INDICES_ND}, not {nd}")
    ctx.allocate_persistent(4 + 4 * len(out.shape))  # CreateWritableTensorDimsWithCopy
    want = tuple(indices.shape[:-1]) + tuple(params.shape[nd:])
    if tuple(out.shape) != want:
        raise KernelError(f"GATHER_ND: the output shape is {out.shape} but TFLM computes "
                          f"{want}; fix the output tensor")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """GatherNd: flat offset = sum(index_j * elements below dim j), then a slice copy."""
    params = ctx.tensor_data(op.inputs[PARAMS])
    indices = ctx.tensor_data(op.inputs[INDICES]).astype(np.int64)
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if out_t is None or out_t.element_count == 0:
        return
    nd = indices.shape[-1]
    flat = params.reshape(-1)
    slice_size = int(np.prod(params.shape[nd:], dtype=np.int64))
    strides = np.array([int(np.prod(params.shape[j + 1:], dtype=np.int64)) for j in range(nd)],
                       dtype=np.int64)
    starts = indices.reshape(-1, nd) @ strides
    if starts.size and (starts.min() < 0 or starts.max() + slice_size > flat.size):
        raise KernelError("GATHER_ND: an index lies outside params (TFLM refuses it at eval)")
    # Every stride is a multiple of the slice size, so each start is a whole row of params.
    rows = flat.reshape(-1, slice_size) if slice_size else flat.reshape(0, 0)
    np.take(rows, starts // max(slice_size, 1), axis=0, mode="clip",
            out=ctx.tensor_data(op.outputs[OUTPUT]).reshape(-1, slice_size))


REGISTRATION = Registration("GATHER_ND", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
