"""WHILE: TFLM's while.cc.

Allocation: the parser allocates ``TfLiteWhileParams``; init allocates ``OpDataWhile`` (the two
subgraph indices); prepare allocates nothing.
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels._control_flow import eval_while
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator


def init(ctx: InitContext, op: Operator) -> None:
    """WhileInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataWhile"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """WhilePrepare: checks only."""
    for index in (op.options.cond_subgraph_index, op.options.body_subgraph_index):
        if not 0 <= index < ctx.subgraph_count():
            raise KernelError(f"WHILE refers to subgraph {index}, but the model has "
                              f"{ctx.subgraph_count()}")
    return None


REGISTRATION = Registration("WHILE", init=init, prepare=prepare, eval=eval_while,
                            builtin_data="TfLiteWhileParams")
