"""TRANSPOSE: TFLM's transpose.cc / transpose_common.cc.

Allocation: no builtin struct, no init; prepare takes temp tensors input, perm and output
(TransposeContext).
"""

from __future__ import annotations

from tinyarena.kernels.base import PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
PERM = 1
OUTPUT = 0


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """TransposePrepare, allocation side."""
    for index in (op.inputs[INPUT], op.inputs[PERM], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    return None


REGISTRATION = Registration("TRANSPOSE", init=None, prepare=prepare, eval=None,
                            builtin_data=None)
