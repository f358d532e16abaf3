"""TFLM's GreedyMemoryPlanner, offset for offset, without its quadratic cost.

TFLM (``memory_planner/greedy_memory_planner.cc``, ``CalculateOffsetsIfNeeded``):

1. Order: buffers with a fixed (offline) offset first, in addition order; then the online
   ones, written in reverse addition order and stably bubble-sorted by size, descending
   (``ReverseSortInPlace``). Net rule: larger first, equal sizes -> later-added first.
2. Placement, in that order, keeping an offset-sorted list of placed entries: a fixed buffer
   goes to its offset unchecked; an online buffer walks the list in offset order, looking only
   at entries whose closed time interval meets its own, and takes the first candidate whose
   gap to the next such entry is at least its size, where the candidate is the largest end
   (offset + size) of the entries walked past so far, starting at 0. With no such gap it takes
   the final candidate. A new entry is linked in after every entry with an offset <= its own.
3. Head (``GetMaximumMemorySize``) = max(offset + size), 0 with no buffers.

Here step 1 is one stable key sort. For step 2 only the placed entries that meet the new
buffer in time matter, and they are sorted by offset before the walk; their order among equal
offsets cannot change the result. Those entries come from precomputed neighbour lists (all
time-intersecting pairs, by a sort and a searchsorted), and runs of buffers that do not meet
each other in time are placed together, their walks side by side in one set of numpy
operations (``_greedy_offsets_waves``): linear in the number of intersecting pairs, not in
the square of the buffer count. When lifetimes overlap so much that the lists would be huge,
each buffer filters an offset-sorted table of all placed entries instead (``_place``).
``_reference_greedy_offsets`` mirrors TFLM step by step; tests check that both methods agree
with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence, overload

import numpy as np

from tinyarena.errors import PlanError
from tinyarena.planning.buffers import Buffer, BufferArrays, Plan, buffer_arrays

@dataclass(frozen=True)
class Deadline:
    """A point on ``clock`` after which a placement pass gives up (returns None). Checked every
    ``every`` buffers, so a pass overruns it by at most that many placements."""

    at: float
    clock: Callable[[], float] = time.perf_counter
    every: int = 64

    def passed(self, step: int) -> bool:
        """Checked at steps every, 2 * every, ...: a pass always does its first ``every``
        placements, so small problems finish even on a budget already spent."""
        return step > 0 and step % self.every == 0 and self.clock() > self.at

    def remaining(self) -> float:
        return max(self.at - self.clock(), 0.0)


class _Stopped(Exception):
    """Unwinds a placement pass whose deadline passed."""


GREEDY_BYTES_PER_BUFFER = 40
"""Working memory TFLM's planner needs per buffer (GreedyMemoryPlanner::per_buffer_size():
BufferRequirements 16 + two int sort arrays + ListEntry 12 + the int offset), on every target."""


def greedy_max_buffers(working_bytes: int) -> int:
    """How many buffers TFLM's greedy planner accepts in ``working_bytes`` of scratch
    (GreedyMemoryPlanner::Init: area / per_buffer_size(), integer division)."""
    return max(working_bytes, 0) // GREEDY_BYTES_PER_BUFFER


def greedy_order(arrays: BufferArrays) -> np.ndarray:
    """Indices in TFLM's placement order (CalculateOffsetsIfNeeded + ReverseSortInPlace).

    The bubble sort over the reversed online buffers is stable, so it equals one sort by
    (size descending, addition index descending); fixed buffers keep addition order in front.
    """
    index = np.arange(len(arrays), dtype=np.int64)
    fixed = index[arrays.fixed]
    online = index[~arrays.fixed]
    by_key = np.lexsort((-online, -arrays.sizes[online]))
    return np.concatenate([fixed, online[by_key]])


def _place(size: int, offs: np.ndarray, ends: np.ndarray) -> int:
    """First-fit offset among the time-intersecting entries ``offs``/``ends`` (offset order).

    TFLM's walk: candidate c_j before entry j is max(0, ends of entries 0..j-1); stop at the
    first j with offs[j] - c_j >= size, else take max(0, all ends). Entries with equal offsets
    can be walked in either order: failing the gap test at the first of them lifts the
    candidate to at least that offset, so a non-negative size fails at the others too, and the
    candidate after the group is the same maximum.
    """
    if offs.size == 0:
        return 0
    if offs[0] >= size:
        return 0
    # Offsets and sizes are never negative, so every end is >= 0 and the running maximum of
    # the ends is already max(0, ...).
    reach = np.maximum.accumulate(ends)
    fits = (offs[1:] - reach[:-1]) >= size
    j = int(fits.argmax()) if fits.size else 0
    if fits.size and fits[j]:
        return int(reach[j])
    return int(reach[-1])


_MAX_PAIRS = 16_000_000
"""Above this many time-intersecting pairs the neighbour lists cost more memory (about 100 bytes
a pair while they are built) than they save; placement then filters all placed entries per
buffer instead (quadratic, but then so is the number of pairs)."""

def _greedy_offsets(arrays: BufferArrays, max_pairs: int = _MAX_PAIRS) -> np.ndarray:
    """Offsets per buffer (addition order), the fast way. ``max_pairs`` picks the method
    (tests lower it to exercise both)."""
    order = greedy_order(arrays)
    rows = _rank_rows(arrays, order, max_pairs)
    if rows is None:
        return _greedy_offsets_scan(arrays, order)
    return _greedy_offsets_waves(arrays, order, *rows)


def _intersecting_pairs(firsts: np.ndarray, lasts: np.ndarray,
                        limit: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Every unordered pair of buffers whose closed lifetimes intersect, or None if more than
    ``limit``. After sorting by first step, a buffer meets exactly the later-sorted buffers
    that start no later than its last step: a contiguous run, found by one searchsorted."""
    n = firsts.shape[0]
    by_first = np.argsort(firsts, kind="stable")
    sorted_firsts = firsts[by_first]
    ends = np.searchsorted(sorted_firsts, lasts[by_first], side="right")
    counts = ends - np.arange(n) - 1
    total = int(counts.sum())
    if total > limit:
        return None
    a_pos = np.repeat(np.arange(n), counts)
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    b_pos = a_pos + 1 + (np.arange(total) - run_start)
    return by_first[a_pos], by_first[b_pos]


def _rank_rows(arrays: BufferArrays, order: np.ndarray, max_pairs: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Earlier-placed, time-intersecting neighbours as CSR rows in placement order: row p
    lists the neighbours of ``order[p]`` placed before it (flat ids, row starts, the highest
    placement position in each row or -1). None when there are more than ``max_pairs``."""
    n = len(arrays)
    pairs = _intersecting_pairs(arrays.firsts, arrays.lasts, max_pairs)
    if pairs is None:
        return None
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    ra, rb = rank[pairs[0]], rank[pairs[1]]
    owner = np.maximum(ra, rb)
    other = np.where(ra < rb, pairs[0], pairs[1])
    by_row = np.argsort(owner)  # order within a row does not matter: rows are sorted later
    flat = other[by_row]
    lengths = np.bincount(owner, minlength=n)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    latest = np.full(n, -1, dtype=np.int64)
    rows = np.flatnonzero(lengths)
    if rows.size:
        latest[rows] = np.maximum.reduceat(rank[flat], starts[rows])
    return flat, starts, latest


def _greedy_offsets_waves(arrays: BufferArrays, order: np.ndarray, flat: np.ndarray,
                          starts: np.ndarray, latest: np.ndarray,
                          stop: Deadline | None = None) -> np.ndarray:
    """TFLM's placement, a wave of buffers at a time.

    A buffer's offset depends only on the time-intersecting buffers placed before it. So a run
    of consecutive buffers in placement order of which none meets another in time (a wave)
    can be placed at once: every walk of the wave is done together by segmented numpy
    operations (sort by offset within each buffer's neighbours, running maximum of the ends,
    first gap that fits). Waves are long when lifetimes are short against the whole
    schedule, which is what makes tens of thousands of buffers cheap.
    """
    n = len(arrays)
    sizes = arrays.sizes
    result = np.zeros(n, dtype=np.int64)
    fixed = arrays.fixed[order]
    result[order[fixed]] = arrays.offsets[order[fixed]]
    waves = [0]
    for p, last in enumerate(latest.tolist()):
        if last >= waves[-1]:
            waves.append(p)
    waves.append(n)
    span = int(sizes.sum()) + int(arrays.offsets.max(initial=0)) + 1  # > every end
    for w, (p0, p1) in enumerate(zip(waves, waves[1:])):
        if stop is not None and stop.passed(w):
            raise _Stopped
        a, b = int(starts[p0]), int(starts[p1])
        members = order[p0:p1]
        online = ~fixed[p0:p1]
        if a == b:
            continue  # no neighbours: every online member goes to offset 0
        nb = flat[a:b]
        seg = np.repeat(np.arange(p1 - p0), starts[p0 + 1:p1 + 1] - starts[p0:p1])
        lift = seg * span
        key = result[nb] + lift  # walks side by side: by segment, then by offset
        by = np.argsort(key)
        key, seg, lift = key[by], seg[by], lift[by]
        offs = key - lift
        ends = offs + sizes[nb[by]]
        reach = np.maximum.accumulate(ends + lift) - lift
        first_of_seg = np.empty(seg.shape, dtype=bool)
        first_of_seg[0] = True
        first_of_seg[1:] = seg[1:] != seg[:-1]
        before = np.empty_like(reach)
        before[0] = 0
        before[1:] = reach[:-1]
        before[first_of_seg] = 0  # candidate before a walk's first entry: offset 0
        fits = offs - before >= sizes[members[seg]]
        last_of_seg = np.empty(seg.shape, dtype=bool)
        last_of_seg[-1] = True
        last_of_seg[:-1] = first_of_seg[1:]
        placed = np.zeros(p1 - p0, dtype=np.int64)
        placed[seg[last_of_seg]] = reach[last_of_seg]  # no gap: above everything walked
        hit = np.flatnonzero(fits)
        if hit.size:
            first_hit = hit[np.concatenate(([True], seg[hit][1:] != seg[hit][:-1]))]
            placed[seg[first_hit]] = before[first_hit]
        result[members[online]] = placed[online]
    return result


def _greedy_offsets_scan(arrays: BufferArrays, order: np.ndarray,
                         stop: Deadline | None = None) -> np.ndarray:
    """Placement filtering all placed entries per buffer (for heavily overlapping lifetimes)."""
    n = len(arrays)
    result = np.zeros(n, dtype=np.int64)
    # Placed entries sorted by offset, one row each: offset, end, first, last (row-major, so
    # making room for a new entry is a single contiguous move).
    rows = np.empty((n, 4), dtype=np.int64)
    r_off, r_end, r_first, r_last = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
    sizes = arrays.sizes.tolist()
    firsts = arrays.firsts.tolist()
    lasts = arrays.lasts.tolist()
    fixed = arrays.fixed.tolist()
    given = arrays.offsets.tolist()
    for placed, i in enumerate(order.tolist()):
        if stop is not None and stop.passed(placed):
            raise _Stopped
        size, first, last = sizes[i], firsts[i], lasts[i]
        if fixed[i]:
            offset = given[i]
        elif placed == 0:
            offset = 0
        else:
            live = (r_first[:placed] <= last) & (r_last[:placed] >= first)
            offset = _place(size, r_off[:placed][live], r_end[:placed][live])
        result[i] = offset
        pos = int(r_off[:placed].searchsorted(offset, side="right"))
        rows[pos + 1:placed + 1] = rows[pos:placed]
        rows[pos] = (offset, offset + size, first, last)
    return result


@overload
def first_fit_offsets(arrays: BufferArrays, order: np.ndarray) -> np.ndarray: ...


@overload
def first_fit_offsets(arrays: BufferArrays, order: np.ndarray,
                      stop: Deadline | None) -> np.ndarray | None: ...


def first_fit_offsets(arrays: BufferArrays, order: np.ndarray,
                      stop: Deadline | None = None) -> np.ndarray | None:
    """TFLM's first-fit placement, but visiting buffers in ``order`` instead of TFLM's.

    Fixed buffers keep their offsets wherever they appear in ``order``. The optimizer uses
    this to try other placement orders with exactly the greedy's gap rule. With ``stop``,
    None once its deadline passes.
    """
    order = np.asarray(order, dtype=np.int64)
    try:
        rows = _rank_rows(arrays, order, _MAX_PAIRS)
        if rows is None:
            return _greedy_offsets_scan(arrays, order, stop)
        return _greedy_offsets_waves(arrays, order, *rows, stop=stop)
    except _Stopped:
        return None


def plan_greedy(buffers: Sequence[Buffer]) -> Plan:
    """The plan TFLM's GreedyMemoryPlanner makes for ``buffers`` added in this order."""
    arrays = buffer_arrays(buffers)
    offsets = _greedy_offsets(arrays)
    return Plan(tuple(offsets.tolist()), tuple(buffers))


class GreedyPlanner:
    """TFLM's planner object: add buffers one by one, then read the plan.

    ``max_buffers`` mimics the working-memory cap (see ``from_working_memory``); None means
    no cap. The plan is computed on first use after the last ``add_buffer``.
    """

    def __init__(self, max_buffers: int | None = None) -> None:
        self._max_buffers = max_buffers
        self._buffers: list[Buffer] = []
        self._plan: Plan | None = None

    @classmethod
    def from_working_memory(cls, working_bytes: int) -> GreedyPlanner:
        """A planner capped as TFLM's is when Init gets ``working_bytes`` of scratch."""
        return cls(greedy_max_buffers(working_bytes))

    @property
    def max_buffers(self) -> int | None:
        return self._max_buffers

    @property
    def buffer_count(self) -> int:
        return len(self._buffers)

    def add_buffer(self, buffer: Buffer) -> int:
        """Queue one buffer (GreedyMemoryPlanner::AddBuffer); returns its index."""
        if self._max_buffers is not None and len(self._buffers) >= self._max_buffers:
            raise PlanError(
                f"Too many buffers (max is {self._max_buffers}): the greedy planner needs "
                f"{GREEDY_BYTES_PER_BUFFER} bytes of working memory per buffer; give it more"
            )
        self._buffers.append(buffer)
        self._plan = None
        return len(self._buffers) - 1

    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = plan_greedy(self._buffers)
        return self._plan

    def maximum_memory_size(self) -> int:
        """GetMaximumMemorySize: the head TFLM reserves for this plan."""
        return self.plan().head_size

    def offset_for_buffer(self, index: int) -> int:
        """GetOffsetForBuffer, raising instead of returning an error status."""
        if not 0 <= index < len(self._buffers):
            raise PlanError(
                f"buffer index {index} is outside range 0 to {len(self._buffers)}"
            )
        return self.plan().offsets[index]


def _reference_greedy_offsets(buffers: Sequence[Buffer]) -> list[int]:
    """Step-by-step mirror of CalculateOffsetsIfNeeded (bubble sort, linked list). Slow on
    purpose: tests compare the fast planner against it."""
    n = len(buffers)
    if n == 0:
        return []
    offline = [b.offset if b.offset is not None else -1 for b in buffers]
    # Fixed buffers from the head of the order arrays, online ones from the tail.
    values = [0] * n
    ids = [0] * n
    offsets = [-1] * n
    tail, head = n, 0
    for i, b in enumerate(buffers):
        if offline[i] == -1:
            tail -= 1
            values[tail], ids[tail] = b.size, i
        else:
            values[head], ids[head] = b.size, i
            offsets[i] = offline[i]
            head += 1
    # ReverseSortInPlace on the online part.
    swapped = True
    while swapped:
        swapped = False
        for k in range(head + 1, n):
            if values[k - 1] < values[k]:
                values[k - 1], values[k] = values[k], values[k - 1]
                ids[k - 1], ids[k] = ids[k], ids[k - 1]
                swapped = True
    # Linked list entries: [offset, buffer id, next entry index].
    entries: list[list[int]] = []
    first_id = ids[0]
    if offline[first_id] == -1:
        offsets[first_id] = 0
    entries.append([offsets[first_id], first_id, -1])
    head_entry = 0

    def meets(entry: list[int], first: int, last: int) -> bool:
        other = buffers[entry[1]]
        return not (other.first > last or first > other.last)

    def next_active(start: int | None, first: int, last: int) -> int | None:
        k = head_entry if start is None else entries[start][2]
        while k != -1:
            if meets(entries[k], first, last):
                return k
            k = entries[k][2]
        return None

    for i in range(1, n):
        bid = ids[i]
        want = buffers[bid]
        candidate = 0
        if offline[bid] == -1:
            prior: int | None = None
            while True:
                nxt = next_active(prior, want.first, want.last)
                if prior is not None:
                    prior_end = entries[prior][0] + buffers[entries[prior][1]].size
                    candidate = max(candidate, prior_end)
                if nxt is None or entries[nxt][0] - candidate >= want.size:
                    break
                prior = nxt
        else:
            candidate = offline[bid]
        offsets[bid] = candidate
        entries.append([candidate, bid, -1])
        new = len(entries) - 1
        if entries[head_entry][0] > candidate:
            entries[new][2] = head_entry
            head_entry = new
        else:
            cur = head_entry
            while True:
                nxt_index = entries[cur][2]
                if nxt_index == -1:
                    entries[cur][2] = new
                    break
                if entries[nxt_index][0] > candidate:
                    entries[new][2] = nxt_index
                    entries[cur][2] = new
                    break
                cur = nxt_index
    return offsets


__all__ = [
    "Deadline",
    "GREEDY_BYTES_PER_BUFFER",
    "GreedyPlanner",
    "first_fit_offsets",
    "greedy_max_buffers",
    "greedy_order",
    "plan_greedy",
]
