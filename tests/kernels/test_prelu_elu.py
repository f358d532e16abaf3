"""PRELU and ELU against the live TFLM wheel: float32 (with NaN, infinities, signed zeros),
int8 and int16 PRELU with random quantization and broadcast alphas, int8 ELU tables, and the
arena figures (head, tail, recording categories)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3e38, -3e38, -0.5,
                    -20.0, -88.0, -104.0, 1.5], np.float32)


def same(ours: np.ndarray, theirs: np.ndarray) -> bool:
    return ours.dtype == theirs.dtype and ours.shape == theirs.shape and \
        np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8))


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, inputs)[0]
    theirs = tflm_run(model, inputs)[0]
    assert same(ours, theirs), (inputs, ours, theirs)


def prelu_model(shape: tuple[int, ...], alpha_shape: tuple[int, ...], dtype: str,
                quant: tuple[tuple[float, int], ...] = (), alpha: np.ndarray | None = None,
                alpha_dtype: str | None = None) -> bytes:
    b = ModelBuilder()
    q = quant or ((None, None),) * 3
    x = b.add_input("x", shape, dtype, scale=q[0][0], zero_point=q[0][1])
    adtype = alpha_dtype or ("int8" if dtype == "int16" else dtype)
    if alpha is None:
        a = b.add_input("alpha", alpha_shape, adtype, scale=q[1][0], zero_point=q[1][1])
    else:
        a = b.add_constant("alpha", alpha, scale=q[1][0], zero_point=q[1][1])
    y = b.add_tensor("y", shape, dtype, scale=q[2][0], zero_point=q[2][1])
    b.add_operator("PRELU", [x, a], [y])
    b.mark_output(y)
    return b.build()


def elu_model(shape: tuple[int, ...], dtype: str,
              quant: tuple[tuple[float, int], ...] = ()) -> bytes:
    b = ModelBuilder()
    q = quant or ((None, None),) * 2
    x = b.add_input("x", shape, dtype, scale=q[0][0], zero_point=q[0][1])
    y = b.add_tensor("y", shape, dtype, scale=q[1][0], zero_point=q[1][1])
    b.add_operator("ELU", [x], [y])
    b.mark_output(y)
    return b.build()


ALPHA_SHAPES = [((1, 4, 4, 3), (3,)), ((1, 4, 4, 3), (1, 1, 3)), ((2, 5), (2, 5)),
                ((3, 2, 4), (2, 1)), ((6,), (1,))]


@pytest.mark.parametrize("shape,alpha_shape", ALPHA_SHAPES)
def test_prelu_float_matches_tflm(shape: tuple[int, ...], alpha_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape) * 10 + len(alpha_shape))
    model = prelu_model(shape, alpha_shape, "float32")
    x = rng.normal(0, 3, size=shape).astype(np.float32)
    x.reshape(-1)[:min(x.size, SPECIAL.size)] = SPECIAL[:x.size]
    alpha = rng.normal(0, 1, size=alpha_shape).astype(np.float32)
    check(model, [x, alpha])


@pytest.mark.parametrize("dtype", ("int8", "int16"))
def test_prelu_quantized_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(len(dtype))
    info = np.iinfo(dtype)
    for shape, alpha_shape in ALPHA_SHAPES:
        scales = [float(np.float32(10 ** rng.uniform(-3, -0.5))) for _ in range(3)]
        zps = [0, int(rng.integers(-20, 20)), 0] if dtype == "int16" else \
            [int(z) for z in rng.integers(-100, 100, size=3)]
        quant = tuple(zip(scales, zps))
        alpha = rng.integers(-128, 128, size=alpha_shape).astype(np.int8)
        model = prelu_model(shape, alpha_shape, dtype, quant, alpha=alpha)
        x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        check(model, [x])


def test_prelu_float_rank5_refused() -> None:
    model = prelu_model((1, 1, 2, 2, 2), (2,), "float32")
    with pytest.raises(KernelError, match="at most 4"):
        run_kernels(model, [np.ones((1, 1, 2, 2, 2), np.float32), np.ones(2, np.float32)])


def test_elu_float_matches_tflm() -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate([SPECIAL, rng.normal(0, 4, 500).astype(np.float32),
                        rng.uniform(-100, 5, 500).astype(np.float32),
                        rng.uniform(-1e-3, 1e-3, 200).astype(np.float32)])
    check(elu_model((x.size,), "float32"), [x])


def test_elu_int8_tables_match_tflm() -> None:
    rng = np.random.default_rng(6)
    x = np.arange(-128, 128, dtype=np.int8)
    for _ in range(12):
        quant = ((float(np.float32(10 ** rng.uniform(-3, 0))), int(rng.integers(-128, 128))),
                 (float(np.float32(10 ** rng.uniform(-3, 0))), int(rng.integers(-128, 128))))
        check(elu_model((256,), "int8", quant), [x])


@pytest.mark.parametrize("model", [
    prelu_model((1, 4, 4, 3), (3,), "float32"),
    prelu_model((1, 4, 4, 3), (3,), "int8", ((0.1, 1), (0.01, 0), (0.1, -2)),
                alpha=np.ones(3, np.int8)),
    elu_model((3, 7), "float32"),
    elu_model((3, 7), "int8", ((0.1, 1), (0.05, -3))),
], ids=["prelu_f32", "prelu_i8", "elu_f32", "elu_i8"])
def test_allocations_match_tflm(model: bytes) -> None:
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


@pytest.mark.parametrize("dtype", ("float32", "int8", "int16"))
def test_prelu_large_tensor_matches_tflm(dtype: str) -> None:
    """Above one block (4096 elements) PRELU evaluates block by block."""
    rng = np.random.default_rng(40)
    shape, alpha_shape = (1, 40, 40, 8), (8,)
    if dtype == "float32":
        model = prelu_model(shape, alpha_shape, dtype)
        check(model, [rng.normal(0, 2, shape).astype(np.float32),
                      rng.normal(0, 1, alpha_shape).astype(np.float32)])
        return
    zp_in, zp_out = (0, 0) if dtype == "int16" else (3, -5)
    quant = ((0.05, zp_in), (0.01, 2), (0.04, zp_out))
    model = prelu_model(shape, alpha_shape, dtype, quant,
                        alpha=rng.integers(-128, 128, alpha_shape).astype(np.int8))
    info = np.iinfo(dtype)
    check(model, [rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)])


def test_int8_prelu_left_shift_of_32_or_more_as_x86() -> None:
    """Scales 10 -> 1e-7 give a multiplier above 2**31 (left shift >= 32): C's ``1 << shift``
    is undefined there and the wheel (x86-64) masks the count to 5 bits."""
    from op_sweep import check_op

    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=10.0, zero_point=78)
    a = b.add_constant("alpha", np.array([90, -114, -8, 31], np.int8), scale=300.0, zero_point=58)
    y = b.add_tensor("y", (1, 4), "int8", scale=1e-7, zero_point=-58)
    b.add_operator("PRELU", [x, a], [y])
    b.mark_output(y)
    check_op(b.build(), [np.array([[123, 86, 66, 95]], np.int8)])
