"""READ_VARIABLE: TFLM's read_variable.cc.

Allocation: no builtin struct, no init; prepare takes a temp tensor for the resource id.
"""

from __future__ import annotations

from tinyarena.kernels._control_flow import bind_read_variable, eval_read_variable
from tinyarena.kernels.base import PrepareContext, Registration
from tinyarena.model.types import Operator

RESOURCE = 0


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """Prepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[RESOURCE])
    return None


REGISTRATION = Registration("READ_VARIABLE", init=None, prepare=prepare,
                            eval=eval_read_variable, bind=bind_read_variable,
                            builtin_data=None)
