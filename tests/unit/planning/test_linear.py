"""LinearPlanner: running sum of sizes, 1024-buffer cap, no offline plans (facts 2.7)."""

from __future__ import annotations

import pytest

from tinyarena.errors import PlanError
from tinyarena.planning import LINEAR_MAX_BUFFERS, Buffer, LinearPlanner, plan_linear

B = Buffer


def test_each_buffer_follows_the_previous() -> None:
    plan = plan_linear([B(16, 0, 1), B(64, 1, 2), B(0, 2, 2), B(48, -1, -1)])
    assert plan.offsets == (0, 16, 80, 80)
    assert plan.head_size == 128


def test_cap_is_1024() -> None:
    assert LINEAR_MAX_BUFFERS == 1024
    assert plan_linear([B(16, 0, 0)] * 1024).head_size == 16 * 1024
    with pytest.raises(PlanError, match=r"Too many buffers \(max is 1024\)"):
        plan_linear([B(16, 0, 0)] * 1025)
    planner = LinearPlanner()
    for _ in range(1024):
        planner.add_buffer(B(16, 0, 0))
    with pytest.raises(PlanError, match=r"Too many buffers \(max is 1024\)"):
        planner.add_buffer(B(16, 0, 0))


def test_offline_offsets_are_refused() -> None:
    with pytest.raises(PlanError, match="buffer 1 .*linear planner cannot take an offline plan"):
        plan_linear([B(16, 0, 0), B(16, 0, 0, offset=0)])
    with pytest.raises(PlanError, match="offline plan"):
        LinearPlanner().add_buffer(B(16, 0, 0, offset=32))


def test_planner_object() -> None:
    planner = LinearPlanner()
    assert planner.add_buffer(B(32, 0, 0)) == 0
    assert planner.add_buffer(B(16, 5, 5)) == 1
    assert planner.offset_for_buffer(1) == 32
    assert planner.maximum_memory_size() == 48
    assert planner.buffer_count == 2
    with pytest.raises(PlanError, match="outside range"):
        planner.offset_for_buffer(2)
