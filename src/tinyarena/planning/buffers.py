"""What a memory planner sees: sizes and lifetimes, never models."""

from __future__ import annotations

from dataclasses import dataclass


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
