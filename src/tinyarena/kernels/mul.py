"""MUL: TFLM's mul.cc / mul_common.cc, float32, int32, int8 and int16, with broadcasting.

Allocation: init allocates ``OpDataMul`` (36 bytes); prepare takes three temp tensors (input1,
input2, output) and allocates nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._elementwise import (
    MulParams,
    BinaryRun,
    broadcast_output_shape,
    plan_binary,
    run_binary,
    mul_params,
    tensor_quant,
)
from tinyarena.kernels._quant import (
    calculate_activation_range_float,
    calculate_activation_range_int,
)
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.options import MulOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

INPUT1 = 0
INPUT2 = 1
OUTPUT = 0

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT32, TensorType.INT8, TensorType.INT16)


@dataclass(frozen=True)
class OpData:
    """What CalculateOpDataMul computes (OpDataMul)."""

    out_type: TensorType
    float_min: float = 0.0
    float_max: float = 0.0
    int_min: int = 0
    int_max: int = 0
    quant: MulParams | None = None
    run: BinaryRun | None = None  # the invoke-time plan (broadcast blocks, tables, workspace)


def init(ctx: InitContext, op: Operator) -> None:
    ctx.allocate_persistent(ctx.target.sizeof("OpDataMul"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """MulPrepare -> CalculateOpDataMul: temp tensors input1, input2, output."""
    for index in (op.inputs[INPUT1], op.inputs[INPUT2], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    in1, in2 = ctx.tensor(op.inputs[INPUT1]), ctx.tensor(op.inputs[INPUT2])
    out = ctx.tensor(op.outputs[OUTPUT])
    if in1 is None or in2 is None or out is None:
        raise KernelError("MUL needs two inputs and one output")
    if out.type not in _SUPPORTED or in1.type != out.type or in2.type != out.type:
        raise KernelError(f"MUL supports float32, int32, int8 and int16 with matching types; got "
                          f"{in1.type.name}, {in2.type.name} -> {out.type.name}")
    broadcast_output_shape("MUL", in1.shape, in2.shape, out.shape)
    options = op.options if isinstance(op.options, MulOptions) else MulOptions()
    act = options.fused_activation_function
    if out.type == TensorType.FLOAT32:
        lo, hi = calculate_activation_range_float(act)
        run = plan_binary(ctx, "MUL", np.multiply, in1, in2, np.float32, float_range=(lo, hi))
        return OpData(out.type, float_min=lo, float_max=hi, run=run)
    if out.type == TensorType.INT32:
        ilo, ihi = calculate_activation_range_int(act, np.int32)
        run = plan_binary(ctx, "MUL", np.multiply, in1, in2, np.int32, int_range=(ilo, ihi))
        return OpData(out.type, int_min=ilo, int_max=ihi, run=run)
    quant = mul_params(tensor_quant(in1), tensor_quant(in2), tensor_quant(out),
                       NUMPY_DTYPES[out.type], act)
    run = plan_binary(ctx, "MUL", np.multiply, in1, in2, NUMPY_DTYPES[out.type], params=quant)
    return OpData(out.type, quant=quant, run=run)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """MulEval: EvalMulFloatReference or EvalMulQuantizedReference (int8/int16/int32)."""
    run = data.run
    assert run is not None
    inputs = op.inputs
    run_binary(run, ctx.tensor_data(inputs[INPUT1]), ctx.tensor_data(inputs[INPUT2]),
               ctx.tensor_data(op.outputs[OUTPUT]),
               ctx.workspace(run.workspace) if run.workspace >= 0 else None)


REGISTRATION = Registration("MUL", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteMulParams")
