"""A whole audio front end made of signal-library ops (the chain of TFLM's micro_speech
audio_preprocessor, plus Framer in front and Stacker behind), built with the builder: arena
numbers and every output of several invokes identical to the wheel's."""

from __future__ import annotations

import numpy as np
import pytest

from model_families import add_signal_chain
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
    logs = add_signal_chain(b, framed, rng, frame=frame, fft_length=fft_length,
                            channels=CHANNELS, min_signal_remaining=819, output_scale=64)
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
