"""TANH: TFLM's tanh.cc with reference(_integer_ops)/tanh.h.

Types: float32 (tanhf), int8 (gemmlowp fixed-point tanh; output assumed zero point 0, scale
1/128, as TFLM does without checking) and int16 (the shared sigmoid table; zero points 0,
output scale 2**-15).

Allocation: init allocates tanh.cc's OpData (16 bytes); prepare takes three temp tensors
(TanhPrepare's input, then CalculateArithmeticOpData's input and output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.kernels._sigmoid_tanh import (
    ActivationOpData,
    int8_params,
    int16_params,
    tanh_int8,
    tanh_int16,
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


@dataclass(frozen=True)
class OpData:
    type: TensorType
    params: ActivationOpData


def init(ctx: InitContext, op: Operator) -> None:
    """TanhInit: four int32 of OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataTanh"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """TanhPrepare: one temp input, then CalculateArithmeticOpData's temp input and output."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = io_tensors(ctx, op, "TANH")
    require_types("TANH", inp, out, _SUPPORTED)
    require_same_size("TANH", inp, out)
    iq, oq = quant_params(inp), quant_params(out)
    if inp.type == _I8:
        return OpData(inp.type, int8_params(iq.scale, iq.zero_point))
    if inp.type == _I16:
        return OpData(inp.type, int16_params("TANH", iq.scale, iq.zero_point, oq.scale,
                                             oq.zero_point, pot_shifts=(0, 1)))
    return OpData(inp.type, ActivationOpData())


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """TanhEval."""
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if data.type == _F32:
        map_chunks(_tanh_float, x, out)
    elif data.type == _I8:
        map_chunks(lambda v: tanh_int8(v, data.params), x, out)
    else:
        map_chunks(lambda v: tanh_int16(v, data.params), x, out)


def _tanh_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Tanh<float>: std::tanh, here in double rounded to float32."""
    return np.tanh(x.astype(np.float64)).astype(np.float32)


REGISTRATION = Registration("TANH", init=init, prepare=prepare, eval=eval_)
