"""The compiled float32 element-wise, reduction and pooling kernels (``kernels.native``) give
the numpy kernels' bits, NaN payloads, infinities and signed zeros included.

The numpy paths are the reference (tests/kernels checks them against the wheel, specials
included: tests/kernels/test_float_specials.py); here seeded one-op models built with
``tinyarena.builder`` run with ``native=True`` and ``native=False`` on the host and on Cortex-M
targets (newlib's expf with and without an FPU), and the outputs are compared byte for byte,
after checking that the operator under test really bound its compiled loop.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pytest

import tinyarena
from tinyarena.builder import ModelBuilder
from tinyarena.kernels import native
from tinyarena.kernels.native import is_quiet

needs_numba = pytest.mark.skipif(not native.available(), reason="numba (extra 'fast') absent")

TARGETS = ("host-x64", "cortex-m4", "cortex-m0")
ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def _specials(rng: np.random.Generator) -> np.ndarray:
    """float32 values the kernels treat specially: NaNs of both signs with payloads, the
    infinities, both zeros, subnormals, the extremes, and the cut-offs of LOGISTIC/TANH."""
    bits = np.array([0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF812345, 0x7F800000, 0xFF800000,
                     0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF,
                     0xFF7FFFFF], dtype=np.uint32).view(np.float32)
    edges = np.array([16.619047, 16.619048, -9.0, -9.000001, 88.72, -103.9, 22.0, -22.0, 3.0,
                      -3.0, 6.0, 1.0, -1.0, 0.5, 2e-38], dtype=np.float32)
    return np.concatenate([bits, edges, rng.standard_normal(8).astype(np.float32) * 1e-30])


def _feed(shape: Sequence[int], rng: np.random.Generator, scale: float = 8.0) -> np.ndarray:
    """Random float32 values of ``shape`` with specials sprinkled over a third of them."""
    size = int(np.prod(shape, dtype=np.int64))
    x = np.clip(rng.standard_normal(size) * scale, -3e38, 3e38).astype(np.float32)
    specials = _specials(rng)
    where = rng.random(size) < 0.33
    x[where] = rng.choice(specials, int(where.sum()))
    return x.reshape(shape)


def _compiled_steps(ip: tinyarena.Interpreter, name: str) -> bool:
    plan = ip._allocated().graph._plans[0]
    steps = [s for s, op in zip(plan.steps, plan.operators) if op.name == name]
    return bool(steps) and all(is_quiet(s) and hasattr(getattr(s, "func", None), "py_func")
                               for s in steps)


def _both_ways(model: bytes, op_name: str, feeds: list[list[np.ndarray]],
               target: str = "host-x64") -> None:
    """Invoke with ``native=True`` and ``native=False`` on every feed; outputs byte-equal."""
    runs = []
    for on in (True, False):
        ip = tinyarena.Interpreter(model, native=on, target=target)
        ip.allocate_tensors()
        if on:
            assert _compiled_steps(ip, op_name), f"{op_name} did not bind a compiled loop"
        got = []
        for feed in feeds:
            for i, x in enumerate(feed):
                ip.set_input(x, i)
            ip.invoke()
            got += [np.array(ip.get_output(i)) for i in range(ip.outputs_size())]
        runs.append(got)
    for k, (a, b) in enumerate(zip(*runs)):
        assert a.dtype == b.dtype and a.shape == b.shape
        unsigned = np.dtype(f"u{a.dtype.itemsize}")  # bits, NaN payloads and signs included
        same = a.view(unsigned) == b.view(unsigned)
        assert same.all(), (op_name, target, k, a[~same][:8], b[~same][:8])


def _unary_model(op: str, shape: tuple[int, ...], **options: Any) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", shape)
    y = b.add_tensor("y", shape)
    b.add_operator(op, [x], [y], **options)
    b.mark_output(y)
    return b.build()


@needs_numba
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["LOGISTIC", "TANH", "HARD_SWISH", "RELU", "RELU6",
                                "LEAKY_RELU"])
def test_float_unary_native_equals_numpy(op: str, target: str) -> None:
    rng = np.random.default_rng(sum(map(ord, op + target)))
    shape = (2, 3, 37)
    options = {"alpha": float(rng.choice([0.2, -0.5, 1.5]))} if op == "LEAKY_RELU" else {}
    feeds = [[_feed(shape, rng, scale)] for scale in (1.0, 8.0, 60.0)]
    _both_ways(_unary_model(op, shape, **options), op, feeds, target)


# (shape1, shape2, output): same shapes, a scalar either side, inner and outer broadcasts,
# and a pattern that collapses to four alternating axes
BROADCASTS = [((2, 5, 7), (2, 5, 7), (2, 5, 7)), ((1,), (3, 4, 6), (3, 4, 6)),
              ((3, 4, 6), (), (3, 4, 6)), ((2, 3, 8), (8,), (2, 3, 8)),
              ((2, 1, 6), (1, 5, 1), (2, 5, 6)), ((3, 1, 4, 1), (1, 5, 1, 6), (3, 5, 4, 6)),
              ((4, 1), (4, 9), (4, 9))]


def _binary_model(op: str, shape1: tuple[int, ...], shape2: tuple[int, ...],
                  shape_out: tuple[int, ...], **options: Any) -> bytes:
    b = ModelBuilder()
    x1 = b.add_input("x1", shape1)
    x2 = b.add_input("x2", shape2)
    y = b.add_tensor("y", shape_out)
    b.add_operator(op, [x1, x2], [y], **options)
    b.mark_output(y)
    return b.build()


@needs_numba
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM",
                                "SQUARED_DIFFERENCE"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=lambda s: "x".join(map(str, s[2])) + str(
    len(s[0])) + str(len(s[1])))
def test_float_binary_native_equals_numpy(op: str, shapes: tuple[tuple[int, ...], ...]
                                          ) -> None:
    rng = np.random.default_rng(sum(map(ord, op + str(shapes))))
    shape1, shape2, shape_out = shapes
    act = ACTIVATIONS[int(rng.integers(len(ACTIVATIONS)))]
    options = {"fused_activation_function": act} if op in ("ADD", "SUB", "MUL", "DIV") else {}
    model = _binary_model(op, shape1, shape2, shape_out, **options)
    feeds = [[_feed(shape1, rng, s), _feed(shape2, rng, s)] for s in (1.0, 1e20)]
    nans = _specials(rng)[:4]  # NaN pairs of different payloads and signs: whose comes out
    feeds.append([np.where(rng.random(s) < 0.8, rng.choice(nans, s), np.float32(2))
                  .astype(np.float32) for s in (shape1, shape2)])
    _both_ways(model, op, feeds, TARGETS[int(rng.integers(len(TARGETS)))])


@needs_numba
@pytest.mark.parametrize("op", ["MEAN", "SUM"])
@pytest.mark.parametrize("shape, axes, keep", [((2, 5, 3, 7), [1, 2], True),
                                               ((2, 5, 3, 7), [-1], False),
                                               ((4, 6), [0, 1], False),
                                               ((3, 1, 9), [1], True),
                                               ((2, 3, 4), [2, 1, 1], False)])
def test_float_mean_sum_native_equals_numpy(op: str, shape: tuple[int, ...], axes: list[int],
                                            keep: bool) -> None:
    rng = np.random.default_rng(sum(map(ord, op + str(shape) + str(axes))))
    resolved = sorted({a % len(shape) for a in axes})
    kept = [1 if i in resolved else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in resolved]
    b = ModelBuilder()
    x = b.add_input("x", shape)
    axis = b.add_constant("axis", np.array(axes, dtype=np.int32))
    y = b.add_tensor("y", tuple(kept))
    b.add_operator(op, [x, axis], [y], keep_dims=keep)
    b.mark_output(y)
    feeds = [[_feed(shape, rng, s)] for s in (1.0, 1e37)]
    zeros = np.zeros(shape, np.float32)
    zeros.reshape(-1)[::2] = -0.0  # columns of -0.0 only, and of mixed zeros
    feeds.append([np.negative(zeros) if rng.random() < 0.5 else -np.abs(zeros)])
    _both_ways(b.build(), op, feeds, TARGETS[int(rng.integers(len(TARGETS)))])


# (input NHWC, filter h/w, stride h/w, padding): windows clipped by SAME padding, VALID with a
# ragged edge, a whole-map pool (by windows in the numpy path) and overlapping windows
POOLS = [((1, 7, 9, 3), (3, 3), (2, 2), "SAME"), ((2, 8, 5, 4), (2, 3), (2, 1), "VALID"),
         ((1, 25, 5, 6), (25, 5), (1, 1), "VALID"), ((1, 6, 6, 2), (4, 4), (1, 1), "SAME"),
         ((1, 9, 1, 5), (3, 1), (3, 1), "SAME")]


def _pool_out(size: int, k: int, stride: int, padding: str) -> int:
    return (size + stride - 1) // stride if padding == "SAME" else (size - k) // stride + 1


@needs_numba
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: "x".join(map(str, c[0])) + c[3])
def test_float_pool_native_equals_numpy(op: str, case: tuple[Any, ...]) -> None:
    shape, (fh, fw), (sh, sw), padding = case
    rng = np.random.default_rng(sum(map(ord, op + str(case))))
    out_shape = (shape[0], _pool_out(shape[1], fh, sh, padding),
                 _pool_out(shape[2], fw, sw, padding), shape[3])
    act = ACTIVATIONS[int(rng.integers(len(ACTIVATIONS)))]
    b = ModelBuilder()
    x = b.add_input("x", shape)
    y = b.add_tensor("y", out_shape)
    b.add_operator(op, [x], [y], filter_height=fh, filter_width=fw, stride_h=sh, stride_w=sw,
                   padding=padding, fused_activation_function=act)
    b.mark_output(y)
    model = b.build()
    signed_zeros = np.where(rng.random(shape) < 0.5, np.float32(0), np.float32(-0.0))
    feeds = [[_feed(shape, rng, s)] for s in (1.0, 1e38)] + [[signed_zeros]]
    _both_ways(model, op, feeds, TARGETS[int(rng.integers(len(TARGETS)))])


@needs_numba
@pytest.mark.parametrize("op, dtype", [("SQUARED_DIFFERENCE", "int32")])
def test_integer_binary_native_equals_numpy(op: str, dtype: str) -> None:
    """int32 SQUARED_DIFFERENCE (wrapping twice; the extremes overflow) runs the int32 loop
    of ``native.binary``, like the other integer binary ops (tested in
    tests/kernels/test_native_integer.py)."""
    rng = np.random.default_rng(sum(map(ord, op + dtype)))
    info = np.iinfo(dtype)
    for shape1, shape2, shape_out in BROADCASTS[:5]:
        b = ModelBuilder()
        x1 = b.add_input("x1", shape1, dtype)
        x2 = b.add_input("x2", shape2, dtype)
        y = b.add_tensor("y", shape_out, dtype)
        options = {"fused_activation_function": "RELU"} if op in ("SUB", "MUL") else {}
        b.add_operator(op, [x1, x2], [y], **options)
        b.mark_output(y)

        def values(shape: tuple[int, ...]) -> np.ndarray:
            v = rng.integers(int(info.min), int(info.max), size=shape, endpoint=True)
            small = rng.random(size=shape) < 0.5
            return np.where(small, v % 200 - 100, v).astype(dtype)
        _both_ways(b.build(), op, [[values(shape1), values(shape2)] for _ in range(2)])

