"""tinyarena's own kernels under rule (c) plans: the interpreter runs the optimized model (its
tensors are numpy views into one arena at the pinned offsets, overlapping like in TFLM) and
must give what it gives on the original model.

A kernel is overlap-safe when it reads everything it needs from its input before writing its
output (a padded copy, an im2col or accumulator workspace), or writes in the reference order.
These cases once caught MAX_POOL_2D accumulating straight into its output and PAD filling its
whole output before copying the input in.
"""

from __future__ import annotations

import numpy as np
import pytest

from optimize_models import window_model
from tinyarena import Interpreter
from tinyarena.optimize import optimize_model

CASES = [
    ("CONV_2D", 3, 1, "SAME", 1, "int8", 1),
    ("CONV_2D", 1, 2, "VALID", 1, "float32", 1),
    ("DEPTHWISE_CONV_2D", 3, 2, "SAME", 1, "int8", 2),
    ("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "float32", 1),
    ("AVERAGE_POOL_2D", 3, 1, "SAME", 1, "int8", 1),
    ("CONV_2D", 1, 1, "VALID", 1, "int8", 1),
    ("MAX_POOL_2D", 3, 2, "SAME", 1, "int8", 1),
    ("MAX_POOL_2D", 2, 2, "VALID", 1, "float32", 1),
    ("MAX_POOL_2D", 2, 2, "VALID", 1, "int8", 1),
]


def _outputs(model: bytes, x: np.ndarray) -> np.ndarray:
    ip = Interpreter(model)
    ip.allocate_tensors()
    ip.set_input(x, 0)
    ip.invoke()
    return ip.get_output(0)


def _same_outputs(data: bytes, dtype: str) -> None:
    result = optimize_model(data, overlap="safe", time_budget_s=0.2, kernel_set="reference")
    assert 1 in [p.op for p in result.partial]
    rng = np.random.default_rng(0)
    for _ in range(2):
        if dtype == "int8":
            x = rng.integers(-128, 128, size=(1, 12, 12, 1), dtype=np.int8)
        else:
            x = rng.normal(size=(1, 12, 12, 1)).astype(np.float32)
        assert np.array_equal(_outputs(data, x), _outputs(result.model, x))


@pytest.mark.parametrize("op,k,stride,padding,dilation,dtype,multiplier", CASES)
def test_window_kernels_under_partial_overlap(op: str, k: int, stride: int, padding: str,
                                              dilation: int, dtype: str,
                                              multiplier: int) -> None:
    _same_outputs(window_model(op, k, stride, padding, dilation, dtype, multiplier), dtype)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_pad_kernel_under_partial_overlap(dtype: str) -> None:
    _same_outputs(window_model("PAD", dtype=dtype), dtype)
