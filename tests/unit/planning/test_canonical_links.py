"""The canonical branch and bound with overlap links (the optimizer's rule (c)) against an
independent exhaustive search, and on chains whose optimum follows from arithmetic."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tinyarena.planning import Buffer, Plan, plan_greedy, verify_plan
from tinyarena.planning.canonical import Link, _orderable, fits, linked_bound, minimize_height

UNIT = 16


def _meet(a: Buffer, b: Buffer) -> bool:
    return not (a.first > b.last or b.first > a.last)


def _allowed(links: list[Link], offsets: list[int], i: int, j: int) -> bool:
    """Written from the rule itself: b may overlap a when it starts at most max_delta above."""
    return any((k.a, k.b) in ((i, j), (j, i)) and offsets[k.b] - offsets[k.a] <= k.max_delta
               for k in links)


def _brute_force_height(buffers: list[Buffer], links: list[Link]) -> int:
    """The lowest height over every assignment of offsets (in units), depth first with the
    best height found as the only cut: no canonical forms, no bounds."""
    n = len(buffers)
    top = sum(b.size for b in buffers)
    best = top
    offsets = [0] * n

    def ok(i: int) -> bool:
        for j in range(i):
            a, b = buffers[i], buffers[j]
            if not _meet(a, b):
                continue
            disjoint = (offsets[i] + a.size <= offsets[j] or offsets[j] + b.size <= offsets[i])
            if not disjoint and not _allowed(links, offsets, i, j):
                return False
        return True

    def place(i: int, height: int) -> None:
        nonlocal best
        if i == n:
            best = min(best, height)
            return
        for o in range(0, best - buffers[i].size + 1, UNIT):
            offsets[i] = o
            if ok(i):
                place(i + 1, max(height, o + buffers[i].size))

    place(0, 0)
    return best


def _tiny_linked(seed: int) -> tuple[list[Buffer], list[Link]]:
    """2-5 buffers over a few steps; links between buffers that meet, with shifts from well
    below -size to above +size (any lag, either sign), sometimes both ways on one pair."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    buffers = []
    for _ in range(n):
        first = int(rng.integers(0, 3))
        buffers.append(Buffer(int(rng.integers(1, 5)) * UNIT, first,
                              first + int(rng.integers(0, 3))))
    links = []
    for i in range(n):
        for j in range(n):
            if i != j and _meet(buffers[i], buffers[j]) and rng.random() < 0.4:
                links.append(Link(i, j, int(rng.integers(-6, 5)) * UNIT))
    return buffers, links


def _check_plan(buffers: list[Buffer], links: list[Link], offsets: tuple[int, ...]) -> None:
    offs = list(offsets)
    verify_plan(Plan(offsets, tuple(buffers)),
                allowed_overlaps=lambda i, j: _allowed(links, offs, i, j))


@pytest.mark.parametrize("seed", range(60))
def test_linked_minimum_height_equals_exhaustive_search(seed: int) -> None:
    buffers, links = _tiny_linked(seed)
    optimum = _brute_force_height(buffers, links)
    greedy = plan_greedy(buffers)
    found = minimize_height(buffers, greedy.offsets, deadline=time.perf_counter() + 30,
                            links=links)
    assert linked_bound(buffers, links) <= optimum <= found.height <= greedy.head_size
    _check_plan(buffers, links, found.offsets)
    if not _orderable(buffers, links, time.perf_counter() + 30, time.perf_counter):
        # a cycle of shifts at or above the previous start: no proof is claimed
        assert not found.optimal or found.height == optimum
        return
    assert found.height == optimum
    assert found.optimal
    at = fits(buffers, optimum, deadline=time.perf_counter() + 30, links=links)
    assert at.offsets is not None
    _check_plan(buffers, links, at.offsets)
    below = fits(buffers, optimum - UNIT, deadline=time.perf_counter() + 30, links=links)
    assert below.infeasible and below.offsets is None


def test_the_sample_exercises_what_links_change() -> None:
    """Some tiny instances must be smaller with their links than without, some must use a
    shift above the input's start, and most must be searched exactly, or the exhaustive
    comparison proves little."""
    smaller = above = orderable = 0
    for seed in range(60):
        buffers, links = _tiny_linked(seed)
        with_links = _brute_force_height(buffers, links)
        smaller += with_links < _brute_force_height(buffers, [])
        above += any(k.max_delta > 0 for k in links)
        orderable += _orderable(buffers, links, time.perf_counter() + 30, time.perf_counter)
    assert smaller >= 10 and above >= 10 and orderable >= 50


def _descending_chain(n: int, size: int, step: int) -> tuple[list[Buffer], list[Link]]:
    """Buffer i lives at steps i and i+1; each output may overlap its input only starting
    ``step`` bytes lower (or must sit wholly above it)."""
    buffers = [Buffer(size, i, i + 1) for i in range(n)]
    return buffers, [Link(i, i + 1, -step) for i in range(n - 1)]


def test_a_long_chain_is_proven_optimal_by_arithmetic() -> None:
    """With 30 buffers of 1,600 bytes, stacking two (3,200 bytes) costs more than descending
    16 bytes per link all the way (1,600 + 29 x 16 = 2,064): every height below 3,200 forces
    every output below its input, so the optimum is exactly 2,064, while the bound is 1,616.
    The search must prove every capacity between them infeasible."""
    buffers, links = _descending_chain(30, 1600, 16)
    assert linked_bound(buffers, links) == 1616
    found = minimize_height(buffers, plan_greedy(buffers).offsets,
                            deadline=time.perf_counter() + 60, links=links)
    assert (found.height, found.optimal) == (2064, True)
    _check_plan(buffers, links, found.offsets)


def test_chain_with_one_step_scratch_beside_it() -> None:
    """The same descent (8 buffers of 2,000 bytes, 96 bytes lower per link: 2,672) with
    three small one-step buffers beside the chain's last, lowest buffer (as a kernel's
    scratch, 96 bytes, which fit above it under 2,672): the optimum stays the descent, and
    permuting the small ones must not hide the chain's arithmetic from the proof."""
    buffers, links = _descending_chain(8, 2000, 96)
    buffers += [Buffer(64, 8, 8), Buffer(16, 8, 8), Buffer(16, 8, 8)]
    found = minimize_height(buffers, plan_greedy(buffers).offsets,
                            deadline=time.perf_counter() + 60, links=links)
    assert (found.height, found.optimal) == (2000 + 7 * 96, True)
    _check_plan(buffers, links, found.offsets)


def test_links_that_admit_no_placement_order_are_not_claimed() -> None:
    """Three buffers live together, each allowed to start far above the previous one in a
    cycle: the potentials the search orders by do not exist, so it proves nothing (it does
    not return a wrong proof) and keeps the plan it was given."""
    buffers = [Buffer(64, 0, 0), Buffer(64, 0, 0), Buffer(64, 0, 0)]
    links = [Link(0, 1, 48), Link(1, 2, 48), Link(2, 0, 48)]
    known = (0, 64, 128)
    assert not _orderable(buffers, links, time.perf_counter() + 5, time.perf_counter)
    found = minimize_height(buffers, known, deadline=time.perf_counter() + 5, links=links)
    assert found.height <= 192
    _check_plan(buffers, links, found.offsets)
    assert not found.optimal or found.height == _brute_force_height(buffers, links)


def test_progress_reports_each_step_towards_the_proof() -> None:
    """The long-search progress hook: heights never rise, proven floors never fall, and the
    last report is the proof."""
    buffers, links = _descending_chain(30, 1600, 16)
    seen: list[tuple[int, int, bool]] = []
    found = minimize_height(buffers, plan_greedy(buffers).offsets,
                            deadline=time.perf_counter() + 60, links=links,
                            progress=lambda h, f, p: seen.append((h, f, p)))
    assert found.optimal and seen and seen[-1] == (found.height, found.height, True)
    assert all(a[0] >= b[0] and a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    assert all(f <= h for h, f, _ in seen)
