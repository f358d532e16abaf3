"""Arena accounting of the one-input kernels against the wheel: OpData sizes, the int16
SOFTMAX tables and the MEAN/SUM scratch buffers must give TFLM's exact head and tail."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare_allocations, single_op_model

pytestmark = pytest.mark.oracle

S = (1, 6, 6, 8)
CASES = {
    "softmax_f32": ("SOFTMAX", S, "float32", None, S, "float32", None, {"beta": 1.0}),
    "softmax_i8": ("SOFTMAX", S, "int8", (0.1, 3), S, "int8", (1 / 256, -128), {"beta": 1.0}),
    "softmax_i8_i16": ("SOFTMAX", S, "int8", (0.1, 3), S, "int16", (1 / 65536, -32768),
                       {"beta": 1.0}),
    "softmax_i16": ("SOFTMAX", S, "int16", (0.001, 0), S, "int16", (1 / 32768, 0),
                    {"beta": 1.0}),
    "logistic_i8": ("LOGISTIC", S, "int8", (0.1, 3), S, "int8", (1 / 256, -128), {}),
    "tanh_i16": ("TANH", S, "int16", (2.0**-12, 0), S, "int16", (2.0**-15, 0), {}),
    "relu_i8": ("RELU", S, "int8", (0.1, 3), S, "int8", (0.05, -128), {}),
    "relu6_f32": ("RELU6", S, "float32", None, S, "float32", None, {}),
    "leaky_i8": ("LEAKY_RELU", S, "int8", (0.1, 3), S, "int8", (0.05, 0), {"alpha": 0.2}),
    "hard_swish_i8": ("HARD_SWISH", S, "int8", (0.1, 3), S, "int8", (0.05, 0), {}),
    "quantize": ("QUANTIZE", S, "float32", None, S, "int8", (0.1, 3), {}),
    "dequantize": ("DEQUANTIZE", S, "int16", (0.1, 0), S, "float32", None, {}),
    "avg_pool_i8": ("AVERAGE_POOL_2D", S, "int8", (0.1, 3), (1, 3, 3, 8), "int8", (0.1, 3),
                    {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
                     "filter_height": 2}),
    "max_pool_f32": ("MAX_POOL_2D", S, "float32", None, (1, 6, 6, 8), "float32", None,
                     {"padding": "SAME", "stride_w": 1, "stride_h": 1, "filter_width": 3,
                      "filter_height": 3}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocation_matches_tflm(name: str) -> None:
    op, ishape, idt, iq, oshape, odt, oq, options = CASES[name]
    compare_allocations(single_op_model(op, ishape, idt, iq, oshape, odt, oq, **options))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_reduce_allocation_matches_tflm(op: str, dtype: str) -> None:
    q = None if dtype == "float32" else ((0.1, 3) if dtype == "int8" else (0.001, 0))
    model = single_op_model(op, (2, 5, 5, 7), dtype, q, (2, 7), dtype, q,
                            extra_inputs=[np.array([1, 2], np.int32)], keep_dims=False)
    compare_allocations(model)
