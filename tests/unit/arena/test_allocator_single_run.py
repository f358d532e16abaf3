"""allocate_model emulates AllocateTensors once and moves the tail to the final arena size;
the result must be what a second emulation on that arena gives (the old two-run method)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tinyarena._util import align_up
from tinyarena.arena import allocate_model
from tinyarena.arena import allocator as allocator_module
from tinyarena.arena.targets import get_target
from tinyarena.builder import ModelBuilder
from tinyarena.model import Model, read_model

from small_models import hello_world_like

MODELS = Path(__file__).resolve().parents[3].parent / "shared" / "models"


def _resource_model() -> Model:
    """A resource variable (tail buffer bound by VAR_HANDLE) next to a variable-free graph."""
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    handle = b.add_tensor("handle", (), "resource")
    value = b.add_tensor("value", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("VAR_HANDLE", [], [handle], shared_name="acc")
    b.add_operator("READ_VARIABLE", [handle], [value])
    b.add_operator("ADD", [value, x], [y])
    b.add_operator("ASSIGN_VARIABLE", [handle, y], [])
    b.mark_output(y)
    return read_model(b.build())


def _int16_softmax() -> Model:
    """int16 SOFTMAX allocates its lookup tables in Prepare while its temps are live: on
    host-x64 the overlap-free min_arena is above TFLM's checked minimum (a note names it)."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 10), "int16", scale=1 / 4096, zero_point=0)
    y = b.add_tensor("y", (1, 10), "int16", scale=1 / 32768, zero_point=0)
    b.add_operator("SOFTMAX", [x], [y], beta=1.0)
    b.mark_output(y)
    return read_model(b.build())


def _two_runs(model: Model, target: str, planner: str, size: int | None,
              preallocated: frozenset[tuple[int, int]] = frozenset()):
    """The layout as the old allocate_model made it: a second emulation on the final arena
    (min_arena = the overlap-free size, the checked size and its note from the first run)."""
    profile = get_target(target)
    path = "production" if planner == "linear" else profile.default_allocator
    resolver = allocator_module._DefaultResolver(profile.kernel_set)
    big = allocator_module._run(model, profile, path, planner, resolver,
                                allocator_module._BIG_ARENA, preallocated=preallocated)
    checked = align_up(big.alloc.required_end, 16)
    min_arena = max(checked, align_up(big.alloc.overlap_free_end, 16))
    final = allocator_module._run(model, profile, path, planner, resolver,
                                  min_arena if size is None else size,
                                  preallocated=preallocated)
    layout = final.layout(min_arena, checked,
                          allocator_module._min_arena_note(min_arena, checked, big))
    return dataclasses.replace(layout,
                               min_arena_cause=allocator_module._min_arena_cause(checked, big))


def _models() -> list[tuple[str, Model]]:
    models = [("hello_world_like", read_model(hello_world_like(1))),
              ("resource", _resource_model()), ("int16_softmax", _int16_softmax())]
    for name in ("trained_lstm_int8.tflite", "keyword_scrambled_8bit.tflite"):
        if (MODELS / name).exists():
            models.append((name, read_model((MODELS / name).read_bytes())))
    return models


def _assert_same(layout, expected, context) -> None:
    for f in dataclasses.fields(layout):
        if f.name in ("op_data", "workspace_initial"):
            continue
        assert getattr(layout, f.name) == getattr(expected, f.name), (*context, f.name)


TARGETS = ["host-x64", "arm32", "cortex-m4", "cortex-m55"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("planner", ["greedy", "linear"])
def test_one_emulation_gives_the_second_runs_layout(target: str, planner: str) -> None:
    for name, model in _models():
        reference = _two_runs(model, target, planner, None)
        if name == "int16_softmax" and target == "host-x64":  # the overlap case is exercised
            assert reference.min_arena > reference.tflm_checked_min_arena
            assert "SOFTMAX" in reference.min_arena_note
        for size in (None, reference.min_arena + 48):
            layout = allocate_model(model, target=target, planner=planner, arena_size=size)
            expected = reference if size is None else _two_runs(model, target, planner, size)
            _assert_same(layout, expected, (name, size))
            assert layout.resource_offsets or name != "resource"
            assert np.all(np.asarray(layout.resource_offsets) < layout.arena_size)
            # explain's per-operator tail tags came through (compared field by field above)
            assert any(t.op is not None for t in layout.tail_allocations)


@pytest.mark.parametrize("target", ["host-x64", "cortex-m4"])
def test_one_emulation_with_preallocated_tensors(target: str) -> None:
    """Pre-allocated graph inputs, outputs and variables (seed004): same layout as two runs."""
    for name, model in _models():
        sg = model.subgraphs[0]
        chosen = set(sg.inputs) | set(sg.outputs) | {
            t.index for t in sg.tensors if t.is_variable}
        pre = frozenset((0, i) for i in chosen if i >= 0 and not sg.tensors[i].is_constant)
        reference = _two_runs(model, target, "greedy", None, pre)
        for size in (None, reference.min_arena + 32):
            layout = allocate_model(model, target=target, arena_size=size,
                                    preallocated=[i for _, i in pre])
            expected = reference if size is None else _two_runs(model, target, "greedy", size,
                                                                pre)
            _assert_same(layout, expected, (name, size, "preallocated"))


def test_relocation_copies_every_tail_field() -> None:
    """``_relocated`` rebuilds TailAllocation records positionally (for speed): a field added
    to the dataclass must be added there too."""
    import dataclasses

    from tinyarena.arena.layout import TailAllocation

    assert [f.name for f in dataclasses.fields(TailAllocation)] == [
        "label", "requested", "alignment", "used", "address", "category", "op", "role"]
