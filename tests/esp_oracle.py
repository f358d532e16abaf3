"""Figures of the ESP oracle (../shared/esp-oracle/figures.json): esp-tflite-micro 1.4.0 with
esp-nn 1.1.2, 1.2.0 and 1.2.3, built for the host with the Xtensa struct layout. Tests skip
where the folder is absent.

``CONFIGS`` maps each measured configuration to the tinyarena target, kernel set and esp-nn
version that claim to be that build.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
ESP_ORACLE = SHARED / "esp-oracle" / "figures.json"
CONFIGS: dict[str, tuple[str, str, str | None]] = {
    "esp-reference": ("esp32s3", "reference", None),
    "esp32-espnn-1.2.3": ("esp32", "esp-nn", "1.2.3"),
    "esp32p4-espnn-1.2.3": ("esp32p4", "esp-nn", "1.2.3"),
    "esp32s3-espnn-1.1.2": ("esp32s3", "esp-nn", "1.1.2"),
    "esp32s3-espnn-1.2.0": ("esp32s3", "esp-nn", "1.2.0"),
    "esp32s3-espnn-1.2.3": ("esp32s3", "esp-nn", "1.2.3"),
}

# Where tinyarena's min_arena differs from the oracle's, and why; tests mark these xfail(strict).
# Every esp-nn softmax (``esp_nn_softmax_s8_opt``, ``_esp32s3`` and ``_esp32p4``, every release)
# stores 4 * depth bytes in a scratch that esp_nn/softmax.cc's Prepare sized 4 * dims[1]: for
# this [2,3,17] input 68 bytes into 12, past the head. tinyarena's min_arena (688) keeps that
# overrun clear of the tail. The oracle's generic-softmax runs crashed at 640 and survived at
# 656 by luck (the bytes overwritten there were not read again); its S3 and P4 1.2.3 runs used
# the ANSI softmax (no scratch) in place of the chip's, so they did not overrun at all.
_SOFTMAX_OVERRUN = ("esp-nn's softmax writes 4*depth bytes into a 4*dims[1] scratch (68 into "
                    "12): tinyarena keeps the overrun clear of the tail (688); the oracle's "
                    "656 survived it by luck, or ran the ANSI softmax instead of the chip's")
KNOWN_MIN_ARENA_DIFFERENCES: dict[tuple[str, str], str] = {
    (config, "device-oracle/models/softmax_int8_61.tflite"): _SOFTMAX_OVERRUN
    for config in ("esp32-espnn-1.2.3", "esp32s3-espnn-1.1.2", "esp32s3-espnn-1.2.0",
                   "esp32s3-espnn-1.2.3", "esp32p4-espnn-1.2.3")
}


@lru_cache(maxsize=None)
def results() -> dict[str, Any]:
    """``{configuration: {model path relative to shared/: figures}}`` ({} if absent)."""
    if not ESP_ORACLE.is_file():
        return {}
    data: dict[str, Any] = json.loads(ESP_ORACLE.read_text())["results"]
    return data


def ok_cases() -> list[tuple[str, str]]:
    """(configuration, model) for every figure with status ok."""
    return [(config, name) for config, models in results().items()
            for name, fig in models.items() if fig.get("status") == "ok"]


_DIMS = re.compile(r"(\w+)=(-?\d+)(?:[x,](-?\d+))?(?:x(-?\d+))?")


def parse_params(text: str) -> dict[str, tuple[int, ...]]:
    """``in=10x49x1 filt=4x10x1 out=5x25x64 stride=2,2 pad=1,4`` -> {"in": (10, 49, 1), ...}
    (width, height[, channels]; stride and pad are (width, height))."""
    return {m[1]: tuple(int(v) for v in m.groups()[1:] if v is not None)
            for m in _DIMS.finditer(text)}


__all__ = ["CONFIGS", "ESP_ORACLE", "KNOWN_MIN_ARENA_DIFFERENCES", "SHARED", "ok_cases",
           "parse_params", "results"]
