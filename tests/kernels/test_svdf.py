"""SVDF against the live TFLM wheel: float32, int8 with int8 or int16 state, several invokes in
a row (the activation state persists), plus the shared keyword_scrambled models end to end."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import kernels_invokes, max_ulp_diff, skip_unless_all_kernels
from tflm_oracle import tflm_invokes
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _build(dtype: str, state_dtype: str, batch: int, input_size: int, units: int, rank: int,
           memory: int, activation: str, rng: np.random.Generator, with_bias: bool = True
           ) -> bytes:
    b = ModelBuilder()
    filters = units * rank
    if dtype == "float32":
        x = b.add_input("x", (batch, input_size), "float32")
        wf = b.add_constant("wf", rng.normal(0, 0.3, (filters, input_size)).astype(np.float32))
        wt = b.add_constant("wt", rng.normal(0, 0.3, (filters, memory)).astype(np.float32))
        bias = b.add_constant("b", rng.normal(0, 0.3, units).astype(np.float32)) \
            if with_bias else None
        st = b.add_tensor("state", (batch, memory * filters), "float32", is_variable=True)
        y = b.add_tensor("y", (batch, units), "float32")
    else:
        s_in, s_wf, s_wt = 0.05, 0.01, (0.002 if state_dtype == "int16" else 0.02)
        s_st = 0.02 if state_dtype == "int16" else 0.5
        zp_st = 0 if state_dtype == "int16" else int(rng.integers(-20, 20))
        tinfo = np.iinfo(state_dtype)
        x = b.add_input("x", (batch, input_size), "int8", scale=s_in,
                        zero_point=int(rng.integers(-10, 10)))
        wf = b.add_constant("wf", rng.integers(-127, 128, (filters, input_size)).astype(np.int8),
                            scale=s_wf, zero_point=0)
        wt = b.add_constant("wt", rng.integers(tinfo.min // 2, tinfo.max // 2,
                                               (filters, memory)).astype(state_dtype),
                            scale=s_wt, zero_point=0)
        bias_scale = float(np.float32(np.float32(s_st) * np.float32(s_wt)))
        bias = b.add_constant("b", rng.integers(-5000, 5000, units).astype(np.int32),
                              scale=bias_scale, zero_point=0)
        st = b.add_tensor("state", (batch, memory * filters), state_dtype, scale=s_st,
                          zero_point=zp_st, is_variable=True)
        y = b.add_tensor("y", (batch, units), "int8", scale=0.5,
                         zero_point=int(rng.integers(-10, 10)))
    b.add_operator("SVDF", [x, wf, wt, bias, st], [y], rank=rank,
                   fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


def _inputs(dtype: str, shape: tuple[int, ...], rng: np.random.Generator, n: int):
    if dtype == "float32":
        return [[rng.normal(0, 1, shape).astype(np.float32)] for _ in range(n)]
    return [[rng.integers(-128, 128, shape).astype(np.int8)] for _ in range(n)]


@pytest.mark.parametrize("state_dtype", ["int8", "int16"])
def test_svdf_integer_matches_tflm(state_dtype: str) -> None:
    rng = np.random.default_rng(11 if state_dtype == "int8" else 12)
    for _ in range(6):
        batch, inp, units, rank, memory = (int(rng.integers(1, 3)), int(rng.integers(3, 20)),
                                           int(rng.integers(1, 6)), int(rng.integers(1, 3)),
                                           int(rng.integers(2, 6)))
        model = _build("int8", state_dtype, batch, inp, units, rank, memory, "RELU", rng)
        steps = _inputs("int8", (batch, inp), rng, 4)
        want = tflm_invokes(model, steps)
        got = kernels_invokes(model, steps)
        for g, w in zip(got, want):
            assert np.array_equal(g[0], w[0]), (g, w)
        assert len({g[0].tobytes() for g in got}) > 1  # the state evolved


@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "TANH"])
def test_svdf_float_matches_tflm(activation: str) -> None:
    """float32: sequential float32 sums and glibc tanhf as TFLM: bit-exact."""
    rng = np.random.default_rng(13)
    for _ in range(3):
        batch, inp, units, rank, memory = (int(rng.integers(1, 3)), int(rng.integers(3, 20)),
                                           int(rng.integers(1, 6)), int(rng.integers(1, 3)),
                                           int(rng.integers(2, 6)))
        model = _build("float32", "float32", batch, inp, units, rank, memory, activation, rng)
        steps = _inputs("float32", (batch, inp), rng, 4)
        want = tflm_invokes(model, steps)
        got = kernels_invokes(model, steps)
        for g, w in zip(got, want):
            assert max_ulp_diff(g[0], w[0]) == 0


@pytest.mark.parametrize("name", ["keyword_scrambled", "keyword_scrambled_8bit"])
def test_keyword_scrambled_matches_tflm(shared_models, name: str) -> None:
    """The shared SVDF models end to end, three invokes in a row (state carried over)."""
    from tinyarena.model import read_model

    model = (shared_models / f"{name}.tflite").read_bytes()
    skip_unless_all_kernels(model)
    sg = read_model(model).subgraphs[0]
    rng = np.random.default_rng(5)
    shape = sg.tensors[sg.inputs[0]].shape
    steps = [[rng.integers(-32768, 32768, shape).astype(np.int16)] for _ in range(3)]
    want = tflm_invokes(model, steps)
    got = kernels_invokes(model, steps)
    for g, w in zip(got, want):
        assert np.array_equal(g[0], w[0]), (g, w)
