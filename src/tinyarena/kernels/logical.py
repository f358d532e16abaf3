"""LOGICAL_AND and LOGICAL_OR: TFLM's logical.cc and logical_common.cc (LogicalImpl).

TFLM checks no type: it reads every tensor as a bool array of the tensor's element count,
and the compiled ``x && y`` / ``x || y`` on bools is a bitwise AND / OR of the bytes. For bool
tensors (bytes 0 and 1) that is the logical operation; for any other type the wheel combines
the first N bytes of each buffer (N = element count) bitwise and writes N bytes of output,
leaving the rest of the output as it was. This kernel does exactly that, for every type.
Same shapes run BinaryFunction, others BroadcastBinaryFunction4DSlow, which pairs elements by
numpy's broadcasting rules.
Allocation: none. TFLM registers only an Eval: no OpData, no temp tensors, no builtin options.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._binary_io import (
    BinaryShapes,
    binary_shapes,
    binary_tensors,
    map_binary_blocks,
)
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator


def prepare(ctx: PrepareContext, op: Operator) -> BinaryShapes:
    """No TFLM Prepare: the shapes are checked here for a clear error; nothing is allocated."""
    in1, in2, out = binary_tensors(ctx, op)
    return binary_shapes(op, in1, in2, out)


def _bool_bytes(ctx: EvalContext, index: int, shape: tuple[int, ...]) -> np.ndarray:
    """GetTensorData<bool>: the buffer's first element-count bytes, in the element shape."""
    data = ctx.tensor_data(index)
    count = int(np.prod(shape))
    return data.reshape(-1).view(np.uint8)[:count].reshape(shape)


def eval_(ctx: EvalContext, op: Operator, shapes: BinaryShapes) -> None:
    """LogicalImpl with LogicalAnd (x && y) or LogicalOr (x || y), on the bytes."""
    x1 = _bool_bytes(ctx, op.inputs[0], shapes.shape1)
    x2 = _bool_bytes(ctx, op.inputs[1], shapes.shape2)
    y = _bool_bytes(ctx, op.outputs[0], shapes.shape_out)
    ufunc = np.bitwise_and if op.name == "LOGICAL_AND" else np.bitwise_or
    map_binary_blocks(ufunc, x1, x2, y)


REGISTRATIONS = {
    name: Registration(name, init=None, prepare=prepare, eval=eval_, builtin_data=None)
    for name in ("LOGICAL_AND", "LOGICAL_OR")
}
