"""RELU and RELU6 against the live TFLM wheel: float32, int8, int16."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
def test_float_matches_tflm_exactly(op: str) -> None:
    rng = np.random.default_rng(40)
    shape = (3, 5, 7)
    model = single_op_model(op, shape, "float32", None, shape, "float32", None)
    x = random_input(rng, shape, "float32", 20.0)
    x.reshape(-1)[:3] = [0.0, -0.0, 6.0]
    compare(model, [x], max_ulp=0)


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_quantized_matches_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng(41 + len(op) + len(dtype))
    for _ in range(10):
        shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(1, 5))))
        scales = 10 ** rng.uniform(-3, 0, size=2)
        if dtype == "int8":
            in_q = (float(scales[0]), int(rng.integers(-128, 128)))
            out_q = (float(scales[1]), int(rng.integers(-128, 128)))
        else:
            in_q, out_q = (float(scales[0]), 0), (float(scales[1]), 0)
        model = single_op_model(op, shape, dtype, in_q, shape, dtype, out_q)
        compare(model, [random_input(rng, shape, dtype)])
