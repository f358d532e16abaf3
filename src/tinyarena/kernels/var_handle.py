"""VAR_HANDLE: TFLM's var_handle.cc.

Allocation: the parser allocates ``TfLiteVarHandleParams`` (two string pointers); init
allocates ``OpDataVarHandle`` (the resource id); prepare finds or creates the resource id for
(container, shared_name) in MicroResourceVariables and points its output tensor at the OpData,
so the output has data before planning and TFLM does not plan it.

Needs a context with ``resource_id`` and ``bind_resource`` (arena.allocator's emulating context).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tinyarena.kernels._control_flow import bind_var_handle, eval_var_handle, reset_var_handle
from tinyarena.kernels.base import InitContext, Registration
from tinyarena.model.types import Operator

OUTPUT = 0


@dataclass(frozen=True)
class OpData:
    resource_id: int


def init(ctx: InitContext, op: Operator) -> None:
    """VarHandleInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataVarHandle"))


def prepare(ctx: Any, op: Operator) -> OpData:
    """VarHandlePrepare: CreateIdIfNoneFound, then output->data = &op_data->resource_id."""
    container = getattr(op.options, "container", None) or ""
    shared_name = getattr(op.options, "shared_name", None) or ""
    resource = ctx.resource_id(container, shared_name)
    ctx.bind_resource(op.outputs[OUTPUT], resource)
    return OpData(resource)


REGISTRATION = Registration("VAR_HANDLE", init=init, prepare=prepare,
                            eval=eval_var_handle, bind=bind_var_handle, reset=reset_var_handle,
                            builtin_data="TfLiteVarHandleParams")
