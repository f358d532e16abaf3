"""A patched MobileNetV2 on TFLM built for Cortex-M4 with CMSIS-NN (QEMU): the arena tinyarena
predicts, to the byte, and the original model's outputs (figures in tests/data/patches_device.json,
with their provenance)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tinyarena.arena import allocate_model
from tinyarena.rewrite.patches import patch_model

FIGURES = json.loads((Path(__file__).resolve().parents[1] / "data" /
                      "patches_device.json").read_text())
MODEL = "mobilenet_v2_quantized_1x3x224x224.tflite"


@pytest.fixture(scope="module")
def patched(shared_models: Path) -> bytes:
    p = FIGURES["patched"]
    result = patch_model(shared_models / MODEL, p["split_after"], tuple(p["grid"]),
                         cuts=tuple(tuple(c) for c in p["cuts"]))
    data = bytes(result.model)
    assert hashlib.sha256(data).hexdigest() == p["sha256"], \
        "patch_model now writes another file than the one measured on the device"
    return data


def test_patched_mobilenet_arena_equals_the_device(patched: bytes) -> None:
    layout = allocate_model(patched, target="cortex-m4+fp")
    assert layout.total == FIGURES["patched"]["arena_used_bytes"]
    assert layout.min_arena == FIGURES["patched"]["min_arena"]
    # the device's own unpatched figure, for scale: more than 3.5x smaller
    assert FIGURES["original"]["arena_used_bytes"] > 3.5 * layout.total


@pytest.mark.slow
def test_patched_mobilenet_outputs_equal_the_device(patched: bytes) -> None:
    from device_outputs import run_device_input

    out = run_device_input(patched, "cortex-m4+fp", "cmsis-nn")
    measured = FIGURES["patched"]["output_hex"]
    assert out[0].hex()[:len(measured)] == measured
    assert measured == FIGURES["original"]["output_hex"]  # the patch changed no output byte
