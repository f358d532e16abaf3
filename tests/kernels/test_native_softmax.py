"""Compiled SOFTMAX (``kernels.native.softmax``) bit for bit against the numpy kernel on seeded
random one-op models (float32 with NaN and infinities, int8 -> int8/int16 including the
two-value rows and many rows, int16 -> int16), on targets whose expf differs, and a few
against the live wheel."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from native_compare import native_matches_numpy  # noqa: E402
from unary_cases import random_input, single_op_model  # noqa: E402


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.integers(1, 4))
    return tuple(int(d) for d in rng.integers(1, 6, size=rank - 1)) + (int(rng.integers(1, 40)),)


def test_native_softmax_float_matches_numpy() -> None:
    rng = np.random.default_rng(61)
    for _ in range(4):
        shape = _shape(rng)
        beta = float(rng.choice([1.0, float(rng.uniform(0.1, 3))]))
        model = single_op_model("SOFTMAX", shape, "float32", None, shape, "float32", None,
                                beta=beta)
        base = random_input(rng, shape, "float32", 20.0)
        feeds = [[base], [(base * 8).astype(np.float32)]]
        for special in (np.nan, np.inf, -np.inf):
            mask = rng.uniform(size=shape) < 0.2
            feeds.append([np.where(mask, np.float32(special), base).astype(np.float32)])
        for target in ("host-x64", "cortex-m0", "cortex-m4"):
            native_matches_numpy(model, "SOFTMAX", target, inputs=feeds)


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_native_softmax_int8_matches_numpy(out_dtype: str) -> None:
    rng = np.random.default_rng(62 if out_dtype == "int8" else 63)
    out_q = (1 / 256, -128) if out_dtype == "int8" else (1 / 65536, -32768)
    shapes = [(20, 2), (5, 5, 21), _shape(rng), _shape(rng)]  # pair table, > 16 rows
    for shape in shapes:
        in_q = (float(10 ** rng.uniform(-2.5, 0)), int(rng.integers(-128, 128)))
        model = single_op_model("SOFTMAX", shape, "int8", in_q, shape, out_dtype, out_q,
                                beta=float(rng.choice([1.0, float(rng.uniform(0.2, 2.0))])))
        feeds = [[random_input(rng, shape, "int8")] for _ in range(2)]
        native_matches_numpy(model, "SOFTMAX", inputs=feeds)


def test_native_softmax_int16_matches_numpy() -> None:
    rng = np.random.default_rng(64)
    for shape in [(3, 30), _shape(rng), _shape(rng)]:
        in_q = (float(10 ** rng.uniform(-4, -2)), 0)
        model = single_op_model("SOFTMAX", shape, "int16", in_q, shape, "int16",
                                (1 / 32768, 0), beta=float(rng.uniform(0.2, 2.0)))
        feeds = [[random_input(rng, shape, "int16")] for _ in range(2)]
        native_matches_numpy(model, "SOFTMAX", inputs=feeds)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_native_softmax_matches_tflm(dtype: str) -> None:
    import tinyarena
    from tflm_oracle import tflm_invokes

    rng = np.random.default_rng(65)
    shape = (3, 17)
    if dtype == "float32":
        model = single_op_model("SOFTMAX", shape, dtype, None, shape, dtype, None, beta=0.7)
    elif dtype == "int8":
        model = single_op_model("SOFTMAX", shape, dtype, (0.05, 3), shape, dtype,
                                (1 / 256, -128), beta=1.0)
    else:
        model = single_op_model("SOFTMAX", shape, dtype, (0.0005, 0), shape, dtype,
                                (1 / 32768, 0), beta=1.0)
    feeds = [[random_input(rng, shape, dtype, 10.0) if dtype == "float32"
              else random_input(rng, shape, dtype)] for _ in range(2)]
    want = tflm_invokes(model, feeds)
    ip = tinyarena.Interpreter(model, native=True)
    ip.allocate_tensors()
    for feed, w in zip(feeds, want):
        ip.input(0)[...] = feed[0]
        ip.invoke()
        assert np.array_equal(np.asarray(ip.output(0)).view(np.uint8), w[0].view(np.uint8))
