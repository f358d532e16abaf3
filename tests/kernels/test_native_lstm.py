"""Compiled UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF (``kernels.native.lstm``/``svdf``) and the
scalar libm ports they use (``kernels.native.libm``): bit for bit against the numpy kernels,
which stay the reference, on seeded random models and the shared models, on the wheel's host
and on Cortex-M targets whose expf (newlib, newlib-fdlibm) and fused multiply-adds differ;
plus the live wheel on the shared LSTM models."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from native_compare import native_matches_numpy  # noqa: E402
from test_svdf import _build as build_svdf  # noqa: E402
from tinyarena.builder import ModelBuilder  # noqa: E402
from tinyarena.kernels import _fma, _libm  # noqa: E402

# The wheel's host (glibc expf, no fma), a soft-float core (newlib's fdlibm expf) and an FPU
# core (newlib's double-based expf, float sums as fused multiply-adds).
TARGETS = (None, "cortex-m0", "cortex-m4")


def _specials() -> np.ndarray:
    """float32 values around every branch of expf/tanhf: zeros, tiny, huge, infinities, NaN,
    the reduction thresholds and a dense run of bit patterns near 1 and 9."""
    edges = np.array([0.0, -0.0, 1e-30, -1e-30, 0.34, 0.35, 1.03, 1.04, 9.0, -9.0, 16.62, 22.0,
                      44.0, 87.3, 88.0, 88.73, 88.8, -87.3, -103.0, -103.98, -104.0, -150.0,
                      np.inf, -np.inf, np.nan], np.float32)
    runs = [(np.arange(4000, dtype=np.uint32) + b).view(np.float32)
            for b in (0x3F7FF000, 0x41100000 - 2000, 0x33000000 - 2000, 0x24000000 - 2000)]
    base = np.concatenate([edges] + runs)
    return np.concatenate([base, -base])


def test_libm_ports_match_numpy_ports() -> None:
    from tinyarena.kernels.native import libm

    rng = np.random.default_rng(1)
    x = np.concatenate([_specials(), rng.normal(0, 6, 40000).astype(np.float32),
                        rng.uniform(-110, 95, 40000).astype(np.float32)])
    out = np.empty_like(x)
    for mode, ref in ((libm.EXPF_GLIBC, lambda v: _libm.expf(v, fused=False)),
                      (libm.EXPF_GLIBC_FMA, lambda v: _libm.expf(v, fused=True)),
                      (libm.EXPF_FDLIBM, _libm.expf_fdlibm)):
        libm.expf_array(x, out, mode)
        assert np.array_equal(out.view(np.uint32), ref(x).view(np.uint32)), mode
    libm.tanhf_array(x, out)
    assert np.array_equal(out.view(np.uint32), _libm.tanhf(x).view(np.uint32))
    a, b, c = (rng.normal(0, 1, 30000).astype(np.float32) for _ in range(3))
    c[:100] = -a[:100] * b[:100]  # near-cancellations, where rounding to odd matters
    for v in (a, b, c):  # NaNs of both signs: which one survives is observable
        v[100:400:3] = np.float32(np.nan)
        v[101:400:5] = -np.float32(np.nan)
    fused = np.empty_like(a)
    libm.fma32_array(a, b, c, fused)
    assert np.array_equal(fused.view(np.uint32), _fma.fma32(a, b, c).view(np.uint32))


def _lstm(kind: str, time_major: bool, batch: int, steps: int, n_input: int, n_state: int,
          cell_clip: float, cell_activation: str, rng: np.random.Generator) -> bytes:
    """One LSTM (24 inputs; peephole, projection and layer norm omitted)."""
    b = ModelBuilder()
    in_shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    out_shape = in_shape[:2] + (n_state,)
    weights, biases = [], []
    if kind == "float":
        x = b.add_input("x", in_shape, "float32")
        for g in range(8):
            cols = n_input if g < 4 else n_state
            weights.append(b.add_constant(f"w{g}", rng.normal(0, 0.5, (n_state, cols))
                                          .astype(np.float32)))
        for g in range(4):
            biases.append(b.add_constant(f"b{g}", rng.normal(0, 0.4, n_state)
                                         .astype(np.float32)))
        h = b.add_tensor("h", (batch, n_state), "float32", is_variable=True)
        c = b.add_tensor("c", (batch, n_state), "float32", is_variable=True)
        y = b.add_tensor("y", out_shape, "float32")
    else:
        act = "int8" if kind == "8x8_16" else "int16"
        s_in, zp_in = (0.03, int(rng.integers(-20, 20))) if act == "int8" else (0.0004, 0)
        s_h, zp_h = (0.009, int(rng.integers(-10, 10))) if act == "int8" else (0.00005, 0)
        x = b.add_input("x", in_shape, act, scale=s_in, zero_point=zp_in)
        scales = rng.uniform(0.003, 0.02, 8)
        for g in range(8):
            cols = n_input if g < 4 else n_state
            weights.append(b.add_constant(f"w{g}", rng.integers(-127, 128, (n_state, cols))
                                          .astype(np.int8), scale=float(scales[g]),
                                          zero_point=0))
        for g in range(4):
            biases.append(b.add_constant(
                f"b{g}", rng.integers(-4000, 4000, n_state).astype(
                    np.int32 if act == "int8" else np.int64),
                scale=s_in * float(scales[g]), zero_point=0))
        h = b.add_tensor("h", (batch, n_state), act, scale=s_h, zero_point=zp_h,
                         is_variable=True)
        c = b.add_tensor("c", (batch, n_state), "int16", scale=2.0 ** -11, zero_point=0,
                         is_variable=True)
        y = b.add_tensor("y", out_shape, act, scale=s_h, zero_point=zp_h)
    inputs = [x] + weights + [None] * 3 + biases + [None, None, h, c] + [None] * 4
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y],
                   fused_activation_function=cell_activation, cell_clip=cell_clip,
                   time_major=time_major)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("kind", ["float", "8x8_16", "16x8_16"])
def test_native_lstm_matches_numpy(kind: str) -> None:
    """Both layouts, with and without cell clipping, on the three targets; the state carries
    over three invokes. (The cell gate is TANH: the schema's activation enum has no SIGMOID,
    so a model cannot ask for the kernel's other cell activation.)"""
    rng = np.random.default_rng({"float": 41, "8x8_16": 42, "16x8_16": 43}[kind])
    for case in range(4):
        model = _lstm(kind, bool(case % 2), int(rng.integers(1, 4)), int(rng.integers(1, 7)),
                      int(rng.integers(1, 10)), int(rng.integers(1, 10)),
                      0.0 if case < 2 else 1.2, "TANH", rng)
        for target in TARGETS:
            native_matches_numpy(model, "UNIDIRECTIONAL_SEQUENCE_LSTM", target, seed=case)


def _with_nans(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    """Normal values with a third replaced by NaNs of either sign: when two NaNs meet in a
    sum, the one x86 keeps (the first operand's) decides the output's sign bit."""
    x = rng.normal(0, 1, shape).astype(np.float32)
    nan = np.where(rng.uniform(size=shape) < 0.5, np.float32(np.nan), -np.float32(np.nan))
    return [np.where(rng.uniform(size=shape) < 0.3, nan, x).astype(np.float32)]


def test_native_float_lstm_nans_match_numpy() -> None:
    rng = np.random.default_rng(45)
    model = _lstm("float", False, 2, 5, 6, 4, 0.0, "TANH", rng)
    feeds = [_with_nans(rng, (2, 5, 6)) for _ in range(3)]
    for target in TARGETS:
        native_matches_numpy(model, "UNIDIRECTIONAL_SEQUENCE_LSTM", target, inputs=feeds)


def test_native_float_lstm_follows_the_target() -> None:
    """The targets above really differ for float (else comparing on them proves nothing):
    an FPU core's fused sums and newlib's expf change some output bits."""
    rng = np.random.default_rng(44)
    model = _lstm("float", False, 2, 8, 9, 9, 0.0, "TANH", rng)
    host = native_matches_numpy(model, "UNIDIRECTIONAL_SEQUENCE_LSTM", None, seed=5)[0]
    m4 = native_matches_numpy(model, "UNIDIRECTIONAL_SEQUENCE_LSTM", "cortex-m4", seed=5)[0]
    assert not np.array_equal(host, m4)


@pytest.mark.parametrize("name", ["trained_lstm", "trained_lstm_int8"])
def test_native_trained_lstm_matches_numpy(shared_models, name: str) -> None:
    model = (shared_models / f"{name}.tflite").read_bytes()
    for target in TARGETS:
        native_matches_numpy(model, "UNIDIRECTIONAL_SEQUENCE_LSTM", target, invokes=2)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["trained_lstm", "trained_lstm_int8"])
def test_native_trained_lstm_matches_tflm(shared_models, name: str) -> None:
    """The compiled kernels (LSTM, SOFTMAX) against the live wheel, three invokes."""
    from tflm_oracle import tflm_invokes
    from tinyarena.interpreter.inputs import random_inputs
    import tinyarena

    model = (shared_models / f"{name}.tflite").read_bytes()
    ip = tinyarena.Interpreter(model, native=True)
    ip.allocate_tensors()
    feeds = [random_inputs(ip.get_input_details(), seed=k) for k in range(3)]
    want = tflm_invokes(model, feeds)
    for feed, w in zip(feeds, want):
        for i, x in enumerate(feed):
            ip.input(i)[...] = x
        ip.invoke()
        assert np.array_equal(np.asarray(ip.output(0)).view(np.uint8), w[0].view(np.uint8))


@pytest.mark.parametrize("kind", ["float32", "int8", "int16"])
def test_native_svdf_matches_numpy(kind: str) -> None:
    """float32 with every fused activation (with and without bias), int8 with int8 and
    int16 state; ranks 1 and 2; the state carries over three invokes."""
    rng = np.random.default_rng({"float32": 51, "int8": 52, "int16": 53}[kind])
    activations = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"] \
        if kind == "float32" else ["NONE", "RELU"]
    for k, activation in enumerate(activations):
        dtype, state = ("float32", "float32") if kind == "float32" else ("int8", kind)
        model = build_svdf(dtype, state, int(rng.integers(1, 3)), int(rng.integers(2, 12)),
                           int(rng.integers(1, 5)), 1 + k % 2, int(rng.integers(2, 6)),
                           activation, rng, with_bias=kind != "float32" or k % 3 != 2)
        for target in TARGETS:
            native_matches_numpy(model, "SVDF", target, seed=k)
            if kind == "float32" and k < 2:
                shape = tuple(int(d) for d in model_input_shape(model))
                native_matches_numpy(model, "SVDF", target,
                                     inputs=[_with_nans(rng, shape) for _ in range(3)])


def model_input_shape(model: bytes) -> tuple[int, ...]:
    from tinyarena.model import read_model

    sg = read_model(model).subgraphs[0]
    return tuple(sg.tensors[sg.inputs[0]].shape)


@pytest.mark.parametrize("name", ["keyword_scrambled", "keyword_scrambled_8bit"])
def test_native_keyword_svdf_matches_numpy(shared_models, name: str) -> None:
    model = (shared_models / f"{name}.tflite").read_bytes()
    for target in (None, "cortex-m4"):
        native_matches_numpy(model, "SVDF", target, invokes=2)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["keyword_scrambled", "keyword_scrambled_8bit"])
def test_native_keyword_svdf_matches_tflm(shared_models, name: str) -> None:
    """The compiled SVDF (and SOFTMAX) in the shared keyword models against the live wheel,
    three invokes (the activation state carries over)."""
    import tinyarena
    from tflm_oracle import tflm_invokes
    from tinyarena.interpreter.inputs import random_inputs

    model = (shared_models / f"{name}.tflite").read_bytes()
    ip = tinyarena.Interpreter(model, native=True)
    ip.allocate_tensors()
    feeds = [random_inputs(ip.get_input_details(), seed=k) for k in range(3)]
    want = tflm_invokes(model, feeds)
    for feed, w in zip(feeds, want):
        for i, x in enumerate(feed):
            ip.input(i)[...] = x
        ip.invoke()
        assert np.array_equal(np.asarray(ip.output(0)).view(np.uint8), w[0].view(np.uint8))
