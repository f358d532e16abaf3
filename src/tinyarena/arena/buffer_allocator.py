"""TFLM's SingleArenaBufferAllocator as address arithmetic: head up, temp above it, tail down.

Addresses are byte offsets from the arena start, which is assumed 16-aligned (TFLM's
``MicroAllocator::Create`` aligns it; the wheel's ``new uint8_t[]`` is 16-aligned on x86-64).
The end is ``arena_size`` and is *not* aligned, so when it is not a multiple of 16 the first
tail allocations absorb padding exactly as TFLM's ``AlignPointerDown`` does.

Besides emulating the pointers, the allocator records two things TFLM does not need but we do:

* the recording counters of ``RecordingSingleArenaBufferAllocator`` (requested head and tail
  bytes, used bytes as a running sum, allocation count), which ``recording.py`` turns into
  TFLM's per-category numbers;
* ``required_end``: for every check TFLM makes (tail against head, temp against tail, head
  resize against tail, planner capacity), the smallest arena end that would have passed it.
  Run with an end that is a multiple of 16, its maximum is the minimum working arena.
"""

from __future__ import annotations

from tinyarena._util import align_down, align_up
from tinyarena.errors import ArenaTooSmallError

ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment()


class BufferAllocator:
    """Mutable emulation of one arena's five pointers (an object, never shared state)."""

    def __init__(self, arena_size: int) -> None:
        self.arena_size = arena_size
        self.head = 0  # head_ (end of the resizable head buffer)
        self.temp = 0  # temp_
        self.tail = arena_size  # tail_
        self.temp_count = 0
        # RecordingSingleArenaBufferAllocator counters.
        self.requested_head_bytes = 0
        self.requested_tail_bytes = 0
        self.used_bytes = 0
        self.alloc_count = 0
        # Smallest arena end that passes every check made so far (end mod 16 held fixed).
        self.required_end = 0
        # Same, but also keeping persistent allocations clear of live temp allocations
        # (TFLM does not check that; facts 1.5, "Prepare-phase hazard").
        self.overlap_free_end = 0
        self.temp_peak = 0  # highest temp_ reached, as an address

    # -- sizes --------------------------------------------------------------------------------

    @property
    def tail_used(self) -> int:
        """GetPersistentUsedBytes: buffer_tail_ - tail_."""
        return self.arena_size - self.tail

    @property
    def head_used(self) -> int:
        """GetNonPersistentUsedBytes: max(head_, temp_) - buffer_head_."""
        return max(self.head, self.temp)

    @property
    def requested_bytes(self) -> int:
        return self.requested_head_bytes + self.requested_tail_bytes

    def available_memory(self, alignment: int) -> int:
        """GetAvailableMemory: aligned-down tail minus aligned-up temp."""
        return align_down(self.tail, alignment) - align_up(self.temp, alignment)

    # -- tail -----------------------------------------------------------------------------------

    def allocate_persistent(self, size: int, alignment: int) -> int:
        """AllocatePersistentBuffer: AlignPointerDown(tail_ - size), checked against head_ only."""
        result = align_down(self.tail - size, alignment)
        self._record_tail(result)
        floor = self._tail_floor()
        if result < floor:
            missing = floor - result
            shown = self._shown
            self._fail(f"Failed to allocate tail memory. Requested: {shown(size)}, available "
                       f"{shown(size - missing)}, missing: {shown(missing)}", missing)
        self.used_bytes += self.tail - result
        self.requested_tail_bytes += size
        self.alloc_count += 1
        self.tail = result
        return result

    # -- head -----------------------------------------------------------------------------------

    def resize_head(self, size: int, alignment: int) -> int:
        """ResizeBuffer on the single resizable buffer at AlignPointerUp(buffer_head_)."""
        if self.head != self.temp:
            raise AssertionError("ResizeBuffer with live temp allocations (TFLM refuses this)")
        start = align_up(0, alignment)
        self._record_head_end(start + size)
        available = self._head_ceiling() - start
        if available < size:
            shown = self._shown
            self._fail(f"Failed to resize buffer. Requested: {shown(size)}, available "
                       f"{shown(available)}, missing: {shown(size - available)}",
                       size - available)
        previous = self.head
        self.head = start + size
        self.temp = self.head
        self.used_bytes += self.head - previous
        self.requested_head_bytes = size
        return start

    # -- temp -----------------------------------------------------------------------------------

    def allocate_temp(self, size: int, alignment: int) -> int:
        """AllocateTemp: bump temp_ upward, checked against the current tail."""
        result = align_up(self.temp, alignment)
        self._record_head_end(result + size)
        available = self._head_ceiling() - result
        if available < size:
            shown = self._shown
            self._fail(f"Failed to allocate temp memory. Requested: {shown(size)}, available "
                       f"{shown(available)}, missing: {shown(size - available)}",
                       size - available)
        self.temp = result + size
        self.temp_peak = max(self.temp_peak, self.temp)
        self.temp_count += 1
        return result

    def deallocate_temp(self) -> None:
        self.temp_count -= 1

    def reset_temp(self) -> None:
        """ResetTempAllocations: every temp buffer must have been released first."""
        if self.temp_count != 0:
            raise AssertionError("temp buffers still live at ResetTempAllocations")
        self.temp = self.head

    # -- planner capacity -------------------------------------------------------------------------

    def require_planner_area(self, needed_bytes: int) -> None:
        """Record that the area handed to the planner must hold ``needed_bytes``.

        The area is GetAvailableMemory(16) = align_down(tail_) - align_up(temp_). For an end E
        with the same remainder mod 16 as this arena, align_down(E - used) = E - used - pad with
        pad = (E - used) mod 16, so E >= up16(temp) + needed + used + pad.
        """
        pad = (self.arena_size - self.tail_used) % ARENA_ALIGNMENT
        self._require(align_up(self.temp, ARENA_ALIGNMENT) + needed_bytes + self.tail_used + pad)

    # -- bounds (what SplitBufferAllocator, the two-arena layout, replaces) ---------------------

    def _tail_floor(self) -> int:
        """The lowest address a tail allocation may reach: head_ (one arena)."""
        return self.head

    def _record_tail(self, result: int) -> None:
        """Record the arena end a tail allocation at ``result`` needs (and the overlap-free
        end, which also keeps it clear of live temp allocations)."""
        consumed = self.arena_size - result
        self._require(self.head + consumed)
        self.overlap_free_end = max(self.overlap_free_end, max(self.head, self.temp) + consumed)

    def _head_ceiling(self) -> int:
        """What the head buffer and temp allocations must stay below: tail_ (one arena)."""
        return self.tail

    def _record_head_end(self, end: int) -> None:
        """Record the arena end a head or temp buffer ending at ``end`` needs (the tail stays
        above it)."""
        self._require(end + self.tail_used)

    @staticmethod
    def _shown(value: int) -> int:
        """How the failure messages print a size (%u, as MicroPrintf does)."""
        return _u(value)

    # -- helpers ------------------------------------------------------------------------------------

    def _require(self, end: int) -> None:
        self.required_end = max(self.required_end, end)

    def _fail(self, message: str, missing: int) -> None:
        raise ArenaTooSmallError(message, arena_size=self.arena_size,
                                 needed=self.arena_size + missing, missing=missing)


def _u(value: int) -> int:
    """A size_t printed with %u, as MicroPrintf does: the low 32 bits, unsigned."""
    return value % (1 << 32)


__all__ = ["ARENA_ALIGNMENT", "BufferAllocator"]
