"""ADD_N against the live TFLM wheel: float32 (special values, -W error) and int8 with 2..6
inputs and random quantization, and the arena figures (scratch pointers, int8 OpData)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-45], np.float32)


def model(n: int, shape: tuple[int, ...], dtype: str,
          quant: tuple[tuple[float, int], tuple[float, int]] | None = None) -> bytes:
    b = ModelBuilder()
    qi, qo = quant or ((None, None), (None, None))
    xs = [b.add_input(f"x{i}", shape, dtype, scale=qi[0], zero_point=qi[1]) for i in range(n)]
    y = b.add_tensor("y", shape, dtype, scale=qo[0], zero_point=qo[1])
    b.add_operator("ADD_N", xs, [y])
    b.mark_output(y)
    return b.build()


def check(m: bytes, inputs: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(m, inputs)[0]
    theirs = tflm_run(m, inputs)[0]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8)), \
        (inputs, ours, theirs)


@pytest.mark.parametrize("n", (2, 3, 6))
def test_float_matches_tflm(n: int) -> None:
    rng = np.random.default_rng(n)
    shape = (2, 3, 7)
    m = model(n, shape, "float32")
    check(m, [rng.normal(0, 5, size=shape).astype(np.float32) for _ in range(n)])
    check(m, [rng.choice(SPECIAL, size=shape) for _ in range(n)])


@pytest.mark.parametrize("n", (2, 3, 6))
def test_int8_matches_tflm(n: int) -> None:
    rng = np.random.default_rng(10 + n)
    shape = (4, 9)
    for _ in range(4):
        quant = ((float(np.float32(10 ** rng.uniform(-3, 0))), int(rng.integers(-128, 128))),
                 (float(np.float32(10 ** rng.uniform(-3, 0.5))), int(rng.integers(-128, 128))))
        m = model(n, shape, "int8", quant)
        check(m, [rng.integers(-128, 128, size=shape).astype(np.int8) for _ in range(n)])


@pytest.mark.parametrize("n,dtype", [(2, "float32"), (5, "float32"), (3, "int8")])
def test_allocations_match_tflm(n: int, dtype: str) -> None:
    m = model(n, (3, 5), dtype, ((0.1, 2), (0.2, -1)) if dtype == "int8" else None)
    ours = allocate_model(read_model(m))
    theirs = tflm_allocations(m)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


@pytest.mark.parametrize("dtype", ("float32", "int8"))
def test_large_tensors_match_tflm(dtype: str) -> None:
    """Above one block (4096 elements) ADD_N works block by block."""
    rng = np.random.default_rng(99)
    shape = (3, 50, 41)
    m = model(3, shape, dtype, ((0.05, 4), (0.1, -3)) if dtype == "int8" else None)
    if dtype == "float32":
        xs = [rng.normal(0, 5, size=shape).astype(np.float32) for _ in range(3)]
    else:
        xs = [rng.integers(-128, 128, size=shape).astype(np.int8) for _ in range(3)]
    check(m, xs)
