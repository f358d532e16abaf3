"""``size`` names why the minimum arena exceeds ``arena_used_bytes()`` (issue 19, item 6), and
the cause it names is the one the real TFLM shows: the wheel's own failure just below the
minimum, or the 16-byte rounding alone (facts 1.2 and 1.5)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tflm_oracle import tflm_fits
from tinyarena._util import align_up
from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model
from tinyarena.report.text import min_arena_reason

pytestmark = pytest.mark.oracle

# What TFLM prints when the memory planning of AllocateTensors fails: the greedy planner's
# working area ("Too many buffers") or the temp arrays CommitStaticMemoryPlan allocates.
PLANNING_FAILURES = ("Too many buffers", "Failed to allocate temp memory")


def _offline_rounded() -> bytes:
    """Two pinned buffers whose plan ends off a multiple of 16 (offsets 0 and 408 of 400-byte
    tensors): nothing transient, only the rounding separates used bytes and the minimum."""
    from tinyarena.model.metadata import OFFLINE_PLAN_NAME, encode_offline_plan

    b = ModelBuilder()
    x = b.add_input("x", (100,), "float32")
    y = b.add_tensor("y", (100,), "float32")
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    b.add_metadata(OFFLINE_PLAN_NAME, encode_offline_plan([0, 408], 1))
    return b.build()


def test_shared_models_name_the_step_tflm_fails_in(shared_models: Path) -> None:
    paths = sorted(shared_models.glob("*.tflite"))
    layouts = [allocate_model(read_model(p)) for p in paths]
    transient = [(p, l) for p, l in zip(paths, layouts) if l.min_arena > l.total]
    assert transient, "some shared model needs more than it uses (hello_world: 1,936 vs 1,536)"

    def probe(item: tuple[Path, object]) -> tuple[bool, str]:
        path, layout = item
        return tflm_fits(path.read_bytes(), layout.min_arena - 16)  # type: ignore[attr-defined]

    with ThreadPoolExecutor(max_workers=4) as pool:
        probes = list(pool.map(probe, transient))
    for (path, layout), (fits, stderr) in zip(transient, probes):
        assert not fits, path.name
        reason = min_arena_reason(layout)
        if layout.min_arena_cause.startswith("memory planning"):
            assert any(f in stderr for f in PLANNING_FAILURES), (path.name, stderr[-400:])
            assert "planner's working area" in reason and "nothing transient" not in reason
        else:
            assert layout.min_arena_cause == "rounding", path.name
            assert layout.min_arena == align_up(layout.total, 16)
    for layout in layouts:
        if layout.min_arena == layout.total:
            assert min_arena_reason(layout) == "min_arena (here equal to the arena used)"


def test_rounding_alone_is_named_as_rounding() -> None:
    model = _offline_rounded()
    layout = allocate_model(read_model(model))
    assert layout.total % 16 != 0 and layout.min_arena == align_up(layout.total, 16)
    assert layout.min_arena_cause == "rounding"
    from tinyarena.report import size_dict

    assert size_dict(layout)["min_arena_cause"] == "rounding"  # size --json carries it too
    reason = min_arena_reason(layout)
    assert "nothing transient" in reason and "multiple of 16" in reason
    assert "planner" not in reason
    # the wheel works in the used bytes rounded up: nothing transient needs more
    assert tflm_fits(model, layout.min_arena)[0]
