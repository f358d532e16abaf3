"""Optimized plans under CMSIS-NN's overlap rules, run on the device (issue 24, item 3).

``tests/data/cmsis_nn_overlap_device.json`` holds figures measured with TFLM 90b983c2 and
CMSIS-NN 4ab83cc3 built for the Cortex-M4 (DSP), Cortex-M55 (MVE) and Cortex-M3 (plain C) and
run in QEMU (its ``provenance`` says how): for each model that ``optimize --target`` changed,
the plan (operator order and OfflineMemoryAllocation offsets, as ``optimize`` wrote them),
the device's outputs of the original model, whether the optimized model's outputs were
byte-identical on the same firmware at its predicted minimum arena, whether it failed 16 bytes
below, and its ``arena_used_bytes`` there.

Checked here: every recorded plan passed on the device; tinyarena, given the same plan, predicts
that minimum arena and ``arena_used_bytes``; tinyarena's CMSIS-NN interpreter, running the
optimized model with its overlaps real in the emulated arena, gives the device's outputs (the
kernel contract of docs/architecture.md); and the rules in the code still cover each plan
(``safety.safe_for`` with the plan's shifts names the target's kernel set). Models come from
../shared/models (skipped where absent) and tests/model_families.py.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from device_outputs import run_device_input
from tflm_oracle import SHARED_MODELS
from tinyarena.arena import allocate_model
from tinyarena.model import read_model
from tinyarena.model.metadata import (
    OFFLINE_PLAN_NAME,
    PLAN_SAFETY_NAME,
    PlanSafety,
    encode_offline_plan,
    encode_plan_safety,
)
from tinyarena.optimize.safety import op_keys, safe_for, target_key
from tinyarena.arena.targets import get_target
from tinyarena.rewrite.rewriter import rewrite_model

FIGURES = Path(__file__).resolve().parents[1] / "data" / "cmsis_nn_overlap_device.json"
_OPTIMIZE_TESTS = Path(__file__).resolve().parents[1] / "unit" / "optimize"


def _window(*args: Any, **kwargs: Any) -> bytes:
    sys.path.insert(0, str(_OPTIMIZE_TESTS))
    from optimize_models import window_model

    out: bytes = window_model(*args, **kwargs)
    return out


def _softmax() -> bytes:
    sys.path.insert(0, str(_OPTIMIZE_TESTS))
    from optimize_models import elementwise_model

    out: bytes = elementwise_model("SOFTMAX")
    return out


SYNTHETIC: dict[str, Callable[[], bytes]] = {
    # one op between two 1x1 convs (tests/unit/optimize/optimize_models.py), each a code path
    # whose rule no real model above reaches, or reaches only in its common case
    "conv1x1_fast_169px": lambda: _window("CONV_2D", 1, 1, "VALID", 1, "int8", 1, size=13),
    "conv1x1_stride2": lambda: _window("CONV_2D", 1, 2, "VALID", 1, "int8", 1, size=13),
    "conv3x3_im2col": lambda: _window("CONV_2D", 3, 1, "SAME", 1, "int8", 1),
    "dw3x3_128ch": lambda: _window("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 1,
                                   channels=128),
    "dw5x5_opt": lambda: _window("DEPTHWISE_CONV_2D", 5, 1, "SAME", 1, "int8", 1),
    "dw3x3_mult2": lambda: _window("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 2),
    "maxpool3x3_s1": lambda: _window("MAX_POOL_2D", 3, 1, "SAME", 1, "int8", 1),
    "maxpool2x2_s2": lambda: _window("MAX_POOL_2D", 2, 2, "SAME", 1, "int8", 1),
    "avgpool3x3_s1": lambda: _window("AVERAGE_POOL_2D", 3, 1, "SAME", 1, "int8", 1),
    "pad_hw": lambda: _window("PAD", dtype="int8", pads=((0, 0), (2, 0), (0, 1), (0, 0))),
    "pad_hwc": lambda: _window("PAD", dtype="int8", pads=((0, 0), (1, 1), (1, 1), (1, 2))),
    "softmax": _softmax,
}
"""Synthetic models run on the device too (names ``synthetic/<key>`` in the figures)."""
TARGETS = {"m4-cmsis-nn": "cortex-m4", "m55-cmsis-nn": "cortex-m55", "m3-cmsis-nn": "cortex-m3"}


def _target(config: str) -> str:
    """The tinyarena target that claims to be the configuration's build: the hard-float
    Cortex-M4 is ``cortex-m4+fp`` where that target exists (``cortex-m4`` before it did)."""
    if config == "m4-cmsis-nn":
        try:
            get_target("cortex-m4+fp")
            return "cortex-m4+fp"
        except Exception:  # noqa: BLE001 - no such target in this version
            return "cortex-m4"
    return TARGETS[config]


def _figures() -> dict[str, Any]:
    if not FIGURES.is_file():
        return {"provenance": {}, "results": {}}
    data: dict[str, Any] = json.loads(FIGURES.read_text())
    return data


def _cases() -> list[object]:
    cases: list[object] = []
    for config, models in _figures()["results"].items():
        for name, fig in models.items():
            if fig.get("offsets"):
                cases.append(pytest.param(config, name, id=f"{config}-{name}"))
    return cases


def _source(name: str) -> bytes:
    if name.startswith("synthetic/"):
        return SYNTHETIC[name.split("/", 1)[1]]()
    if name.startswith("family/"):
        import model_families

        return model_families.FAMILIES[name.split("/", 1)[1]]()
    path = SHARED_MODELS / name
    if not path.is_file():
        pytest.skip("../shared/models is not present")
    return path.read_bytes()


def _optimized(data: bytes, fig: dict[str, Any]) -> bytes:
    """The recorded plan applied to the original model as ``optimize`` writes it."""
    n_subgraphs = len(read_model(data).subgraphs)
    s = fig["plan_safety"]
    safety = PlanSafety(tuple(s["safe_for"]), s["planned_for"], s["target"], tuple(s["rules"]))
    edits: dict[str, Any] = {"metadata": {
        OFFLINE_PLAN_NAME: encode_offline_plan(fig["offsets"], n_subgraphs),
        PLAN_SAFETY_NAME: encode_plan_safety(safety)}}
    if fig["order"] != list(range(len(fig["order"]))):
        edits["operator_order"] = {0: fig["order"]}
    out: bytes = rewrite_model(data, **edits)
    return out


def test_figures_have_provenance() -> None:
    prov = _figures()["provenance"]
    if not prov:
        pytest.skip(f"{FIGURES.name} is not present")
    assert prov["tflm_commit"].startswith("90b983c2")
    assert prov["cmsis_nn_commit"].startswith("4ab83cc3")
    assert set(prov["configs"]) == set(TARGETS)
    for config in TARGETS:
        assert prov["configs"][config]["qemu_board"] and prov["configs"][config]["cflags"]


@pytest.mark.parametrize("config,name", _cases())
def test_optimized_plan_on_the_device(config: str, name: str) -> None:
    fig = _figures()["results"][config][name]
    device = fig["device"]
    # what the device showed (the figures are only committed when these hold)
    assert device["original_large_arena"]["status"] == "ok"
    assert device["optimized_at_predicted_min"]["status"] == "ok"
    assert device["optimized_16_below"]["status"] != "ok"
    assert device["outputs_identical"]
    target = _target(config)
    data = _source(name)
    optimized = _optimized(data, fig)
    assert hashlib.sha256(optimized).hexdigest() == fig["optimized_sha256"]
    layout = allocate_model(optimized, target=target)
    assert layout.min_arena == fig["after_min_arena"]
    assert layout.total == device["optimized_at_predicted_min"]["arena_used_bytes"]
    assert allocate_model(data, target=target).min_arena == fig["before_min_arena"]
    # tinyarena's CMSIS-NN kernels under the same overlaps give the device's bytes (float
    # models only where the firmware's float arithmetic is the target's: provenance)
    model = read_model(optimized)
    floats = any(t.type.name == "FLOAT32" for sg in model.subgraphs for t in sg.tensors)
    if not floats or _figures()["provenance"]["configs"][config]["float_outputs_comparable"]:
        outputs = run_device_input(optimized, target)
        assert [hashlib.sha256(o).hexdigest() for o in outputs] == \
            [o["sha256"] for o in device["outputs"]]
    # the rules in the code still cover this plan, shift by shift
    ops = model.subgraphs[0].operators
    offs = layout.tensor_offsets
    used = [(rule, op_keys(model, ops[op])) for op, _, rule in fig["aliases"]]
    shifts = [(model, ops[p["op"]], offs[(0, ops[p["op"]].outputs[0])]
               - offs[(0, ops[p["op"]].inputs[0])]) for p in fig["partial"]]
    assert target_key(get_target(target)) in safe_for(used, shifts)
