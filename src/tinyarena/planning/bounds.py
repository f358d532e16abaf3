"""How small any plan can be: the peak of live bytes over time."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tinyarena.planning.buffers import Buffer, buffer_arrays


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """Largest sum of sizes of buffers live at one time step.

    A buffer is live at every integer t with first <= t <= last, the same closed intervals
    TFLM's planner tests for overlap (DoesEntryOverlapInTime). So [-1, -1] (a tensor no
    operator touches) is live at step -1 only, and [-1, k] (consumed but never produced) at
    -1..k. Any two buffers live at a common step intersect in TFLM's sense, so no overlap-free
    plan (online buffers only; fixed offsets may overlap on purpose) can be smaller. Event
    sweep: +size at first, -size at last + 1; the level after the last event of a step is the
    live total at that step.
    """
    arrays = buffer_arrays(buffers)
    if len(arrays) == 0:
        return 0
    times = np.concatenate([arrays.firsts, arrays.lasts + 1])
    deltas = np.concatenate([arrays.sizes, -arrays.sizes])
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(deltas[order])
    step_end = np.append(times[1:] != times[:-1], True)
    return int(max(level[step_end].max(), 0))


__all__ = ["lower_bound"]
