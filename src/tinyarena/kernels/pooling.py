"""AVERAGE_POOL_2D and MAX_POOL_2D: TFLM's pooling.cc / pooling_common.cc.

Allocation: the parser allocates ``TfLitePoolParams``; init allocates ``OpDataPooling``;
prepare takes temp tensors input and output. Reference kernels request no scratch.
"""

from __future__ import annotations

import dataclasses

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._pooling_math import (
    PoolOpData,
    average_pool,
    max_pool,
    pool_op_data,
    pool_plan,
)
from tinyarena.kernels._unary import io_tensors
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration, Step
from tinyarena.model.types import NUMPY_DTYPES, Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """PoolInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataPooling"))


def prepare(ctx: PrepareContext, op: Operator) -> PoolOpData:
    """PoolingPrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, op.name)
    data = pool_op_data(op.name, op, inp, out)
    plan = pool_plan(ctx, data, inp.shape, average=op.name == "AVERAGE_POOL_2D",
                     in_dtype=NUMPY_DTYPES[inp.type])
    return dataclasses.replace(data, plan=plan)


@c_float_env
def average_eval(ctx: EvalContext, op: Operator, data: PoolOpData) -> None:
    """AverageEval (see _pooling_math.average_pool)."""
    average_pool(ctx.tensor_data(op.inputs[INPUT]), data, ctx.tensor_data(op.outputs[OUTPUT]),
                 ctx.workspace)


@c_float_env
def max_eval(ctx: EvalContext, op: Operator, data: PoolOpData) -> None:
    """MaxEval (see _pooling_math.max_pool)."""
    max_pool(ctx.tensor_data(op.inputs[INPUT]), data, ctx.tensor_data(op.outputs[OUTPUT]),
             ctx.workspace)


def _bind(ctx: EvalContext, op: Operator, data: PoolOpData, average: bool) -> Step | None:
    """With compiled kernels on: the loops of ``native.pooling`` (int8/int16, float32);
    else eval."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.pooling import bind_pool

    return bind_pool(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     data, average)


def average_bind(ctx: EvalContext, op: Operator, data: PoolOpData) -> Step | None:
    return _bind(ctx, op, data, True)


def max_bind(ctx: EvalContext, op: Operator, data: PoolOpData) -> Step | None:
    return _bind(ctx, op, data, False)


REGISTRATIONS = {
    "AVERAGE_POOL_2D": Registration("AVERAGE_POOL_2D", init=init, prepare=prepare,
                                    eval=average_eval, bind=average_bind,
                                    builtin_data="TfLitePoolParams"),
    "MAX_POOL_2D": Registration("MAX_POOL_2D", init=init, prepare=prepare, eval=max_eval,
                                bind=max_bind, builtin_data="TfLitePoolParams"),
}
