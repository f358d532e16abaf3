"""TFLM's LinearMemoryPlanner: no reuse at all, every buffer right after the previous one.

TFLM uses it when all tensors must stay readable after Invoke (``preserve_all_tensors``,
Python ``kPreserveAllTensors``). Its buffer table is a fixed array of 1024 entries, and it
has no offline AddBuffer, so a model with an OfflineMemoryAllocation plan cannot use it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tinyarena.errors import PlanError
from tinyarena.planning.buffers import Buffer, Plan, buffer_arrays

LINEAR_MAX_BUFFERS = 1024
"""LinearMemoryPlanner::kMaxBufferCount."""


def _too_many() -> PlanError:
    return PlanError(
        f"Too many buffers (max is {LINEAR_MAX_BUFFERS}): TFLM's linear planner has a fixed "
        "table; use the greedy planner for larger graphs"
    )


def _no_offline(index: int, buffer: Buffer) -> PlanError:
    return PlanError(
        f"buffer {index} {buffer} has a fixed offset, but TFLM's linear planner cannot take an "
        "offline plan (it has no offline AddBuffer); drop the OfflineMemoryAllocation plan or "
        "use the greedy planner"
    )


def plan_linear(buffers: Sequence[Buffer]) -> Plan:
    """Offsets = running sum of the sizes before each buffer (LinearMemoryPlanner::AddBuffer);
    the head is the total."""
    if len(buffers) > LINEAR_MAX_BUFFERS:
        raise _too_many()
    arrays = buffer_arrays(buffers)
    fixed = np.flatnonzero(arrays.fixed)
    if fixed.size:
        raise _no_offline(int(fixed[0]), buffers[int(fixed[0])])
    offsets = np.cumsum(arrays.sizes) - arrays.sizes
    return Plan(tuple(offsets.tolist()), tuple(buffers))


class LinearPlanner:
    """Incremental form: ``add_buffer`` fails as TFLM's does, at the 1025th buffer."""

    def __init__(self) -> None:
        self._buffers: list[Buffer] = []

    @property
    def buffer_count(self) -> int:
        return len(self._buffers)

    def add_buffer(self, buffer: Buffer) -> int:
        if len(self._buffers) >= LINEAR_MAX_BUFFERS:
            raise _too_many()
        if buffer.offset is not None:
            raise _no_offline(len(self._buffers), buffer)
        self._buffers.append(buffer)
        return len(self._buffers) - 1

    def plan(self) -> Plan:
        return plan_linear(self._buffers)

    def maximum_memory_size(self) -> int:
        """GetMaximumMemorySize: the sum of all sizes."""
        return sum(b.size for b in self._buffers)

    def offset_for_buffer(self, index: int) -> int:
        if not 0 <= index < len(self._buffers):
            raise PlanError(f"buffer index {index} is outside range 0 to {len(self._buffers)}")
        return self.plan().offsets[index]


__all__ = ["LINEAR_MAX_BUFFERS", "LinearPlanner", "plan_linear"]
