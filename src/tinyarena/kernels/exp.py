"""EXP: TFLM's exp.cc (reference_ops::Exp = std::exp(float)), float32 only.

std::exp(float) is the build's C library's expf: on the wheel's host glibc's, which
``_libm.expf`` ports bit for bit (0 ulp; see that module and tests/kernels/test_libm_expf.py);
a target profile's ``libm`` picks newlib's on Cortex-M builds (``_libm.expf_for``).
Allocation: ExpPrepare takes the input and output as temp tensors; no OpData, no options.
"""

from __future__ import annotations

from tinyarena.kernels._float_unary import prepare_with_temps
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._libm import expf_for
from tinyarena.kernels._unary import map_chunks
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def prepare(ctx: PrepareContext, op: Operator) -> str:
    """ExpPrepare; the op data is the build's C library (which expf std::exp calls)."""
    prepare_with_temps(ctx, op)
    return str(getattr(ctx.target, "libm", "glibc"))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, libm: str) -> None:
    """ExpEval."""
    map_chunks(expf_for(libm), ctx.tensor_data(op.inputs[INPUT]),
               ctx.tensor_data(op.outputs[OUTPUT]))


REGISTRATION = Registration("EXP", init=None, prepare=prepare, eval=eval_, builtin_data=None)
