"""SignalFilterBankSquareRoot: TFLM's signal/micro/kernels/filter_bank_square_root{,_common}.cc
and signal/src/filter_bank_square_root.cc, square_root_{32,64}.cc.

Allocation: no init; prepare takes temp tensors input, scale_bits, output. Eval: the rounded
integer square root of each uint64 channel (Sqrt64, which uses Sqrt32 when the upper word is
clear), shifted right by the scale_bits scalar.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.kernels.signal._common import (
    check_io,
    check_rank,
    check_type,
    sqrt64,
    temp_input,
    temp_output,
)
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    check_io(op, 2, 1)
    x = temp_input(ctx, op, 0, "input")
    bits = temp_input(ctx, op, 1, "scale_bits")
    y = temp_output(ctx, op, 0, "output")
    check_rank(op, x, "input", 1)
    check_rank(op, bits, "scale_bits", 0)
    check_rank(op, y, "output", 1)
    check_type(op, x, "input", TensorType.UINT64)
    check_type(op, bits, "scale_bits", TensorType.INT32)
    check_type(op, y, "output", TensorType.UINT32)
    if y.shape[0] < x.shape[0]:
        raise KernelError(f"{op.name}: the output is shorter than the input's {x.shape[0]} "
                          f"channels")


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    x = ctx.tensor_data(op.inputs[0])
    shift = int(ctx.tensor_data(op.inputs[1]).reshape(-1)[0])
    if not 0 <= shift < 32:
        raise KernelError(f"{op.name}: scale_bits {shift} is outside 0..31 (the C shift of a "
                          f"uint32 by it is undefined)")
    root = sqrt64(x)
    ctx.tensor_data(op.outputs[0])[:x.shape[0]] = (root >> np.uint64(shift)).astype(np.uint32)


REGISTRATION = Registration("SignalFilterBankSquareRoot", prepare=prepare, eval=eval_)
