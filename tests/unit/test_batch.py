"""``tinyarena.batch``: many models x many targets, the device's numbers, any executor."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinyarena import batch
from tinyarena.builder import ModelBuilder

DEVICE = Path(__file__).resolve().parents[3] / "shared" / "device-oracle" / "models.json"
# Device-oracle configurations whose target names mean the same build in tinyarena.
CONFIGS = {"m55-cmsis-nn": "cortex-m55", "m3-cmsis-nn": "cortex-m3"}
MODELS = ("hello_world_int8.tflite", "micro_speech_quantized.tflite", "person_detect.tflite")


def _device() -> dict:
    if not DEVICE.is_file():
        pytest.skip("../shared/device-oracle is not present")
    return json.loads(DEVICE.read_text())["results"]


def test_size_models_gives_the_device_figures_model_by_model_target_by_target(
        shared_models: Path) -> None:
    device = _device()
    paths = [str(shared_models / m) for m in MODELS]
    records = batch.size_models(paths, list(CONFIGS.values()))
    assert [(r["model"], r["target"]) for r in records] == \
        [(p, t) for p in paths for t in CONFIGS.values()]
    for r in records:
        config = next(c for c, t in CONFIGS.items() if t == r["target"])
        figures = device[config][Path(r["model"]).name]
        assert (r["total"], r["min_arena"]) == (figures["arena_used_bytes"],
                                                figures["min_arena"]), r["model"]


def test_every_executor_gives_the_same_records(shared_models: Path) -> None:
    paths = [str(shared_models / m) for m in MODELS] + [str(shared_models / "missing.tflite")]
    targets = ["cortex-m55", "host-x64"]
    one = batch.size_models(paths, targets)
    assert batch.size_models(paths, targets, jobs=2) == one
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert batch.size_models(paths, targets, executor=pool) == one
    missing = [r for r in one if r["model"].endswith("missing.tflite")]
    assert [r["target"] for r in missing] == targets  # one error record per target
    assert all("error" in r for r in missing)


def test_a_model_is_parsed_once_for_all_its_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    import tinyarena.model as model_module

    calls = []
    real = model_module.read_model

    def counting(source):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(source)

    monkeypatch.setattr(model_module, "read_model", counting)
    records = batch.size_models([_tiny_model()], ["host-x64", "cortex-m3", "cortex-m55"])
    assert len(records) == 3 and not any("error" in r for r in records)
    assert len(calls) == 1


def test_candidates_as_bytes_are_named(tmp_path: Path) -> None:
    data = _tiny_model()
    path = tmp_path / "tiny.tflite"
    path.write_bytes(data)
    from_bytes = batch.size_models([data, data], ["cortex-m3"], names=["a", "b"])
    from_file = batch.size_models([str(path)], ["cortex-m3"])
    assert [r["model"] for r in from_bytes] == ["a", "b"]
    assert from_bytes[0]["min_arena"] == from_file[0]["min_arena"]
    assert batch.size_models([data], ["cortex-m3"])[0]["model"] == "<model 0>"


def test_check_models_against_a_budget_per_target(shared_models: Path) -> None:
    device = _device()
    person = str(shared_models / "person_detect.tflite")
    need = device["m55-cmsis-nn"]["person_detect.tflite"]["min_arena"]
    fits, over = batch.check_models([person], need, ["cortex-m55"]) + \
        batch.check_models([person], need - 16, ["cortex-m55"])
    assert fits["fits"] is True and fits["headroom"] == 0
    assert over["fits"] is False and over["over_by"] == 16


def test_optimize_models_writes_one_model_per_input_and_target(tmp_path: Path) -> None:
    src = tmp_path / "in.tflite"
    src.write_bytes(_tiny_model())
    out = tmp_path / "out" / "in.tflite"
    records = batch.optimize_models([str(src)], [str(out)], ["cortex-m3", "cortex-m55"])
    assert [r["output"] for r in records] == [str(tmp_path / "out" / t / "in.tflite")
                                              for t in ("cortex-m3", "cortex-m55")]
    for r in records:
        written = Path(r["output"]).read_bytes()
        assert batch.size_models([written], [r["target"]])[0]["min_arena"] == \
            r["after"]["min_arena"]


def _tiny_model() -> bytes:
    """conv -> reshape -> fully connected, int8: small, quick, with a plan worth making."""
    import numpy as np

    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 2), "int8", scale=0.05, zero_point=0)
    w = b.add_constant("w", rng.integers(-20, 20, (4, 3, 3, 2)).astype(np.int8), scale=0.02,
                       zero_point=0)
    c = b.add_tensor("c", (1, 8, 8, 4), "int8", scale=0.1, zero_point=0)
    b.add_operator("CONV_2D", [x, w, None], [c], padding="SAME", stride_w=1, stride_h=1)
    shape = b.add_constant("shape", np.array([1, 256], np.int32))
    r = b.add_tensor("r", (1, 256), "int8", scale=0.1, zero_point=0)
    b.add_operator("RESHAPE", [c, shape], [r])
    fw = b.add_constant("fw", rng.integers(-20, 20, (10, 256)).astype(np.int8), scale=0.02,
                        zero_point=0)
    y = b.add_tensor("y", (1, 10), "int8", scale=0.2, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [r, fw, None], [y])
    b.mark_output(y)
    return b.build()
