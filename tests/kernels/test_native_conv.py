"""Compiled CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (``kernels.native.conv``).

The numpy kernels are the reference: every case runs one interpreter with the compiled kernels
and one without (``native=False``) and requires the same output bytes (float32 included, so
the sign of a zero and NaN payloads count). Each case also checks that the compiled kernel
was really bound (a decline would make the comparison vacuous), or that it declined where it
must. A few cases go to the TFLM wheel as well (``oracle``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import pytest

from conv_cases import (
    ACTIVATIONS,
    QSpec,
    add_activation,
    add_filter_and_bias,
    random_input,
    random_qspec,
)
from tinyarena import Interpreter
from tinyarena.builder import ModelBuilder
from tinyarena.interpreter.inputs import random_inputs
from tinyarena.kernels._conv_common import compute_out_size

pytest.importorskip("numba")

BINDS = ("bind_conv2d", "bind_depthwise", "bind_fully_connected")


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the compiled steps the native binds return (None: declined, not counted)."""
    from tinyarena.kernels.native import conv as native_conv

    counts: Counter[str] = Counter()
    for name in BINDS:
        original = getattr(native_conv, name)

        def counting(*args: Any, _original: Any = original, _name: str = name) -> Any:
            step = _original(*args)
            if step is not None:
                counts[_name] += 1
            return step
        monkeypatch.setattr(native_conv, name, counting)
    yield counts


def _outputs(model: bytes, inputs: Sequence[np.ndarray], native: bool,
             target: str = "host-x64", kernel_set: str | None = None) -> list[np.ndarray]:
    ip = Interpreter(model, native=native, target=target, kernel_set=kernel_set)
    ip.allocate_tensors()
    for i, x in enumerate(inputs):
        ip.input(i)[...] = x
    ip.invoke()
    return [ip.output(i).copy() for i in range(len(ip.get_output_details()))]


def _same_bytes(model: bytes, inputs: Sequence[np.ndarray], desc: str,
                target: str = "host-x64", kernel_set: str | None = None) -> list[np.ndarray]:
    """Compiled and numpy outputs are byte-identical; returns the compiled ones."""
    got = _outputs(model, inputs, True, target, kernel_set)
    expected = _outputs(model, inputs, False, target, kernel_set)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, desc
        if g.tobytes() != e.tobytes():
            where = int(np.sum(g.view(np.uint8) != e.view(np.uint8)))
            raise AssertionError(f"{desc}: compiled and numpy outputs differ ({where} bytes; "
                                 f"array_equal={np.array_equal(g, e)})")
    return got


def _bias_dtype(dtype: str, rng: np.random.Generator) -> str:
    if dtype == "int16":
        return str(rng.choice(["int32", "int64"]))
    return {"int8": "int32"}.get(dtype, "float32")


def _geometry(rng: np.random.Generator, h: int, w: int, kh: int, kw: int
              ) -> tuple[str, int, int, int, int, int, int]:
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    padding = str(rng.choice(["SAME", "VALID"]))
    oh, ow = compute_out_size(padding, h, kh, sh, dh), compute_out_size(padding, w, kw, sw, dw)
    if not oh or not ow:
        padding = "SAME"
        oh, ow = compute_out_size(padding, h, kh, sh, dh), compute_out_size(padding, w, kw, sw, dw)
    assert oh and ow
    return padding, sh, sw, dh, dw, oh, ow


def _left_shift_q(q: QSpec) -> QSpec:
    """Output scale such that in_scale * filter_scale / out_scale straddles 1 (filter scales
    0.002-0.02): channels with a left shift (requantize_inplace's two-step form) and without."""
    return replace(q, out_scale=q.in_scale * 0.008)


def conv_case(dtype: str, rng: np.random.Generator, left_shift: bool = False
              ) -> tuple[bytes, list[np.ndarray], str]:
    q = random_qspec(dtype, rng)
    if left_shift:
        q = _left_shift_q(q)
    n = int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    groups = int(rng.choice([1, 1, 1, 2]))
    cin = groups * int(rng.integers(1, 5))
    cout = groups * int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding, sh, sw, dh, dw, oh, ow = _geometry(rng, h, w, kh, kw)
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2))
    with_bias = bool(rng.integers(0, 4))
    bias_dtype = _bias_dtype(dtype, rng)
    b = ModelBuilder()
    x = add_activation(b, "x", (n, h, w, cin), q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (cout, kh, kw, cin // groups), cout, 0, per_channel,
                                 with_bias, bias_dtype, rng)
    y = add_activation(b, "y", (n, oh, ow, cout), q, output=True)
    options = {}
    if dtype == "int16" and not with_bias:
        options["quantized_bias_type"] = bias_dtype.upper()
    b.add_operator("CONV_2D", [x, wt, bt] if bt is not None else [x, wt], [y], padding=padding,
                   stride_w=sw, stride_h=sh, dilation_w_factor=dw, dilation_h_factor=dh,
                   fused_activation_function=act, **options)
    b.mark_output(y)
    desc = (f"CONV_2D {dtype} n={n} {h}x{w}x{cin}->{cout} groups={groups} k={kh}x{kw} "
            f"s={sh},{sw} d={dh},{dw} {padding} {act} bias={with_bias}:{bias_dtype}")
    return b.build(), [random_input((n, h, w, cin), dtype, rng)], desc


def depthwise_case(dtype: str, rng: np.random.Generator, left_shift: bool = False,
                   with_bias: bool | None = None) -> tuple[bytes, list[np.ndarray], str]:
    q = random_qspec(dtype, rng)
    if left_shift:
        q = _left_shift_q(q)
    n = int(rng.integers(1, 3))
    # 8 channels or more with multiplier 1: the channel-vectorised loop; else the staged one
    h, w, cin = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.choice([1, 3, 8, 12]))
    mult = int(rng.choice([1, 1, 2, 3]))
    cout = cin * mult
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    padding, sh, sw, dh, dw, oh, ow = _geometry(rng, h, w, kh, kw)
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2))
    if with_bias is None:
        with_bias = bool(rng.integers(0, 4))
    bias_dtype = {"int8": "int32", "int16": "int64"}.get(dtype, "float32")
    b = ModelBuilder()
    x = add_activation(b, "x", (n, h, w, cin), q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (1, kh, kw, cout), cout, 3, per_channel, with_bias,
                                 bias_dtype, rng)
    y = add_activation(b, "y", (n, oh, ow, cout), q, output=True)
    b.add_operator("DEPTHWISE_CONV_2D", [x, wt] if bt is None else [x, wt, bt], [y],
                   padding=padding, stride_w=sw, stride_h=sh, depth_multiplier=mult,
                   dilation_w_factor=dw, dilation_h_factor=dh, fused_activation_function=act)
    b.mark_output(y)
    desc = (f"DEPTHWISE_CONV_2D {dtype} n={n} {h}x{w}x{cin} m={mult} k={kh}x{kw} s={sh},{sw} "
            f"d={dh},{dw} {padding} {act} bias={with_bias}")
    return b.build(), [random_input((n, h, w, cin), dtype, rng)], desc


def fully_connected_case(dtype: str, rng: np.random.Generator, left_shift: bool = False,
                         depth: int | None = None, filter_zero_point: int = 0
                         ) -> tuple[bytes, list[np.ndarray], str]:
    q = random_qspec(dtype, rng)
    if left_shift:
        q = _left_shift_q(q)
    depth = int(rng.integers(1, 40)) if depth is None else depth
    units = int(rng.integers(1, 20))
    keep = bool(rng.integers(0, 2))
    lead = tuple(int(v) for v in rng.integers(1, 4, int(rng.integers(1, 3))))
    in_shape = lead + (depth,)
    out_shape = lead + (units,) if keep else (int(np.prod(lead)), units)
    act = str(rng.choice(ACTIVATIONS))
    per_channel = bool(rng.integers(0, 2)) and filter_zero_point == 0
    with_bias = bool(rng.integers(0, 4))
    bias_dtype = _bias_dtype(dtype, rng)
    b = ModelBuilder()
    x = add_activation(b, "x", in_shape, q, output=False, is_input=True)
    if filter_zero_point:  # per-tensor int8 filter with a zero point (TFLM's filter_offset)
        w = rng.integers(-128, 128, (units, depth)).astype(np.int8)
        wt = b.add_constant("w", w, scale=np.array([0.01], np.float32),
                            zero_point=np.array([filter_zero_point], np.int64))
        bt = None
    else:
        wt, bt = add_filter_and_bias(b, q, (units, depth), units, 0, per_channel, with_bias,
                                     bias_dtype, rng)
    y = add_activation(b, "y", out_shape, q, output=True)
    options = {}
    if dtype == "int16" and bt is None:
        options["quantized_bias_type"] = bias_dtype.upper()
    b.add_operator("FULLY_CONNECTED", [x, wt, bt] if bt is not None else [x, wt], [y],
                   fused_activation_function=act, keep_num_dims=keep, **options)
    b.mark_output(y)
    desc = (f"FULLY_CONNECTED {dtype} {in_shape}->{out_shape} pc={per_channel} "
            f"bias={bt is not None}:{bias_dtype} {act} filter_zp={filter_zero_point}")
    return b.build(), [random_input(in_shape, dtype, rng)], desc


CASES = {"CONV_2D": (conv_case, "bind_conv2d"),
         "DEPTHWISE_CONV_2D": (depthwise_case, "bind_depthwise"),
         "FULLY_CONNECTED": (fully_connected_case, "bind_fully_connected")}


@pytest.mark.parametrize("op", sorted(CASES))
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_compiled_matches_numpy(op: str, dtype: str, compiled: Counter[str]) -> None:
    """Random geometry (padding, strides, dilations, groups, depth multipliers, batches,
    keep_num_dims), per-tensor and per-channel scales, activations, bias present or not."""
    make, bind = CASES[op]
    rng = np.random.default_rng(sum(map(ord, op + dtype)))
    count = 14
    for _ in range(count):
        model, inputs, desc = make(dtype, rng)
        _same_bytes(model, inputs, desc)
    assert compiled[bind] == count  # none declined (the numpy interpreter binds none)


def _sparse_inputs(inputs: list[np.ndarray], model: bytes, rng: np.random.Generator
                   ) -> list[np.ndarray]:
    """The input zero point plus mostly 0, sometimes +-1: sums small enough that outputs
    with multipliers above one do not all saturate."""
    from tinyarena.model import read_model

    q = read_model(model).subgraphs[0].tensors[0].quantization
    zp = int(q.zero_point[0]) if q is not None and len(q.zero_point) else 0
    return [(zp + rng.choice([-1, 0, 0, 0, 0, 0, 1], x.shape)).astype(x.dtype)
            for x in inputs]


@pytest.mark.parametrize("op", sorted(CASES))
def test_compiled_requantisation_with_left_shifts(op: str, compiled: Counter[str]) -> None:
    """Multipliers above one (requantize_inplace's two-step form), int8 and 16x8."""
    make, bind = CASES[op]
    rng = np.random.default_rng(sum(map(ord, op)) + 7)
    inside = total = 0
    for dtype in ("int8", "int16"):
        for _ in range(6):
            model, inputs, desc = make(dtype, rng, left_shift=True)
            got = _same_bytes(model, _sparse_inputs(inputs, model, rng), desc)[0]
            info = np.iinfo(got.dtype)
            inside += int(np.sum((got > info.min) & (got < info.max)))
            total += got.size
    assert compiled[bind] == 12
    assert inside > total // 5  # many unsaturated outputs: the rounding is exercised


def test_compiled_fully_connected_filter_zero_point(compiled: Counter[str]) -> None:
    rng = np.random.default_rng(21)
    for zp in (-7, 5, 127):
        model, inputs, desc = fully_connected_case("int8", rng, filter_zero_point=zp)
        _same_bytes(model, inputs, desc)
    assert compiled["bind_fully_connected"] == 3


def test_compiled_wide_sums_use_int64(compiled: Counter[str]) -> None:
    """A sum whose bound passes the int32 range takes the int64 dot product (still exact)."""
    from tinyarena.kernels.native import conv as native_conv

    rng = np.random.default_rng(5)
    depth = 70_000  # 255 * 127 * depth > 2**31
    b = ModelBuilder()
    x = b.add_input("x", (1, depth), "int8", scale=0.02, zero_point=-128)
    w = (rng.integers(0, 2, (2, depth)) * 254 - 127).astype(np.int8)
    wt = b.add_constant("w", w, scale=np.array([1e-4], np.float32),
                        zero_point=np.array([0], np.int64))
    y = b.add_tensor("y", (1, 2), "int8", scale=1.0, zero_point=3)
    b.add_operator("FULLY_CONNECTED", [x, wt], [y])
    b.mark_output(y)
    assert not native_conv._int32_sums_exact(w.astype(np.int16), "int8", 128)
    _same_bytes(b.build(), [random_input((1, depth), "int8", rng)], "wide FC")
    assert compiled["bind_fully_connected"] == 1


def test_compiled_float_depthwise_zero_signs(compiled: Counter[str]) -> None:
    """Without a bias, numpy's depthwise sum of -0.0 products stays -0.0 and RELU's
    np.maximum makes it +0.0; with no activation it stays -0.0: the bytes must agree."""
    for act in ("NONE", "RELU"):
        b = ModelBuilder()
        x = b.add_input("x", (1, 3, 3, 2), "float32")
        wt = b.add_constant("w", np.full((1, 2, 2, 2), -0.5, np.float32))
        y = b.add_tensor("y", (1, 3, 3, 2), "float32")
        b.add_operator("DEPTHWISE_CONV_2D", [x, wt], [y], padding="SAME", stride_w=1,
                       stride_h=1, depth_multiplier=1, fused_activation_function=act)
        b.mark_output(y)
        got = _same_bytes(b.build(), [np.zeros((1, 3, 3, 2), np.float32)], act)[0]
        assert bool(np.signbit(got).all()) == (act == "NONE")
    assert compiled["bind_depthwise"] == 2


@pytest.mark.parametrize("op", sorted(CASES))
def test_compiled_fused_multiply_add_targets(op: str, compiled: Counter[str]) -> None:
    """On builds with float_fma (cortex-m4+fp and other FPU builds) every ``total += a * b`` is one fmaf: the
    compiled loops reproduce numpy's exact fma32, and those sums are not the unfused ones."""
    make, bind = CASES[op]
    rng = np.random.default_rng(sum(map(ord, op)) + 11)
    differ = 0
    for _ in range(6):
        model, inputs, desc = make("float32", rng)
        fused = _same_bytes(model, inputs, desc, target="cortex-m4+fp", kernel_set="reference")
        plain = _outputs(model, inputs, True)
        differ += sum(f.tobytes() != q.tobytes() for f, q in zip(fused, plain))
    assert compiled[bind] == 6 + 6
    assert differ > 0


def test_compiled_declines_non_finite_float_filters(compiled: Counter[str]) -> None:
    """TFLM skips padded taps; 0 * inf would be NaN: numpy's masked path runs instead."""
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 2), "float32")
    w = rng.uniform(-1, 1, (3, 3, 3, 2)).astype(np.float32)
    w[1, 1, 1, 0] = np.inf
    wt = b.add_constant("w", w)
    y = b.add_tensor("y", (1, 4, 4, 3), "float32")
    b.add_operator("CONV_2D", [x, wt], [y], padding="SAME", stride_w=1, stride_h=1)
    b.mark_output(y)
    _same_bytes(b.build(), [rng.uniform(-1, 1, (1, 4, 4, 2)).astype(np.float32)], "inf filter")
    assert sum(compiled.values()) == 0


SHARED = ("hello_world_int8", "hello_world_float", "micro_speech_quantized", "person_detect",
          "kws_ref_model", "keyword_scrambled_8bit", "trained_lstm")


@pytest.mark.parametrize("name", SHARED)
def test_compiled_matches_numpy_on_shared_models(name: str, compiled: Counter[str]) -> None:
    path = Path(__file__).resolve().parents[2].parent / "shared" / "models" / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    model = path.read_bytes()
    ip = Interpreter(model, native=False)
    ip.allocate_tensors()
    for seed in range(2):
        inputs = random_inputs(ip.get_input_details(), seed=seed)
        _same_bytes(model, inputs, f"{name} seed {seed}")
    assert sum(compiled.values()) > 0


@pytest.mark.oracle
@pytest.mark.parametrize("op", sorted(CASES))
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_compiled_matches_tflm(op: str, dtype: str, compiled: Counter[str]) -> None:
    """Against the wheel: quantized outputs equal, float32 outputs identical (the compiled
    sums run in the reference kernels' order)."""
    from tflm_oracle import tflm_run

    make, bind = CASES[op]
    rng = np.random.default_rng(sum(map(ord, op + dtype)) + 99)
    for _ in range(4):
        model, inputs, desc = make(dtype, rng)
        expected = tflm_run(model, inputs)
        got = _outputs(model, inputs, True)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and np.array_equal(g, e), desc
    assert compiled[bind] == 4


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_compiled_cmsis_nn_kernels(target: str, compiled: Counter[str]) -> None:
    """The CMSIS-NN kernel set's conv, depthwise and FC reuse the reference arithmetic, and so
    its bound (compiled) steps: int8 and 16x8 layers compile and match numpy there too."""
    rng = np.random.default_rng(len(target))
    for op in sorted(CASES):
        for dtype in ("int8", "int16"):
            for _ in range(3):
                model, inputs, desc = CASES[op][0](dtype, rng)
                if op == "FULLY_CONNECTED" and dtype == "int16" and "pc=True" in desc:
                    continue  # CMSIS-NN refuses per-channel int16 FC (KernelError)
                _same_bytes(model, inputs, desc, target=target, kernel_set="cmsis-nn")
    assert all(compiled[bind] >= 4 for _, bind in CASES.values())


def test_compiled_int4_filters(compiled: Counter[str]) -> None:
    """Packed int4 filters reach the compiled loops unpacked to int8 values."""
    rng = np.random.default_rng(44)
    x_shape = (1, 5, 6, 4)
    layers = (("CONV_2D", (3, 2, 3, 4), 0, (1, 5, 6, 3), {"padding": "SAME", "stride_w": 1,
                                                            "stride_h": 1}),
              ("DEPTHWISE_CONV_2D", (1, 3, 3, 8), 3, (1, 3, 3, 8),
               {"padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 2}),
              ("FULLY_CONNECTED", (7, 120), 0, (1, 7), {}))
    for op, w_shape, qdim, y_shape, options in layers:
        channels = w_shape[qdim]
        b = ModelBuilder()
        x = b.add_input("x", x_shape, "int8", scale=0.05, zero_point=-3)
        wt = b.add_constant("w", rng.integers(-8, 8, w_shape), "int4",
                            scale=rng.uniform(0.01, 0.05, channels).astype(np.float32),
                            zero_point=np.zeros(channels, np.int64), quantized_dimension=qdim)
        y = b.add_tensor("y", y_shape, "int8", scale=0.2, zero_point=1)
        b.add_operator(op, [x, wt], [y], **options)
        b.mark_output(y)
        _same_bytes(b.build(), [random_input(x_shape, "int8", rng)], f"int4 {op}")
    assert [compiled[bind] for _, bind in CASES.values()] == [1, 1, 1]


def test_compiled_fma32_matches_numpy_fma32() -> None:
    """The compiled fmaf against ``_fma.fma32`` on values chosen so that many float64 sums
    are inexact and land next to float32 rounding ties (where rounding to odd matters),
    plus infinities, NaN and signed zeros."""
    import numba

    from tinyarena.kernels._fma import fma32
    from tinyarena.kernels.native.conv import _fma32

    @numba.njit
    def apply(a: Any, b: Any, c: Any, out: Any) -> None:
        for i in range(a.size):
            out[i] = _fma32(a[i], b[i], c[i])

    rng = np.random.default_rng(8)
    n = 300_000
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    # c within a few float32 ulps of the product's float32 rounding: ties and near-ties
    c = (-(a * b) + rng.integers(-3, 4, n).astype(np.float32) * np.spacing(a * b) / 2
         + rng.standard_normal(n).astype(np.float32) * 1e-9).astype(np.float32)
    c[::4] = rng.standard_normal(n)[::4].astype(np.float32)
    # double-rounding traps: a * b = 2**-24 * (1 - k**2 * 2**-46) * 2**e and c = (1 + odd *
    # 2**-23) * 2**e, so the exact sum lies just below a float32 midpoint that the float64
    # sum rounds onto (rounding to odd keeps it off the midpoint)
    m = n // 4
    k = rng.integers(1, 2048, m).astype(np.float64)
    e = rng.integers(-20, 20, m).astype(np.float64)
    sign = rng.choice([-1.0, 1.0], m)
    a[1::4] = (1 + k * 2.0**-23).astype(np.float32)
    b[1::4] = (sign * 2.0**-24 * (1 - k * 2.0**-23) * 2**e).astype(np.float32)
    c[1::4] = (sign * (1 + (2 * rng.integers(0, 2**21, m) + 1) * 2.0**-23) * 2**e
               ).astype(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, 1e-30, 1.0], np.float32)
    a[:64], b[:64], c[:64] = (np.tile(specials, 8), np.repeat(specials, 8),
                              np.roll(np.tile(specials, 8), 3))
    out = np.empty(n, np.float32)
    with np.errstate(all="ignore"):
        apply(a, b, c, out)
        expected = fma32(a, b, c)
    assert out.tobytes() == expected.tobytes()
