"""Quantization helpers checked against hand arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.builder import quant
from tinyarena.errors import BuildError


def test_choose_quant_params_asymmetric_int8() -> None:
    p = quant.choose_quant_params(-1.0, 3.0, "int8")
    # scale = 4 / 255; zero point = -128 - (-1) / scale = -128 + 63.75 -> -64
    assert p.scale[0] == np.float32(4 / 255)
    assert p.zero_point.tolist() == [-64]


def test_choose_quant_params_widens_range_to_zero() -> None:
    p = quant.choose_quant_params(2.0, 6.0, "int8")  # range becomes [0, 6]
    assert p.scale[0] == np.float32(6 / 255)
    assert p.zero_point.tolist() == [-128]
    p = quant.choose_quant_params(-6.0, -2.0, "uint8")  # range becomes [-6, 0]
    assert p.zero_point.tolist() == [255]


def test_choose_quant_params_int16_is_symmetric() -> None:
    p = quant.choose_quant_params(-2.0, 1.0, "int16")
    assert p.scale[0] == np.float32(2 / 32767)
    assert p.zero_point.tolist() == [0]


def test_choose_quant_params_rejects_bad_ranges() -> None:
    with pytest.raises(BuildError, match="range"):
        quant.choose_quant_params(1.0, -1.0)
    with pytest.raises(BuildError, match="not an integer type"):
        quant.choose_quant_params(-1.0, 1.0, "float32")


def test_quantize_rounds_half_away_from_zero_and_saturates() -> None:
    q = quant.quantize([0.25, -0.25, 0.75, 100.0, -100.0], 0.5, 1, "int8")
    # 0.5 -> 1 (+1 zp = 2); -0.5 -> -1 (0); 1.5 -> 2 (3); saturate at 127 / -128
    assert q.tolist() == [2, 0, 3, 127, -128]
    assert q.dtype == np.int8


def test_per_channel_weights_and_bias() -> None:
    w = np.array([[[[1.0, -2.0]]], [[[0.5, 0.25]]]])  # (2, 1, 1, 2), channel axis 0
    q, scales = quant.quantize_weights(w, axis=0)
    assert scales.tolist() == [np.float32(2 / 127), np.float32(0.5 / 127)]
    assert q.reshape(2, 2).tolist() == [[64, -127], [127, 64]]
    bq, bs = quant.quantize_bias([1.0, -1.0], 0.1, scales)
    assert np.allclose(bs, 0.1 * scales)
    assert bq.dtype == np.int32
    assert bq.tolist() == [round(1.0 / (0.1 * 2 / 127)), -round(1.0 / (0.1 * 0.5 / 127))]


def test_dequantize_inverts_quantize_within_half_a_step() -> None:
    values = np.linspace(-1, 1, 41)
    p = quant.choose_quant_params(-1, 1, "int8")
    back = quant.dequantize(quant.quantize(values, p.scale, p.zero_point), p.scale, p.zero_point)
    assert np.max(np.abs(back - values)) <= p.scale[0] / 2 + 1e-7


def test_symmetric_scales_zero_channel_gets_unit_scale() -> None:
    scales = quant.symmetric_scales(np.zeros((3, 2)), axis=0)
    assert scales.tolist() == [1.0, 1.0, 1.0]
