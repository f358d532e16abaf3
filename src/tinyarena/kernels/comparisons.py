"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL: TFLM's comparisons.cc.

Allocation: no builtin struct; init allocates the comparison OpData (quantization parameters
for int8 inputs, 32 bytes); prepare takes temp tensors input1 and input2.
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT1 = 0
INPUT2 = 1
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """ComparisonsInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataComparison"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ComparisonsPrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT1])
    ctx.allocate_temp_tensor(op.inputs[INPUT2])
    return None


REGISTRATIONS = {
    name: Registration(name, init=init, prepare=prepare, eval=None, builtin_data=None)
    for name in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
}
