"""LOGICAL_AND and LOGICAL_OR: TFLM's logical.cc and logical_common.cc (LogicalImpl).

bool tensors only (the kernel reads every tensor as bool). Same shapes run BinaryFunction,
others BroadcastBinaryFunction4DSlow, which pairs elements by numpy's broadcasting rules.
Allocation: none. TFLM registers only an Eval: no OpData, no temp tensors, no builtin options.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._binary_io import BinaryShapes, binary_shapes, binary_tensors, binary_views
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> BinaryShapes:
    """No TFLM Prepare: the shapes are checked here for a clear error; nothing is allocated."""
    in1, in2, out = binary_tensors(ctx, op)
    return binary_shapes(op, in1, in2, out)


def eval_(ctx: EvalContext, op: Operator, shapes: BinaryShapes) -> None:
    """LogicalImpl with LogicalAnd (x && y) or LogicalOr (x || y)."""
    in1, in2, out = binary_tensors(ctx, op)
    if any(t.type != TensorType.BOOL for t in (in1, in2, out)):
        raise KernelError(f"{op.name} supports bool tensors only in TFLM; got "
                          f"{in1.type.name.lower()}, {in2.type.name.lower()} -> "
                          f"{out.type.name.lower()}")
    x1, x2, y = binary_views(ctx, op, shapes)
    ufunc = np.logical_and if op.name == "LOGICAL_AND" else np.logical_or
    y[...] = ufunc(x1, x2)


REGISTRATIONS = {
    name: Registration(name, init=None, prepare=prepare, eval=eval_, builtin_data=None)
    for name in ("LOGICAL_AND", "LOGICAL_OR")
}
