"""SOFTMAX against the live TFLM wheel: float32, int8->int8, int8->int16, int16->int16."""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.kernels._lut import (
    lut_lookup_int16,
    round_half_away_f32,
    softmax_int16_luts,
)
from unary_cases import compare, random_input, single_op_model

FLOAT_ULP = 0  # float32 is bit-exact: std::exp(float) is glibc's expf, ported in _libm


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.integers(1, 5))
    return tuple(int(d) for d in rng.integers(1, 6, size=rank - 1)) + (int(rng.integers(1, 40)),)


@pytest.mark.oracle
def test_softmax_float_matches_tflm() -> None:
    rng = np.random.default_rng(10)
    for _ in range(10):
        shape = _shape(rng)
        beta = float(rng.choice([1.0, 0.5, 2.0, float(rng.uniform(0.1, 3))]))
        model = single_op_model("SOFTMAX", shape, "float32", None, shape, "float32", None,
                                beta=beta)
        for _ in range(3):
            compare(model, [random_input(rng, shape, "float32", 20.0)], max_ulp=FLOAT_ULP)


@pytest.mark.oracle
@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_softmax_int8_matches_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng(11 if out_dtype == "int8" else 12)
    out_q = (1 / 256, -128) if out_dtype == "int8" else (1 / 65536, -32768)
    for _ in range(12):
        shape = _shape(rng)
        in_q = (float(10 ** rng.uniform(-2.5, 0)), int(rng.integers(-128, 128)))
        beta = float(rng.choice([1.0, float(rng.uniform(0.2, 2.0))]))
        model = single_op_model("SOFTMAX", shape, "int8", in_q, shape, out_dtype, out_q,
                                beta=beta)
        for _ in range(3):
            compare(model, [random_input(rng, shape, "int8")])


@pytest.mark.oracle
def test_softmax_int16_matches_tflm() -> None:
    rng = np.random.default_rng(13)
    for _ in range(12):
        shape = _shape(rng)
        in_q = (float(10 ** rng.uniform(-4, -2)), 0)
        beta = float(rng.choice([1.0, float(rng.uniform(0.2, 2.0))]))
        model = single_op_model("SOFTMAX", shape, "int16", in_q, shape, "int16", (1 / 32768, 0),
                                beta=beta)
        for _ in range(3):
            compare(model, [random_input(rng, shape, "int16")])


def test_round_half_away_matches_c_round() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.49999997, 3.4999998],
                 dtype=np.float32)
    assert round_half_away_f32(x).tolist() == [1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -0.0, 3.0]


def test_lut_lookup_interpolates_between_entries() -> None:
    lut = (np.arange(513) * 32 - 8192).astype(np.int16)  # slope 32 per 128 inputs
    # value v maps to index 256 + (v >> 7), offset v & 127; by hand: base + (32*off + 64) >> 7
    v = np.array([-32768, -1, 0, 64, 127, 32767])
    expected = np.array([-8192, -32 + 32, 0, 16, 32, 8160 + 32])
    assert np.array_equal(lut_lookup_int16(v, lut), expected)


def test_softmax_luts_match_their_functions() -> None:
    """Independent check of the table construction: the tables approximate exp and 1/(1+x)."""
    exp_lut, recip_lut = softmax_int16_luts()
    v = np.arange(-32768, 32768, 97)
    got = lut_lookup_int16(v, exp_lut) / 32768.0
    assert np.max(np.abs(got - np.exp((v - 32767) * 10.0 / 65535))) < 2e-4
    x_r = (v + 32768) / 65535.0
    got_r = lut_lookup_int16(v, recip_lut) / 32768.0
    assert np.max(np.abs(got_r - 1 / (1 + x_r))) < 2e-4
