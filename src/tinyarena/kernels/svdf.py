"""SVDF: TFLM's svdf.cc / svdf_common.cc.

Allocation: the parser allocates ``TfLiteSVDFParams``; init allocates ``OpDataSvdf``; prepare
takes temp tensors input, weights_feature, weights_time, bias (when present), activation state
and output, then requests scratch: int8 4 * batch * num_filters and 4 * batch * num_units,
float 4 * batch * num_filters.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels._svdf_math import (
    SvdfPlan,
    SvdfQuant,
    bind_svdf_integer_fast,
    svdf_float,
    svdf_integer,
    svdf_integer_fast,
    svdf_plan,
    svdf_quant,
)
from tinyarena.kernels._tflm_version import scale_arithmetic
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.options import SVDFOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

INPUT = 0
WEIGHTS_FEATURE = 1
WEIGHTS_TIME = 2
BIAS = 3
ACTIVATION_STATE = 4
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """InitSvdf: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataSvdf"))


@dataclass(frozen=True)
class OpData:
    """OpDataSvdf: the integer rescaling (None for float) plus the options eval needs."""

    rank: int
    activation: str
    quant: SvdfQuant | None
    plan: SvdfPlan | None = None  # widened constant weights and eval workspaces


def _validate(op: Operator, source: Tensor, feature: Tensor, time: Tensor, bias: Tensor | None,
              state: Tensor, output: Tensor, rank: int) -> None:
    """PrepareSvdf's shape and type checks (TF_LITE_ENSURE in TFLM)."""
    if len(op.inputs) != 5 or len(op.outputs) != 1:
        raise KernelError("SVDF takes 5 inputs (bias may be -1) and one output")
    if len(source.shape) != 2 or len(feature.shape) != 2 or len(time.shape) != 2:
        raise KernelError("SVDF: input, weights_feature and weights_time must be 2-D")
    batch, input_size = source.shape
    num_filters, memory = feature.shape[0], time.shape[1]
    if num_filters % rank:
        raise KernelError(f"SVDF: {num_filters} filters are not a multiple of rank {rank}")
    if feature.shape[1] != input_size or time.shape[0] != num_filters:
        raise KernelError("SVDF: weights_feature must be (num_filters, input_size) and "
                          "weights_time (num_filters, memory_size)")
    if tuple(output.shape) != (batch, num_filters // rank):
        raise KernelError(f"SVDF: output shape {output.shape} should be "
                          f"{(batch, num_filters // rank)}")
    if bias is not None and bias.shape[0] != num_filters // rank:
        raise KernelError("SVDF: bias must hold num_units values")
    if tuple(state.shape) != (batch, memory * num_filters) or not state.is_variable:
        raise KernelError("SVDF: the activation state must be a variable tensor of shape "
                          f"{(batch, memory * num_filters)}")
    if source.type == TensorType.INT8:
        ok = (feature.type == TensorType.INT8 and output.type == TensorType.INT8
              and time.type in (TensorType.INT8, TensorType.INT16)
              and state.type in (TensorType.INT8, TensorType.INT16)
              and (bias is None or bias.type == TensorType.INT32))
    elif source.type == TensorType.FLOAT32:
        ok = all(t.type == TensorType.FLOAT32
                 for t in (feature, time, state, output) + ((bias,) if bias else ()))
    else:
        ok = False
    if not ok:
        raise KernelError("SVDF supports float32, or int8 input/weights_feature/output with "
                          "int8 or int16 weights_time/state and int32 bias")


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """PrepareSvdf: checks, effective scales (int8), scratch requests."""
    for index in (op.inputs[INPUT], op.inputs[WEIGHTS_FEATURE], op.inputs[WEIGHTS_TIME],
                  op.inputs[BIAS], op.inputs[ACTIVATION_STATE], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    source = ctx.tensor(op.inputs[INPUT])
    feature = ctx.tensor(op.inputs[WEIGHTS_FEATURE])
    time = ctx.tensor(op.inputs[WEIGHTS_TIME])
    bias = ctx.tensor(op.inputs[BIAS])
    state = ctx.tensor(op.inputs[ACTIVATION_STATE])
    output = ctx.tensor(op.outputs[OUTPUT])
    if source is None or feature is None or time is None or state is None or output is None:
        raise KernelError("SVDF: input, weights_feature, weights_time and activation state "
                          "are required")
    options = op.options if isinstance(op.options, SVDFOptions) else SVDFOptions()
    rank = options.rank
    if rank <= 0:
        raise KernelError(f"SVDF: rank must be positive, got {rank}")
    _validate(op, source, feature, time, bias, state, output, rank)
    batch = source.shape[0]
    num_filters = feature.shape[0]
    quant = None
    if source.type == TensorType.INT8:
        if bias is None:  # TFLM dereferences the bias scale here (TODO #1751 upstream)
            raise KernelError("int8 SVDF needs a bias tensor")
        qi, qf, qt, qs = (tensor_quant(source), tensor_quant(feature), tensor_quant(time),
                          tensor_quant(state))
        qo, qb = tensor_quant(output), tensor_quant(bias)
        quant = svdf_quant(qi.scale, qf.scale, qs.scale, qt.scale, qb.scale, qo.scale,
                           qi.zero_point, qo.zero_point, qs.zero_point,
                           scale_arithmetic(ctx.target))
    ctx.request_scratch(4 * batch * num_filters)
    if source.type == TensorType.INT8:
        ctx.request_scratch(4 * batch * (num_filters // rank))
    plan = svdf_plan(ctx, batch, source.shape[1], num_filters, time.shape[1], rank,
                     NUMPY_DTYPES[state.type], quant is not None, feature.data, time.data,
                     None if bias is None else bias.data,
                     quant if bias is None or bias.data is not None else None)
    return OpData(rank, options.fused_activation_function, quant, plan)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """EvalSvdf: float or integer reference; the activation state is updated in place."""
    plan = data.plan
    if plan is not None and plan.fast is not None:
        svdf_integer_fast(ctx.tensor_data(op.inputs[INPUT]),
                          ctx.tensor_data(op.inputs[ACTIVATION_STATE]),
                          ctx.tensor_data(op.outputs[OUTPUT]), plan.fast, ctx.workspace)
        return
    x = ctx.tensor_data(op.inputs[INPUT])
    w_feature = ctx.tensor_data(op.inputs[WEIGHTS_FEATURE])
    w_time = ctx.tensor_data(op.inputs[WEIGHTS_TIME])
    bias = ctx.tensor_data(op.inputs[BIAS]) if op.inputs[BIAS] >= 0 else None
    state = ctx.tensor_data(op.inputs[ACTIVATION_STATE])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    assert data.plan is not None
    if data.quant is None:
        svdf_float(x, w_feature, w_time, bias, state, out, data.plan, data.activation,
                   ctx.workspace)
    else:
        svdf_integer(x, w_feature, w_time, bias, state, out, data.plan, data.quant,
                     ctx.workspace)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """The compiled kernel (``native.svdf``) when the interpreter runs them; else the integer
    fast path over views fixed at bind time; anything else runs eval."""
    if native.enabled(ctx):
        from tinyarena.kernels.native.svdf import bind_svdf

        step = bind_svdf(ctx.tensor_data(op.inputs[INPUT]),
                         ctx.tensor_data(op.inputs[WEIGHTS_FEATURE]),
                         ctx.tensor_data(op.inputs[WEIGHTS_TIME]),
                         ctx.tensor_data(op.inputs[BIAS]) if op.inputs[BIAS] >= 0 else None,
                         ctx.tensor_data(op.inputs[ACTIVATION_STATE]),
                         ctx.tensor_data(op.outputs[OUTPUT]), data,
                         data.plan is not None and data.plan.fused)
        if step is not None:
            return step
    plan = data.plan
    if plan is None or plan.fast is None:
        return None
    return bind_svdf_integer_fast(ctx.tensor_data(op.inputs[INPUT]),
                                  ctx.tensor_data(op.inputs[ACTIVATION_STATE]),
                                  ctx.tensor_data(op.outputs[OUTPUT]), plan.fast, ctx.workspace)


REGISTRATION = Registration("SVDF", init=init, prepare=prepare, eval=eval_, bind=bind,
                            builtin_data="TfLiteSVDFParams")
