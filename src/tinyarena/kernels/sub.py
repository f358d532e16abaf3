"""SUB: TFLM's sub.cc / sub_common.cc, float32, int32, int8 and int16, with broadcasting.

SubInit allocates the OpData; SubPrepare takes temp tensors and runs CalculateOpDataSub;
SubEval runs EvalSub for float32/int32 (both clamped to the fused activation range) and
EvalSubQuantized for int8/int16. The shared skeleton is ``_elementwise.binary_registration``.

Allocation: init allocates ``OpDataSub`` (52 bytes); prepare takes three temp tensors (input1,
input2, output) and allocates nothing else.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._elementwise import BinaryOp, add_sub_params, binary_registration
from tinyarena.model.options import SubOptions
from tinyarena.model.types import Tensor


def _check_int32(in1: Tensor, in2: Tensor, out: Tensor) -> None:
    """int32 SUB: the inputs and the output must all be unquantized."""
    if any(t.quantization is not None and len(t.quantization.scale) for t in (in1, in2, out)):
        raise KernelError("int32 SUB supports only unquantized tensors; drop the quantization")


REGISTRATION = binary_registration(BinaryOp(
    "SUB", np.subtract, op_data="OpDataSub", builtin_data="TfLiteSubParams", options=SubOptions,
    quantized=partial(add_sub_params, subtract=True), check_int32=_check_int32))
