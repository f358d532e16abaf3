"""FLOOR_DIV: TFLM's floor_div.cc and reference/floor_div.h, float32 only.

floor(double(x1) / double(x2)) rounded to float32 (the division is done in double, so this is
not floor of the float32 quotient). TFLM scans the divisor for zeros first and fails the invoke
("Division by 0"); so does this kernel (KernelError).

Allocation: prepare takes input1, input2 and output as temp tensors (Init returns no OpData);
no builtin options. The type is checked when the op runs.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._binary_io import (
    BinaryShapes,
    allocate_binary_temps,
    binary_shapes,
    binary_tensors,
    binary_views,
    map_binary_blocks,
    same_types,
)
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType


def prepare_float_binary(ctx: PrepareContext, op: Operator) -> BinaryShapes:
    """CalculateOpData (FLOOR_DIV and FLOOR_MOD): temps, then the three types equal."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes two inputs and one output; got {len(op.inputs)} "
                          f"and {len(op.outputs)}")
    allocate_binary_temps(ctx, op)
    in1, in2, out = binary_tensors(ctx, op)
    same_types(op, in1, in2, out)
    return binary_shapes(op, in1, in2, out)


def float_operands(ctx: EvalContext, op: Operator, shapes: BinaryShapes, *,
                   check_zero: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The float32 views, after the eval-time checks: the type, and for FLOOR_DIV only a
    zero divisor (FLOOR_MOD lets fmodf return NaN)."""
    in1, _, _ = binary_tensors(ctx, op)
    if in1.type != TensorType.FLOAT32:
        raise KernelError(f"{op.name} supports float32 only in TFLM, not "
                          f"{in1.type.name.lower()}")
    x1, x2, out = binary_views(ctx, op, shapes)
    if check_zero and np.any(x2 == 0):
        raise KernelError(f"{op.name}: division by 0 (the divisor tensor holds a zero); TFLM "
                          "fails the invoke")
    return x1, x2, out


def eval_(ctx: EvalContext, op: Operator, shapes: BinaryShapes) -> None:
    """FloorDivEval: FloorDiv<float> element by element."""
    x1, x2, out = float_operands(ctx, op, shapes, check_zero=True)
    map_binary_blocks(floor_div, x1, x2, out)


def floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FloorDiv<float>: floor of the double quotient, rounded to float32."""
    with np.errstate(all="ignore"):
        return np.floor(np.divide(a, b, dtype=np.float64)).astype(np.float32)


REGISTRATION = Registration("FLOOR_DIV", init=None, prepare=prepare_float_binary, eval=eval_,
                            builtin_data=None)
