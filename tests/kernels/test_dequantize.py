"""DEQUANTIZE against the live TFLM wheel: int8, int16 and uint8 to float32 (bit-exact)."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import QRANGE, compare, single_op_model

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8"])
def test_dequantize_matches_tflm_exactly(dtype: str) -> None:
    rng = np.random.default_rng(80)
    lo, hi = QRANGE[dtype]
    values = np.arange(lo, hi + 1, max(1, (hi - lo) // 997)).astype(dtype)
    for _ in range(5):
        scale = float(10 ** rng.uniform(-5, 1))
        zp = int(rng.integers(lo, hi + 1)) if dtype != "int16" else int(rng.integers(-100, 100))
        n = values.size
        model = single_op_model("DEQUANTIZE", (n,), dtype, (scale, zp), (n,), "float32", None)
        compare(model, [values], max_ulp=0)
