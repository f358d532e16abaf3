"""EMBEDDING_LOOKUP: TFLM's embedding_lookup.cc (int32 lookups into a float32 or int8 table;
int8 rows are copied, or dequantized with the table's scale when the output is float32).

Allocation: no builtin struct, no init; prepare takes temp tensors lookup, value, output, then
CreateWritableTensorDimsWithCopy (a persistent TfLiteIntArray of the output's rank) and the
OpData (a float and a size_t: 16 bytes on x86-64, 8 on 32-bit Arm), both persistent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, TensorType

LOOKUP = 0
VALUE = 1
OUTPUT = 0


@dataclass(frozen=True)
class EmbeddingData:
    scale: float  # the table's scale, for the int8 -> float32 (hybrid) case
    hybrid: bool


def prepare(ctx: PrepareContext, op: Operator) -> EmbeddingData:
    """EmbeddingLookUpPrepare and CalculateOpData."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("EMBEDDING_LOOKUP takes two inputs (lookup, value) and one output")
    ctx.allocate_temp_tensor(op.inputs[LOOKUP])
    lookup = required_tensor(ctx, op.inputs[LOOKUP], op.name, "lookup")
    if len(lookup.shape) != 1 or lookup.type != TensorType.INT32:
        raise KernelError("EMBEDDING_LOOKUP: the lookup must be a 1-D int32 tensor")
    ctx.allocate_temp_tensor(op.inputs[VALUE])
    value = required_tensor(ctx, op.inputs[VALUE], op.name, "value")
    if len(value.shape) < 2 or value.type not in (TensorType.FLOAT32, TensorType.INT8):
        raise KernelError("EMBEDDING_LOOKUP: the table must be float32 or int8 with rank >= 2")
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    out = required_tensor(ctx, op.outputs[OUTPUT], op.name, "output")
    allowed = (TensorType.FLOAT32,) if value.type == TensorType.FLOAT32 \
        else (TensorType.FLOAT32, TensorType.INT8)
    if out.type not in allowed:
        raise KernelError(f"EMBEDDING_LOOKUP: output type {out.type.name} does not fit a "
                          f"{value.type.name} table")
    if len(out.shape) < len(value.shape):
        raise KernelError("EMBEDDING_LOOKUP: the output rank is below the table's")
    ctx.allocate_persistent(4 + 4 * len(out.shape))  # CreateWritableTensorDimsWithCopy
    want = (lookup.shape[0],) + tuple(value.shape[1:])
    if tuple(out.shape) != want:
        raise KernelError(f"EMBEDDING_LOOKUP: the output shape is {out.shape}, TFLM computes "
                          f"{want}; fix the output tensor")
    ctx.allocate_persistent(ctx.target.sizeof("OpDataEmbeddingLookup"))
    hybrid = value.type == TensorType.INT8 and out.type == TensorType.FLOAT32
    q = tensor_quant(value)
    if hybrid and q.zero_point != 0:
        raise KernelError("EMBEDDING_LOOKUP: an int8 table read as float32 needs zero point 0")
    return EmbeddingData(float(q.scale), hybrid)


def eval_(ctx: EvalContext, op: Operator, data: EmbeddingData) -> None:
    """EvalSimple (row copies) or EvalHybrid (rows dequantized as value * scale in float)."""
    table = ctx.tensor_data(op.inputs[VALUE])
    rows = table.shape[0]
    if rows == 0:
        return
    lookup = ctx.tensor_data(op.inputs[LOOKUP]).reshape(-1).astype(np.int64)
    bad = (lookup < 0) | (lookup >= rows)
    if bad.any():
        raise KernelError(f"EMBEDDING_LOOKUP: index out of bounds. Got "
                          f"{int(lookup[bad][0])}, and bounds are [0, {rows - 1}]")
    out = ctx.tensor_data(op.outputs[OUTPUT])
    table2d = table.reshape(rows, -1)
    dst = out.reshape(lookup.size, table2d.shape[1])
    if data.hybrid:  # (value - 0) * scale in float, row by row into the output
        for i, row in enumerate(lookup.tolist()):
            np.multiply(table2d[row], np.float32(data.scale), out=dst[i], dtype=np.float32)
    else:
        np.take(table2d, lookup, axis=0, out=dst, mode="clip")


REGISTRATION = Registration("EMBEDDING_LOOKUP", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
