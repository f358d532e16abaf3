"""ADD: TFLM's add.cc / add_common.cc.

AddInit allocates the OpData; AddPrepare takes temp tensors and runs CalculateOpDataAdd; AddEval
runs EvalAdd for float32/int32 (int32 ignores the fused activation) and EvalAddQuantized
(AddFunc) for int8/int16. The shared skeleton is ``_elementwise.binary_registration``.

Allocation: the parser allocates ``TfLiteAddParams``; init allocates ``OpDataAdd``; prepare
takes temp tensors input1, input2 and output.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._elementwise import BinaryOp, add_sub_params, binary_registration
from tinyarena.model.options import AddOptions
from tinyarena.model.types import Tensor


def _check_int32(in1: Tensor, in2: Tensor, out: Tensor) -> None:
    """int32 ADD: the inputs must be unquantized (the output's quantization is not checked)."""
    if any(t.quantization is not None and len(t.quantization.scale) for t in (in1, in2)):
        raise KernelError("int32 ADD supports only unquantized inputs; drop the quantization")


REGISTRATION = binary_registration(BinaryOp(
    "ADD", np.add, op_data="OpDataAdd", builtin_data="TfLiteAddParams", options=AddOptions,
    quantized=partial(add_sub_params, subtract=False), int32_activation=False,
    check_int32=_check_int32))
