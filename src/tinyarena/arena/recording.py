"""TFLM's RecordingMicroAllocator categories: (used, requested, count) per allocation kind.

RecordingMicroAllocator wraps a few MicroAllocator methods; around each call it snapshots the
recording buffer allocator's (requested bytes, used bytes, allocation count) and adds the
difference to one category. "Used" therefore includes the alignment padding in front of each
allocation, and "count" is the number of tail allocations, adjusted for the eval-tensor and
node arrays to the number of tensors and nodes. Temp allocations change none of the counters.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from tinyarena.arena.buffer_allocator import BufferAllocator

EVAL_TENSOR_DATA = "TfLiteEvalTensor data"
PERSISTENT_TENSOR_DATA = "Persistent TfLiteTensor data"
PERSISTENT_QUANTIZATION_DATA = "Persistent TfLiteTensor quantization data"
PERSISTENT_BUFFER_DATA = "Persistent buffer data"
VARIABLE_BUFFER_DATA = "TfLiteTensor variable buffer data"
NODE_AND_REGISTRATION = "NodeAndRegistration struct"
OPERATOR_RUNTIME_DATA = "Operator runtime data"
COMPRESSION_DATA = "Persistent compression data"

# PrintAllocations order.
CATEGORY_ORDER: tuple[str, ...] = (
    EVAL_TENSOR_DATA,
    PERSISTENT_TENSOR_DATA,
    PERSISTENT_QUANTIZATION_DATA,
    PERSISTENT_BUFFER_DATA,
    VARIABLE_BUFFER_DATA,
    NODE_AND_REGISTRATION,
    OPERATOR_RUNTIME_DATA,
    COMPRESSION_DATA,
)


@dataclass(frozen=True)
class CategoryUsage:
    """One RecordedAllocation: bytes used (with padding), bytes requested, allocations."""

    used: int
    requested: int
    count: int

    def to_dict(self) -> dict[str, int]:
        return {"used": self.used, "requested": self.requested, "count": self.count}


class Recorder:
    """Accumulates per-category usage over one allocation run (a mutable object)."""

    def __init__(self, allocator: BufferAllocator) -> None:
        self._allocator = allocator
        self._totals: dict[str, list[int]] = {name: [0, 0, 0] for name in CATEGORY_ORDER}

    @contextmanager
    def record(self, category: str) -> Iterator[None]:
        """RecordingMicroAllocator::SnapshotAllocationUsage / RecordAllocationUsage."""
        a = self._allocator
        before = (a.used_bytes, a.requested_bytes, a.alloc_count)
        yield
        totals = self._totals[category]
        totals[0] += a.used_bytes - before[0]
        totals[1] += a.requested_bytes - before[1]
        totals[2] += a.alloc_count - before[2]

    def adjust_count(self, category: str, delta: int) -> None:
        """The count corrections RecordingMicroAllocator makes for the per-subgraph arrays."""
        self._totals[category][2] += delta

    def categories(self) -> dict[str, CategoryUsage]:
        """Categories TFLM prints (used or requested bytes non-zero), in its order."""
        return {
            name: CategoryUsage(*values)
            for name, values in self._totals.items()
            if values[0] > 0 or values[1] > 0
        }


__all__ = ["CATEGORY_ORDER", "CategoryUsage", "Recorder"]
