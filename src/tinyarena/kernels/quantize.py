"""QUANTIZE: TFLM's quantize.cc / quantize_common.cc.

Allocation: no builtin struct; init allocates ``OpDataQuantizeReference``; prepare takes temp
tensors input and output.
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """InitQuantizeReference: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataQuantizeReference"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """PrepareQuantizeReference, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    return None


REGISTRATION = Registration("QUANTIZE", init=init, prepare=prepare, eval=None,
                            builtin_data=None)
