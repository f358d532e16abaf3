"""search_plan: never worse than TFLM's greedy, verified, certified, and within its budget."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tinyarena.optimize.placement import search_plan
from tinyarena.planning import Buffer, lower_bound, plan_greedy, verify_plan


def _random_buffers(n: int, seed: int, span: int = 4) -> list[Buffer]:
    rng = np.random.default_rng(seed)
    firsts = rng.integers(0, max(n // 3, 1), size=n)
    return [Buffer(int(rng.integers(1, 64)) * 16, int(f), int(f + rng.integers(0, span)))
            for f in firsts]


@pytest.mark.parametrize("seed", range(12))
def test_never_worse_than_greedy(seed: int) -> None:
    buffers = _random_buffers(60, seed)
    result = search_plan(buffers, time_budget_s=0.2, seed=seed)
    verify_plan(result.plan)
    assert result.greedy_head == plan_greedy(buffers).head_size
    assert lower_bound(buffers) == result.lower_bound <= result.head <= result.greedy_head
    if result.head == result.lower_bound:
        assert result.optimal


def test_ten_thousand_buffers_within_the_budget() -> None:
    buffers = _random_buffers(10_000, 1)
    start = time.perf_counter()
    result = search_plan(buffers, time_budget_s=0.5)
    elapsed = time.perf_counter() - start
    assert result.head <= result.greedy_head
    assert elapsed < 3.0  # budget 0.5 s plus the greedy pass and verification, generous
