"""BATCH_MATMUL against the live TFLM wheel: float32 (bit patterns, special values, -W
error), int8 and int16 with random quantization; ranks 2..5 with batch broadcasting and every
adj_x / adj_y combination; and the arena figures, whose persistent transposed copies depend
on the adjoint flags."""

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

# (lhs shape, rhs shape) before the adjoints, as (batch..., rows, depth) x (batch..., depth, cols)
CASES = [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 2)), ((2, 1, 3, 4), (1, 3, 4, 2)),
         ((1, 2, 1, 2, 3), (2, 1, 2, 3, 1)), ((5, 3, 8), (8, 2)), ((3, 8), (4, 8, 3))]


def swap(shape: tuple[int, ...], flag: bool) -> tuple[int, ...]:
    return shape[:-2] + (shape[-1], shape[-2]) if flag else shape


def build(ls: tuple[int, ...], rs: tuple[int, ...], adj_x: bool, adj_y: bool, dtype: str,
          quant: tuple[tuple[float, int], ...] = (), rhs_const: np.ndarray | None = None) -> bytes:
    rank = max(len(ls), len(rs))
    el, er = (1,) * (rank - len(ls)) + ls, (1,) * (rank - len(rs)) + rs
    batch = tuple(max(a, b) for a, b in zip(el[:-2], er[:-2]))
    out_shape = batch + (ls[-2], rs[-1])
    b = ModelBuilder()
    q = quant or ((None, None),) * 3
    x = b.add_input("lhs", swap(ls, adj_x), dtype, scale=q[0][0], zero_point=q[0][1])
    if rhs_const is None:
        y = b.add_input("rhs", swap(rs, adj_y), dtype, scale=q[1][0], zero_point=q[1][1])
    else:
        y = b.add_constant("rhs", rhs_const, scale=q[1][0], zero_point=q[1][1])
    o = b.add_tensor("out", out_shape, dtype, scale=q[2][0], zero_point=q[2][1])
    b.add_operator("BATCH_MATMUL", [x, y], [o], adj_x=adj_x, adj_y=adj_y)
    b.mark_output(o)
    return b.build()


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return (rng.normal(0, 3, size=shape) * rng.choice([1e-3, 1, 1e3], size=shape)) \
            .astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, inputs)[0]
    theirs = tflm_run(model, inputs)[0]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8)), \
        (inputs, ours, theirs)


@pytest.mark.parametrize("dtype", ("float32", "int8", "int16"))
@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True),
                                         (True, True)])
def test_matches_tflm(dtype: str, adj_x: bool, adj_y: bool) -> None:
    rng = np.random.default_rng(len(dtype) * 4 + 2 * adj_x + adj_y)
    for ls, rs in CASES:
        quant: tuple[tuple[float, int], ...] = ()
        if dtype != "float32":
            scales = [float(np.float32(10 ** rng.uniform(-3, -1))) for _ in range(2)]
            so = scales[0] * scales[1] * ls[-1] * (40 if dtype == "int8" else 4000)
            zps = [0, 0, 0] if dtype == "int16" else [int(z) for z in rng.integers(-50, 50, 3)]
            quant = tuple(zip(scales + [float(np.float32(so))], zps))
        model = build(ls, rs, adj_x, adj_y, dtype, quant)
        check(model, [values(rng, swap(ls, adj_x), dtype), values(rng, swap(rs, adj_y), dtype)])


def test_float_special_values_match_tflm() -> None:
    rng = np.random.default_rng(7)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-45], np.float32)
    model = build((4, 6), (6, 3), False, False, "float32")
    for _ in range(3):
        check(model, [rng.choice(special, size=(4, 6)), rng.choice(special, size=(6, 3))])


@pytest.mark.parametrize("adj_x,adj_y,dtype,const", [
    (False, False, "float32", False), (True, True, "float32", False),
    (True, False, "int8", True), (False, True, "int16", False)])
def test_allocations_match_tflm(adj_x: bool, adj_y: bool, dtype: str, const: bool) -> None:
    ls, rs = (2, 3, 4), (2, 4, 5)
    quant = ((0.1, 0), (0.05, 0), (0.2, 0)) if dtype != "float32" else ()
    rhs = np.ones(swap(rs, adj_y), dtype) if const else None
    model = build(ls, rs, adj_x, adj_y, dtype, quant, rhs_const=rhs)
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


def test_int16_shift_above_15_as_x86() -> None:
    """Scales 1000 * 3 -> 1e-7: the 64-bit MultiplyByQuantizedMultiplier gets a shift above 15,
    so its shift counts go negative (undefined in C); the wheel (x86-64) masks them to 6 bits."""
    from op_sweep import check_op

    b = ModelBuilder()
    x = b.add_input("x", (1, 1), "int16", scale=1000.0, zero_point=0)
    w = b.add_input("w", (1, 1, 3, 1), "int16", scale=3.0, zero_point=0)
    y = b.add_tensor("y", (1, 1, 1, 3), "int16", scale=1e-7, zero_point=0)
    b.add_operator("BATCH_MATMUL", [x, w], [y], adj_x=True, adj_y=True)
    b.mark_output(y)
    check_op(b.build(), [np.array([[13474]], np.int16),
                         np.array([-31659, 21249, -16296], np.int16).reshape(1, 1, 3, 1)])
