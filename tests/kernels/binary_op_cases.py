"""Shared case generation for the element-wise binary kernels (ADD, SUB, MUL) against the wheel.

Each case is a one-operator model built with ``ModelBuilder``: random broadcastable shapes up to
6-D, a random fused activation and random (scale, zero point) per tensor. The same inputs go
through the live TFLM wheel and through tinyarena's kernels; results must be identical.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.builder import ModelBuilder

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


@dataclass(frozen=True)
class Case:
    op: str
    dtype: str
    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    activation: str
    quant: tuple[tuple[float, int], ...]  # (scale, zp) for input1, input2, output


def random_shapes(rng: np.random.Generator, max_rank: int = 6) -> tuple[tuple[int, ...], ...]:
    """Two shapes that broadcast (numpy rules), with ranks 0..max_rank, small dims."""
    rank = int(rng.integers(1, max_rank + 1))
    full = [int(d) for d in rng.integers(1, 5, size=rank)]
    s1 = [d if rng.random() < 0.7 else 1 for d in full]
    s2 = [d if rng.random() < 0.7 else 1 for d in full]
    s1 = s1[int(rng.integers(0, rank)):] if rng.random() < 0.3 else s1
    s2 = s2[int(rng.integers(0, rank)):] if rng.random() < 0.3 else s2
    return tuple(s1), tuple(s2)


def random_quant(op: str, rng: np.random.Generator, dtype: str) -> tuple[tuple[float, int], ...]:
    """Scales that keep outputs mostly in range (so results are not all saturated)."""
    s1 = 10 ** rng.uniform(-3, -1)
    s2 = s1 * 10 ** rng.uniform(-1, 1)
    half_range = 32768 if dtype == "int16" else 128
    so = (s1 * s2 * half_range if op == "MUL" else max(s1, s2)) * 10 ** rng.uniform(-0.3, 0.6)
    zps = [0, 0, 0] if dtype == "int16" else [int(z) for z in rng.integers(-128, 128, size=3)]
    return tuple((float(np.float32(s)), z) for s, z in zip((s1, s2, so), zps))


def random_case(op: str, dtype: str, rng: np.random.Generator) -> Case:
    s1, s2 = random_shapes(rng)
    act = ACTIVATIONS[int(rng.integers(0, len(ACTIVATIONS)))] if dtype != "int32" or op != "ADD" \
        else "NONE"
    quant = random_quant(op, rng, dtype) if dtype in ("int8", "int16") else ()
    return Case(op, dtype, s1, s2, act, quant)


def build(case: Case) -> bytes:
    b = ModelBuilder()
    out_shape = tuple(np.broadcast_shapes(case.shape1, case.shape2))
    q = case.quant or ((None, None),) * 3
    x1 = b.add_input("x1", case.shape1, case.dtype, scale=q[0][0], zero_point=q[0][1])
    x2 = b.add_input("x2", case.shape2, case.dtype, scale=q[1][0], zero_point=q[1][1])
    y = b.add_tensor("y", out_shape, case.dtype, scale=q[2][0], zero_point=q[2][1])
    b.add_operator(case.op, [x1, x2], [y], fused_activation_function=case.activation)
    b.mark_output(y)
    return b.build()


def random_input(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "float32":
        return rng.normal(0, 4, size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    lo, hi = (-1000, 1000) if dtype == "int32" else (info.min, info.max)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def check(case: Case, rng: np.random.Generator, repeats: int = 3) -> None:
    """Same outputs as the wheel on ``repeats`` random inputs (float32 too: one rounding each)."""
    model = build(case)
    for _ in range(repeats):
        inputs = [random_input(case.shape1, case.dtype, rng),
                  random_input(case.shape2, case.dtype, rng)]
        (want,) = tflm_run(model, inputs)
        (got,) = run_kernels(model, inputs)
        assert got.dtype == want.dtype and got.shape == want.shape, case
        assert np.array_equal(got, want), (case, got, want)
