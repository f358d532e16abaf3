"""TANH against the live TFLM wheel: float32, int8, int16 (power-of-two and general scales)."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle
FLOAT_ULP = 0  # float32 is bit-exact: std::tanh(float) is glibc's tanhf, ported in _libm


def test_tanh_float_matches_tflm() -> None:
    rng = np.random.default_rng(30)
    shape = (3, 400)
    model = single_op_model("TANH", shape, "float32", None, shape, "float32", None)
    for spread in (0.5, 3.0, 30.0):
        compare(model, [random_input(rng, shape, "float32", spread)], max_ulp=FLOAT_ULP)


def test_tanh_int8_matches_tflm() -> None:
    rng = np.random.default_rng(31)
    full = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)
    for _ in range(10):
        in_q = (float(10 ** rng.uniform(-3, 0.5)), int(rng.integers(-128, 128)))
        model = single_op_model("TANH", (2, 128), "int8", in_q, (2, 128), "int8", (1 / 128, 0))
        compare(model, [full])


@pytest.mark.parametrize("scale", [2.0**-12, 2.0**-11, 2.0**-13, 1e-4, 3.7e-4, 1e-3])
def test_tanh_int16_matches_tflm(scale: float) -> None:
    rng = np.random.default_rng(32)
    shape = (2, 500)
    model = single_op_model("TANH", shape, "int16", (scale, 0), shape, "int16", (2.0**-15, 0))
    for _ in range(2):
        compare(model, [random_input(rng, shape, "int16")])
