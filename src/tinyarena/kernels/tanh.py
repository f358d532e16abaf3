"""TANH: TFLM's tanh.cc with reference(_integer_ops)/tanh.h.

Types: float32 (tanhf), int8 (gemmlowp fixed-point tanh; output assumed zero point 0, scale
1/128, as TFLM does without checking) and int16 (the shared sigmoid table; zero points 0,
output scale 2**-15).

Allocation: init allocates tanh.cc's OpData (16 bytes); prepare takes three temp tensors
(TanhPrepare's input, then CalculateArithmeticOpData's input and output).
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._libm import tanhf
from tinyarena.kernels._sigmoid_tanh import (
    SigmoidTanhOpData,
    bind_int16,
    sigmoid_tanh_op_data,
    tanh_int8,
    tanh_int16,
)
from tinyarena.kernels._unary import checked_unary_io, map_unary
from tinyarena.kernels._bound import float_unary, unary_lut
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
)
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16
_SUPPORTED = ((_F32, _F32), (_I8, _I8), (_I16, _I16))


def init(ctx: InitContext, op: Operator) -> None:
    """TanhInit: four int32 of OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataTanh"))


def prepare(ctx: PrepareContext, op: Operator) -> SigmoidTanhOpData:
    """TanhPrepare: one temp input, then CalculateArithmeticOpData's temp input and output."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = checked_unary_io(ctx, op, "TANH", _SUPPORTED)
    return sigmoid_tanh_op_data("TANH", inp, out, pot_shifts=(0, 1))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: SigmoidTanhOpData) -> None:
    """TanhEval."""
    if data.type == _F32:
        map_unary(ctx, op, _tanh_float)
    elif data.type == _I8:
        map_unary(ctx, op, lambda v: tanh_int8(v, data.params))
    else:
        map_unary(ctx, op, lambda v: tanh_int16(v, data.params))


def _tanh_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Tanh<float>: std::tanh(float), i.e. glibc's tanhf on the wheel's host,
    ported bit-exactly in ``_libm``."""
    return tanhf(x)


def bind(ctx: EvalContext, op: Operator, data: SigmoidTanhOpData) -> Step | None:
    """int8: eval's arithmetic as a 256-entry table (``_bound.unary_lut``); with compiled
    kernels on, int16: the table-and-lerp of ``native.sigmoid_tanh``, float32: the loop of
    ``_bound.float_unary``; else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "TANH")
    if data.type == _I16:
        return bind_int16(ctx, op, data, "TANH")
    if data.type != _I8:
        return None
    return unary_lut(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     lambda v: tanh_int8(v, data.params), ctx)


REGISTRATION = Registration("TANH", init=init, prepare=prepare, eval=eval_, bind=bind)
