"""FLOOR_MOD: TFLM's floor_mod.cc and reference/floor_mod.h, float32 only.

r = fmodf(x1, x2) (exact, as np.fmod on float32); when r is non-zero and its sign differs from
the divisor's, the result is r + x2 in float32. Unlike FLOOR_DIV, TFLM does not check for a
zero divisor: fmodf gives NaN.

Allocation: prepare takes input1, input2 and output as temp tensors; no OpData, no builtin
options. The type is checked when the op runs.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._binary_io import BinaryShapes, map_binary_blocks
from tinyarena.kernels.base import EvalContext, Registration
from tinyarena.kernels.floor_div import float_operands, prepare_float_binary
from tinyarena.model.types import Operator


def eval_(ctx: EvalContext, op: Operator, shapes: BinaryShapes) -> None:
    """FloorModEval: FloorMod<float> element by element."""
    x1, x2, out = float_operands(ctx, op, shapes, check_zero=False)
    map_binary_blocks(floor_mod, x1, x2, out)


def floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FloorMod<float>."""
    with np.errstate(all="ignore"):
        trunc_mod = np.fmod(a, b, dtype=np.float32)
        adjust = (trunc_mod != 0) & ((b < 0) != (trunc_mod < 0))
        return np.where(adjust, np.add(trunc_mod, b, dtype=np.float32), trunc_mod)


REGISTRATION = Registration("FLOOR_MOD", init=None, prepare=prepare_float_binary, eval=eval_,
                            builtin_data=None)
