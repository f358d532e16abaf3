"""CAST: TFLM's cast.cc, element-wise ``static_cast``.

Inputs int8, int16, int32, uint32, float32, bool; outputs int8, int16, int32, uint32, float32
and bool (the pinned wheel casts to bool too, though older TFLM sources do not list it).
Integer narrowing wraps (two's complement). float32 to an integer truncates toward zero; a NaN
or out-of-range float is undefined in C++, and this port gives what the pinned wheel gives
(measured): saturation to the target type's range, NaN to 0 (which is also what Arm's VCVT
instructions do).

Allocation: the parser allocates ``TfLiteCastParams`` (two enums); no init; prepare takes temp
tensors input and output.
"""

from __future__ import annotations

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
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

CHUNK = 2048  # float -> int converts this many values at a time (float64 temporaries)
_IN = (TensorType.INT8, TensorType.INT16, TensorType.INT32, TensorType.UINT32,
       TensorType.FLOAT32, TensorType.BOOL)
_OUT = (TensorType.INT8, TensorType.INT16, TensorType.INT32, TensorType.UINT32,
        TensorType.FLOAT32, TensorType.BOOL)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """CastPrepare: one input, one output, two temp tensors."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError("CAST takes one input and one output")
    ctx.allocate_temp_tensor(op.inputs[0])
    required_tensor(ctx, op.inputs[0], "CAST", "input")
    ctx.allocate_temp_tensor(op.outputs[0])
    required_tensor(ctx, op.outputs[0], "CAST", "output")


def _float_to_int(values: np.ndarray, out_type: TensorType) -> np.ndarray:
    """static_cast<intN>(float) as the wheel computes it: truncation, saturation, NaN -> 0."""
    info = np.iinfo(NUMPY_DTYPES[out_type])
    wide = np.trunc(values.astype(np.float64))
    clipped = np.clip(np.where(np.isnan(wide), 0.0, wide), float(info.min), float(info.max))
    return clipped.astype(NUMPY_DTYPES[out_type])


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """CastEval: copyToTensor for the (input, output) type pair."""
    in_t, out_t = ctx.tensor(op.inputs[0]), ctx.tensor(op.outputs[0])
    if in_t is None or in_t.type not in _IN:
        kind = "missing" if in_t is None else in_t.type.name
        raise KernelError(f"CAST: input type {kind} is not supported by TFLM")
    if out_t is None or out_t.type not in _OUT:
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"CAST: output type {kind} is not supported by TFLM")
    if in_t.element_count != out_t.element_count:
        raise KernelError("CAST: input and output shapes differ")
    if out_t.element_count == 0:
        return
    values = ctx.tensor_data(op.inputs[0]).reshape(-1)
    out = ctx.tensor_data(op.outputs[0]).reshape(-1)
    if out_t.type == TensorType.BOOL:  # static_cast<bool>: non-zero (NaN too) is true
        np.not_equal(values, 0, out=out)
    elif in_t.type == TensorType.FLOAT32 and out_t.type != TensorType.FLOAT32:
        for start in range(0, values.size, CHUNK):  # bounded temporaries, whatever the size
            out[start:start + CHUNK] = _float_to_int(values[start:start + CHUNK], out_t.type)
    else:  # integer/bool widening, two's complement narrowing, int -> float rounding
        np.copyto(out, values, casting="unsafe")


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """With compiled kernels on: ``native.cast`` for the pairs eval supports; else eval (which
    also raises for the unsupported ones)."""
    in_t, out_t = ctx.tensor(op.inputs[0]), ctx.tensor(op.outputs[0])
    if not native.enabled(ctx) or in_t is None or out_t is None or in_t.type not in _IN or \
            out_t.type not in _OUT:
        return None
    from tinyarena.kernels.native.cast import bind_cast

    return bind_cast(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]))


REGISTRATION = Registration("CAST", init=None, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteCastParams")
