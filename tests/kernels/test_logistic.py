"""LOGISTIC against the live TFLM wheel: float32, int8, int16 (power-of-two and general scales)."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle
FLOAT_ULP = 0  # float32 is bit-exact: std::exp(float) is glibc's expf, ported in _libm


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(1, 9, size=int(rng.integers(1, 5))))


def test_logistic_float_matches_tflm() -> None:
    rng = np.random.default_rng(20)
    shape = (4, 300)
    model = single_op_model("LOGISTIC", shape, "float32", None, shape, "float32", None)
    for spread in (1.0, 10.0, 40.0):
        compare(model, [random_input(rng, shape, "float32", spread)], max_ulp=FLOAT_ULP)


def test_logistic_int8_matches_tflm() -> None:
    rng = np.random.default_rng(21)
    for _ in range(12):
        shape = _shape(rng)
        in_q = (float(10 ** rng.uniform(-3, 0.5)), int(rng.integers(-128, 128)))
        out_q = (1 / 256, -128)
        model = single_op_model("LOGISTIC", shape, "int8", in_q, shape, "int8", out_q)
        compare(model, [random_input(rng, shape, "int8")])
    # every int8 value once, at a few scales
    full = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    for scale in (0.01, 0.0625, 0.1, 0.5):
        model = single_op_model("LOGISTIC", (1, 256), "int8", (scale, 3), (1, 256), "int8",
                                (1 / 256, -128))
        compare(model, [full])


@pytest.mark.parametrize("scale", [2.0**-12, 2.0**-11, 2.0**-10, 1e-4, 3.7e-4, 1e-3])
def test_logistic_int16_matches_tflm(scale: float) -> None:
    rng = np.random.default_rng(22)
    shape = (2, 500)
    model = single_op_model("LOGISTIC", shape, "int16", (scale, 0), shape, "int16",
                            (2.0**-15, 0))
    for _ in range(2):
        compare(model, [random_input(rng, shape, "int16")])
