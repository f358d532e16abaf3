"""Compiled integer kernels (and resizes) bit for bit against the numpy kernels, on seeded
random one-op models, on the three targets:

* int16 ADD/SUB/MUL and int32 ADD/SUB/MUL (``native.binary``): broadcast shapes, fused
  activations, extreme quantization parameters, wrapping at the ends of int32;
* int16 LOGISTIC/TANH (``native.sigmoid_tanh``) on every int16 input;
* RESIZE_BILINEAR (int8, float32 with NaN/inf/-0/subnormals) and RESIZE_NEAREST_NEIGHBOR
  (int8/int16/float32) under each align_corners / half_pixel_centers option (``native.resize``);
* float32 -> int8/int16 QUANTIZE, integer DIV (incl. the trap on a zero divisor), integer
  MAXIMUM/MINIMUM, CAST between every supported type pair;
* CONCATENATION's inner-axis copy against np.concatenate, and a few models against the wheel.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pytest

pytest.importorskip("numba")

from native_compare import native_matches_numpy  # noqa: E402
from unary_cases import random_input  # noqa: E402

from tinyarena.builder import ModelBuilder  # noqa: E402

TARGETS = ("host-x64", "cortex-m4", "cortex-m0")
Q = tuple[float, int]


def binary_model(op: str, shape1: Sequence[int], shape2: Sequence[int], out_shape: Sequence[int],
                 dtype: str, q1: Q, q2: Q, qo: Q, **options: object) -> bytes:
    """Two graph inputs -> op -> graph output."""
    b = ModelBuilder()
    x1 = b.add_input("x1", tuple(shape1), dtype, scale=q1[0], zero_point=q1[1])
    x2 = b.add_input("x2", tuple(shape2), dtype, scale=q2[0], zero_point=q2[1])
    y = b.add_tensor("y", tuple(out_shape), dtype, scale=qo[0], zero_point=qo[1])
    b.add_operator(op, [x1, x2], [y], **options)
    b.mark_output(y)
    return b.build()


def broadcast_pair(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...],
                                                       tuple[int, ...]]:
    """Two shapes that broadcast (some axes 1 on one side, ranks possibly different)."""
    rank = int(rng.integers(1, 5))
    full = tuple(int(d) for d in rng.integers(1, 6, size=rank - 1)) + (int(rng.integers(3, 9)),)
    s1 = tuple(d if rng.uniform() < 0.6 else 1 for d in full)
    s2 = tuple(d if rng.uniform() < 0.6 else 1 for d in full)
    s2 = s2[int(rng.integers(0, rank)):]  # a lower-rank second input
    out = tuple(int(d) for d in np.broadcast_shapes(s1, s2))
    return s1, s2, out


def small(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """Values near zero, where outputs do not saturate at ordinary scales."""
    return rng.integers(-400, 400, size=tuple(shape)).astype(np.int16)


ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")

# (scale1, scale2, scale_out): ordinary, inputs far apart, output near the finest ADD allows
# (2 * max input scale / 2**15), output much coarser
SCALES = [(1 / 1024, 1 / 2048, 1 / 1024), (1e-4, 0.5, 0.01), (2.0, 3e-5, 1.3e-4),
          (1 / 4096, 1 / 4096, 10.0)]


@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_native_int16_add_sub_matches_numpy(op: str) -> None:
    rng = np.random.default_rng(160 if op == "ADD" else 161)
    for k, (s1, s2, so) in enumerate(SCALES):
        shape1, shape2, out = broadcast_pair(rng) if k else ((2, 3, 4), (2, 3, 4), (2, 3, 4))
        zps = [int(rng.choice([0, -32768, 32767, int(rng.integers(-300, 300))])) if k > 1
               else int(rng.integers(-300, 300)) for _ in range(3)]
        act = ACTIVATIONS[k % len(ACTIVATIONS)]
        model = binary_model(op, shape1, shape2, out, "int16", (s1, zps[0]), (s2, zps[1]),
                             (so, zps[2]), fused_activation_function=act)
        feeds = [[random_input(rng, shape1, "int16"), random_input(rng, shape2, "int16")],
                 [small(rng, shape1), small(rng, shape2)]]
        for target in TARGETS:
            native_matches_numpy(model, op, target, inputs=feeds)


def test_native_int16_mul_matches_numpy() -> None:
    rng = np.random.default_rng(162)
    for k, (s1, s2, so) in enumerate(SCALES + [(0.5, 0.5, 1e-6)]):  # left-shifting multiplier
        shape1, shape2, out = broadcast_pair(rng) if k else ((7,), (7,), (7,))
        act = ACTIVATIONS[k % len(ACTIVATIONS)]
        model = binary_model("MUL", shape1, shape2, out, "int16", (s1, 0), (s2, 0), (so, 0),
                             fused_activation_function=act)
        feeds = [[random_input(rng, shape1, "int16"), random_input(rng, shape2, "int16")],
                 [small(rng, shape1), small(rng, shape2)]]
        extremes = [np.full(shape1, v, np.int16) for v in (-32768, 32767)]
        feeds += [[e, np.full(shape2, -32768, np.int16)] for e in extremes]
        for target in TARGETS:
            native_matches_numpy(model, "MUL", target, inputs=feeds)


ALL_INT16 = np.arange(-32768, 32768, dtype=np.int64).astype(np.int16)


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_native_int16_logistic_tanh_every_input(op: str) -> None:
    """Every int16 input value, at power-of-two input scales (TFLM's shift-only cases: 2**-12
    for both, 2**-11 for TANH), ordinary scales and scales so small or large that the input
    rescaling shifts far or the table saturates."""
    from unary_cases import single_op_model

    scales = [2.0 ** -12, 2.0 ** -11, 1 / 3000, 3.1e-7, 0.02, 2.0 ** -4]
    for scale in scales:
        model = single_op_model(op, ALL_INT16.shape, "int16", (scale, 0), ALL_INT16.shape,
                                "int16", (2.0 ** -15, 0))
        target = TARGETS[scales.index(scale) % len(TARGETS)]
        native_matches_numpy(model, op, target, inputs=[[ALL_INT16]])


RESIZE_OPTIONS = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel)


def _resize_case(rng: np.random.Generator, op: str, dtype: str, k: int) -> None:
    from unary_cases import single_op_model

    n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 7)),
                  int(rng.integers(1, 6)))
    oh, ow = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    align, half = RESIZE_OPTIONS[k % len(RESIZE_OPTIONS)]
    q = None if dtype == "float32" else (0.05, 3)
    model = single_op_model(op, (n, h, w, c), dtype, q, (n, oh, ow, c), dtype, q,
                            extra_inputs=[np.array([oh, ow], np.int32)],
                            align_corners=align, half_pixel_centers=half)
    base = random_input(rng, (n, h, w, c), dtype)
    feeds = [[base]]
    if dtype == "float32":
        scaled = (base * np.float32(1e30)).astype(np.float32)  # overflow to inf, inf * 0 = NaN
        special = np.where(rng.uniform(size=base.shape) < 0.2, np.float32(np.nan), base)
        tiny = (base * np.float32(1e-38)).astype(np.float32)  # subnormal products
        negzero = np.where(base < 0, np.float32(-0.0), base).astype(np.float32)
        feeds += [[scaled], [special.astype(np.float32)], [tiny], [negzero]]
    target = TARGETS[k % len(TARGETS)]
    native_matches_numpy(model, op, target, inputs=feeds)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_native_resize_bilinear_matches_numpy(dtype: str) -> None:
    rng = np.random.default_rng(170 if dtype == "int8" else 171)
    for k in range(9):
        _resize_case(rng, "RESIZE_BILINEAR", dtype, k)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_native_resize_nearest_matches_numpy(dtype: str) -> None:
    rng = np.random.default_rng(172 + ["int8", "int16", "float32"].index(dtype))
    for k in range(6):
        _resize_case(rng, "RESIZE_NEAREST_NEIGHBOR", dtype, k)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_concatenation_inner_axis_is_quiet_and_exact(dtype: str) -> None:
    """CONCATENATION along an inner axis (many small slabs, as a two-scale image head makes)
    runs a quiet step (compiled with numba, strided numpy copies without) whose output is
    numpy's own concatenate of the inputs."""
    rng = np.random.default_rng(180)
    for channels in ((3, 1, 0, 5), (4, 8, 12)):  # slabs of odd sizes; a common 8-byte word
        _check_concat(rng, dtype, [(1, 9, 8, c) for c in channels])


def _check_concat(rng: np.random.Generator, dtype: str, shapes: list[tuple[int, ...]]) -> None:
    import tinyarena
    from native_compare import compiled_ops

    b = ModelBuilder()
    q = {} if dtype == "float32" else {"scale": 0.1, "zero_point": 0}
    xs = [b.add_input(f"x{i}", s, dtype, **q) for i, s in enumerate(shapes)]
    y = b.add_tensor("y", (1, 9, 8, sum(s[-1] for s in shapes)), dtype, **q)
    b.add_operator("CONCATENATION", xs, [y], axis=-1)
    b.mark_output(y)
    model = b.build()
    for native in (True, False):
        ip = tinyarena.Interpreter(model, native=native)
        ip.allocate_tensors()
        assert compiled_ops(ip)["CONCATENATION"]
        feeds = [random_input(rng, s, dtype) for s in shapes]
        for i, x in enumerate(feeds):
            ip.input(i)[...] = x
        ip.invoke()
        assert np.array_equal(ip.output(0), np.concatenate(feeds, axis=-1))


def _wheel_cases() -> list[tuple[bytes, list[np.ndarray]]]:
    from unary_cases import single_op_model

    rng = np.random.default_rng(190)
    cases = []
    add = binary_model("ADD", (2, 3, 5), (3, 1), (2, 3, 5), "int16", (1 / 1024, 0),
                       (1e-4, 0), (1 / 512, 0), fused_activation_function="RELU")
    cases.append((add, [small(rng, (2, 3, 5)), random_input(rng, (3, 1), "int16")]))
    mul = binary_model("MUL", (4, 6), (6,), (4, 6), "int16", (1 / 256, 0), (1 / 128, 0),
                       (1 / 64, 0), fused_activation_function="NONE")
    cases.append((mul, [random_input(rng, (4, 6), "int16"), random_input(rng, (6,), "int16")]))
    for op, scale in (("LOGISTIC", 1 / 3000), ("TANH", 2.0 ** -11)):
        model = single_op_model(op, ALL_INT16.shape, "int16", (scale, 0), ALL_INT16.shape,
                                "int16", (2.0 ** -15, 0))
        cases.append((model, [ALL_INT16]))
    for op, dtype, (align, half) in (("RESIZE_BILINEAR", "float32", (False, True)),
                                     ("RESIZE_BILINEAR", "int8", (True, False)),
                                     ("RESIZE_NEAREST_NEIGHBOR", "int16", (False, True))):
        q = None if dtype == "float32" else (0.05, 3)
        model = single_op_model(op, (1, 3, 4, 2), dtype, q, (1, 7, 5, 2), dtype, q,
                                extra_inputs=[np.array([7, 5], np.int32)],
                                align_corners=align, half_pixel_centers=half)
        cases.append((model, [random_input(rng, (1, 3, 4, 2), dtype)]))
    for dtype, q in (("int8", (0.05, -3)), ("int16", (1e-3, 0))):
        model = single_op_model("QUANTIZE", (50,), "float32", None, (50,), dtype, q)
        x = np.concatenate([np.arange(-12, 13, dtype=np.float32) * np.float32(q[0] / 2),
                            random_input(rng, (25,), "float32", 40.0)]).astype(np.float32)
        cases.append((model, [x]))
    return cases


@pytest.mark.oracle
def test_native_int16_and_resize_match_tflm() -> None:
    import tinyarena
    from tflm_oracle import tflm_run

    for model, feed in _wheel_cases():
        want = tflm_run(model, feed)
        ip = tinyarena.Interpreter(model, native=True)
        ip.allocate_tensors()
        for i, x in enumerate(feed):
            ip.input(i)[...] = x
        ip.invoke()
        got = np.asarray(ip.output(0))
        assert np.array_equal(got.view(np.uint8), want[0].view(np.uint8))


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_native_int32_binary_matches_numpy(op: str) -> None:
    """int32 (unquantized) ADD/SUB/MUL: wrapping arithmetic at the ends of int32, broadcast,
    and the activation clamp SUB and MUL apply (ADD ignores it, as EvalAdd does)."""
    rng = np.random.default_rng(200 + ["ADD", "SUB", "MUL"].index(op))
    for k, act in enumerate(("NONE", "RELU", "RELU6")):
        shape1, shape2, out = broadcast_pair(rng)
        b = ModelBuilder()
        x1 = b.add_input("x1", shape1, "int32")
        x2 = b.add_input("x2", shape2, "int32")
        y = b.add_tensor("y", out, "int32")
        b.add_operator(op, [x1, x2], [y], fused_activation_function=act)
        b.mark_output(y)
        model = b.build()
        feeds = [[random_input(rng, shape1, "int32"), random_input(rng, shape2, "int32")],
                 [rng.integers(-9, 9, shape1).astype(np.int32),
                  rng.integers(-9, 9, shape2).astype(np.int32)]]
        native_matches_numpy(model, op, TARGETS[k], inputs=feeds)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_native_quantize_float_matches_numpy(dtype: str) -> None:
    """float32 -> int8/int16 QUANTIZE: ties at .5 (both signs), -0.0, subnormals, NaN,
    infinities and values past int32 after scaling (C's conversion gives INT32_MIN), at tiny,
    ordinary and huge scales and extreme zero points; small tensors (the numpy whole-tensor
    plan) and large ones (its block path)."""
    from unary_cases import single_op_model

    rng = np.random.default_rng(210 if dtype == "int8" else 211)
    lo, hi = (-128, 127) if dtype == "int8" else (-32768, 32767)
    specials = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -0.0, 1e-45, -1e-45, np.nan, -np.nan,
                         np.inf, -np.inf, 3e9, -3e9, 2147483520.0, -2147483648.0, 1e38],
                        np.float32)
    for k, (scale, zp) in enumerate([(1.0, 0), (0.05, lo), (1e-6, hi), (300.0, 7)]):
        n = int(rng.choice([40, 70000])) if k else 40
        model = single_op_model("QUANTIZE", (n,), "float32", None, (n,), dtype, (scale, zp))
        x = (rng.standard_normal(n) * scale * (hi - lo) / 4).astype(np.float32)
        with np.errstate(over="ignore"):  # 1e38 * 300 is inf
            x[:specials.size] = specials * np.float32(scale)
        ties = ((np.arange(n) - n // 2).astype(np.float32) + np.float32(0.5)) * np.float32(scale)
        native_matches_numpy(model, "QUANTIZE", TARGETS[k % 3], inputs=[[x], [ties]])


def _two_input_model(op: str, shape1: tuple[int, ...], shape2: tuple[int, ...],
                     out: tuple[int, ...], dtype: str, q: Q | None, **options: object) -> bytes:
    b = ModelBuilder()
    kw = {} if q is None else {"scale": q[0], "zero_point": q[1]}
    x1 = b.add_input("x1", shape1, dtype, **kw)
    x2 = b.add_input("x2", shape2, dtype, **kw)
    y = b.add_tensor("y", out, dtype, **kw)
    b.add_operator(op, [x1, x2], [y], **options)
    b.mark_output(y)
    return b.build()


def test_native_div_integer_matches_numpy() -> None:
    """int32 DIV (C's truncation for every sign pair, the activation clamp, INT32 extremes)
    and int8 DIV (the prepared pair table), broadcast, on the three targets; a zero divisor
    raises the same KernelError both ways."""
    import tinyarena
    from tinyarena.errors import KernelError

    rng = np.random.default_rng(220)
    for k, act in enumerate(("NONE", "RELU", "RELU6")):
        shape1, shape2, out = broadcast_pair(rng)
        model = _two_input_model("DIV", shape1, shape2, out, "int32", None,
                                 fused_activation_function=act)
        nonzero = rng.integers(1, 50, shape2) * rng.choice([-1, 1], shape2)
        feeds = [[rng.integers(-200, 200, shape1).astype(np.int32), nonzero.astype(np.int32)],
                 [random_input(rng, shape1, "int32"), nonzero.astype(np.int32)]]
        native_matches_numpy(model, "DIV", TARGETS[k], inputs=feeds)
        q8 = (float(rng.uniform(0.01, 0.5)), int(rng.integers(-20, 20)))
        model8 = _two_input_model("DIV", shape1, shape2, out, "int8", q8,
                                  fused_activation_function=act)
        native_matches_numpy(model8, "DIV", TARGETS[k], inputs=[
            [random_input(rng, shape1, "int8"), random_input(rng, shape2, "int8")]])
    model = _two_input_model("DIV", (6,), (6,), (6,), "int32", None)
    for native in (True, False):
        ip = tinyarena.Interpreter(model, native=native)
        ip.allocate_tensors()
        ip.input(0)[...] = np.arange(6)
        ip.input(1)[...] = np.array([1, 2, 3, 0, 5, 6])
        with pytest.raises(KernelError, match="DIV by zero"):
            ip.invoke()


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_native_maximum_minimum_integer_matches_numpy(op: str) -> None:
    rng = np.random.default_rng(230 if op == "MAXIMUM" else 231)
    for k, dtype in enumerate(("int8", "int16", "int32", "int64")):
        shape1, shape2, out = broadcast_pair(rng)
        q = (0.1, 0) if dtype in ("int8", "int16") else None
        model = _two_input_model(op, shape1, shape2, out, dtype, q)
        if dtype == "int64":
            feeds = [[rng.integers(-2**62, 2**62, shape1), rng.integers(-2**62, 2**62, shape2)]]
        else:
            feeds = [[random_input(rng, shape1, dtype), random_input(rng, shape2, dtype)]]
        native_matches_numpy(model, op, TARGETS[k % 3], inputs=feeds)


CAST_TYPES = ("int8", "int16", "int32", "uint32", "float32", "bool")


def test_native_cast_matches_numpy() -> None:
    """Every CAST type pair eval supports: narrowing wraps, int32 -> float32 rounds, float32 ->
    integer truncates and saturates with NaN -> 0, and non-zero (NaN too) -> true."""
    from unary_cases import single_op_model

    rng = np.random.default_rng(240)
    n = 64
    floats = np.concatenate([
        np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.5, -0.5, -1.5, 1e-45, 2.5e9,
                  -2.5e9, 4.3e9, 3e38, 127.9, -128.9, 32767.5], np.float32),
        (rng.standard_normal(n - 16) * 3e4).astype(np.float32)])
    for k, src in enumerate(CAST_TYPES):
        for dst in CAST_TYPES:
            model = single_op_model("CAST", (n,), src, None, (n,), dst, None)
            if src == "float32":
                x = floats
            elif src == "bool":
                x = rng.integers(0, 2, n).astype(np.bool_)
            elif src == "uint32":
                x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
            else:
                x = random_input(rng, (n,), src)
            native_matches_numpy(model, "CAST", TARGETS[k % 3], inputs=[[x]])
