"""verify_plan: overlaps named precisely, fast sweep agrees with an all-pairs check."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyarena.errors import PlanError
from tinyarena.planning import Buffer, Plan, plan_greedy, verify_plan

B = Buffer


def _plan(rows: list[tuple[int, int, int, int]]) -> Plan:
    """(size, first, last, offset) rows."""
    return Plan(tuple(r[3] for r in rows), tuple(B(*r[:3]) for r in rows))


def test_overlap_is_named() -> None:
    plan = _plan([(16, 0, 1, 0), (64, 1, 2, 64), (32, 2, 3, 100)])
    with pytest.raises(PlanError) as info:
        verify_plan(plan)
    text = str(info.value)
    assert "buffer 1 (size 64, offset 64, bytes [64, 128), live [1, 2])" in text
    assert "buffer 2 (size 32, offset 100, bytes [100, 132), live [2, 3])" in text
    assert "step 2" in text and "[100, 128)" in text


def test_touching_bytes_and_touching_steps() -> None:
    verify_plan(_plan([(16, 0, 3, 0), (16, 0, 3, 16)]))  # adjacent bytes are fine
    verify_plan(_plan([(16, 0, 1, 0), (16, 2, 3, 0)]))  # consecutive lifetimes are fine
    with pytest.raises(PlanError, match="buffer 0 .* buffer 1"):
        verify_plan(_plan([(16, 0, 1, 0), (16, 1, 3, 8)]))  # step 1 is shared


def test_zero_size_buffers_never_conflict() -> None:
    verify_plan(_plan([(64, 0, 3, 0), (0, 1, 1, 16)]))


def test_negative_offset_and_count_mismatch() -> None:
    with pytest.raises(PlanError, match="buffer 1 .*negative offset"):
        verify_plan(_plan([(16, 0, 0, 0), (16, 1, 1, -16)]))
    with pytest.raises(PlanError, match="2 offsets for 1 buffers"):
        verify_plan(Plan((0, 0), (B(16, 0, 0),)))


def test_allowed_overlaps() -> None:
    plan = _plan([(64, 0, 1, 0), (64, 1, 2, 0), (16, 1, 1, 32)])
    with pytest.raises(PlanError, match="buffer 0 .* buffer 1"):
        verify_plan(plan, allowed_overlaps={(1, 2)})
    with pytest.raises(PlanError, match="buffer 0 .* buffer 2"):
        verify_plan(plan, allowed_overlaps={(1, 0)})
    verify_plan(plan, allowed_overlaps={(1, 0), (2, 0), (2, 1)})
    verify_plan(plan, allowed_overlaps=lambda i, j: True)
    with pytest.raises(PlanError, match="buffer 1 .* buffer 2"):
        verify_plan(plan, allowed_overlaps=lambda i, j: i == 0)


def _all_pairs_conflicts(plan: Plan, allowed: set[tuple[int, int]]) -> bool:
    for i, j in combinations(range(len(plan.buffers)), 2):
        a, b = plan.buffers[i], plan.buffers[j]
        oa, ob = plan.offsets[i], plan.offsets[j]
        live = a.first <= b.last and b.first <= a.last
        shared = max(oa, ob) < min(oa + a.size, ob + b.size)
        if live and shared and (i, j) not in allowed:
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(-1, 6), st.integers(0, 3),
                          st.integers(0, 120)), max_size=25),
       st.sets(st.tuples(st.integers(0, 24), st.integers(0, 24)), max_size=6))
def test_sweep_agrees_with_all_pairs(rows: list[tuple[int, int, int, int]],
                                     allowed: set[tuple[int, int]]) -> None:
    plan = _plan([(s, f, f + d, o) for s, f, d, o in rows])
    allowed = {(min(a, b), max(a, b)) for a, b in allowed}
    if _all_pairs_conflicts(plan, allowed):
        with pytest.raises(PlanError):
            verify_plan(plan, allowed_overlaps=allowed)
    else:
        verify_plan(plan, allowed_overlaps=allowed)


def test_ten_thousand_buffers_are_fast() -> None:
    rng = np.random.default_rng(5)
    first = rng.integers(0, 3000, 10_000)
    buffers = [B(int(s), int(f), int(f + d)) for s, f, d in
               zip(rng.integers(1, 500, 10_000) * 16, first, rng.integers(0, 10, 10_000))]
    plan = plan_greedy(buffers)
    verify_plan(plan)  # its speed is a benchmark (benchmarks/planner.py), not a timed test
    # Move one buffer onto a neighbour it shares a step with: now it must fail.
    i = 0
    j = next(k for k in range(1, len(buffers)) if buffers[k].first <= buffers[i].last
             and buffers[i].first <= buffers[k].last)
    moved = list(plan.offsets)
    moved[j] = moved[i]
    with pytest.raises(PlanError):
        verify_plan(Plan(tuple(moved), plan.buffers))
