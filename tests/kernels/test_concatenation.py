"""CONCATENATION against the live TFLM wheel: 2-4 inputs, every axis (negative too), ranks 1-6."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import assert_same_as_tflm
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_concatenation_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(61)
    for _ in range(6):
        rank = int(rng.integers(1, 7))
        base = [int(d) for d in rng.integers(1, 4, size=rank)]
        axis = int(rng.integers(-rank, rank))
        n = int(rng.integers(2, 5))
        shapes = []
        for _ in range(n):
            s = list(base)
            s[axis] = int(rng.integers(1, 4))
            shapes.append(tuple(s))
        out = list(base)
        out[axis] = sum(s[axis] for s in shapes)
        q = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else \
            ({"scale": 0.01, "zero_point": 0} if dtype == "int16" else {})
        b = ModelBuilder()
        xs = [b.add_input(f"x{i}", s, dtype, **q) for i, s in enumerate(shapes)]
        y = b.add_tensor("y", tuple(out), dtype, **q)
        b.add_operator("CONCATENATION", xs, [y], axis=axis)
        b.mark_output(y)
        data = [rng.normal(size=s).astype(np.float32) if dtype == "float32"
                else rng.integers(-100, 100, size=s).astype(dtype) for s in shapes]
        assert_same_as_tflm(b.build(), data)


def test_int8_concatenation_needs_equal_quantization() -> None:
    """TFLM rejects int8 inputs whose scale differs from the output's; so does tinyarena."""
    from kernel_runner import run_kernels

    b = ModelBuilder()
    x0 = b.add_input("x0", (2, 2), "int8", scale=0.05, zero_point=0)
    x1 = b.add_input("x1", (2, 2), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (4, 2), "int8", scale=0.05, zero_point=0)
    b.add_operator("CONCATENATION", [x0, x1], [y], axis=0)
    b.mark_output(y)
    with pytest.raises(KernelError, match="same scale"):
        run_kernels(b.build(), [np.zeros((2, 2), np.int8)] * 2)
