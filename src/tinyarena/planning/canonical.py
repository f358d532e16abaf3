"""Exact placement: branch and bound over canonical solutions (MiniMalloc's method).

The decision problem is "do these buffers fit in ``capacity`` bytes?". Moffitt's MiniMalloc
(ASPLOS 2023, ``google/minimalloc``) answers it with a depth-first search that is exact and
fast because it explores far fewer placements than a solver over pairwise disjunctions:

* **Canonical solutions.** Any feasible plan can be pushed down until every buffer rests on
  offset 0 or on the end of a buffer it meets in time. So a search only has to choose the
  *order* in which buffers are placed, each at its lowest offset given those before it, and it
  may require offsets (with a static preorder breaking ties) to never decrease along a branch.
* **Dominance.** A buffer placed at or above the lowest top any unplaced buffer could reach
  leaves a gap that buffer could have taken: such a branch is never needed.
* **Section inference.** Time is cut into sections where the set of live buffers is constant.
  In each section, the floor (the highest end of placed buffers there, raised to the lowest
  offset any unplaced buffer in it can still take, and to the current offset of the branch)
  plus the bytes still unplaced in it must fit under the capacity.
* **Dynamic decomposition.** Once no unplaced buffer crosses a section boundary, the two sides
  are independent problems and are solved one after the other.
* **Several preorders in turn** (by lifespan, area and section total), each with a node limit
  that doubles every round, so that one unlucky order does not hold the search up.

``fits`` solves the decision problem; ``minimize_height`` calls it at the live-bytes lower bound
(which proves optimality when it succeeds) and then bisects between the bound and the best plan
known, within a deadline it checks at every node. Everything here sees sizes and lifetimes only.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tinyarena.planning.bounds import lower_bound
from tinyarena.planning.buffers import Buffer

_FOUND, _NOT_FOUND, _ABORTED, _TIMEOUT = range(4)
_NEVER = np.iinfo(np.int64).max // 4  # "no unplaced buffer here" in floor minima

PREORDERS: tuple[str, ...] = ("WAT", "TAW", "TWA")
"""Static preorders tried in turn, each letter a descending key: W lifespan width, A area
(size x width), T the largest unplaced total of any section the buffer lives in."""


@dataclass(frozen=True)
class Outcome:
    """What one decision run established.

    ``offsets`` is a plan within the capacity (addition order) when one was found;
    ``infeasible`` is True only when the search was exhausted without one: a proof that
    nothing fits in ``capacity`` bytes.
    """

    capacity: int
    offsets: tuple[int, ...] | None
    infeasible: bool
    nodes: int


@dataclass(frozen=True)
class _Sweep:
    """Sections (maximal time spans with a constant live set) and what spans them."""

    sec_lo: list[int]  # per buffer: first section it lives in
    sec_hi: list[int]  # per buffer: one past its last section
    overlaps: list[list[int]]  # per buffer: the buffers sharing a section with it
    section_totals: np.ndarray  # per section: bytes of all buffers live in it
    cuts: list[int]  # per boundary s|s+1: buffers living on both sides
    members: list[list[int]]  # per section: the buffers live in it
    member_table: np.ndarray  # the same, padded with n into a (sections, widest) int array
    section_masks: np.ndarray  # (buffers, sections) bool: the sections each buffer lives in


def _sweep(sizes: Sequence[int], firsts: Sequence[int], lasts: Sequence[int],
           active: Sequence[int]) -> _Sweep:
    """Sections over the buffers in ``active`` (the others are zero-sized and ignored)."""
    n = len(sizes)
    points = sorted({firsts[i] for i in active} | {lasts[i] + 1 for i in active})
    index = {t: k for k, t in enumerate(points)}
    n_sections = max(len(points) - 1, 0)
    sec_lo = [0] * n
    sec_hi = [0] * n
    totals = np.zeros(n_sections, dtype=np.int64)
    members: list[list[int]] = [[] for _ in range(n_sections)]
    crossing = np.zeros(n_sections + 1, dtype=np.int64)
    for i in active:
        lo, hi = index[firsts[i]], index[lasts[i] + 1]
        sec_lo[i], sec_hi[i] = lo, hi
        totals[lo:hi] += sizes[i]
        crossing[lo + 1] += 1
        crossing[hi] -= 1
        for s in range(lo, hi):
            members[s].append(i)
    cuts = np.cumsum(crossing)[1:n_sections].tolist() if n_sections else []
    overlaps: list[set[int]] = [set() for _ in range(n)]
    for group in members:
        for i in group:
            overlaps[i].update(group)
    widest = max((len(m) for m in members), default=0)
    table = np.full((n_sections, max(widest, 1)), n, dtype=np.int64)
    for s, group in enumerate(members):
        table[s, :len(group)] = group
    masks = np.zeros((n, n_sections), dtype=bool)
    for i in active:
        masks[i, sec_lo[i]:sec_hi[i]] = True
    return _Sweep(sec_lo, sec_hi, [sorted(o - {i}) for i, o in enumerate(overlaps)], totals,
                  [int(c) for c in cuts], members, table, masks)


class _Abort(Exception):
    """Raised through the recursion when the deadline passes or the node limit is spent."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Search:
    """One decision run: the mutable state of the depth-first search, undone on backtrack."""

    def __init__(self, sizes: list[int], widths: list[int], sweep: _Sweep, capacity: int,
                 solution: list[int], preorder: str, node_limit: int, deadline: float,
                 clock: Callable[[], float]) -> None:
        self.sizes = sizes
        self.sizes_np = np.asarray(sizes, dtype=np.int64)
        self.widths = widths
        self.solution = solution  # kept by the caller across attempts
        self.preorder = preorder
        self.sw = sweep
        self.capacity = capacity
        self.deadline = deadline
        self.clock = clock
        n = len(sizes)
        self.offsets = [-1] * n
        self.floor = np.zeros(len(sweep.section_totals), dtype=np.int64)
        self.total = sweep.section_totals.copy()
        self.cuts = list(sweep.cuts)
        self.nodes = 0
        self.node_limit = node_limit
        # Lowest offset per unplaced buffer, _NEVER for placed ones and for the padding
        # column n that section member rows are filled up with.
        self.unplaced_min = np.zeros(n + 1, dtype=np.int64)
        self.unplaced_min[n] = _NEVER
        self.sw_members = sweep.member_table
        self.overlap_arrays = [np.asarray(o, dtype=np.int64) for o in sweep.overlaps]

    # --- the search -------------------------------------------------------------------------

    def solve(self, buffers: list[int], lo: int, hi: int, preorder: str) -> int:
        """Place ``buffers`` (all of a partition spanning sections [lo, hi))."""
        keys = self._preorder_keys(buffers, preorder)
        order = np.array([b for _, b in sorted(zip(keys, buffers))], dtype=np.int64)
        return self._search(order, lo, hi, 0, -1)

    def _preorder_keys(self, buffers: list[int], preorder: str) -> list[tuple[int, ...]]:
        sw, total = self.sw, self.total
        keys = []
        for b in buffers:
            width = self.widths[b]
            area = self.sizes[b] * width
            tot = int(total[sw.sec_lo[b]:sw.sec_hi[b]].max())
            by = {"W": width, "A": area, "T": tot}
            keys.append(tuple(-by[c] for c in preorder) + (b,))
        return keys

    def _search(self, order: np.ndarray, lo: int, hi: int, min_offset: int,
                min_rank: int) -> int:
        """``order``: the partition's buffers in preorder (a buffer's rank is its position)."""
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Abort(_ABORTED)
        if not self.nodes & 63 and self.clock() > self.deadline:
            raise _Abort(_TIMEOUT)
        lowest = self.unplaced_min[order]  # _NEVER where placed
        pending = lowest < _NEVER
        if not pending.any():
            return _FOUND
        min_height = int((lowest + self.sizes_np[order]).min())
        # Every later buffer starts at or above the offset chosen now, and every section
        # still has its unplaced bytes to hold above that: a bound that needs no placement.
        highest = self.capacity - int(self.total[lo:hi].max(initial=0))
        # Dominance: at or above min_height a buffer would leave a gap that an unplaced
        # buffer fits in. Canonical: offsets never decrease along a branch (ties by rank).
        limit = min(min_height - 1, highest)
        ranks = (pending & (lowest <= limit) & (lowest >= min_offset)).nonzero()[0]
        if not ranks.size:
            return _NOT_FOUND
        cand_offsets = lowest[ranks]
        by_offset = np.lexsort((ranks, cand_offsets))
        for k in by_offset.tolist():
            rank = int(ranks[k])
            offset = int(cand_offsets[k])
            if offset == min_offset and rank < min_rank:
                continue
            status = self._place_and_recurse(int(order[rank]), rank, offset, order, lo, hi)
            if status == _FOUND:
                return _FOUND
        return _NOT_FOUND

    def _place_and_recurse(self, b: int, rank: int, offset: int, order: np.ndarray,
                           lo: int, hi: int) -> int:
        sw, sizes = self.sw, self.sizes
        size = sizes[b]
        height = offset + size
        self.offsets[b] = offset
        self.solution[b] = offset  # stale on failure; every successful branch rewrites it
        # Buffers meeting b can no longer start below its end (placed ones hold _NEVER).
        unplaced_min = self.unplaced_min
        unplaced_min[b] = _NEVER
        near = self.overlap_arrays[b]
        raised = near[unplaced_min[near] < height]
        old_mins = unplaced_min[raised]
        unplaced_min[raised] = height
        b_lo, b_hi = sw.sec_lo[b], sw.sec_hi[b]
        saved_floor = self.floor[b_lo:b_hi].copy()
        self.floor[b_lo:b_hi] = height
        self.total[b_lo:b_hi] -= size
        floor_change = self._raise_floors_to_unplaced(raised)
        status = _NOT_FOUND
        if self._sections_fit(lo, hi, offset):
            status = self._decompose_or_continue(b, rank, offset, order, lo, hi)
        if floor_change is not None:
            self.floor[floor_change[0]] = floor_change[1]
        self.total[b_lo:b_hi] += size
        self.floor[b_lo:b_hi] = saved_floor
        unplaced_min[raised] = old_mins
        unplaced_min[b] = offset  # b's lowest offset was the one it was placed at
        self.offsets[b] = -1
        return status

    def _raise_floors_to_unplaced(self, raised: np.ndarray
                                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """A section's floor is at least the lowest offset any unplaced buffer in it can take
        (only sections holding a buffer whose lowest offset just rose can change)."""
        if not raised.size:
            return None
        touched = self.sw.section_masks[raised].any(axis=0).nonzero()[0]
        lowest = self.unplaced_min[self.sw_members[touched]].min(axis=1)
        old = self.floor[touched]
        self.floor[touched] = np.maximum(old, lowest)
        return touched, old

    def _sections_fit(self, lo: int, hi: int, offset: int) -> bool:
        floor = self.floor[lo:hi]
        need = np.maximum(floor, offset) + self.total[lo:hi]
        return bool(need.max(initial=0) <= self.capacity)

    def _decompose_or_continue(self, b: int, rank: int, offset: int, order: np.ndarray,
                               lo: int, hi: int) -> int:
        sw = self.sw
        b_lo, b_hi = sw.sec_lo[b], sw.sec_hi[b]
        cutpoints = []
        for s in range(b_lo, b_hi - 1):
            self.cuts[s] -= 1
            if self.cuts[s] == 0:
                cutpoints.append(s + 1)
        try:
            if not cutpoints:
                return self._search(order, lo, hi, offset, rank)
            bounds = [lo] + cutpoints + [hi]
            for part_lo, part_hi in zip(bounds, bounds[1:]):
                part = [i for i in order.tolist() if self.offsets[i] < 0
                        and sw.sec_lo[i] < part_hi and part_lo < sw.sec_hi[i]]
                if part and self.solve(part, part_lo, part_hi, self.preorder) != _FOUND:
                    return _NOT_FOUND
            return _FOUND
        finally:
            for s in range(b_lo, b_hi - 1):
                self.cuts[s] += 1



def _partitions(sweep: _Sweep, active: list[int]) -> list[tuple[list[int], int, int]]:
    """Independent groups: runs of sections between boundaries no buffer crosses."""
    n_sections = len(sweep.section_totals)
    bounds = [0] + [s + 1 for s, c in enumerate(sweep.cuts) if c == 0] + [n_sections]
    parts = []
    for lo, hi in zip(bounds, bounds[1:]):
        group = [i for i in active if sweep.sec_lo[i] >= lo and sweep.sec_hi[i] <= hi]
        if group:
            parts.append((group, lo, hi))
    return parts


def fits(buffers: Sequence[Buffer], capacity: int, *, deadline: float,
         clock: Callable[[], float] = time.perf_counter) -> Outcome:
    """Decide whether ``buffers`` fit in ``capacity`` bytes (no fixed offsets allowed).

    Round robin over ``PREORDERS`` with a node limit that starts at twice the number of
    buffers and doubles each round, as MiniMalloc does; stops at ``deadline`` (a ``clock``
    value). ``infeasible`` is only set by an exhausted search.
    """
    if any(b.offset is not None for b in buffers):
        raise ValueError("the canonical search plans online buffers only")
    sizes = [int(b.size) for b in buffers]
    firsts = [int(b.first) for b in buffers]
    lasts = [int(b.last) for b in buffers]
    active = [i for i, s in enumerate(sizes) if s > 0]
    if any(s > capacity for s in sizes):
        return Outcome(capacity, None, True, 0)
    sweep = _sweep(sizes, firsts, lasts, active)
    if len(sweep.section_totals) and int(sweep.section_totals.max()) > capacity:
        return Outcome(capacity, None, True, 0)
    # Each placement nests three frames; the limit is restored on the way out.
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 4 * len(active) + 200))
    try:
        return _round_robin(sizes, firsts, lasts, active, sweep, capacity, deadline, clock)
    finally:
        sys.setrecursionlimit(depth)


def _round_robin(sizes: list[int], firsts: list[int], lasts: list[int], active: list[int],
                 sweep: _Sweep, capacity: int, deadline: float,
                 clock: Callable[[], float]) -> Outcome:
    parts = _partitions(sweep, active)
    widths = [lasts[i] - firsts[i] + 1 for i in range(len(sizes))]
    solution = [0] * len(sizes)
    limit = 2 * max(len(active), 1)
    solved: set[int] = set()  # partitions already placed (independent, kept across rounds)
    nodes = 0
    while True:
        limit *= 2
        for preorder in PREORDERS:
            exhausted = True
            for k, (group, lo, hi) in enumerate(parts):
                if k in solved:
                    continue
                # A fresh state per attempt: an abort unwinds without undoing its changes.
                search = _Search(sizes, widths, sweep, capacity, solution, preorder, limit,
                                 deadline, clock)
                try:
                    status = search.solve(group, lo, hi, preorder)
                except _Abort as stop:
                    nodes += search.nodes
                    if stop.code == _TIMEOUT:
                        return Outcome(capacity, None, False, nodes)
                    exhausted = False
                    break
                nodes += search.nodes
                if status != _FOUND:
                    return Outcome(capacity, None, True, nodes)
                solved.add(k)
            if exhausted:
                offsets = tuple(solution[i] if sizes[i] else 0 for i in range(len(sizes)))
                return Outcome(capacity, offsets, False, nodes)


@dataclass(frozen=True)
class Minimized:
    """The lowest plan the search found, and whether its height is proven minimal."""

    offsets: tuple[int, ...]
    height: int
    optimal: bool
    lower_bound: int
    probes: tuple[Outcome, ...]


def minimize_height(buffers: Sequence[Buffer], known: Sequence[int], *, deadline: float,
                    clock: Callable[[], float] = time.perf_counter,
                    unit: int = 16, first_share: float = 0.5,
                    share: float = 0.3) -> Minimized:
    """Lower the height of the plan ``known`` (offsets, addition order) as far as the
    deadline allows, by decision runs at smaller capacities.

    Anytime: no run may take all the time left, so that one hard capacity cannot eat the
    budget. The first run is at the live-bytes lower bound (a plan there is optimal by
    definition; on real models and on perfect packings that is where the optimum is), with
    ``first_share`` of the time; then bisection, each run with ``share`` of what is left,
    between the lowest capacity not ruled out and the best height found. A run that proves a
    capacity infeasible raises the floor (a proof); one that runs out of time only steers the
    bisection upwards, towards capacities that are easier to fill; when the bisection closes
    on such guesses, all the time left goes to the lowest capacity still open. ``optimal`` is
    True only when the height equals the bound or the capacity one ``unit`` below it was proven
    infeasible.
    """
    sizes = [b.size for b in buffers]
    best = tuple(int(o) for o in known)
    best_height = max((o + s for o, s in zip(best, sizes)), default=0)
    bound = lower_bound(buffers)
    proven_floor = bound  # every capacity below this is impossible (proven)
    guess_floor = bound  # capacities below this timed out: unknown, treated as hard
    probes: list[Outcome] = []
    capacity, portion = bound, first_share
    while best_height > proven_floor:
        now = clock()
        if now >= deadline:
            break
        outcome = fits(buffers, capacity, deadline=now + portion * (deadline - now), clock=clock)
        probes.append(outcome)
        if outcome.offsets is not None:
            height = max((o + s for o, s in zip(outcome.offsets, sizes)), default=0)
            if height < best_height:
                best, best_height = outcome.offsets, height
        elif outcome.infeasible:
            proven_floor = max(proven_floor, capacity + unit)
            guess_floor = max(guess_floor, proven_floor)
        else:
            guess_floor = max(guess_floor, capacity + unit)
        if best_height <= proven_floor:
            break
        if guess_floor < best_height:  # bisect what is still open above the guesses
            capacity = _round_to(guess_floor + (best_height - unit - guess_floor) // 2, unit,
                                 guess_floor)
            portion = share
        else:  # every open capacity timed out once: the rest of the time to the lowest
            capacity, portion = proven_floor, 1.0
    return Minimized(best, best_height, best_height <= proven_floor, bound, tuple(probes))


def _round_to(value: int, unit: int, at_least: int) -> int:
    return max(at_least, value - value % unit)


__all__ = ["Minimized", "Outcome", "PREORDERS", "fits", "minimize_height"]
