"""TRANSPOSE against the live TFLM wheel: random permutations of 1-D to 5-D tensors."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import assert_same_as_tflm
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_transpose_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(41)
    for _ in range(8):
        rank = int(rng.integers(1, 6))
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
        perm = tuple(int(p) for p in rng.permutation(rank))
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype)
        p = b.add_constant("perm", np.array(perm, np.int32))
        y = b.add_tensor("y", tuple(shape[i] for i in perm), dtype)
        b.add_operator("TRANSPOSE", [x, p], [y])
        b.mark_output(y)
        data = (rng.normal(size=shape).astype(np.float32) if dtype == "float32"
                else rng.integers(-100, 100, size=shape).astype(dtype))
        assert_same_as_tflm(b.build(), [data])
