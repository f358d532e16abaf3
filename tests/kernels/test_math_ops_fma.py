"""On a target whose build contracts ``total += a * b`` into fused multiply-adds
(``float_fma``: Cortex-M cores with an FPU), the float sums of BATCH_MATMUL, L2_NORMALIZATION
and L2_POOL_2D are fmaf chains. Checked against a scalar loop over the C library's own fmaf
(ctypes; the host's fmaf is exact), in the reference kernels' order; the host-x64 profile keeps
the wheel's unfused sums (checked against the wheel in the ops' own test modules)."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from tinyarena.builder import ModelBuilder
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

TARGET = "cortex-m4+fp"  # TFLM's hard-float M4: float sums are fused multiply-adds


def _fmaf():
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library to take fmaf from")
    fn = ctypes.CDLL(name).fmaf
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_float, ctypes.c_float, ctypes.c_float]
    return lambda a, b, c: np.float32(fn(float(a), float(b), float(c)))


def _run(model: bytes, inputs: list[np.ndarray], target: str) -> np.ndarray:
    ip = Interpreter(read_model(model), target=target)
    ip.allocate_tensors()
    for i, x in enumerate(inputs):
        ip.set_input(i, x)
    ip.invoke()
    return ip.get_output(0)


def _one_op(op: str, inputs: list[tuple[str, tuple[int, ...]]], out_shape: tuple[int, ...],
            **options: object) -> bytes:
    b = ModelBuilder()
    ts = [b.add_input(name, shape, "float32") for name, shape in inputs]
    y = b.add_tensor("y", out_shape, "float32")
    b.add_operator(op, ts, [y], **options)
    b.mark_output(y)
    return b.build()


def test_batch_matmul_sums_are_fmaf_chains() -> None:
    fmaf = _fmaf()
    rng = np.random.default_rng(1)
    a = rng.normal(0, 1, (2, 3, 7)).astype(np.float32)
    b = rng.normal(0, 1, (2, 7, 4)).astype(np.float32)
    got = _run(_one_op("BATCH_MATMUL", [("a", a.shape), ("b", b.shape)], (2, 3, 4)), [a, b],
               TARGET)
    want = np.zeros((2, 3, 4), np.float32)
    for n in range(2):
        for i in range(3):
            for j in range(4):
                total = np.float32(0)
                for k in range(7):
                    total = fmaf(a[n, i, k], b[n, k, j], total)
                want[n, i, j] = total
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    host = _run(_one_op("BATCH_MATMUL", [("a", a.shape), ("b", b.shape)], (2, 3, 4)), [a, b],
                "host-x64")
    assert not np.array_equal(host, got)  # the inputs are chosen so that fusing shows


def test_l2_normalization_sum_is_an_fmaf_chain() -> None:
    fmaf = _fmaf()
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, (5, 9)).astype(np.float32)
    got = _run(_one_op("L2_NORMALIZATION", [("x", x.shape)], x.shape), [x], TARGET)
    want = np.zeros_like(x)
    for r in range(5):
        total = np.float32(0)
        for c in range(9):
            total = fmaf(x[r, c], x[r, c], total)
        norm = max(np.float32(np.sqrt(total)), np.float32(1e-6))
        want[r] = x[r] / norm
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_l2_pool_sum_of_squares_is_an_fmaf_chain() -> None:
    fmaf = _fmaf()
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (1, 4, 4, 2)).astype(np.float32)
    model = _one_op("L2_POOL_2D", [("x", x.shape)], (1, 2, 2, 2), padding="VALID",
                    stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    got = _run(model, [x], TARGET)
    want = np.zeros((1, 2, 2, 2), np.float32)
    for oy in range(2):
        for ox in range(2):
            for ch in range(2):
                total = np.float32(0)
                for fy in range(2):
                    for fx in range(2):
                        v = x[0, 2 * oy + fy, 2 * ox + fx, ch]
                        total = fmaf(v, v, total)
                want[0, oy, ox, ch] = np.sqrt(total / np.float32(4))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("target", ("host-x64", "cortex-m3", "cortex-m4", "cortex-m4+fp",
                                    "cortex-m7+fp"))
def test_exp_uses_the_targets_c_library(target: str) -> None:
    """EXP calls std::exp(float): glibc's expf on the wheel's host, newlib's (fdlibm without an
    FPU) on Cortex-M builds; the profile's ``libm`` picks which (fdlibm's differs from glibc's
    on these inputs, so the wiring is visible for cortex-m3)."""
    from tinyarena.arena.targets import get_target
    from tinyarena.kernels._libm import expf_for

    x = np.linspace(-87, 88, 4001).astype(np.float32)
    got = _run(_one_op("EXP", [("x", x.shape)], x.shape), [x], target)
    want = expf_for(get_target(target).libm)(x)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    if get_target(target).libm == "newlib-fdlibm":
        assert not np.array_equal(got, expf_for("glibc")(x))
