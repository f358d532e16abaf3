"""LEAKY_RELU against the live TFLM wheel: float32, int8, int16, including alpha < 0 and > 1."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle
ALPHAS = (0.2, 0.01, 0.5, 1.7, -0.3)


def test_float_matches_tflm_exactly() -> None:
    rng = np.random.default_rng(50)
    shape = (4, 33)
    for alpha in ALPHAS:
        model = single_op_model("LEAKY_RELU", shape, "float32", None, shape, "float32", None,
                                alpha=alpha)
        compare(model, [random_input(rng, shape, "float32", 10.0)], max_ulp=0)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_quantized_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(51 if dtype == "int8" else 52)
    for alpha in ALPHAS:
        for _ in range(3):
            shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(1, 5))))
            scales = 10 ** rng.uniform(-3, 0, size=2)
            zps = rng.integers(-128, 128, size=2) if dtype == "int8" else (0, 0)
            model = single_op_model("LEAKY_RELU", shape, dtype, (float(scales[0]), int(zps[0])),
                                    shape, dtype, (float(scales[1]), int(zps[1])), alpha=alpha)
            compare(model, [random_input(rng, shape, dtype)])
