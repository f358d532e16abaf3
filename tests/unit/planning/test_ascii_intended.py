"""TFLM's picture marks any shared column '!'; with ``intended`` only real collisions do."""

from __future__ import annotations

from tinyarena.planning import Buffer, Plan, render_memory_plan
from tinyarena.planning.ascii import SHARED_MARK


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:4].strip().isdigit()]


def test_intended_overlap_is_not_a_collision() -> None:
    # 0 and 1 share bytes [32, 64) at step 1 on purpose; 2 collides with 1 at step 2
    plan = Plan((0, 32, 48), (Buffer(64, 0, 1), Buffer(64, 1, 2), Buffer(32, 2, 3)))
    tflm = _rows(render_memory_plan(plan))
    assert "!" in tflm[1] and "!" in tflm[2]
    ours = _rows(render_memory_plan(plan, lambda i, j: (i, j) == (0, 1)))
    assert "!" not in ours[1] and SHARED_MARK in ours[1]
    assert "!" in ours[2] and SHARED_MARK not in ours[2]
    # rows where nothing overlaps are TFLM's, character for character
    assert tflm[0] == ours[0] and tflm[3] == ours[3]
