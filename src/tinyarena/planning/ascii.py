"""TFLM's memory-plan picture (GreedyMemoryPlanner::PrintMemoryPlan), line for line.

TFLM prints it only in builds with TF_LITE_SHOW_MEMORY_USE, each line through MicroPrintf
(which ends lines with "\\r\\n"; here every line ends with "\\n").
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tinyarena.errors import PlanError
from tinyarena.planning.buffers import Plan, buffer_arrays

LINE_WIDTH = 80
_ORDINALS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def ordinal_character(i: int) -> str:
    """GetOrdinalCharacter: 0-9, a-z, A-Z, wrapping every 62 ids."""
    return _ORDINALS[i % len(_ORDINALS)]


SHARED_MARK = "="


def render_memory_plan(plan: Plan, intended: Callable[[int, int], bool] | None = None) -> str:
    """The text PrintMemoryPlan emits for ``plan`` (buffers in addition order).

    First one line per buffer, then one 80-column row per step 0..max(last): each buffer live
    at that step paints columns [offset*80/M, (offset+size)*80/M) (C integer division,
    M = max(80, largest offset + size)) with its ordinal character, or '*' when it lives for
    one step; a column painted twice shows '!'. The row ends with the live kilobytes, rounded
    up. TFLM skips offset -1 (unplanned) when painting; other negative offsets are rejected.

    ``intended(i, j)`` (i < j) marks pairs that share bytes on purpose (a view, an op in
    place, an offline plan's partial overlap): a column painted only by such pairs shows
    ``SHARED_MARK`` instead of TFLM's '!'. Without it the picture is TFLM's, byte for byte.
    """
    arrays = buffer_arrays(plan.buffers)
    offsets = np.asarray(plan.offsets, dtype=np.int64).reshape(-1)
    if offsets.shape[0] != len(arrays):
        raise PlanError(f"plan has {offsets.shape[0]} offsets for {len(arrays)} buffers")
    bad = np.flatnonzero(offsets < -1)
    if bad.size:
        raise PlanError(f"buffer {int(bad[0])} has offset {int(offsets[bad[0]])}; "
                        "a plan to render needs offsets >= 0 (or -1 for unplanned)")
    firsts, lasts, sizes = arrays.firsts, arrays.lasts, arrays.sizes
    chars = [ordinal_character(i) if f != l else "*"
             for i, (f, l) in enumerate(zip(firsts.tolist(), lasts.tolist()))]
    lines = [
        f"{c} (id={i}): size={s}, offset={o}, first_used={f} last_used={l}"
        for i, (c, s, o, f, l) in enumerate(
            zip(chars, sizes.tolist(), offsets.tolist(), firsts.tolist(), lasts.tolist()))
    ]
    max_size = int(max(LINE_WIDTH, (offsets + sizes).max(initial=0)))
    max_time = int(max(0, lasts.max(initial=0)))
    rows, kilobytes = _paint(offsets, sizes, firsts, lasts, chars, max_size, max_time,
                             intended)
    lines += [f"{t:4d}: {row} ({k}k)" for t, (row, k) in enumerate(zip(rows, kilobytes))]
    return "".join(line + "\n" for line in lines)


def _paint(offsets: np.ndarray, sizes: np.ndarray, firsts: np.ndarray, lasts: np.ndarray,
           chars: list[str], max_size: int, max_time: int,
           intended: Callable[[int, int], bool] | None = None) -> tuple[list[str], list[int]]:
    """Rows of the picture via 2-D difference arrays over (step, column): how many buffers
    paint each cell and the sum of their character codes (exact when exactly one paints)."""
    steps = max_time + 1
    start = np.maximum(firsts, 0)
    stop = np.minimum(lasts, max_time) + 1
    shown = (offsets != -1) & (start < stop)
    use = np.zeros(steps + 1, dtype=np.int64)
    np.add.at(use, start[shown], sizes[shown])
    np.add.at(use, stop[shown], -sizes[shown])
    kilobytes = ((np.cumsum(use)[:steps] + 1023) // 1024).tolist()

    col_lo = offsets * LINE_WIDTH // max_size
    col_hi = (offsets + sizes) * LINE_WIDTH // max_size
    paint = shown & (col_lo < col_hi)
    codes = np.array([ord(c) for c in chars], dtype=np.int64).reshape(-1)
    count = np.zeros((steps + 1, LINE_WIDTH + 1), dtype=np.int64)
    total = np.zeros_like(count)
    t0, t1, c0, c1 = start[paint], stop[paint], col_lo[paint], col_hi[paint]
    for grid, weight in ((count, np.ones_like(t0)), (total, codes[paint])):
        np.add.at(grid, (t0, c0), weight)
        np.add.at(grid, (t0, c1), -weight)
        np.add.at(grid, (t1, c0), -weight)
        np.add.at(grid, (t1, c1), weight)
    count = count.cumsum(0).cumsum(1)[:steps, :LINE_WIDTH]
    total = total.cumsum(0).cumsum(1)[:steps, :LINE_WIDTH]
    picture = np.where(count == 0, ord("."), np.where(count == 1, total, ord("!")))
    if intended is not None:
        for t, c in zip(*np.nonzero(count > 1)):
            ids = np.flatnonzero(paint & (start <= t) & (t < stop) & (col_lo <= c)
                                 & (c < col_hi)).tolist()
            if all(intended(a, b) for k, a in enumerate(ids) for b in ids[k + 1:]):
                picture[t, c] = ord(SHARED_MARK)
    rows = [bytes(r).decode("ascii") for r in picture.astype(np.uint8)]
    return rows, kilobytes


__all__ = ["LINE_WIDTH", "SHARED_MARK", "ordinal_character", "render_memory_plan"]
