"""ADD against the live TFLM wheel: float32, int32, int8, int16, broadcasting up to 6-D."""

from __future__ import annotations

import numpy as np
import pytest

from binary_op_cases import check, random_case

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8", "int16"])
def test_add_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng({"float32": 1, "int32": 2, "int8": 3, "int16": 4}[dtype])
    for _ in range(12):
        check(random_case("ADD", dtype, rng), rng)


def test_simple_add_model_matches_tflm(shared_models) -> None:
    """The shared int8 two-input ADD model, end to end through the kernel runner."""
    from kernel_runner import run_kernels
    from tflm_oracle import tflm_run
    from tinyarena.model import read_model

    model = (shared_models / "simple_add_model.tflite").read_bytes()
    sg = read_model(model).subgraphs[0]
    rng = np.random.default_rng(7)
    for _ in range(3):
        inputs = [rng.integers(-128, 128, size=sg.tensors[i].shape).astype(np.int8)
                  for i in sg.inputs]
        want = tflm_run(model, inputs)
        got = run_kernels(model, inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w)
