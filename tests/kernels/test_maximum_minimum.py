"""MAXIMUM and MINIMUM against the live TFLM wheel: float32 (with NaN), int8, int16, int32,
int64, broadcasting; and the arena (TFLM allocates nothing for them) against the recording
allocator, through ``tinyarena size`` as well."""

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

DTYPES = ("float32", "int8", "int16", "int32", "int64")


def build(op: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...],
          out_dtype: str | None = None) -> bytes:
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": 3} if dtype in ("int8", "int16") else {}
    if dtype == "int16":
        q["zero_point"] = 0
    x1 = b.add_input("x1", s1, dtype, **q)
    x2 = b.add_input("x2", s2, dtype, **q)
    y = b.add_tensor("y", tuple(np.broadcast_shapes(s1, s2)), out_dtype or dtype, **q)
    b.add_operator(op, [x1, x2], [y])
    b.mark_output(y)
    return b.build()


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return (rng.integers(-6, 7, size=shape) * 0.75).astype(np.float32)
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -(1 << 40)), min(info.max, 1 << 40))
    if rng.random() < 0.5:  # few distinct values: ties are common
        lo, hi = -3, 3
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    ours, theirs = run_kernels(model, inputs)[0], tflm_run(model, inputs)[0]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype == np.float32:  # bit patterns: NaN and the sign of zero included
        assert np.array_equal(ours.view(np.int32), theirs.view(np.int32)), (inputs, ours, theirs)
    else:
        assert np.array_equal(ours, theirs), (inputs, ours, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_matches_tflm_with_broadcasting(op: str, dtype: str) -> None:
    rng = np.random.default_rng(sum(op.encode()) + sum(dtype.encode()))
    for _ in range(5):
        s1, s2 = random_shapes(rng)
        model = build(op, dtype, s1, s2)
        for _ in range(2):
            check(model, [values(rng, s1, dtype), values(rng, s2, dtype)])


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_float_nan_and_signed_zero_match_tflm(op: str) -> None:
    """``a > b ? a : b``: a NaN in either place picks the second input; +-0 ties too."""
    x1 = np.array([np.nan, 1.0, 0.0, -0.0, np.nan, -np.inf], np.float32)
    x2 = np.array([1.0, np.nan, -0.0, 0.0, np.nan, np.inf], np.float32)
    check(build(op, "float32", (6,), (6,)), [x1, x2])


def test_unsupported_type_is_refused() -> None:
    model = build("MAXIMUM", "bool", (4,), (4,))
    assert tflm_probe(model, [[np.zeros(4, bool)] * 2]).refused
    with pytest.raises(KernelError, match="does not support"):
        run_kernels(model, [np.zeros(4, bool)] * 2)


def _two_op_model() -> bytes:
    """MAXIMUM then MINIMUM (a clamp between two tensors) with broadcasting, int8."""
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": 3}
    x = b.add_input("x", (1, 6, 6, 8), "int8", **q)
    lo = b.add_constant("lo", np.full((8,), -20, np.int8), **q)
    hi = b.add_input("hi", (1, 1, 1, 8), "int8", **q)
    t = b.add_tensor("t", (1, 6, 6, 8), "int8", **q)
    y = b.add_tensor("y", (1, 6, 6, 8), "int8", **q)
    b.add_operator("MAXIMUM", [x, lo], [t])
    b.add_operator("MINIMUM", [t, hi], [y])
    b.mark_output(y)
    return b.build()


def test_allocation_matches_tflm() -> None:
    for model in (_two_op_model(), build("MINIMUM", "float32", (3, 5), (5,))):
        ours = allocate_model(read_model(model))
        theirs = tflm_allocations(model)
        got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
        assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
        assert got == theirs.categories


def test_tinyarena_size_cli_matches_tflm(tmp_path, capsys) -> None:
    from tinyarena.cli import main

    model = _two_op_model()
    path = tmp_path / "maxmin.tflite"
    path.write_bytes(model)
    assert main(["size", str(path), "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    theirs = tflm_allocations(model)
    assert (report["head"], report["tail"], report["total"]) == (theirs.head, theirs.tail,
                                                                  theirs.total)


def test_clamp_model_runs_like_tflm() -> None:
    rng = np.random.default_rng(9)
    model = _two_op_model()
    for _ in range(3):
        check(model, [values(rng, (1, 6, 6, 8), "int8"), values(rng, (1, 1, 1, 8), "int8")])
