"""Cortex-M targets against TFLM built with arm-none-eabi-gcc and run on QEMU (issue 9).

``../shared/device-oracle`` (README there) holds, per configuration and model, what the real
TFLM reported: ``arena_used_bytes`` and the minimum working arena of the production
``MicroInterpreter`` (16-byte steps, each trial a fresh emulator; a crash counts as failure),
the ``RecordingMicroInterpreter``'s head, tail and per-category [used, requested, count] (the
recording allocator, whose own objects are sized for the 32-bit build), and the framework
``sizeof``s of each build. Every figure must match to the byte, for every configuration, with
the cortex-m* target it was measured on and the kernel set it linked.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.targets import get_target
from tinyarena.model import read_model

SHARED = Path(__file__).resolve().parents[3] / "shared"
ORACLE = SHARED / "device-oracle"

# configuration -> (tinyarena target, kernel set). The m4-* builds are hard-float
# (-mfloat-abi=hard, FPv4-SP): TFLM's TARGET_ARCH=cortex-m4+fp; m55-* is hard-float cortex-m55,
# m3-* soft-float cortex-m3 (provenance.configs).
CONFIGS = {
    "m4-cmsis-nn": ("cortex-m4+fp", "cmsis-nn"),
    "m4-reference": ("cortex-m4+fp", "reference"),
    "m55-cmsis-nn": ("cortex-m55", "cmsis-nn"),
    "m3-cmsis-nn": ("cortex-m3", "cmsis-nn"),
}
# figure file -> folder of the models it names
FILES = {"models.json": SHARED / "models", "sweeps.json": ORACLE / "models"}


@lru_cache(maxsize=None)
def _results(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ORACLE / name).read_text())
    return data


def _cases() -> list[Any]:
    if not ORACLE.is_dir():
        return [pytest.param("absent", "absent", "absent",
                             marks=pytest.mark.skip(reason="../shared/device-oracle absent"))]
    cases = []
    for name in FILES:
        for config, models in _results(name)["results"].items():
            for model in sorted(models):
                cases.append(pytest.param(name, config, model, id=f"{config}-{model}"))
    return cases


@pytest.mark.parametrize("figures,config,model", _cases())
def test_device_figures(figures: str, config: str, model: str) -> None:
    fig = _results(figures)["results"][config][model]
    if fig["status"] != "ok":  # a figure that was not measured is not a zero
        pytest.skip(f"{config} {model}: not measured ({fig['status'][:60]})")
    target, kernels = CONFIGS[config]
    parsed = read_model((FILES[figures] / model).read_bytes())
    production = allocate_model(parsed, target=target, kernel_set=kernels,
                                allocator="production")
    recording = allocate_model(parsed, target=target, kernel_set=kernels,
                               allocator="recording")
    rec = fig["recording"]
    got = {
        "arena_used_bytes": production.total,
        "min_arena": production.min_arena,
        "recording": (recording.head, recording.tail, recording.total),
        "categories": {k: [c.used, c.requested, c.count]
                       for k, c in recording.categories.items()},
    }
    expected = {
        "arena_used_bytes": fig["arena_used_bytes"],
        "min_arena": fig["min_arena"],
        "recording": (rec["head"], rec["tail"], rec["total"]),
        "categories": rec["categories"],
    }
    assert got == expected
    assert production.kernel_set == kernels


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_framework_sizeofs(config: str) -> None:
    """The build's own sizeof()s of the structs the arena holds, and its enum ABI."""
    if not ORACLE.is_dir():
        pytest.skip("../shared/device-oracle absent")
    build = _results("models.json")["provenance"]["configs"][config]
    profile = get_target(*CONFIGS[config])
    for struct in ("TfLiteTensor", "TfLiteEvalTensor", "NodeAndRegistration",
                   "TfLiteAffineQuantization", "TfLiteIntArray"):
        assert profile.sizeof(struct) == build["sizeof"][struct], struct
    assert build["sizeof"]["TfLiteType"] == 1 and build["Tag_ABI_enum_size"] == "small"
    assert profile.short_enums


def test_min_arena_is_the_device_minimum_where_prepare_overlaps() -> None:
    """On MVE, FULLY_CONNECTED computes persistent kernel sums in Prepare while its temp
    tensors are live; TFLM's checks pass 16 bytes lower, where the device hard-faults."""
    if not ORACLE.is_dir():
        pytest.skip("../shared/device-oracle absent")
    fig = _results("sweeps.json")["results"]["m55-cmsis-nn"]["fc_int8_36.tflite"]
    layout = allocate_model(read_model((ORACLE / "models" / "fc_int8_36.tflite").read_bytes()),
                            target="cortex-m55")
    assert layout.min_arena == fig["min_arena"]
    assert layout.tflm_checked_min_arena == layout.min_arena - 16
    assert fig["min_arena_detail"]["trials"][str(layout.tflm_checked_min_arena)] == "crash"
    assert "FULLY_CONNECTED" in layout.min_arena_note
