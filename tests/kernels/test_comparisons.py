"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL against the live TFLM wheel.

Random broadcastable shapes (numpy rules, up to 6-D), every type each op's Eval accepts
(float32, int32, int64, int8 with per-input requantisation, bool for EQUAL/NOT_EQUAL, int16 for
GREATER); results must be identical. Also: invoke-time failures for types TFLM's Eval refuses,
and the arena accounting (OpData and temp tensors) against the recording allocator.
"""

from __future__ import annotations

import numpy as np
import pytest

from binary_op_cases import random_shapes
from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_probe, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

OPS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")


def build(op: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...],
          q1: tuple[float, int] | None = None, q2: tuple[float, int] | None = None) -> bytes:
    b = ModelBuilder()
    k1 = {} if q1 is None else {"scale": q1[0], "zero_point": q1[1]}
    k2 = {} if q2 is None else {"scale": q2[0], "zero_point": q2[1]}
    x1 = b.add_input("x1", s1, dtype, **k1)
    x2 = b.add_input("x2", s2, dtype, **k2)
    y = b.add_tensor("y", tuple(np.broadcast_shapes(s1, s2)), "bool")
    b.add_operator(op, [x1, x2], [y])
    b.mark_output(y)
    return b.build()


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Few distinct values, so that equal pairs (the boundary of every comparison) are common."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "float32":
        return (rng.integers(-4, 5, size=shape) * 0.5).astype(np.float32)
    if dtype in ("int8", "int16"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    return rng.integers(-5, 6, size=shape).astype(dtype)


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    ours, theirs = run_kernels(model, inputs)[0], tflm_run(model, inputs)[0]
    assert ours.dtype == theirs.dtype == np.bool_
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs), (inputs, ours, theirs)


# bool only for EQUAL and NOT_EQUAL (the others refuse it: see the failure test)
UNSCALED = [(op, dt) for op in OPS for dt in ("float32", "int32", "int64", "bool")
            if dt != "bool" or op in ("EQUAL", "NOT_EQUAL")]


@pytest.mark.parametrize("op,dtype", UNSCALED)
def test_unscaled_types_match_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng(sum(op.encode()) + len(dtype))
    for _ in range(4):
        s1, s2 = random_shapes(rng)
        model = build(op, dtype, s1, s2)
        for _ in range(2):
            check(model, [values(rng, s1, dtype), values(rng, s2, dtype)])


def test_float_nan_and_signed_zero_match_tflm() -> None:
    x1 = np.array([np.nan, 0.0, -0.0, np.inf, 1.0, np.nan], np.float32)
    x2 = np.array([np.nan, -0.0, 0.0, np.inf, np.nan, 1.0], np.float32)
    for op in OPS:
        check(build(op, "float32", (6,), (6,)), [x1, x2])


@pytest.mark.parametrize("op", OPS)
def test_int8_requantised_inputs_match_tflm(op: str) -> None:
    """Different scales and zero points on the two inputs: each is rescaled by its own scale
    as a Q31 multiplier after a left shift of 8 before comparing."""
    rng = np.random.default_rng(100 + sum(op.encode()))
    for k in range(6):
        s1, s2 = random_shapes(rng)
        scale1 = float(np.float32(10 ** rng.uniform(-3, -0.05)))
        # half of the cases: related scales (many pairs land on or next to equality)
        scale2 = (scale1 * float(rng.choice([0.5, 1.0, 2.0, 0.25])) if k % 2 == 0
                  else float(np.float32(10 ** rng.uniform(-3, -0.05))))
        scale2 = min(scale2, 0.9)
        q1 = (scale1, int(rng.integers(-128, 128)))
        q2 = (float(np.float32(scale2)), int(rng.integers(-128, 128)))
        model = build(op, "int8", s1, s2, q1, q2)
        for _ in range(3):
            check(model, [values(rng, s1, "int8"), values(rng, s2, "int8")])


def test_int8_all_pairs_match_tflm() -> None:
    """Every (x1, x2) int8 pair through broadcasting (256 x 1 against 256)."""
    x1 = np.arange(-128, 128, dtype=np.int8).reshape(256, 1)
    x2 = np.arange(-128, 128, dtype=np.int8)
    for op in ("EQUAL", "GREATER", "LESS_EQUAL"):
        model = build(op, "int8", (256, 1), (256,), (0.0123, 7), (0.0246, -3))
        check(model, [x1, x2])


def test_int16_greater_matches_tflm() -> None:
    """GREATER is the one op with an int16 case; its parameters are never set (int8 only)."""
    rng = np.random.default_rng(5)
    model = build("GREATER", "int16", (3, 4), (4,), (0.01, 0), (0.02, 0))
    for _ in range(3):
        check(model, [values(rng, (3, 4), "int16"), values(rng, (4,), "int16")])


@pytest.mark.parametrize("op,dtype", [("EQUAL", "int16"), ("LESS", "int16"),
                                      ("GREATER", "bool"), ("LESS_EQUAL", "bool")])
def test_types_tflm_refuses_fail_at_invoke(op: str, dtype: str) -> None:
    q = (0.01, 0) if dtype == "int16" else None
    model = build(op, dtype, (4,), (4,), q, q)
    inputs = [values(np.random.default_rng(0), (4,), dtype) for _ in range(2)]
    assert tflm_probe(model, [inputs]).refused
    allocate_model(read_model(model))  # AllocateTensors succeeds in TFLM and here
    with pytest.raises(KernelError, match="does not support"):
        run_kernels(model, inputs)


def test_int8_scale_of_one_or_more_is_refused() -> None:
    model = build("LESS", "int8", (4,), (4,), (1.5, 0), (0.1, 0))
    with pytest.raises(KernelError, match="must lie in"):
        run_kernels(model, [np.zeros(4, np.int8)] * 2)


@pytest.mark.parametrize("op,dtype", [("EQUAL", "float32"), ("LESS", "int8"),
                                      ("GREATER", "int32"), ("NOT_EQUAL", "bool")])
def test_allocation_matches_tflm(op: str, dtype: str) -> None:
    q = (0.05, 3) if dtype == "int8" else None
    model = build(op, dtype, (2, 3, 4), (3, 1), q, q)
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail) == (theirs.head, theirs.tail), theirs.text
    assert got == theirs.categories
