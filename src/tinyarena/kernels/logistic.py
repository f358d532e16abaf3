"""LOGISTIC: TFLM's logistic.cc / logistic_common.cc with reference(_integer_ops)/logistic.h.

Types: float32, int8 (gemmlowp fixed-point logistic; output zero point must be -128) and
int16 (sigmoid table; zero points 0, output scale 2**-15).

Allocation: init allocates ``OpDataLogistic`` (16 bytes); prepare takes two temp tensors
(input, output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._sigmoid_tanh import (
    ActivationOpData,
    int8_params,
    int16_params,
    logistic_int8,
    logistic_int16,
)
from tinyarena.kernels._unary import (
    io_tensors,
    map_chunks,
    quant_params,
    require_same_size,
    require_types,
)
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16
_SUPPORTED = ((_F32, _F32), (_I8, _I8), (_I16, _I16))
# reference_ops::Logistic<float> cut-offs: above, exactly 1; below, exp(x).
_CUTOFF_UPPER = np.float32(16.619047164916992188)
_CUTOFF_LOWER = np.float32(-9.0)


@dataclass(frozen=True)
class OpData:
    type: TensorType
    params: ActivationOpData


def init(ctx: InitContext, op: Operator) -> None:
    """LogisticInit: OpDataLogistic."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataLogistic"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """LogisticPrepare -> CalculateArithmeticOpDataLogistic."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, "LOGISTIC")
    require_types("LOGISTIC", inp, out, _SUPPORTED)
    require_same_size("LOGISTIC", inp, out)
    iq, oq = quant_params(inp), quant_params(out)
    if inp.type == _I8:
        if oq.zero_point != -128:
            raise KernelError(f"int8 LOGISTIC needs an output zero point of -128, got "
                              f"{oq.zero_point}")
        return OpData(inp.type, int8_params(iq.scale, iq.zero_point))
    if inp.type == _I16:
        return OpData(inp.type, int16_params("LOGISTIC", iq.scale, iq.zero_point, oq.scale,
                                             oq.zero_point, pot_shifts=(0,)))
    return OpData(inp.type, ActivationOpData())


def logistic_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Logistic<float>: 1/(1+exp(-x)) in float32, with TFLM's cut-offs."""
    f32 = np.float32
    x = np.asarray(x, dtype=f32)
    e_neg = np.exp(-x.astype(np.float64)).astype(f32)
    mid = f32(1.0) / (f32(1.0) + e_neg)
    low = np.exp(x.astype(np.float64)).astype(f32)
    return np.where(x > _CUTOFF_UPPER, f32(1.0), np.where(x < _CUTOFF_LOWER, low, mid))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """LogisticEval."""
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if data.type == _F32:
        map_chunks(logistic_float, x, out)
    elif data.type == _I8:
        map_chunks(lambda v: logistic_int8(v, data.params), x, out)
    else:
        map_chunks(lambda v: logistic_int16(v, data.params), x, out)


REGISTRATION = Registration("LOGISTIC", init=init, prepare=prepare, eval=eval_)
