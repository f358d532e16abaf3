"""Shared parts of TFLM's one-input float32 kernels (NEG, FLOOR, CEIL, ROUND, EXP).

These kernels have no OpData and no builtin options. Some (CEIL, ROUND, EXP) have a Prepare
that takes the input and output as temp tensors and checks them; the others (NEG, FLOOR)
register only an Eval, which checks the type when the op runs. Sizing must not depend on eval,
so the eval-time checks stay in eval here too: a model that TFLM allocates is always sized.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._unary import map_chunks
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator, Tensor, TensorType

INPUT = 0
OUTPUT = 0


def _io(ctx: PrepareContext | EvalContext, op: Operator) -> tuple[Tensor, Tensor]:
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes exactly one input and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError(f"{op.name} needs an input and an output tensor")
    return inp, out


def check_float_io(op: Operator, inp: Tensor, out: Tensor) -> None:
    """TF_LITE_ENSURE_TYPES_EQ(float32) and the equal-shape checks of the Prepare functions."""
    if inp.type != TensorType.FLOAT32 or out.type != TensorType.FLOAT32:
        raise KernelError(f"{op.name} supports float32 only in TFLM; got "
                          f"{inp.type.name.lower()} -> {out.type.name.lower()}")
    if tuple(inp.shape) != tuple(out.shape):
        raise KernelError(f"{op.name}: input shape {inp.shape} differs from output shape "
                          f"{out.shape}; TFLM requires them equal")


def prepare_with_temps(ctx: PrepareContext, op: Operator) -> None:
    """CeilPrepare / RoundPrepare / ExpPrepare: temp input, temp output, then the checks."""
    if len(op.inputs) >= 1:
        ctx.allocate_temp_tensor(op.inputs[INPUT])
    if len(op.outputs) >= 1:
        ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = _io(ctx, op)
    check_float_io(op, inp, out)


def prepare_nothing(ctx: PrepareContext, op: Operator) -> None:
    """No TFLM Prepare (NEG, FLOOR): nothing is allocated; the tensors must exist."""
    _io(ctx, op)


def float_registration(name: str, fn: Callable[[np.ndarray], np.ndarray], *,
                       has_prepare: bool) -> Registration:
    """A Registration whose eval maps ``fn`` over the float32 input, block by block."""

    def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
        inp, out = _io(ctx, op)
        if not has_prepare:  # NegEval / FloorEval check the type when they run
            check_float_io(op, inp, out)
        with np.errstate(all="ignore"):  # inf and NaN propagate as in C, silently
            map_chunks(fn, ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT]))

    prepare = prepare_with_temps if has_prepare else prepare_nothing
    return Registration(name, init=None, prepare=prepare, eval=eval_, builtin_data=None)
