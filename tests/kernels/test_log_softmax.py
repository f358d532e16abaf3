"""LOG_SOFTMAX against the live TFLM wheel: int8 (random input scales, rows of 1..300,
bit-exact), float32 (special values under -W error; a stated bound where glibc's logf is
not ported), and the arena figures (int8 allocates LogSoftmaxOpData)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_probe, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle


def model(shape: tuple[int, ...], dtype: str, in_q: tuple[float, int] | None = None,
          out_q: tuple[float, int] = (16 / 256, 127)) -> bytes:
    b = ModelBuilder()
    qi = in_q or (None, None)
    qo = out_q if dtype == "int8" else (None, None)
    x = b.add_input("x", shape, dtype, scale=qi[0], zero_point=qi[1])
    y = b.add_tensor("y", shape, dtype, scale=qo[0], zero_point=qo[1])
    b.add_operator("LOG_SOFTMAX", [x], [y])
    b.mark_output(y)
    return b.build()


def run_both(m: bytes, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(m, [x])[0]
    return ours, tflm_run(m, [x])[0]


@pytest.mark.parametrize("shape", [(1, 10), (4, 3), (2, 2, 1), (3, 300), (5, 2)])
def test_int8_matches_tflm(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(shape[-1])
    for _ in range(4):
        scale = float(np.float32(10 ** rng.uniform(-2.5, 0)))
        m = model(shape, "int8", (scale, int(rng.integers(-128, 128))))
        x = rng.integers(-128, 128, size=shape).astype(np.int8)
        ours, theirs = run_both(m, x)
        assert np.array_equal(ours, theirs), (scale, x, ours, theirs)


def test_float_matches_tflm_within_logf_bound() -> None:
    """Bit-exact except where our logf (float64 log, rounded) and glibc's differ: there the
    row's log_sum is 1 ulp apart, so each output differs by at most 1 ulp of log_sum."""
    rng = np.random.default_rng(3)
    x = (rng.normal(0, 4, size=(400, 9))).astype(np.float32)
    x[::7, 2] = np.nan
    x[1::11, 3] = np.inf
    x[2::13, 4] = -np.inf
    x[3::17] = 0.0
    x[4::19, :] = 3e38
    ours, theirs = run_both(model(x.shape, "float32"), x)
    exact = ours.view(np.uint32) == theirs.view(np.uint32)  # NaN sign bits included
    with np.errstate(all="ignore"):  # the bound itself meets inf - inf
        log_sum = x - np.fmax.reduce(x, axis=1, keepdims=True) - ours
        close = np.isfinite(ours) & (np.abs(ours - theirs) <= np.spacing(np.abs(log_sum)))
    assert (exact | close).all()
    print(f"LOG_SOFTMAX float32: {exact.mean():.4f} of outputs bit-exact")
    assert exact.mean() > 0.95  # the bound is the exception, not the rule


def test_int8_needs_tflm_output_quantization() -> None:
    m = model((2, 4), "int8", (0.1, 0), out_q=(0.1, 127))
    assert tflm_probe(m, [[np.zeros((2, 4), np.int8)]]).refused
    with pytest.raises(KernelError, match="16/256"):
        allocate_model(read_model(m))


@pytest.mark.parametrize("dtype", ("float32", "int8"))
def test_allocations_match_tflm(dtype: str) -> None:
    m = model((3, 7), dtype, (0.05, 3) if dtype == "int8" else None)
    ours = allocate_model(read_model(m))
    theirs = tflm_allocations(m)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories
