"""SUB against the live TFLM wheel: float32, int32, int8, int16, broadcasting up to 6-D."""

from __future__ import annotations

import numpy as np
import pytest

from binary_op_cases import check, random_case

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8", "int16"])
def test_sub_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng({"float32": 1, "int32": 2, "int8": 3, "int16": 4}[dtype])
    for _ in range(12):
        check(random_case("SUB", dtype, rng), rng)
