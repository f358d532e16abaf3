"""DIV, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, LOGICAL_AND and LOGICAL_OR against the live
TFLM wheel: random broadcastable shapes up to 6-D, fused activations, random quantization,
every dtype each kernel accepts, NaN/inf/zero operands (numpy warnings as errors), and the
arena figures (head, tail, recording categories)."""

from __future__ import annotations

import warnings

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

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 3e38, -3e38, 1e-45, 7.5,
                    -7.5, 0.1], np.float32)


def build(op: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...],
          quant: tuple[tuple[float, int], ...] = (), **options: object) -> bytes:
    b = ModelBuilder()
    q = quant or ((None, None),) * 3
    x1 = b.add_input("x1", s1, dtype, scale=q[0][0], zero_point=q[0][1])
    x2 = b.add_input("x2", s2, dtype, scale=q[1][0], zero_point=q[1][1])
    y = b.add_tensor("y", tuple(np.broadcast_shapes(s1, s2)), dtype, scale=q[2][0],
                     zero_point=q[2][1])
    b.add_operator(op, [x1, x2], [y], **options)
    b.mark_output(y)
    return b.build()


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
           nonzero: bool = False) -> np.ndarray:
    if dtype == "float32":
        v = (rng.normal(0, 4, size=shape) * rng.choice([1, 1e-3, 1e3], size=shape))
        v = v.astype(np.float32)
        if nonzero:
            v[v == 0] = 1.5
        return v
    if dtype == "bool":
        return rng.random(size=shape) < 0.5
    info = np.iinfo(dtype)
    lo, hi = (-100000, 100000) if dtype == "int32" else (info.min, info.max)
    v = rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    if nonzero:
        v[v == 0] = 3
    return v


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, inputs)[0]
    theirs = tflm_run(model, inputs)[0]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype == np.float32:
        assert np.array_equal(ours.view(np.int32), theirs.view(np.int32)), (inputs, ours, theirs)
    else:
        assert np.array_equal(ours, theirs), (inputs, ours, theirs)


def quant_for(rng: np.random.Generator, dtype: str) -> tuple[tuple[float, int], ...]:
    scales = [float(np.float32(10 ** rng.uniform(-3, 0))) for _ in range(3)]
    if dtype == "int16":
        return tuple((s, 0) for s in scales)
    return tuple((s, int(z)) for s, z in zip(scales, rng.integers(-128, 128, size=3)))


@pytest.mark.parametrize("dtype", ("float32", "int32", "int8"))
def test_div_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(len(dtype) + 10)
    for _ in range(6):
        s1, s2 = random_shapes(rng)
        act = ACTIVATIONS[int(rng.integers(0, 4))]
        quant = quant_for(rng, dtype) if dtype == "int8" else ()
        model = build("DIV", dtype, s1, s2, quant, fused_activation_function=act)
        x1 = values(rng, s1, dtype)
        x2 = values(rng, s2, dtype, nonzero=True)
        if dtype == "int8":  # keep the divisor off its zero point (checked separately)
            x2[x2 == quant[1][1]] = np.int8(quant[1][1] + (1 if quant[1][1] < 127 else -1))
        check(model, [x1, x2])


def test_div_float_special_values_match_tflm() -> None:
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    for act in ("NONE", "RELU"):
        model = build("DIV", "float32", a.shape, b.shape, fused_activation_function=act)
        check(model, [a.astype(np.float32), b.astype(np.float32)])


def test_div_int8_zero_divisor_matches_tflm() -> None:
    """TFLM does not check an int8 divisor at its zero point; GetReciprocal(0) runs as is."""
    quant = ((0.05, 3), (0.02, -7), (0.1, 1))
    a, b = np.meshgrid(np.arange(-128, 128, 7, dtype=np.int8), np.array([-7], np.int8))
    check(build("DIV", "int8", a.shape, b.shape, quant), [a, b])


def test_div_int32_by_zero_raises() -> None:
    model = build("DIV", "int32", (3,), (3,))
    with pytest.raises(KernelError, match="by zero"):
        run_kernels(model, [np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32)])


@pytest.mark.parametrize("dtype", ("float32", "int32", "int8", "int16"))
def test_squared_difference_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(len(dtype) + 20)
    for _ in range(6):
        s1, s2 = random_shapes(rng)
        quant = quant_for(rng, dtype) if dtype in ("int8", "int16") else ()
        model = build("SQUARED_DIFFERENCE", dtype, s1, s2, quant)
        check(model, [values(rng, s1, dtype), values(rng, s2, dtype)])


def test_squared_difference_float_special_values_match_tflm() -> None:
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    check(build("SQUARED_DIFFERENCE", "float32", a.shape, b.shape),
          [a.astype(np.float32), b.astype(np.float32)])


@pytest.mark.parametrize("op", ("FLOOR_DIV", "FLOOR_MOD"))
def test_floor_div_mod_match_tflm(op: str) -> None:
    rng = np.random.default_rng(len(op))
    for _ in range(6):
        s1, s2 = random_shapes(rng)
        model = build(op, "float32", s1, s2)
        check(model, [values(rng, s1, "float32"), values(rng, s2, "float32", nonzero=True)])
    nonzero = SPECIAL[SPECIAL != 0]
    a, b = np.meshgrid(SPECIAL, nonzero)
    check(build(op, "float32", a.shape, b.shape), [a.astype(np.float32), b.astype(np.float32)])


def test_floor_div_zero_divisor_refused_like_tflm() -> None:
    model = build("FLOOR_DIV", "float32", (2,), (2,))
    inputs = [np.ones(2, np.float32), np.array([1.0, 0.0], np.float32)]
    assert tflm_probe(model, [inputs]).refused
    with pytest.raises(KernelError, match="division by 0"):
        run_kernels(model, inputs)


def test_floor_mod_zero_divisor_gives_nan_like_tflm() -> None:
    a, b = np.meshgrid(SPECIAL, np.array([0.0, -0.0], np.float32))
    check(build("FLOOR_MOD", "float32", a.shape, b.shape),
          [a.astype(np.float32), b.astype(np.float32)])


@pytest.mark.parametrize("dtype", ("int8", "int16", "float32"))
@pytest.mark.parametrize("op", ("LOGICAL_AND", "LOGICAL_OR"))
def test_logical_on_other_types_matches_tflm(op: str, dtype: str) -> None:
    """TFLM reads any tensor as bools: bitwise AND/OR of the first element-count bytes."""
    rng = np.random.default_rng(len(op) + len(dtype))
    for _ in range(4):
        s1, s2 = random_shapes(rng)
        model = build(op, dtype, s1, s2)
        inputs = [values(rng, s1, dtype), values(rng, s2, dtype)]
        ours, theirs = run_kernels(model, inputs)[0], tflm_run(model, inputs)[0]
        written = ours.size  # bytes: the rest of the output is whatever the arena held
        assert np.array_equal(ours.reshape(-1).view(np.uint8)[:written],
                              theirs.reshape(-1).view(np.uint8)[:written])


@pytest.mark.parametrize("op", ("LOGICAL_AND", "LOGICAL_OR"))
def test_logical_matches_tflm(op: str) -> None:
    rng = np.random.default_rng(len(op))
    for _ in range(6):
        s1, s2 = random_shapes(rng)
        check(build(op, "bool", s1, s2), [values(rng, s1, "bool"), values(rng, s2, "bool")])


ALLOCATION_CASES = [
    ("DIV", "float32", (2, 3, 4), (4,), ()),
    ("DIV", "int8", (1, 5, 5, 3), (1, 1, 1, 3), ((0.05, 3), (0.02, -7), (0.1, 1))),
    ("SQUARED_DIFFERENCE", "int8", (4, 6), (4, 6), ((0.05, 3), (0.02, -7), (0.1, 1))),
    ("SQUARED_DIFFERENCE", "float32", (4, 6), (6,), ()),
    ("FLOOR_DIV", "float32", (3, 7), (3, 7), ()),
    ("FLOOR_MOD", "float32", (3, 7), (7,), ()),
    ("LOGICAL_AND", "bool", (3, 7), (7,), ()),
    ("LOGICAL_OR", "bool", (2, 3), (2, 3), ()),
]


@pytest.mark.parametrize("op,dtype,s1,s2,quant", ALLOCATION_CASES)
def test_allocations_match_tflm(op: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...],
                                quant: tuple[tuple[float, int], ...]) -> None:
    model = build(op, dtype, s1, s2, quant)
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model, inputs=[np.ones(s1, dtype), np.ones(s2, dtype)])
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


@pytest.mark.parametrize("op,dtype", [("DIV", "float32"), ("DIV", "int8"), ("DIV", "int32"),
                                      ("SQUARED_DIFFERENCE", "int16"),
                                      ("SQUARED_DIFFERENCE", "int8"), ("FLOOR_MOD", "float32"),
                                      ("LOGICAL_OR", "bool"), ("LOGICAL_AND", "int16")])
def test_large_broadcasts_take_the_blocked_path_like_tflm(op: str, dtype: str) -> None:
    """Above one block (4096 elements) the kernels evaluate block by block."""
    rng = np.random.default_rng(len(op) + len(dtype))
    s1, s2 = (3, 50, 40), (50, 1)
    quant = quant_for(rng, dtype) if dtype in ("int8", "int16") else ()
    model = build(op, dtype, s1, s2, quant)
    x2 = values(rng, s2, dtype, nonzero=op == "DIV")
    if dtype == "int8" and op == "DIV":
        x2[x2 == quant[1][1]] = np.int8(quant[1][1] + (1 if quant[1][1] < 127 else -1))
    check(model, [values(rng, s1, dtype), x2])


def test_div_int8_multiplier_from_double_quotient() -> None:
    """Scales 0.047071375 / (0.047071375 * 10): float32 division gives 0.1f, which rounds
    60/4 * 0.1 = 1.5 up (-81); the wheel's multiplier is the double quotient's and gives -82."""
    from op_sweep import check_op

    b = ModelBuilder()
    x = b.add_input("x", (1, 2), "int8", scale=0.047071375, zero_point=55)
    z = b.add_input("z", (1, 2), "int8", scale=0.047071375, zero_point=55)
    y = b.add_tensor("y", (1, 2), "int8", scale=10.0, zero_point=-83)
    b.add_operator("DIV", [x, z], [y])
    b.mark_output(y)
    want = check_op(b.build(), [np.array([[115, 115]], np.int8), np.array([[59, 51]], np.int8)])
    assert want[0][0, 0] == -82
