"""UNIDIRECTIONAL_SEQUENCE_LSTM against the live TFLM wheel: float32, 8x8->16 and 16x8->16,
time-major and batch-major, with and without cell clipping, several invokes in a row (the
hidden and cell states persist), plus the shared trained_lstm models end to end."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import kernels_invokes, max_ulp_diff, skip_unless_all_kernels
from tflm_oracle import tflm_invokes
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle

# float32: sums and products in C order, glibc's tanhf and expf (the logistic's exp) ported
# exactly. Measured bound: 0 ulp.
FLOAT_ULP_BOUND = 0


def _build(kind: str, time_major: bool, batch: int, steps: int, n_input: int, n_state: int,
           cell_clip: float, rng: np.random.Generator) -> bytes:
    b = ModelBuilder()
    in_shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    out_shape = in_shape[:2] + (n_state,)
    if kind == "float":
        act = "float32"
        x = b.add_input("x", in_shape, act)
        wi = [b.add_constant(f"wi{g}", rng.normal(0, 0.4, (n_state, n_input)).astype(np.float32))
              for g in range(4)]
        wr = [b.add_constant(f"wr{g}", rng.normal(0, 0.4, (n_state, n_state)).astype(np.float32))
              for g in range(4)]
        bias = [b.add_constant(f"b{g}", rng.normal(0, 0.3, n_state).astype(np.float32))
                for g in range(4)]
        h = b.add_tensor("h", (batch, n_state), act, is_variable=True)
        c = b.add_tensor("c", (batch, n_state), act, is_variable=True)
        y = b.add_tensor("y", out_shape, act)
    else:
        act = "int8" if kind == "8x8_16" else "int16"
        bias_dt = np.int32 if kind == "8x8_16" else np.int64
        s_in, zp_in = (0.02, int(rng.integers(-20, 20))) if act == "int8" else (0.0005, 0)
        s_h, zp_h = (0.008, int(rng.integers(-10, 10))) if act == "int8" else (0.00004, 0)
        x = b.add_input("x", in_shape, act, scale=s_in, zero_point=zp_in)
        wi, wr, bias = [], [], []
        for g in range(4):
            sw = float(rng.uniform(0.003, 0.02))
            wi.append(b.add_constant(f"wi{g}", rng.integers(-127, 128, (n_state, n_input))
                                     .astype(np.int8), scale=sw, zero_point=0))
            sr = float(rng.uniform(0.003, 0.02))
            wr.append(b.add_constant(f"wr{g}", rng.integers(-127, 128, (n_state, n_state))
                                     .astype(np.int8), scale=sr, zero_point=0))
            bias.append(b.add_constant(f"b{g}", rng.integers(-3000, 3000, n_state)
                                       .astype(bias_dt), scale=s_in * sw, zero_point=0))
        h = b.add_tensor("h", (batch, n_state), act, scale=s_h, zero_point=zp_h,
                         is_variable=True)
        c = b.add_tensor("c", (batch, n_state), "int16", scale=2.0 ** -11, zero_point=0,
                         is_variable=True)
        y = b.add_tensor("y", out_shape, act, scale=s_h, zero_point=zp_h)
    inputs = [x, wi[0], wi[1], wi[2], wi[3], wr[0], wr[1], wr[2], wr[3], None, None, None,
              bias[0], bias[1], bias[2], bias[3], None, None, h, c, None, None, None, None]
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], fused_activation_function="TANH",
                   cell_clip=cell_clip, time_major=time_major)
    b.mark_output(y)
    return b.build()


def _random_inputs(kind: str, shape: tuple[int, ...], rng: np.random.Generator, n: int):
    if kind == "float":
        return [[rng.normal(0, 1, shape).astype(np.float32)] for _ in range(n)]
    dt = np.int8 if kind == "8x8_16" else np.int16
    info = np.iinfo(dt)
    return [[rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)]
            for _ in range(n)]


@pytest.mark.parametrize("kind", ["8x8_16", "16x8_16", "float"])
def test_lstm_matches_tflm(kind: str) -> None:
    rng = np.random.default_rng({"8x8_16": 21, "16x8_16": 22, "float": 23}[kind])
    for case in range(4):
        time_major = bool(case % 2)
        batch, steps = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        n_input, n_state = int(rng.integers(2, 9)), int(rng.integers(2, 9))
        clip = 0.0 if case < 2 else 1.5
        model = _build(kind, time_major, batch, steps, n_input, n_state, clip, rng)
        shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
        invokes = _random_inputs(kind, shape, rng, 3)
        want = tflm_invokes(model, invokes)
        got = kernels_invokes(model, invokes)
        for g, w in zip(got, want):
            assert g[0].dtype == w[0].dtype and g[0].shape == w[0].shape
            if kind == "float":
                assert max_ulp_diff(g[0], w[0]) <= FLOAT_ULP_BOUND
            else:
                assert np.array_equal(g[0], w[0]), (kind, case, g[0], w[0])


@pytest.mark.parametrize("name", ["trained_lstm", "trained_lstm_int8"])
def test_trained_lstm_matches_tflm(shared_models, name: str) -> None:
    """The shared MNIST LSTM models end to end, three invokes in a row."""
    from tinyarena.model import read_model

    model = (shared_models / f"{name}.tflite").read_bytes()
    skip_unless_all_kernels(model)
    sg = read_model(model).subgraphs[0]
    t = sg.tensors[sg.inputs[0]]
    rng = np.random.default_rng(9)
    if t.type.name == "FLOAT32":
        invokes = [[rng.uniform(0, 1, t.shape).astype(np.float32)] for _ in range(3)]
    else:
        invokes = [[rng.integers(-128, 128, t.shape).astype(np.int8)] for _ in range(3)]
    want = tflm_invokes(model, invokes)
    got = kernels_invokes(model, invokes)
    for g, w in zip(got, want):
        if t.type.name == "FLOAT32":
            assert max_ulp_diff(g[0], w[0]) <= FLOAT_ULP_BOUND
        else:
            assert np.array_equal(g[0], w[0])


# float32 here runs ~7000 sigmoids through a 12-step recurrence, which amplifies any 1-ulp
# expf difference (with exp in double rounded once instead of glibc's expf: 151 ulp).


@pytest.mark.parametrize("kind", ["8x8_16", "16x8_16", "float"])
def test_lstm_longer_sequences_match_tflm(kind: str) -> None:
    """Longer sequences and wider states than the sweep above (the stacked-gate eval computes
    every time step's input FC at once and all four gates per step in one product), with the
    sigmoid cell activation too, several invokes in a row."""
    rng = np.random.default_rng({"8x8_16": 31, "16x8_16": 32, "float": 33}[kind])
    for case in range(2):
        time_major = bool(case)
        batch, steps, n_input, n_state = 2, 12, 17, 24
        model = _build(kind, time_major, batch, steps, n_input, n_state, 2.0 * case, rng)
        shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
        invokes = _random_inputs(kind, shape, rng, 3)
        want = tflm_invokes(model, invokes)
        got = kernels_invokes(model, invokes)
        for g, w in zip(got, want):
            if kind == "float":
                assert max_ulp_diff(g[0], w[0]) <= FLOAT_ULP_BOUND
            else:
                assert np.array_equal(g[0], w[0]), (kind, case)
