"""PAD and PADV2: TFLM's pad.cc / pad_common.cc.

Allocation: no builtin struct; init allocates ``OpDataPad`` (PadParams plus the output zero
point); prepare takes temp tensors input, paddings, constant values (PADV2 only) and output.
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
PADDINGS = 1
CONSTANT_VALUES = 2
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """PadInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataPad"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """PadPrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[PADDINGS])
    if len(op.inputs) == 3:
        ctx.allocate_temp_tensor(op.inputs[CONSTANT_VALUES])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    return None


REGISTRATIONS = {
    "PAD": Registration("PAD", init=init, prepare=prepare, eval=None, builtin_data=None),
    "PADV2": Registration("PADV2", init=init, prepare=prepare, eval=None, builtin_data=None),
}
