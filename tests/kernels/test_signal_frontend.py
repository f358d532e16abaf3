"""A whole audio front end made of signal-library ops (the chain of TFLM's micro_speech
audio_preprocessor, plus Framer in front and Stacker behind), built with the builder: arena
numbers and every output of several invokes identical to the wheel's."""

from __future__ import annotations

import numpy as np
import pytest

from signal_cases import assert_matches_tflm, flex
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

CHANNELS = 40


def frontend(rng: np.random.Generator, fft_length: int = 512, step: int = 160,
             frame: int = 480) -> bytes:
    b = ModelBuilder()
    audio = b.add_input("audio", (step,), "int16")
    framed = b.add_tensor("framed", (1, frame), "int16")
    valid = b.add_tensor("framed_valid", (), "bool")
    b.add_operator("SignalFramer", [audio], [framed, valid],
                   custom_options=flex(frame_size=frame, frame_step=step, prefill=True))
    hann = (np.sin(np.pi * (np.arange(frame) + 0.5) / frame) ** 2 * 4096).astype(np.int16)
    windowed = b.add_tensor("windowed", (1, frame), "int16")
    b.add_operator("SignalWindow", [framed, b.add_constant("window", hann)], [windowed],
                   custom_options=flex(shift=12))
    flat = b.add_tensor("flat", (frame,), "int16")
    b.add_operator("RESHAPE", [windowed, b.add_constant("shape", np.array([frame], np.int32))],
                   [flat], new_shape=[frame])
    scaled = b.add_tensor("scaled", (frame,), "int16")
    scale = b.add_tensor("scale_bits", (), "int32")
    b.add_operator("SignalFftAutoScale", [flat], [scaled, scale], custom_options=flex())
    bins = fft_length // 2 + 1
    spectrum = b.add_tensor("spectrum", (2 * bins,), "int16")
    b.add_operator("SignalRfft", [scaled], [spectrum],
                   custom_options=flex(T=7, fft_length=fft_length))
    energy = b.add_tensor("energy", (bins,), "uint32")
    b.add_operator("SignalEnergy", [spectrum], [energy],
                   custom_options=flex(start_index=0, end_index=bins))
    starts = np.linspace(4, bins - 12, CHANNELS + 1).astype(np.int16)
    widths = np.full(CHANNELS + 1, 8, np.int16)
    weight_starts = (np.arange(CHANNELS + 1) * 8).astype(np.int16)
    ramp = np.tile(np.linspace(0, 4095, 8).astype(np.int16), CHANNELS + 1)
    bank = b.add_tensor("bank", (CHANNELS,), "uint64")
    b.add_operator("SignalFilterBank", [
        energy, b.add_constant("weights", ramp), b.add_constant("unweights", 4096 - ramp),
        b.add_constant("freq_starts", starts), b.add_constant("weight_starts", weight_starts),
        b.add_constant("widths", widths)], [bank], custom_options=flex(num_channels=CHANNELS))
    root = b.add_tensor("root", (CHANNELS,), "uint32")
    b.add_operator("SignalFilterBankSquareRoot", [bank, scale], [root], custom_options=flex())
    clean = b.add_tensor("clean", (CHANNELS,), "uint32")
    noise = b.add_tensor("noise", (CHANNELS,), "uint32")
    b.add_operator("SignalFilterBankSpectralSubtraction", [root], [clean, noise],
                   custom_options=flex(num_channels=CHANNELS, smoothing=409,
                                       one_minus_smoothing=15975, alternate_smoothing=983,
                                       alternate_one_minus_smoothing=15401, smoothing_bits=10,
                                       min_signal_remaining=819, clamping=False,
                                       spectral_subtraction_bits=14))
    lut = rng.integers(-2000, 8000, 125).astype(np.int16)
    gained = b.add_tensor("gained", (CHANNELS,), "uint32")
    b.add_operator("SignalPCAN", [clean, noise, b.add_constant("gain_lut", lut)], [gained],
                   custom_options=flex(snr_shift=6))
    logs = b.add_tensor("logs", (CHANNELS,), "int16")
    b.add_operator("SignalFilterBankLog", [gained], [logs],
                   custom_options=flex(input_correction_bits=3, output_scale=64))
    stacked = b.add_tensor("stacked", (3 * CHANNELS,), "int16")
    ready = b.add_tensor("stacked_valid", (), "bool")
    b.add_operator("SignalStacker", [logs], [stacked, ready], custom_options=flex(
        num_channels=CHANNELS, stacker_left_context=2, stacker_right_context=0, stacker_step=1))
    for t in (logs, stacked, ready, valid):
        b.mark_output(t)
    return b.build()


def _audio(rng: np.random.Generator, n: int, step: int = 160) -> list[list[np.ndarray]]:
    t = np.arange(n * step)
    tone = 6000 * np.sin(2 * np.pi * 440 * t / 16000) + rng.normal(0, 800, t.size)
    samples = np.clip(tone, -32768, 32767).astype(np.int16)
    return [[samples[k * step:(k + 1) * step]] for k in range(n)]


def test_audio_frontend_matches_tflm() -> None:
    rng = np.random.default_rng(2026)
    model = frontend(rng)
    got = assert_matches_tflm(model, _audio(rng, 6))
    assert len({g[0].tobytes() for g in got}) > 3  # the features move from frame to frame


@pytest.mark.parametrize("target", ["arm32", "arm32-short-enums"])
def test_audio_frontend_sizes_on_32_bit_targets(target: str) -> None:
    """Sizing needs only the ops' allocation behaviour: the 32-bit tail is smaller than the
    wheel's (4-byte pointers in the params, rings and kissfft state)."""
    model = read_model(frontend(np.random.default_rng(1)))
    host, arm = allocate_model(model), allocate_model(model, target=target)
    assert arm.total < host.total
    assert arm.head == host.head  # the same tensors and scratch are planned


def test_audio_frontend_minimum_arena_is_tight() -> None:
    """min_arena (Prepare's temp tensors next to the rings' persistent buffers included)
    works in the wheel and 16 bytes less fails."""
    from tflm_oracle import tflm_fits

    model = frontend(np.random.default_rng(3))
    need = allocate_model(read_model(model)).min_arena
    assert tflm_fits(model, need)[0]
    assert not tflm_fits(model, need - 16)[0]
