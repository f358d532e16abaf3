"""WHILE: TFLM's while.cc.

Allocation: the parser allocates ``TfLiteWhileParams``; init allocates ``OpDataWhile`` (the two
subgraph indices); prepare allocates nothing.
"""

from __future__ import annotations

from tinyarena.kernels._control_flow import check_subgraph_indices, eval_while
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    """WhileInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataWhile"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """WhilePrepare: checks only."""
    check_subgraph_indices(ctx, "WHILE", (op.options.cond_subgraph_index,
                                          op.options.body_subgraph_index))
    return None


REGISTRATION = Registration("WHILE", init=init, prepare=prepare, eval=eval_while,
                            builtin_data="TfLiteWhileParams")
