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

**Links** (``Link``, the optimizer's overlap rule (c)): a linked output ``b`` may share bytes
with its input ``a`` while both are live, when it starts at most ``max_delta`` bytes above it.
A pair of buffers that meet in time then has one of two orders, each a lower limit on the
upper one's offset: ``o_x >= o_y + gap(y, x)``, where ``gap`` is y's size except for a linked
input resting on its output (``o_a >= o_b - max_delta``). The search places each buffer above
every placed buffer it meets, at the lowest such offset, so every plan pushed down as far as it
goes is reachable, as in MiniMalloc. A gap of zero or less (an output allowed to start at or
above its input's start) would break the rule that offsets never decrease along a branch; so
the search orders by ``key = offset + potential`` instead, with per-buffer potentials (a
shortest-path solution of ``potential[y] - potential[x] <= gap(y, x) - 1``) that make every
gap strictly positive in key space. Without links every potential is 0 and the key is the
offset. The section bound subtracts, per section, the largest overlap of each linked pair still
unplaced there (the same credit as the optimizer's linked lower bound).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tinyarena.planning.bounds import lower_bound
from tinyarena.planning.buffers import Buffer

_FOUND, _NOT_FOUND, _ABORTED, _TIMEOUT = range(4)
_NEVER = np.iinfo(np.int64).max // 4  # "no unplaced buffer here" in floor minima


@dataclass(frozen=True)
class Link:
    """Buffer ``b`` may start at most ``max_delta`` bytes above buffer ``a`` and overlap it
    (otherwise the two meet in time as usual: b wholly above or below a)."""

    a: int
    b: int
    max_delta: int


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


@dataclass(frozen=True)
class _Gaps:
    """What links change in the search (see the module docstring), in key space.

    ``overlaps[y]`` lists the buffers y may not overlap freely (a linked pair whose permitted
    displacements cover every overlap drops out); ``rise[y]`` the matching key gaps
    ``gap(y, x) + potential[x] - potential[y]`` (each >= 1); ``reach[y]`` the largest of them
    (dominance); ``potential`` has a padding entry 0 at index n. ``credit`` is, per section,
    the largest overlap of the linked pairs both live there; ``pair_credit[y]`` lists y's
    pairs as (partner, first section, end section, credit) so the credit can be withdrawn when
    the first of the two is placed; ``top_potential`` is, per section, its members' largest
    potential.
    """

    overlaps: list[np.ndarray]
    rise: list[np.ndarray]
    reach: np.ndarray
    potential: np.ndarray
    credit: np.ndarray
    pair_credit: list[list[tuple[int, int, int, int]]]
    top_potential: np.ndarray
    pairs: tuple[tuple[int, int, int, int, int, int], ...]  # x, y, lo, hi, s_lo, s_hi


def _overlap_at(size_a: int, size_b: int, shift: int) -> int:
    """Bytes shared by a at 0 and b at ``shift``."""
    return max(0, min(size_a, shift + size_b) - max(0, shift))


def link_intervals(sizes: Sequence[int], links: Sequence[Link]
                   ) -> dict[tuple[int, int], tuple[int, int]]:
    """Per linked pair (x, y), x < y: the open interval of ``o_y - o_x`` that stays forbidden
    while both are live. Without links it would be (-size_y, size_x); each link lets the
    displacements at or below its limit through (on its own side), so several links on one
    pair (either way) combine. An interval with no integer inside forbids nothing."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for link in links:
        a, b = link.a, link.b
        if a == b or not sizes[a] or not sizes[b]:
            continue
        x, y = min(a, b), max(a, b)
        lo, hi = out.get((x, y), (-sizes[y], sizes[x]))
        if a == x:  # o_b - o_a <= max_delta is allowed
            lo = max(lo, link.max_delta)
        else:  # o_b - o_a <= max_delta, i.e. o_y - o_x >= -max_delta
            hi = min(hi, -link.max_delta)
        out[(x, y)] = (lo, hi)
    return out


def _forbidden(sizes: Sequence[int], links: Sequence[Link], sweep: _Sweep
               ) -> dict[tuple[int, int], tuple[int, int]]:
    """``link_intervals`` for the pairs that meet in time (share a section)."""
    return {(x, y): gap for (x, y), gap in link_intervals(sizes, links).items()
            if sweep.sec_lo[x] < sweep.sec_hi[y] and sweep.sec_lo[y] < sweep.sec_hi[x]}


def _credits(sizes: Sequence[int], sweep: _Sweep,
             forbidden: dict[tuple[int, int], tuple[int, int]]
             ) -> tuple[np.ndarray, list[list[tuple[int, int, int, int]]]]:
    """Per section, the most bytes linked pairs live there can share; per buffer its pairs."""
    credit = np.zeros(len(sweep.section_totals), dtype=np.int64)
    pairs: list[list[tuple[int, int, int, int]]] = [[] for _ in sizes]
    for (x, y), (lo, hi) in forbidden.items():
        sx, sy = sizes[x], sizes[y]
        if lo + 1 >= hi:  # nothing forbidden: as much as fits
            most = min(sx, sy)
        else:
            most = max(_overlap_at(sx, sy, min(lo, max(0, sx - sy))),
                       _overlap_at(sx, sy, max(hi, min(0, sx - sy))))
        s_lo = max(sweep.sec_lo[x], sweep.sec_lo[y])
        s_hi = min(sweep.sec_hi[x], sweep.sec_hi[y])
        if most > 0:
            credit[s_lo:s_hi] += most
            pairs[x].append((y, s_lo, s_hi, most))
            pairs[y].append((x, s_lo, s_hi, most))
    return credit, pairs


def linked_bound(buffers: Sequence[Buffer], links: Sequence[Link] = ()) -> int:
    """The live-bytes lower bound minus, at each step, the most bytes each linked pair live
    there can share (only linked pairs may share bytes, so the union of the live buffers is at
    least their total minus those credits)."""
    if not links:
        return lower_bound(buffers)
    sizes = [int(b.size) for b in buffers]
    active = [i for i, s in enumerate(sizes) if s > 0]
    sweep = _sweep(sizes, [int(b.first) for b in buffers], [int(b.last) for b in buffers],
                   active)
    credit, _ = _credits(sizes, sweep, _forbidden(sizes, links, sweep))
    return int(max((sweep.section_totals - credit).max(initial=0), 0))


def _gaps(sizes: Sequence[int], sweep: _Sweep, links: Sequence[Link], deadline: float,
          clock: Callable[[], float]) -> _Gaps | None:
    """The key-space gaps for ``links``; None when no potentials exist (links whose
    permitted shifts chain into a cycle of non-positive gaps: then no order of placement
    reaches every plan) or the deadline passed while looking for them."""
    n = len(sizes)
    forbidden = _forbidden(sizes, links, sweep)
    credit, pair_credit = _credits(sizes, sweep, forbidden)
    overlaps = [np.asarray(o, dtype=np.int64) for o in sweep.overlaps]
    sizes_np = np.asarray(sizes, dtype=np.int64)
    out_gap = [np.full(len(o), sizes[y], dtype=np.int64) for y, o in enumerate(overlaps)]
    for (x, y), (lo, hi) in forbidden.items():
        for u, v, gap in ((x, y, hi), (y, x, -lo)):  # v above u: o_v >= o_u + gap
            pos = int(np.searchsorted(overlaps[u], v))
            out_gap[u][pos] = gap if lo + 1 < hi else _NEVER
    for y in range(n):
        keep = out_gap[y] < _NEVER
        if not keep.all():
            overlaps[y], out_gap[y] = overlaps[y][keep], out_gap[y][keep]
    potential = _potentials(overlaps, out_gap, sizes_np, deadline, clock)
    if potential is None:
        return None
    rise = [g + potential[o] - potential[y] for y, (o, g) in enumerate(zip(overlaps, out_gap))]
    reach = np.array([int(r.max()) if r.size else sizes[y] for y, r in enumerate(rise)] or [0],
                     dtype=np.int64)[:n]
    padded = np.append(potential, -_NEVER)
    top = padded[sweep.member_table].max(axis=1) if len(sweep.section_totals) else \
        np.zeros(0, dtype=np.int64)
    pairs = tuple((x, y, lo, hi, max(sweep.sec_lo[x], sweep.sec_lo[y]),
                   min(sweep.sec_hi[x], sweep.sec_hi[y]))
                  for (x, y), (lo, hi) in forbidden.items() if lo + 1 < hi)
    return _Gaps(overlaps, rise, reach, np.append(potential, 0), credit, pair_credit, top,
                 pairs)


def _forced_floor(sizes: Sequence[int], sweep: _Sweep, gaps: _Gaps, capacity: int
                  ) -> np.ndarray | None:
    """Lowest offsets every plan within ``capacity`` must respect, or None when none exists.

    A linked pair has two orders, each allowing a different largest overlap; where the order
    that shares fewer bytes would overfill a section they share (all other linked pairs
    counted at their largest overlap), the other order is forced: a difference constraint.
    Along chains of forced pairs (an output that must start below its input, whose own
    output must start below it, ...) the constraints add up: their longest paths from 0
    are lower limits on the offsets, and a buffer whose limit leaves no room under the
    capacity proves the capacity infeasible. Without this the search would find that out
    only by trying every arrangement of whatever else shares those sections."""
    n = len(sizes)
    spare = capacity - (sweep.section_totals - gaps.credit)
    edges: list[tuple[int, int, int]] = []  # (u, v, w): o_v >= o_u + w
    for x, y, lo, hi, s_lo, s_hi in gaps.pairs:
        sx, sy = sizes[x], sizes[y]
        below = _overlap_at(sx, sy, min(lo, max(0, sx - sy)))  # y at or below x + lo
        above = _overlap_at(sx, sy, max(hi, min(0, sx - sy)))  # y at or above x + hi
        most = max(below, above)
        slack = int(spare[s_lo:s_hi].min())
        below_ok, above_ok = most - below <= slack, most - above <= slack
        if not (below_ok or above_ok):
            return None
        if not above_ok:
            edges.append((y, x, -lo))
        elif not below_ok:
            edges.append((x, y, hi))
    floor = np.zeros(n, dtype=np.int64)
    for _ in range(len({u for u, _, _ in edges} | {v for _, v, _ in edges}) + 1):
        changed = False
        for u, v, w in edges:
            if floor[u] + w > floor[v]:
                floor[v] = floor[u] + w
                changed = True
        if not changed:
            break
    else:
        return None  # a cycle of forced orders that gains height every turn
    if n and int((floor + np.asarray(sizes, dtype=np.int64)).max()) > capacity:
        return None
    return floor


def _potentials(overlaps: list[np.ndarray], out_gap: list[np.ndarray], sizes: np.ndarray,
                deadline: float, clock: Callable[[], float]) -> np.ndarray | None:
    """Potentials p with p[u] - p[v] <= gap(u, v) - 1 for every pair (v above u), so that
    keys rise by at least 1 from u to v: shortest paths from a virtual source (Bellman-Ford
    with a queue); None on a negative cycle. Only links make a gap smaller than 1, so without
    them every potential stays 0."""
    n = len(overlaps)
    potential = np.zeros(n, dtype=np.int64)
    start = [int(overlaps[u][k]) for u in range(n) for k in (out_gap[u] < 1).nonzero()[0]]
    if not start:
        return potential
    # p[u] <= p[v] + gap(u, v) - 1: relaxing v may lower every u that holds v in its list.
    into: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u in range(n):
        for v, gap in zip(overlaps[u].tolist(), out_gap[u].tolist()):
            into[v].append((u, gap - 1))
    queue = deque(dict.fromkeys(start))
    queued = set(queue)
    relaxed = [0] * n
    steps = 0
    while queue:
        v = queue.popleft()
        queued.discard(v)
        steps += 1
        if not steps & 255 and clock() > deadline:
            return None
        pv = int(potential[v])
        for u, weight in into[v]:
            if pv + weight < potential[u]:
                potential[u] = pv + weight
                relaxed[u] += 1
                if relaxed[u] > n:
                    return None
                if u not in queued:
                    queue.append(u)
                    queued.add(u)
    return potential


class _Abort(Exception):
    """Raised through the recursion when the deadline passes or the node limit is spent."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Search:
    """One decision run: the mutable state of the depth-first search, undone on backtrack."""

    def __init__(self, sizes: list[int], widths: list[int], sweep: _Sweep, capacity: int,
                 solution: list[int], preorder: str, node_limit: int, deadline: float,
                 clock: Callable[[], float], gaps: _Gaps | None = None,
                 forced: np.ndarray | None = None) -> None:
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
        self.placed = [False] * n
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
        # With links (``gaps``) offsets become keys (offset + potential), and floors hold the
        # lowest offset (not key) any unplaced buffer of the section can take.
        self.gaps = gaps
        if gaps is None:
            self.overlap_arrays = [np.asarray(o, dtype=np.int64) for o in sweep.overlaps]
        else:
            self.overlap_arrays = gaps.overlaps
            self.unplaced_min[:n] = gaps.potential[:n] + (0 if forced is None else forced)
            self.credit = gaps.credit.copy()
            self.failed: set[tuple[int, int, tuple[int, ...], bytes]] = set()

    # --- the search -------------------------------------------------------------------------

    def solve(self, buffers: list[int], lo: int, hi: int, preorder: str) -> int:
        """Place ``buffers`` (all of a partition spanning sections [lo, hi)).

        With links, a partition that failed is remembered with its buffers' lowest keys:
        everything its search reads (floors, totals, credits) follows from those, so the same
        partition at the same keys fails again. Chains of linked buffers, where each choice
        of "overlap or jump above" reappears at every later step, need that to stay
        polynomial."""
        memo = None
        if self.gaps is not None:
            members = sorted(buffers)
            memo = (lo, hi, tuple(members), self.unplaced_min[members].tobytes())
            if memo in self.failed:
                return _NOT_FOUND
        keys = self._preorder_keys(buffers, preorder)
        order = np.array([b for _, b in sorted(zip(keys, buffers))], dtype=np.int64)
        status = self._search(order, lo, hi, 0 if self.gaps is None else -_NEVER, -1)
        if memo is not None and status != _FOUND:
            self.failed.add(memo)
        return status

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
        if self.gaps is None:
            min_height = int((lowest + self.sizes_np[order]).min())
            # Every later buffer starts at or above the offset chosen now, and every section
            # still has its unplaced bytes to hold above that: a bound that needs no placement.
            highest = self.capacity - int(self.total[lo:hi].max(initial=0))
            fit = pending
        else:
            min_height = int((lowest + self.gaps.reach[order]).min())
            highest = self._linked_highest(lo, hi)
            potential = self.gaps.potential[order]
            fit = pending & (lowest - potential + self.sizes_np[order] <= self.capacity)
        # Dominance: at or above min_height a buffer would leave a gap that an unplaced
        # buffer fits in. Canonical: offsets never decrease along a branch (ties by rank).
        limit = min(min_height - 1, highest)
        ranks = (fit & (lowest <= limit) & (lowest >= min_offset)).nonzero()[0]
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

    def _linked_highest(self, lo: int, hi: int) -> int:
        """The highest key the next buffer may take: every unplaced buffer of a section then
        starts at or above that key minus the section's largest potential, and its unplaced
        bytes, less the linked pairs' credit, must fit above."""
        assert self.gaps is not None
        total = self.total[lo:hi]
        need = total - self.credit[lo:hi] - self.gaps.top_potential[lo:hi]
        return self.capacity - int(need[total > 0].max(initial=-_NEVER))

    def _place_and_recurse(self, b: int, rank: int, offset: int, order: np.ndarray,
                           lo: int, hi: int) -> int:
        if self.gaps is not None:
            return self._place_linked(b, rank, offset, order, lo, hi)
        sw, sizes = self.sw, self.sizes
        size = sizes[b]
        height = offset + size
        self.placed[b] = True
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
        self.placed[b] = False
        return status

    def _place_linked(self, b: int, rank: int, key: int, order: np.ndarray,
                      lo: int, hi: int) -> int:
        """``_place_and_recurse`` with links: b at ``key`` (offset key - potential[b])."""
        gaps = self.gaps
        assert gaps is not None
        sw, size = self.sw, self.sizes[b]
        self.placed[b] = True
        self.solution[b] = key - int(gaps.potential[b])  # stale on failure, as above
        unplaced_min = self.unplaced_min
        unplaced_min[b] = _NEVER
        near = self.overlap_arrays[b]
        target = key + gaps.rise[b]
        up = unplaced_min[near] < target
        raised = near[up]
        old_mins = unplaced_min[raised]
        unplaced_min[raised] = target[up]
        touched = sw.section_masks[np.append(raised, b)].any(axis=0).nonzero()[0]
        saved_floor = self.floor[touched]
        members = self.sw_members[touched]
        self.floor[touched] = (unplaced_min[members] - gaps.potential[members]).min(axis=1)
        b_lo, b_hi = sw.sec_lo[b], sw.sec_hi[b]
        self.total[b_lo:b_hi] -= size
        withdrawn = [(s_lo, s_hi, c) for partner, s_lo, s_hi, c in gaps.pair_credit[b]
                     if not self.placed[partner]]
        for s_lo, s_hi, c in withdrawn:
            self.credit[s_lo:s_hi] -= c
        status = _NOT_FOUND
        if self._linked_sections_fit(lo, hi, key):
            status = self._decompose_or_continue(b, rank, key, order, lo, hi)
        for s_lo, s_hi, c in withdrawn:
            self.credit[s_lo:s_hi] += c
        self.total[b_lo:b_hi] += size
        self.floor[touched] = saved_floor
        unplaced_min[raised] = old_mins
        unplaced_min[b] = key
        self.placed[b] = False
        return status

    def _linked_sections_fit(self, lo: int, hi: int, key: int) -> bool:
        """Per section with unplaced bytes: they start at or above the floor and at or above
        ``key`` minus the section's largest potential, and, less the linked pairs' credit,
        must fit under the capacity."""
        assert self.gaps is not None
        total = self.total[lo:hi]
        start = np.maximum(self.floor[lo:hi], key - self.gaps.top_potential[lo:hi])
        need = start + total - self.credit[lo:hi]
        return bool(need[total > 0].max(initial=0) <= self.capacity)

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
                part = [i for i in order.tolist() if not self.placed[i]
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
         clock: Callable[[], float] = time.perf_counter, links: Sequence[Link] = ()) -> Outcome:
    """Decide whether ``buffers`` fit in ``capacity`` bytes (no fixed offsets allowed), linked
    pairs sharing bytes only as their ``links`` permit.

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
    gaps = _gaps(sizes, sweep, links, deadline, clock) if links else None
    if links and gaps is None:
        return Outcome(capacity, None, False, 0)  # no potentials: undecided
    need = sweep.section_totals - (0 if gaps is None else gaps.credit)
    if len(need) and int(need.max()) > capacity:
        return Outcome(capacity, None, True, 0)
    forced = None
    if gaps is not None:
        forced = _forced_floor(sizes, sweep, gaps, capacity)
        if forced is None:
            return Outcome(capacity, None, True, 0)
    # Each placement nests three frames; the limit is restored on the way out.
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 4 * len(active) + 200))
    try:
        return _round_robin(sizes, firsts, lasts, active, sweep, capacity, deadline, clock,
                            gaps, forced)
    finally:
        sys.setrecursionlimit(depth)


def _round_robin(sizes: list[int], firsts: list[int], lasts: list[int], active: list[int],
                 sweep: _Sweep, capacity: int, deadline: float,
                 clock: Callable[[], float], gaps: _Gaps | None,
                 forced: np.ndarray | None) -> Outcome:
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
                                 deadline, clock, gaps, forced)
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
                    share: float = 0.3, links: Sequence[Link] = (),
                    progress: Callable[[int, int, bool], None] | None = None) -> Minimized:
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
    infeasible. With ``links`` the bound is ``linked_bound`` and ``unit`` must divide every
    link's ``max_delta`` as well as every size.

    Links whose shifts admit no placement order (``_potentials``: a cycle of pairs each
    allowed to start at or above the previous one's start) are searched with every shift
    capped at ``-unit``: the plans found are valid, but the search's proofs then hold for
    the capped problem only, so ``optimal`` needs the height to meet the bound.

    ``progress(height, floor, proven)`` is called after every decision run that lowered the
    best height or raised the proven floor, so that a long search can show where it stands.
    """
    sizes = [b.size for b in buffers]
    best = tuple(int(o) for o in known)
    best_height = max((o + s for o, s in zip(best, sizes)), default=0)
    bound = linked_bound(buffers, links)
    proofs = not links or _orderable(buffers, links, deadline, clock)
    if not proofs:
        links = [Link(k.a, k.b, min(k.max_delta, -unit)) for k in links]
    proven_floor = bound  # every capacity below this is impossible (proven, for ``links``)
    guess_floor = bound  # capacities below this timed out: unknown, treated as hard
    probes: list[Outcome] = []
    capacity, portion = bound, first_share
    while best_height > proven_floor:
        now = clock()
        if now >= deadline:
            break
        outcome = fits(buffers, capacity, deadline=now + portion * (deadline - now), clock=clock,
                       links=links)
        probes.append(outcome)
        moved = False
        if outcome.offsets is not None:
            height = max((o + s for o, s in zip(outcome.offsets, sizes)), default=0)
            if height < best_height:
                best, best_height, moved = outcome.offsets, height, True
        elif outcome.infeasible:
            proven_floor = max(proven_floor, capacity + unit)
            guess_floor = max(guess_floor, proven_floor)
            moved = proofs
        else:
            guess_floor = max(guess_floor, capacity + unit)
        if moved and progress is not None:
            floor = proven_floor if proofs else bound
            progress(best_height, floor, best_height <= floor)
        if best_height <= proven_floor:
            break
        if guess_floor < best_height:  # bisect what is still open above the guesses
            capacity = _round_to(guess_floor + (best_height - unit - guess_floor) // 2, unit,
                                 guess_floor)
            portion = share
        else:  # every open capacity timed out once: the rest of the time to the lowest
            capacity, portion = proven_floor, 1.0
    return Minimized(best, best_height, best_height <= (proven_floor if proofs else bound),
                     bound, tuple(probes))


def _orderable(buffers: Sequence[Buffer], links: Sequence[Link], deadline: float,
               clock: Callable[[], float]) -> bool:
    """Whether potentials exist for ``links`` (the search then reaches every plan)."""
    sizes = [int(b.size) for b in buffers]
    active = [i for i, s in enumerate(sizes) if s > 0]
    sweep = _sweep(sizes, [int(b.first) for b in buffers], [int(b.last) for b in buffers],
                   active)
    return _gaps(sizes, sweep, links, deadline, clock) is not None


def _round_to(value: int, unit: int, at_least: int) -> int:
    return max(at_least, value - value % unit)


__all__ = ["Link", "Minimized", "Outcome", "PREORDERS", "fits", "link_intervals",
           "linked_bound", "minimize_height"]
