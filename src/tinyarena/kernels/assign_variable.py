"""ASSIGN_VARIABLE: TFLM's assign_variable.cc.

Allocation: no builtin struct; init allocates a 4-byte OpData only in builds with compression;
prepare takes a temp tensor for the value and, when the resource tensor already holds an id
(its VAR_HANDLE ran earlier in the same subgraph), makes MicroResourceVariables allocate the
resource's buffer (value bytes, 16-aligned) on the first assignment.

Needs a context with ``resource_of`` and ``allocate_resource`` (arena.allocator's context).
"""

from __future__ import annotations

from typing import Any

from tinyarena.errors import KernelError
from tinyarena.kernels._control_flow import bind_assign_variable, eval_assign_variable
from tinyarena.kernels.base import InitContext, Registration
from tinyarena.model.types import Operator

RESOURCE = 0
VALUE = 1


def init(ctx: InitContext, op: Operator) -> None:
    """Init (compression builds only): the OpData holding a decompression scratch index."""
    if getattr(ctx.target, "compression", False):
        ctx.allocate_persistent(ctx.target.sizeof("OpDataAssignVariable"))


def prepare(ctx: Any, op: Operator) -> None:
    """Prepare: temp value tensor, then MicroResourceVariables::Allocate."""
    if len(op.inputs) != 2 or len(op.outputs) != 0:
        raise KernelError("ASSIGN_VARIABLE needs 2 inputs and no outputs")
    ctx.allocate_temp_tensor(op.inputs[VALUE])
    resource = ctx.resource_of(op.inputs[RESOURCE])
    if resource is not None:
        value = ctx.tensor(op.inputs[VALUE])
        ctx.allocate_resource(resource, value.tflm_nbytes or 0)
    return None


REGISTRATION = Registration("ASSIGN_VARIABLE", init=init, prepare=prepare,
                            eval=eval_assign_variable, bind=bind_assign_variable,
                            builtin_data=None)
