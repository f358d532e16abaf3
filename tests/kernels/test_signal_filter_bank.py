"""SignalFilterBank, SignalFilterBankSquareRoot, SignalFilterBankSpectralSubtraction,
SignalPCAN and SignalFilterBankLog against the live wheel: random and extreme inputs,
options that change the arithmetic, several invokes for the stateful spectral subtraction."""

from __future__ import annotations

import numpy as np
import pytest

from signal_cases import assert_matches_tflm, flex
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _bands(channels: int, spectrum: int, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """channel_frequency_starts, channel_weight_starts, channel_widths (num_channels + 1
    each) of overlapping bands inside the spectrum, and the weight count they use."""
    widths = rng.integers(0, 7, channels + 1)
    starts = np.sort(rng.integers(0, spectrum - 7, channels + 1))
    weight_starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return (starts.astype(np.int16), weight_starts.astype(np.int16), widths.astype(np.int16),
            int(widths.sum()))


def _filter_bank(channels: int, spectrum: int, outputs: int, rng: np.random.Generator,
                 negative_weights: bool = False) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (spectrum,), "uint32")
    fs, ws, widths, n_weights = _bands(channels, spectrum, rng)
    low = -4096 if negative_weights else 0
    w = b.add_constant("w", rng.integers(low, 4096, n_weights).astype(np.int16))
    u = b.add_constant("u", rng.integers(low, 4096, n_weights).astype(np.int16))
    tensors = [x, w, u, b.add_constant("fs", fs), b.add_constant("ws", ws),
               b.add_constant("cw", widths)]
    y = b.add_tensor("y", (outputs,), "uint64")
    b.add_operator("SignalFilterBank", tensors, [y], custom_options=flex(num_channels=channels))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("channels,spectrum,outputs,negative", [
    (40, 257, 40, False), (8, 33, 8, True), (16, 64, 10, False), (1, 16, 1, True)])
def test_filter_bank_matches_tflm(channels: int, spectrum: int, outputs: int,
                                  negative: bool) -> None:
    rng = np.random.default_rng(channels)
    model = _filter_bank(channels, spectrum, outputs, rng, negative)
    x = rng.integers(0, 2**32, spectrum, dtype=np.uint64).astype(np.uint32)
    x[:3] = 2**32 - 1
    assert_matches_tflm(model, [[x]])


def _square_root(channels: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (channels,), "uint64")
    s = b.add_input("s", (), "int32")
    y = b.add_tensor("y", (channels,), "uint32")
    b.add_operator("SignalFilterBankSquareRoot", [x, s], [y], custom_options=flex())
    b.mark_output(y)
    return b.build()


def test_filter_bank_square_root_matches_tflm() -> None:
    rng = np.random.default_rng(5)
    model = _square_root(64)
    steps = []
    for shift in (0, 3, 7, 15, 31):
        bits = rng.integers(0, 65, 64)
        x = (rng.integers(0, 2**63, 64, dtype=np.uint64) >> (64 - bits).astype(np.uint64))
        x[:8] = [0, 1, 2, 3, 2**32 - 1, 2**32, 2**64 - 1, (2**32 - 1) ** 2]
        steps.append([x.astype(np.uint64), np.array(shift, np.int32)])
    assert_matches_tflm(model, steps)


def _spectral_subtraction(channels: int, **options: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (channels,), "uint32")
    y = b.add_tensor("y", (channels,), "uint32")
    noise = b.add_tensor("noise", (channels,), "uint32")
    attrs = dict(num_channels=channels, smoothing=409, one_minus_smoothing=15975,
                 alternate_smoothing=983, alternate_one_minus_smoothing=15401, smoothing_bits=10,
                 min_signal_remaining=819, clamping=False, spectral_subtraction_bits=14)
    attrs.update(options)
    b.add_operator("SignalFilterBankSpectralSubtraction", [x], [y, noise],
                   custom_options=flex(**attrs))
    b.mark_output(y)
    b.mark_output(noise)
    return b.build()


@pytest.mark.parametrize("options", [
    {}, {"clamping": True}, {"smoothing_bits": 0, "spectral_subtraction_bits": 0},
    {"smoothing": 2**31 + 5, "one_minus_smoothing": 2**32 - 1, "min_signal_remaining": 0},
    {"smoothing_bits": 20, "alternate_smoothing": 0, "alternate_one_minus_smoothing": 16384}])
def test_spectral_subtraction_matches_tflm(options: dict[str, int]) -> None:
    """Five invokes in a row: the noise estimate is state carried between them."""
    rng = np.random.default_rng(len(options))
    model = _spectral_subtraction(40, **options)
    steps = [[rng.integers(0, 2**(8 + 4 * k), 40, dtype=np.uint64).astype(np.uint32)]
             for k in range(5)]
    steps[2][0][:2] = 2**32 - 1
    got = assert_matches_tflm(model, steps)
    assert len({g[1].tobytes() for g in got}) > 1


def _pcan(channels: int, snr_shift: int, lut: np.ndarray) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (channels,), "uint32")
    noise = b.add_input("noise", (channels,), "uint32")
    g = b.add_constant("lut", lut)
    y = b.add_tensor("y", (channels,), "uint32")
    b.add_operator("SignalPCAN", [x, noise, g], [y], custom_options=flex(snr_shift=snr_shift))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("snr_shift", [6, 0, 20])
def test_pcan_matches_tflm(snr_shift: int) -> None:
    rng = np.random.default_rng(snr_shift)
    lut = rng.integers(-32768, 32768, 125).astype(np.int16)  # extreme: int32 wrap paths too
    model = _pcan(40, snr_shift, lut)
    steps = []
    for k in range(4):
        bits = rng.integers(0, 33, 40).astype(np.uint64)
        noise = (rng.integers(0, 2**32, 40, dtype=np.uint64) >> (32 - bits)).astype(np.uint32)
        noise[:4] = [0, 1, 2, 3]
        x = rng.integers(0, 2**(8 * k + 8), 40, dtype=np.uint64).astype(np.uint32)
        steps.append([x, noise])
    assert_matches_tflm(model, steps)


def _log(channels: int, correction: int, scale: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (channels,), "uint32")
    y = b.add_tensor("y", (channels,), "int16")
    b.add_operator("SignalFilterBankLog", [x], [y],
                   custom_options=flex(input_correction_bits=correction, output_scale=scale))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("correction,scale", [(3, 64), (0, 1), (12, 1600), (0, 2**20 + 7)])
def test_filter_bank_log_matches_tflm(correction: int, scale: int) -> None:
    rng = np.random.default_rng(correction + scale)
    model = _log(4096, correction, scale)
    bits = rng.integers(0, 33, 4096).astype(np.uint64)
    x = (rng.integers(0, 2**32, 4096, dtype=np.uint64) >> (32 - bits)).astype(np.uint32)
    x[:6] = [0, 1, 2, 3, 2**31, 2**32 - 1]
    assert_matches_tflm(model, [[x]])


def test_spectral_subtraction_reset_zeroes_the_noise_estimate() -> None:
    from signal_cases import assert_reset_matches_tflm

    rng = np.random.default_rng(9)
    model = _spectral_subtraction(16)
    steps = [[rng.integers(0, 2**20, 16, dtype=np.uint64).astype(np.uint32)] for _ in range(4)]
    assert_reset_matches_tflm(model, steps[:2], steps[2:])
