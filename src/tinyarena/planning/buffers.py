"""What a memory planner sees: sizes and lifetimes, never models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tinyarena.errors import PlanError


@dataclass(frozen=True)
class Buffer:
    """One request to a planner, as TFLM's MicroMemoryPlanner::AddBuffer receives it.

    ``size`` is already rounded as the caller wants (TFLM rounds to 16 before adding).
    ``first``/``last`` are the closed interval of time steps in which it is live (-1 when TFLM
    left them unset). ``offset`` is a fixed (offline) offset, or None to be planned online.
    """

    size: int
    first: int
    last: int
    offset: int | None = None


@dataclass(frozen=True)
class Plan:
    """Offsets for buffers, in the order the buffers were given."""

    offsets: tuple[int, ...]
    buffers: tuple[Buffer, ...]

    @property
    def head_size(self) -> int:
        """TFLM's GetMaximumMemorySize: max(offset + size), 0 for no buffers."""
        return max((o + b.size for o, b in zip(self.offsets, self.buffers)), default=0)


@dataclass(frozen=True)
class BufferArrays:
    """Buffers as parallel int64 columns, validated once, for the vectorised planners.

    ``offsets`` holds the fixed offset of offline buffers and -1 for online ones; ``fixed``
    says which is which (TFLM's kOnlinePlannedBuffer is -1 too, which is why a real offset
    can never be negative here).
    """

    sizes: np.ndarray
    firsts: np.ndarray
    lasts: np.ndarray
    offsets: np.ndarray
    fixed: np.ndarray

    def __len__(self) -> int:
        return int(self.sizes.shape[0])


def buffer_arrays(buffers: Sequence[Buffer]) -> BufferArrays:
    """Columns of ``buffers`` after checking what every planner here relies on.

    Rejected (PlanError, naming the first offending buffer): a negative size, a lifetime whose
    first step is after its last (TFLM's lifetime builder never makes one, and every
    "live at t" rule here assumes closed, non-empty intervals), and a negative fixed offset
    (TFLM reads -1 as "plan online"; use ``offset=None`` for that).
    """
    n = len(buffers)
    table = np.array(
        [(b.size, b.first, b.last, -1 if b.offset is None else b.offset, b.offset is not None)
         for b in buffers],
        dtype=np.int64,
    ).reshape(n, 5)
    sizes, firsts, lasts, offsets = (np.ascontiguousarray(table[:, k]) for k in range(4))
    fixed = table[:, 4].astype(bool)
    _reject(buffers, np.flatnonzero(sizes < 0), "has a negative size; sizes are byte counts")
    _reject(buffers, np.flatnonzero(firsts > lasts),
            "has first > last; lifetimes are closed intervals [first, last]")
    _reject(buffers, np.flatnonzero(fixed & (offsets < 0)),
            "has a negative fixed offset; pass offset=None to have it planned online")
    return BufferArrays(sizes, firsts, lasts, offsets, fixed)


def _reject(buffers: Sequence[Buffer], bad: np.ndarray, why: str) -> None:
    if bad.size:
        i = int(bad[0])
        raise PlanError(f"buffer {i} {buffers[i]} {why} ({bad.size} such buffer(s))")
