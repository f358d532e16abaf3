"""MAXIMUM and MINIMUM: TFLM's maximum_minimum.cc and reference/maximum_minimum.h.

Types: float32, int8, int16, int32, int64 (switching on the output's type). No requantisation:
quantized inputs are compared as raw integers and copied as they are, so the tensors are
expected to share one quantization (the converter guarantees it; TFLM does not check).
Per pair: MAXIMUM is ``a > b ? a : b`` and MINIMUM ``a < b ? a : b``; with a NaN the second
input wins, which ``np.where`` on the comparison reproduces (np.maximum would propagate the
NaN). Broadcasting follows numpy's rules (BroadcastBinaryOpSimple).

Allocation: none at all. TFLM registers neither init nor prepare, so no OpData, no temp
tensors and no builtin options struct; shapes are only checked here, for a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels._binary_io import BinaryShapes, bind_float_binary
from tinyarena.kernels._elementwise import broadcast_output_shape, broadcast_plan
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, Step
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

INPUT1 = 0
INPUT2 = 1
OUTPUT = 0

SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32,
             TensorType.INT64)


@dataclass(frozen=True)
class OpData:
    """What eval needs: the comparison that picks input1, and the (broadcast) shapes."""

    op: str
    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    shape_out: tuple[int, ...]
    mask: int  # scratch workspace: where input1 wins
    result: int  # scratch workspace: the selection, staged before the output is written


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """No TFLM Prepare: only shape and type checks, allocating nothing."""
    name = op.name
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"{name} takes two inputs and one output")
    in1, in2 = ctx.tensor(op.inputs[INPUT1]), ctx.tensor(op.inputs[INPUT2])
    out = ctx.tensor(op.outputs[OUTPUT])
    if in1 is None or in2 is None or out is None:
        raise KernelError(f"{name} needs two inputs and one output tensor")
    if out.type not in SUPPORTED:
        raise KernelError(f"{name} does not support {out.type.name.lower()} in TFLM; supported: "
                          f"{', '.join(t.name.lower() for t in SUPPORTED)}")
    if in1.type != out.type or in2.type != out.type:
        raise KernelError(f"{name}: inputs {in1.type.name.lower()}, {in2.type.name.lower()} and "
                          f"output {out.type.name.lower()} must share one type")
    broadcast_output_shape(name, in1.shape, in2.shape, out.shape)
    shape_out = tuple(int(d) for d in np.broadcast_shapes(in1.shape, in2.shape))
    mask = ctx.request_workspace(shape_out, np.bool_, persistent=False)
    result = ctx.request_workspace(shape_out, NUMPY_DTYPES[out.type], persistent=False)
    return OpData(name, in1.shape, in2.shape, shape_out, mask, result)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """Eval<kReference, MaximumOp/MinimumOp>: MaximumMinimumBroadcastSlow."""
    x1 = ctx.tensor_data(op.inputs[INPUT1]).reshape(data.shape1)
    x2 = ctx.tensor_data(op.inputs[INPUT2]).reshape(data.shape2)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(data.shape_out)
    pick_first = np.greater if data.op == "MAXIMUM" else np.less
    mask, result = ctx.workspace(data.mask), ctx.workspace(data.result)
    # a > b ? a : b (NaN in b wins, as in TFLM), staged in a workspace: no allocation per
    # invoke, and the output may alias an input without changing what is read.
    pick_first(x1, x2, out=mask)
    np.copyto(result, x2)
    np.copyto(result, x1, where=mask)
    np.copyto(out, result)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """With compiled kernels on: float32 as ``native.float_binary``'s selection
    (``_binary_io.bind_float_binary``), integer types as ``native.binary.pick_pairs`` (no NaN
    to order, so the comparison alone is the op); else eval."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if out.dtype == np.float32:
        shapes = BinaryShapes(tuple(data.shape1), tuple(data.shape2), tuple(data.shape_out))
        return bind_float_binary(ctx, op, shapes)
    if out.dtype.kind not in "iu" or not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.binary import bind_pick

    plan = broadcast_plan(data.shape1, data.shape2)
    return bind_pick(data.op == "MAXIMUM", ctx.tensor_data(op.inputs[INPUT1]),
                     ctx.tensor_data(op.inputs[INPUT2]), out, plan.shape1, plan.shape2,
                     plan.shape_out)


REGISTRATIONS = {
    name: Registration(name, init=None, prepare=prepare, eval=eval_, bind=bind,
                       builtin_data=None)
    for name in ("MAXIMUM", "MINIMUM")
}
