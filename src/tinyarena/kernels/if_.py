"""IF: TFLM's if.cc.

Allocation: the parser allocates ``TfLiteIfParams``; init allocates ``OpDataIf`` (the two
subgraph indices); prepare takes a temp tensor for the condition. The branches' tensors are
planned with the rest of the model (arena.lifetimes follows then, else).
"""

from __future__ import annotations

from tinyarena.kernels._control_flow import check_subgraph_indices, eval_if
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

COND = 0


def init(ctx: InitContext, op: Operator) -> None:
    """IfInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataIf"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """IfPrepare, allocation side: the condition as a temp tensor; branch indices checked."""
    ctx.allocate_temp_tensor(op.inputs[COND])
    check_subgraph_indices(ctx, "IF", (op.options.then_subgraph_index,
                                       op.options.else_subgraph_index))
    return None


REGISTRATION = Registration("IF", init=init, prepare=prepare, eval=eval_if,
                            builtin_data="TfLiteIfParams")
