"""CALL_ONCE: TFLM's call_once.cc.

Allocation: the parser allocates ``TfLiteCallOnceParams``; init allocates ``OpDataCallOnce``
(subgraph index and the has-run flag); prepare allocates nothing in the arena. The has-run flag
is kept in a one-element workspace, which eval (``_control_flow.eval_call_once``) reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.kernels._control_flow import (
    bind_call_once,
    check_subgraph_indices,
    eval_call_once,
)
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator


@dataclass(frozen=True)
class OpData:
    init_subgraph_index: int
    has_run_workspace: int


def init(ctx: InitContext, op: Operator) -> None:
    """CallOnceInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataCallOnce"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """CallOncePrepare: checks only."""
    index = op.options.init_subgraph_index
    check_subgraph_indices(ctx, "CALL_ONCE", (index,))
    return OpData(index, ctx.request_workspace((1,), np.bool_))


REGISTRATION = Registration("CALL_ONCE", init=init, prepare=prepare,
                            eval=eval_call_once, bind=bind_call_once,
                            builtin_data="TfLiteCallOnceParams")
