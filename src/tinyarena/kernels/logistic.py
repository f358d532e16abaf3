"""LOGISTIC: TFLM's logistic.cc / logistic_common.cc with reference(_integer_ops)/logistic.h.

Types: float32, int8 (gemmlowp fixed-point logistic; output zero point must be -128) and
int16 (sigmoid table; zero points 0, output scale 2**-15).

Allocation: init allocates ``OpDataLogistic`` (16 bytes); prepare takes two temp tensors
(input, output).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._libm import expf_for
from tinyarena.kernels._sigmoid_tanh import (
    SigmoidTanhOpData,
    bind_int16,
    logistic_int8,
    logistic_int16,
    sigmoid_tanh_op_data,
)
from tinyarena.kernels._unary import checked_unary_io, map_unary
from tinyarena.kernels._quant import tensor_quant
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
# reference_ops::Logistic<float> cut-offs: above, exactly 1; below, exp(x).
_CUTOFF_UPPER = np.float32(16.619047164916992188)
_CUTOFF_LOWER = np.float32(-9.0)


def init(ctx: InitContext, op: Operator) -> None:
    """LogisticInit: OpDataLogistic."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataLogistic"))


def prepare(ctx: PrepareContext, op: Operator) -> SigmoidTanhOpData:
    """LogisticPrepare -> CalculateArithmeticOpDataLogistic."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = checked_unary_io(ctx, op, "LOGISTIC", _SUPPORTED)
    out_zero_point = tensor_quant(out).zero_point
    if inp.type == _I8 and out_zero_point != -128:
        raise KernelError(f"int8 LOGISTIC needs an output zero point of -128, got "
                          f"{out_zero_point}")
    return replace(sigmoid_tanh_op_data("LOGISTIC", inp, out, pot_shifts=(0,)),
                   libm=ctx.target.libm)


def logistic_float(x: np.ndarray, libm: str = "glibc") -> np.ndarray:
    """reference_ops::Logistic<float>: 1/(1+exp(-x)) in float32, with TFLM's cut-offs, and
    std::exp(float) as the build's C library computes it (glibc's or newlib's expf, ported
    bit-exactly in ``_libm``), evaluated once per element on the argument its branch needs."""
    f32 = np.float32
    x = np.asarray(x, dtype=f32)
    below = x < _CUTOFF_LOWER
    e = expf_for(libm)(np.where(below, x, -x))
    mid = f32(1.0) / (f32(1.0) + e)
    return np.where(x > _CUTOFF_UPPER, f32(1.0), np.where(below, e, mid))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: SigmoidTanhOpData) -> None:
    """LogisticEval."""
    if data.type == _F32:
        map_unary(ctx, op, lambda v: logistic_float(v, data.libm))
    elif data.type == _I8:
        map_unary(ctx, op, lambda v: logistic_int8(v, data.params))
    else:
        map_unary(ctx, op, lambda v: logistic_int16(v, data.params))


def bind(ctx: EvalContext, op: Operator, data: SigmoidTanhOpData) -> Step | None:
    """int8: eval's arithmetic as a 256-entry table (``_bound.unary_lut``); with compiled
    kernels on, int16: the table-and-lerp of ``native.sigmoid_tanh``, float32: the loop of
    ``_bound.float_unary`` with the target's expf; else eval."""
    if data.type == _F32:
        return float_unary(ctx, op, "LOGISTIC", libm=data.libm)
    if data.type == _I16:
        return bind_int16(ctx, op, data, "LOGISTIC")
    if data.type != _I8:
        return None
    return unary_lut(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]),
                     lambda v: logistic_int8(v, data.params), ctx)


REGISTRATION = Registration("LOGISTIC", init=init, prepare=prepare, eval=eval_, bind=bind)
