"""HARD_SWISH against the live TFLM wheel: float32 and int8 over many scale ratios."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle


def test_float_matches_tflm_exactly() -> None:
    rng = np.random.default_rng(60)
    shape = (5, 64)
    model = single_op_model("HARD_SWISH", shape, "float32", None, shape, "float32", None)
    compare(model, [random_input(rng, shape, "float32", 12.0)], max_ulp=0)


def test_int8_matches_tflm() -> None:
    rng = np.random.default_rng(61)
    full = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    for _ in range(25):
        in_scale = float(10 ** rng.uniform(-2.5, 0.5))
        out_scale = float(in_scale * 10 ** rng.uniform(-1.5, 0.5))
        in_q = (in_scale, int(rng.integers(-128, 128)))
        out_q = (out_scale, int(rng.integers(-128, 128)))
        model = single_op_model("HARD_SWISH", (4, 64), "int8", in_q, (4, 64), "int8", out_q)
        compare(model, [full])
