"""RESHAPE: TFLM's reshape.cc / reshape_common.cc.

Allocation: the parser allocates ``TfLiteReshapeParams``; no init; prepare takes temp tensors
input and output (ReshapeOutput).
"""

from __future__ import annotations

from tinyarena.kernels.base import PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """PrepareReshapeReference -> ReshapeOutput, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    return None


REGISTRATION = Registration("RESHAPE", init=None, prepare=prepare, eval=None,
                            builtin_data="TfLiteReshapeParams")
