"""L2_NORMALIZATION (float32, int8) and L2_POOL_2D (float32) against the live TFLM wheel:
shapes up to 4-D, random quantization, windows/strides/padding/activations, special float
values under -W error, and the arena figures (head, tail, recording categories)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_probe, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38, -3e38, 1e20, 1e-20],
                   np.float32)


def check(model: bytes, inputs: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, inputs)[0]
    theirs = tflm_run(model, inputs)[0]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours.reshape(-1).view(np.uint8), theirs.reshape(-1).view(np.uint8)), \
        (inputs, ours, theirs)


def l2norm_model(shape: tuple[int, ...], dtype: str,
                 quant: tuple[tuple[float, int], ...] = (), activation: str = "NONE") -> bytes:
    b = ModelBuilder()
    q = quant or ((None, None),) * 2
    x = b.add_input("x", shape, dtype, scale=q[0][0], zero_point=q[0][1])
    y = b.add_tensor("y", shape, dtype, scale=q[1][0], zero_point=q[1][1])
    b.add_operator("L2_NORMALIZATION", [x], [y], fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


def l2pool_model(shape: tuple[int, int, int, int], fh: int, fw: int, sh: int, sw: int,
                 padding: str, activation: str = "NONE") -> bytes:
    _, out_h, out_w = compute_padding_height_width(sh, sw, 1, 1, shape[1], shape[2], fh, fw,
                                                   padding)
    b = ModelBuilder()
    x = b.add_input("x", shape, "float32")
    y = b.add_tensor("y", (shape[0], out_h, out_w, shape[3]), "float32")
    b.add_operator("L2_POOL_2D", [x], [y], padding=padding, stride_w=sw, stride_h=sh,
                   filter_width=fw, filter_height=fh, fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


SHAPES = [(7,), (3, 5), (2, 3, 4), (1, 2, 3, 16), (2, 1), (4, 1, 1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_l2norm_float_matches_tflm(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape) * 3 + shape[-1])
    model = l2norm_model(shape, "float32")
    for scale in (1.0, 1e-4, 1e19):
        check(model, [(rng.normal(0, 1, size=shape) * scale).astype(np.float32)])
    x = rng.normal(0, 1, size=shape).astype(np.float32)
    x.reshape(-1)[::3] = np.resize(SPECIAL, x.reshape(-1)[::3].size)
    check(model, [x])
    check(model, [np.zeros(shape, np.float32)])


@pytest.mark.parametrize("shape", SHAPES)
def test_l2norm_int8_matches_tflm(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape) * 5 + shape[-1])
    for _ in range(3):
        quant = ((float(np.float32(10 ** rng.uniform(-3, 0))), int(rng.integers(-128, 128))),
                 (1 / 128, 0))
        model = l2norm_model(shape, "int8", quant)
        check(model, [rng.integers(-128, 128, size=shape).astype(np.int8)])
        check(model, [np.full(shape, quant[0][1], np.int8)])  # all at the zero point


def test_l2norm_refusals_match_tflm() -> None:
    for model in (l2norm_model((1, 1, 2, 2, 3), "float32"),
                  l2norm_model((2, 3), "float32", activation="RELU")):
        x = np.ones(read_model(model).subgraphs[0].tensors[0].shape, np.float32)
        assert tflm_probe(model, [[x]]).refused
        with pytest.raises(KernelError):
            allocate_model(read_model(model))


POOLS = [((1, 6, 6, 2), 2, 2, 2, 2, "VALID", "NONE"), ((1, 5, 7, 3), 3, 3, 1, 1, "SAME", "RELU"),
         ((2, 5, 5, 1), 3, 2, 2, 1, "SAME", "RELU6"), ((1, 4, 9, 2), 1, 4, 1, 3, "VALID",
                                                      "RELU_N1_TO_1"),
         ((1, 7, 7, 1), 7, 7, 1, 1, "VALID", "NONE")]


@pytest.mark.parametrize("shape,fh,fw,sh,sw,padding,activation", POOLS)
def test_l2pool_matches_tflm(shape: tuple[int, int, int, int], fh: int, fw: int, sh: int,
                             sw: int, padding: str, activation: str) -> None:
    rng = np.random.default_rng(sum(shape) + fh + fw)
    model = l2pool_model(shape, fh, fw, sh, sw, padding, activation)
    for scale in (1.0, 1e-20, 1e19):
        check(model, [(rng.normal(0, 1, size=shape) * scale).astype(np.float32)])
    x = rng.normal(0, 1, size=shape).astype(np.float32)
    x.reshape(-1)[::4] = np.resize(SPECIAL, x.reshape(-1)[::4].size)
    check(model, [x])


@pytest.mark.parametrize("model", [
    l2norm_model((2, 3, 8), "float32"),
    l2norm_model((2, 3, 8), "int8", ((0.02, 3), (1 / 128, 0))),
    l2pool_model((1, 6, 6, 2), 2, 2, 2, 2, "VALID"),
    l2pool_model((1, 5, 7, 3), 3, 3, 1, 1, "SAME", "RELU"),
], ids=["l2norm_f32", "l2norm_i8", "l2pool_valid", "l2pool_same"])
def test_allocations_match_tflm(model: bytes) -> None:
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories
