"""lower_bound: peak live bytes with TFLM's closed lifetimes."""

from __future__ import annotations


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyarena.planning import Buffer, lower_bound

B = Buffer


def test_chain_peak() -> None:
    # Steps: 0 -> 16, 1 -> 16+64, 2 -> 64+64, 3 -> 64+16.
    assert lower_bound([B(16, 0, 1), B(64, 1, 2), B(64, 2, 3), B(16, 3, 3)]) == 128


def test_unset_lifetimes_live_at_minus_one() -> None:
    # Step -1: 100 + 50; step 0: 50 + 30; so the peak is at -1.
    assert lower_bound([B(100, -1, -1), B(50, -1, 3), B(30, 0, 0)]) == 150
    # A [-1,-1] buffer alone still needs its bytes.
    assert lower_bound([B(4000, -1, -1), B(400, 0, 1)]) == 4000


def test_closed_intervals_touching_ends_overlap() -> None:
    assert lower_bound([B(10, 0, 2), B(20, 2, 4)]) == 30
    assert lower_bound([B(10, 0, 1), B(20, 2, 4)]) == 20


def test_empty_and_zero_sizes() -> None:
    assert lower_bound([]) == 0
    assert lower_bound([B(0, 0, 5), B(0, 1, 1)]) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(-1, 10), st.integers(0, 5)),
                max_size=40))
def test_matches_step_by_step_sum(rows: list[tuple[int, int, int]]) -> None:
    buffers = [B(s, f, f + d) for s, f, d in rows]
    expected = max((sum(b.size for b in buffers if b.first <= t <= b.last)
                    for t in range(-1, 17)), default=0)
    assert lower_bound(buffers) == expected


def test_thirty_thousand_buffers_are_bounded() -> None:
    rng = np.random.default_rng(3)
    first = rng.integers(-1, 5000, 30_000)
    buffers = [B(int(s), int(f), int(f + d)) for s, f, d in
               zip(rng.integers(0, 4096, 30_000), first, rng.integers(0, 20, 30_000))]
    # Speed is a benchmark (benchmarks/planner.py); here: the bound is at least the largest
    # buffer, a fact that needs no planner to check.
    assert lower_bound(buffers) >= max(b.size for b in buffers)
