"""SOFTMAX: TFLM's softmax.cc / softmax_common.cc.

Allocation: the parser allocates ``TfLiteSoftmaxParams``; init allocates ``SoftmaxParams``;
prepare takes temp tensors input and output and, for int16 input, allocates the two 513-entry
int16 lookup tables (exp and 1/(1+x), 1026 bytes each; InitializeLutForInt16).
"""

from __future__ import annotations

from dataclasses import replace

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._softmax_math import SoftmaxOpData, softmax, softmax_op_data
from tinyarena.kernels._unary import io_tensors
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration, Step
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
LUT_BYTES = 513 * 2  # kInt16LUTArraySize int16 entries


def init(ctx: InitContext, op: Operator) -> None:
    """SoftmaxInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("SoftmaxParams"))


def prepare(ctx: PrepareContext, op: Operator) -> SoftmaxOpData:
    """SoftmaxPrepare -> CalculateSoftmaxParams -> InitializeLutForInt16."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    source = ctx.tensor(op.inputs[INPUT])
    if source is not None and source.type == TensorType.INT16:
        ctx.allocate_persistent(LUT_BYTES)  # exp_lut
        ctx.allocate_persistent(LUT_BYTES)  # one_over_one_plus_x_lut
    inp, out = io_tensors(ctx, op, "SOFTMAX")
    return replace(softmax_op_data(op, inp, out), libm=ctx.target.libm)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: SoftmaxOpData) -> None:
    """SoftmaxEval: float, int8 (-> int8/int16) or int16 arithmetic (see _softmax_math)."""
    out = ctx.tensor_data(op.outputs[OUTPUT])
    softmax(ctx.tensor_data(op.inputs[INPUT]), data, out)


def bind(ctx: EvalContext, op: Operator, data: SoftmaxOpData) -> Step | None:
    """The compiled kernel (``native.softmax``) when the interpreter runs them; else eval."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.softmax import bind_softmax

    return bind_softmax(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                        data)


REGISTRATION = Registration("SOFTMAX", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteSoftmaxParams")
