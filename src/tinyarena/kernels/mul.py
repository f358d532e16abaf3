"""MUL: TFLM's mul.cc / mul_common.cc, float32, int32, int8 and int16, with broadcasting.

MulInit allocates the OpData; MulPrepare takes temp tensors and runs CalculateOpDataMul; MulEval
runs EvalMulFloatReference for float32 and EvalMulQuantizedReference for int8/int16/int32 (int32
clamped to the fused activation range, no quantization checks). The shared skeleton is
``_elementwise.binary_registration``.

Allocation: init allocates ``OpDataMul`` (36 bytes); prepare takes three temp tensors (input1,
input2, output) and allocates nothing else.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._elementwise import BinaryOp, binary_registration, mul_params
from tinyarena.model.options import MulOptions

REGISTRATION = binary_registration(BinaryOp(
    "MUL", np.multiply, op_data="OpDataMul", builtin_data="TfLiteMulParams", options=MulOptions,
    quantized=mul_params))
