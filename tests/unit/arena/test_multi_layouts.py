"""Two arenas and several models in one arena, against what TFLM reports on a Cortex-M4 (QEMU):
../shared/device-oracle/layouts.json. ``arm32-short-enums`` with the production allocator is
the reference build; the CMSIS-NN figures need the Cortex-M4 CMSIS-NN target of another branch
and skip until it is there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tinyarena.arena import allocate_model
from tinyarena.arena.multi import allocate_shared, allocate_split
from tinyarena.arena.targets import PROFILES
from tinyarena.errors import ArenaTooSmallError, PlanError
from tinyarena.model import read_model

ORACLE = Path(__file__).resolve().parents[4] / "shared" / "device-oracle" / "layouts.json"
MODELS = Path(__file__).resolve().parents[4] / "shared" / "models"


def _oracle() -> dict[str, Any]:
    if not ORACLE.exists() or not MODELS.is_dir():
        pytest.skip("../shared/device-oracle/layouts.json or ../shared/models absent")
    data: dict[str, Any] = json.loads(ORACLE.read_text())
    return data


def _target(config: str) -> str:
    if config == "m4-reference":
        return "arm32-short-enums"
    if "cortex-m4+fp" not in PROFILES:
        pytest.skip("needs the 'cortex-m4+fp' target with CMSIS-NN kernels (another branch)")
    return "cortex-m4+fp"  # the m4-* builds are hard-float: TFLM's TARGET_ARCH=cortex-m4+fp


def _kwargs(config: str) -> dict[str, Any]:
    """The CMSIS-NN configuration is the cortex-m4 target with its CMSIS-NN kernel set."""
    return {} if config == "m4-reference" else {"kernel_set": "cmsis-nn"}


def _model(name: str) -> Any:
    return read_model((MODELS / name).read_bytes())


CONFIGS = ["m4-reference", "m4-cmsis-nn"]


@pytest.mark.parametrize("config", CONFIGS)
def test_two_arenas_equal_the_device(config: str) -> None:
    oracle = _oracle()["two_arenas"][config]
    target = _target(config)
    extra = _kwargs(config)
    for name, r in oracle.items():
        if r.get("full_run_status") != "ok":
            continue
        s = allocate_split(_model(name), target=target, **extra)
        got = (s.persistent_used, s.persistent_min, s.non_persistent_used, s.non_persistent_min)
        want = (r["persistent_used"], r["min_persistent"], r["non_persistent_used"],
                r["min_non_persistent"])
        assert got == want, name


@pytest.mark.parametrize("config", CONFIGS)
def test_shared_arena_equals_the_device(config: str) -> None:
    oracle = _oracle()["shared_arena"][config]
    target = _target(config)
    extra = _kwargs(config)
    for pair, r in oracle.items():
        if r.get("full_run_status") != "ok":
            continue
        names = pair.split("+")
        s = allocate_shared([_model(n) for n in names], target=target, **extra)
        assert (s.head, s.tail, s.used, s.min_arena) == (
            r["shared_head"], r["shared_tail"], r["total_used"], r["min_arena"]), pair
        for name, m in zip(names, s.models):
            own = r["per_model_used"][name]
            assert (m.head, m.tail) == (own["head_after"], own["tail_after"]), (pair, name)
            alone = r["single_model_reference"][name]
            assert m.own_head == alone["head"], (pair, name)
        # The first model's tail is its single-arena tail; each later one adds its own tail
        # less the allocator objects it no longer creates.
        overhead = r["allocator_overhead_after_create"]["tail"]
        first, *rest = names
        assert s.models[0].own_tail == r["single_model_reference"][first]["tail"]
        for name, m in zip(rest, s.models[1:]):
            assert m.own_tail == r["single_model_reference"][name]["tail"] - overhead


def test_order_matters_for_the_shared_minimum() -> None:
    """The device's trained_lstm_int8 + keyword_scrambled pair needs 1,472 bytes more than the
    other order: keyword_scrambled's Prepare runs with the LSTM's tail already taken."""
    _oracle()
    a, b = _model("keyword_scrambled.tflite"), _model("trained_lstm_int8.tflite")
    one = allocate_shared([a, b], target="arm32-short-enums")
    two = allocate_shared([b, a], target="arm32-short-enums")
    assert one.used == two.used and two.min_arena - one.min_arena == 17088 - 15616


def test_split_non_persistent_minimum_is_above_its_head() -> None:
    """hello_world: 128 bytes of head, but Prepare's temp tensors and the planner's working
    area need 560 bytes of non-persistent arena (device figures)."""
    _oracle()
    s = allocate_split(_model("hello_world_float.tflite"), target="arm32-short-enums")
    assert (s.non_persistent_used, s.non_persistent_min) == (128, 560)
    single = allocate_model(_model("hello_world_float.tflite"), target="arm32-short-enums")
    assert s.non_persistent_used == single.head


def test_given_sizes_are_checked() -> None:
    _oracle()
    m = _model("hello_world_float.tflite")
    ok = allocate_split(m, target="arm32-short-enums", persistent_size=624,
                        non_persistent_size=560)
    assert ok.persistent_used == 624
    with pytest.raises(ArenaTooSmallError, match="non-persistent arena of 544 bytes"):
        allocate_split(m, target="arm32-short-enums", persistent_size=624,
                       non_persistent_size=544)
    with pytest.raises(ArenaTooSmallError, match="persistent arena of 608 bytes"):
        allocate_split(m, target="arm32-short-enums", persistent_size=608)
    with pytest.raises(ArenaTooSmallError, match="needs 7328 bytes"):
        allocate_shared([_model("micro_speech_quantized.tflite"),
                         _model("hello_world_int8.tflite")],
                        target="arm32-short-enums", arena_size=7312)
    with pytest.raises(PlanError):
        allocate_shared([])
    with pytest.raises(PlanError):
        allocate_split(m, persistent_size=-1)
