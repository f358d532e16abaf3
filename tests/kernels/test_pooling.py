"""AVERAGE_POOL_2D and MAX_POOL_2D against the live TFLM wheel: float32, int8, int16 over
random filter sizes, strides, SAME/VALID padding and fused activations."""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.kernels._conv_common import compute_out_size
from unary_cases import compare, random_input, single_op_model

pytestmark = pytest.mark.oracle
ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
FLOAT_ULP = 0  # sums run in the same order in float32: identical


def _case(rng: np.random.Generator, op: str, dtype: str) -> tuple[bytes, tuple[int, ...]]:
    n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(1, 12)), int(rng.integers(1, 12)),
                  int(rng.integers(1, 6)))
    fh, fw = int(rng.integers(1, min(h, 5) + 1)), int(rng.integers(1, min(w, 5) + 1))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding = "SAME" if rng.random() < 0.5 else "VALID"
    oh = compute_out_size(padding, h, fh, sh)
    ow = compute_out_size(padding, w, fw, sw)
    assert oh is not None and ow is not None
    act = ACTIVATIONS[int(rng.integers(0, len(ACTIVATIONS)))]
    q = None
    if dtype == "int8":
        q = (float(10 ** rng.uniform(-2, 0)), int(rng.integers(-128, 128)))
    elif dtype == "int16":
        q = (float(10 ** rng.uniform(-4, -2)), 0)
    model = single_op_model(op, (n, h, w, c), dtype, q, (n, oh, ow, c), dtype, q,
                            padding=padding, stride_w=sw, stride_h=sh, filter_width=fw,
                            filter_height=fh, fused_activation_function=act)
    return model, (n, h, w, c)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_pooling_matches_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng(90 + len(op) * 3 + len(dtype))
    for _ in range(12):
        model, shape = _case(rng, op, dtype)
        for _ in range(2):
            compare(model, [random_input(rng, shape, dtype, 4.0)], max_ulp=FLOAT_ULP)


def test_average_pool_rounds_half_away_from_zero() -> None:
    """By hand: 2x1 windows of int8 sums +-1 and +-3 over 2 elements -> +-1 and +-2."""
    model = single_op_model("AVERAGE_POOL_2D", (1, 2, 4, 1), "int8", (1.0, 0), (1, 1, 4, 1),
                            "int8", (1.0, 0), padding="VALID", stride_w=1, stride_h=1,
                            filter_width=1, filter_height=2)
    x = np.array([[0, 0, 1, 1], [1, -1, 2, -4]], np.int8).reshape(1, 2, 4, 1)
    ours, _ = compare(model, [x])
    assert ours[0].reshape(-1).tolist() == [1, -1, 2, -2]
