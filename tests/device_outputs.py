"""Output figures of the device oracle (../shared/device-oracle): TFLM built for Cortex-M and run
on QEMU, one invoke on a stated deterministic input. Tests skip where the folder is absent.

``CONFIGS`` maps each measured configuration to the tinyarena target and kernel set that claim
to be that build.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

DEVICE_ORACLE = Path(__file__).resolve().parents[2] / "shared" / "device-oracle"
# The m4-* builds are hard-float (-mfloat-abi=hard, FPv4-SP): TFLM's TARGET_ARCH=cortex-m4+fp;
# m55-* is hard-float cortex-m55; m3-* soft-float cortex-m3 (provenance.configs).
CONFIGS: dict[str, tuple[str, str]] = {
    "m4-cmsis-nn": ("cortex-m4+fp", "cmsis-nn"),
    "m4-reference": ("cortex-m4+fp", "reference"),
    "m55-cmsis-nn": ("cortex-m55", "cmsis-nn"),
    "m3-cmsis-nn": ("cortex-m3", "cmsis-nn"),
}


@lru_cache(maxsize=None)
def figures(file: str) -> dict[str, Any]:
    """``{configuration: {model file: figures}}`` of models.json or sweeps.json ({} if absent)."""
    path = DEVICE_ORACLE / file
    if not path.is_file():
        return {}
    results: dict[str, Any] = json.loads(path.read_text())["results"]
    return results


def model_path(file: str, name: str) -> Path:
    """Where the model a figure belongs to lives: ../shared/models for models.json, the
    oracle's own models/ folder for sweeps.json."""
    if file == "sweeps.json":
        return DEVICE_ORACLE / "models" / name
    return DEVICE_ORACLE.parent / "models" / name


def device_input(nbytes: int) -> np.ndarray:
    """The oracle's input: byte k of each input tensor's raw data is (k * 37 + 11) & 0xFF."""
    k = np.arange(nbytes, dtype=np.int64)
    return ((k * 37 + 11) & 0xFF).astype(np.uint8)


def run_device_input(model: Any, target: str, kernel_set: str | None = None) -> list[bytes]:
    """tinyarena's outputs (raw bytes) after one invoke on the oracle's input."""
    from tinyarena import Interpreter

    ip = Interpreter(model, target=target, kernel_set=kernel_set)
    ip.allocate_tensors()
    for i in range(ip.inputs_size()):
        x = ip.input(i)
        ip.set_input(i, device_input(x.nbytes).view(x.dtype).reshape(x.shape))
    ip.invoke()
    return [ip.output(i).tobytes() for i in range(ip.outputs_size())]


def expected_outputs(fig: dict[str, Any]) -> list[tuple[int, int, str, bool]]:
    """(byte count, checksum, hex, hex cut) of each output, as the oracle recorded them."""
    return [(o["bytes"], o["checksum"], o["hex"], o["hex_truncated"]) for o in fig["outputs"]]


def matches(fig: dict[str, Any], outputs: list[bytes]) -> bool:
    """Every output's size, byte sum mod 2**32 and (possibly cut) hex equal the oracle's."""
    want = expected_outputs(fig)
    if len(want) != len(outputs):
        return False
    for (n, checksum, hexed, _), got in zip(want, outputs):
        total = int(np.frombuffer(got, np.uint8).sum(dtype=np.uint64)) & 0xFFFFFFFF
        if len(got) != n or total != checksum or got.hex()[:len(hexed)] != hexed:
            return False
    return True


__all__ = ["CONFIGS", "DEVICE_ORACLE", "device_input", "expected_outputs", "figures",
           "matches", "model_path", "run_device_input"]
