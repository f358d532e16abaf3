"""Resource variables in the tensor arena (``export``'s ``CreateInterpreter``) and in a second
arena (ESPHome's micro_wake_word, ``size --separate-variables``), against TFLM built for the
host: ``resource_variables_tflm_host.json`` (how it was measured: its ``provenance``).

Every figure must match: arena_used_bytes and the minimum (which fails 16 bytes below) of the
one arena, and of both arenas in ESPHome's layout, for the model's own variable count and for
ESPHome's 20 (the ILP32 build, tinyarena's arm32 layout; the x64 build: the variables arena).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from model_families import wake_word
from tinyarena.arena import allocate_model
from tinyarena.arena.allocator import resource_variable_count
from tinyarena.examples.streaming import streaming_model
from tinyarena.model import read_model

DATA: dict[str, Any] = json.loads(
    (Path(__file__).with_name("resource_variables_tflm_host.json")).read_text())
TARGETS = {"ilp32": "arm32", "x64": "host-x64"}  # the build's struct layout in tinyarena
# host-x64 is the wheel: compression on, so its kernels' OpData differ from the x64 build's
# (compression off); only that build's variables arena (no kernel data in it) is comparable.
VARIABLES_ONLY = {"x64"}
MODELS: dict[str, Callable[[], bytes]] = {
    "wake_word": wake_word,
    "wake_word_seed3": lambda: wake_word(seed=3),
    "streaming_model": streaming_model,
    "streaming_small": lambda: streaming_model(kernels=(3, 5), channels=8, head_frames=3),
}
CASES = [(build, name, key) for build, models in DATA["results"].items()
         for name, record in models.items() for key in record if key.startswith("count_")]


@pytest.mark.parametrize("build,name,key", CASES)
def test_both_layouts_match_tflm(build: str, name: str, key: str) -> None:
    record = DATA["results"][build][name]
    data = MODELS[name]()
    if hashlib.sha256(data).hexdigest() != record["sha256"]:
        pytest.skip(f"the builder of {name} changed its bytes since they were measured")
    model = read_model(data)
    assert resource_variable_count(model) == record["num_resource_variables"]
    count = int(key.removeprefix("count_"))
    measured = record[key]
    target = TARGETS[build]
    if build in VARIABLES_ONLY:
        v = allocate_model(model, target=target, allocator="production",
                           max_resource_variables=count, separate_variables=True).variables_arena
        sep = measured["separate"]
        assert v is not None and (v.used, v.min) == (sep["variables_used_bytes"],
                                                      sep["variables_min_arena"])
        assert sep["variables_at_min_minus_16"] != "ok"
        return
    same = allocate_model(model, target=target, allocator="production",
                          max_resource_variables=count)
    assert (same.total, same.min_arena) == (measured["same_arena"]["arena_used_bytes"],
                                            measured["same_arena"]["min_arena"])
    assert measured["same_arena"]["at_min_minus_16"] != "ok"
    apart = allocate_model(model, target=target, allocator="production",
                           max_resource_variables=count, separate_variables=True)
    sep = measured["separate"]
    assert apart.variables_arena is not None
    assert (apart.total, apart.min_arena, apart.variables_arena.used,
            apart.variables_arena.min) == (sep["tensor_arena_used_bytes"],
                                           sep["tensor_min_arena"], sep["variables_used_bytes"],
                                           sep["variables_min_arena"])
    assert "ok" not in (sep["tensor_at_min_minus_16"], sep["variables_at_min_minus_16"])
    offsets = sep["variables_min_arena_by_start_offset"]
    assert apart.variables_arena.min_4_aligned == max(offsets.values())


def test_every_build_and_count_was_measured() -> None:
    assert set(DATA["results"]) <= set(TARGETS)
    for models in DATA["results"].values():
        assert set(models) == set(MODELS)
        for record in models.values():
            assert f"count_{record['num_resource_variables']}" in record and "count_20" in record
