"""DEQUANTIZE: TFLM's dequantize.cc / dequantize_common.cc.

Allocation: no builtin struct; init allocates ``DequantizeOpData``; prepare takes temp tensors
input and output.
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator

INPUT = 0
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """DequantizeInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("DequantizeOpData"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """DequantizePrepare, allocation side."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    return None


REGISTRATION = Registration("DEQUANTIZE", init=init, prepare=prepare, eval=None,
                            builtin_data=None)
