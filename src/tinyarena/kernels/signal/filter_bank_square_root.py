"""SignalFilterBankSquareRoot: TFLM's signal/micro/kernels/filter_bank_square_root{,_common}.cc
and signal/src/filter_bank_square_root.cc, square_root_{32,64}.cc.

Allocation: no init; prepare takes temp tensors input, scale_bits, output. Eval: the rounded
integer square root of each uint64 channel (Sqrt64, which uses Sqrt32 when the upper word is
clear), shifted right by the scale_bits scalar.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.kernels.signal._common import (
    check_ranks_and_types,
    sqrt64,
    temp_tensors,
)
from tinyarena.model.types import Operator, TensorType


def prepare(ctx: PrepareContext, op: Operator) -> None:
    x, bits, y = temp_tensors(ctx, op, ("input", "scale_bits"), ("output",))
    check_ranks_and_types(op, ((x, "input", 1, TensorType.UINT64),
                               (bits, "scale_bits", 0, TensorType.INT32),
                               (y, "output", 1, TensorType.UINT32)))
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


def bind(ctx: EvalContext, op: Operator, data: None) -> Callable[[], None] | None:
    """With compiled kernels on: the square roots in one compiled loop (eval still raises
    for an out-of-range scale_bits, which is read at every invoke)."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.signal import bind_square_root

    return bind_square_root(ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
                            ctx.tensor_data(op.outputs[0]), lambda: eval_(ctx, op, data))

REGISTRATION = Registration("SignalFilterBankSquareRoot", prepare=prepare, eval=eval_,
                            bind=bind)
