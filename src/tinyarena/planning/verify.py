"""Proof that a plan is safe: no two buffers live at the same step share a byte."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import AbstractSet, Callable, Union

import numpy as np

from tinyarena.errors import PlanError
from tinyarena.planning.buffers import Buffer, Plan, buffer_arrays

AllowedOverlaps = Union[AbstractSet[tuple[int, int]], Callable[[int, int], bool], None]
"""Pairs of buffer indices that may share memory although both are live (e.g. an in-place
operator's input and output): a set of (i, j) in either order, or a predicate f(i, j) called
with i < j."""


def verify_plan(plan: Plan, allowed_overlaps: AllowedOverlaps = None) -> None:
    """Raise PlanError on the first conflict found: a negative offset, or two buffers whose
    closed lifetimes intersect (TFLM's DoesEntryOverlapInTime rule) and whose byte ranges
    [offset, offset + size) share a byte. Zero-size buffers occupy no byte and never conflict.

    Time sweep over first steps: the buffers live at a step are pairwise disjoint in memory
    in a valid plan, so a new buffer only has to be compared with its offset-order neighbours
    (bisect on the sorted live offsets). Only while permitted overlaps are live is the full
    live set scanned. O(n log n) plus the cost of permitted overlaps.
    """
    if len(plan.offsets) != len(plan.buffers):
        raise PlanError(
            f"plan has {len(plan.offsets)} offsets for {len(plan.buffers)} buffers; "
            "a plan needs exactly one offset per buffer"
        )
    arrays = buffer_arrays(plan.buffers)
    offsets = np.asarray(plan.offsets, dtype=np.int64).reshape(-1)
    negative = np.flatnonzero(offsets < 0)
    if negative.size:
        i = int(negative[0])
        raise PlanError(f"{_describe(i, plan.buffers[i], int(offsets[i]))} has a negative "
                        "offset; offsets count bytes from the start of the head")
    _sweep(plan, offsets, arrays.sizes, arrays.firsts, arrays.lasts,
           _allowed_predicate(allowed_overlaps))


def _allowed_predicate(allowed: AllowedOverlaps) -> Callable[[int, int], bool]:
    if allowed is None:
        return lambda i, j: False
    if callable(allowed):
        return allowed
    pairs = {(min(a, b), max(a, b)) for a, b in allowed}
    return lambda i, j: (i, j) in pairs


def _sweep(plan: Plan, offsets: np.ndarray, sizes: np.ndarray, firsts: np.ndarray,
           lasts: np.ndarray, allowed: Callable[[int, int], bool]) -> None:
    real = np.flatnonzero(sizes > 0)
    by_first = real[np.argsort(firsts[real], kind="stable")].tolist()
    by_last = real[np.argsort(lasts[real], kind="stable")].tolist()
    off = offsets.tolist()
    end = (offsets + sizes).tolist()
    first = firsts.tolist()
    last = lasts.tolist()
    live_offsets: list[int] = []  # sorted
    live_ids: list[int] = []  # parallel to live_offsets
    is_live = [False] * len(off)
    partners: dict[int, list[int]] = {}
    permitted_live = 0  # live pairs that overlap with permission
    leaving = 0
    for i in by_first:
        while leaving < len(by_last) and last[by_last[leaving]] < first[i]:
            j = by_last[leaving]
            leaving += 1
            if not is_live[j]:
                continue
            k = bisect_left(live_offsets, off[j])
            while live_ids[k] != j:
                k += 1
            del live_offsets[k], live_ids[k]
            is_live[j] = False
            permitted_live -= sum(is_live[p] for p in partners.pop(j, ()))
        lo, hi = off[i], end[i]
        if permitted_live == 0:
            k = bisect_left(live_offsets, lo)
            clash = (k > 0 and end[live_ids[k - 1]] > lo) or (
                k < len(live_offsets) and live_offsets[k] < hi)
        else:
            clash = True
        if clash:
            stop = bisect_left(live_offsets, hi)
            hits = [j for j in live_ids[:stop] if end[j] > lo]
            for j in sorted(hits):
                a, b = min(i, j), max(i, j)
                if not allowed(a, b):
                    raise _overlap_error(plan, a, b)
                partners.setdefault(i, []).append(j)
                partners.setdefault(j, []).append(i)
                permitted_live += 1
        k = bisect_right(live_offsets, lo)
        live_offsets.insert(k, lo)
        live_ids.insert(k, i)
        is_live[i] = True


def _describe(i: int, b: Buffer, offset: int) -> str:
    return (f"buffer {i} (size {b.size}, offset {offset}, bytes [{offset}, {offset + b.size}), "
            f"live [{b.first}, {b.last}])")


def _overlap_error(plan: Plan, a: int, b: int) -> PlanError:
    ba, bb = plan.buffers[a], plan.buffers[b]
    oa, ob = plan.offsets[a], plan.offsets[b]
    step = max(ba.first, bb.first)
    lo, hi = max(oa, ob), min(oa + ba.size, ob + bb.size)
    return PlanError(
        f"{_describe(a, ba, oa)} and {_describe(b, bb, ob)} are both live at step {step} and "
        f"share bytes [{lo}, {hi}); move one of them or shorten a lifetime"
    )


__all__ = ["AllowedOverlaps", "verify_plan"]
