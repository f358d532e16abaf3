"""BufferAllocator: TFLM's head/temp/tail arithmetic, checked by hand."""

from __future__ import annotations

import pytest

from tinyarena.arena.buffer_allocator import BufferAllocator
from tinyarena.errors import ArenaTooSmallError


def test_tail_grows_down_with_alignment() -> None:
    a = BufferAllocator(1000)  # end 1000 = 8 mod 16
    assert a.allocate_persistent(10, 16) == 976  # floor((1000 - 10) / 16) * 16
    assert a.tail_used == 24
    assert a.allocate_persistent(8, 8) == 968
    assert a.allocate_persistent(3, 1) == 965
    assert (a.used_bytes, a.requested_tail_bytes, a.alloc_count) == (35, 21, 3)


@pytest.mark.parametrize("end,expected_used", [(1024, 80), (1028, 84), (1032, 88), (1036, 76),
                                               (1027, 83)])
def test_arena_end_mod_16_changes_tail_padding(end: int, expected_used: int) -> None:
    """A 72-byte 16-aligned allocation after a 4-byte one: the padding depends on end mod 16
    (facts 1.1: t_new = E - floor((E - t - size) / a) * a)."""
    a = BufferAllocator(end)
    a.allocate_persistent(4, 4)
    a.allocate_persistent(72, 16)
    t = 4 + (end - 4) % 4  # first allocation's padding
    assert a.tail_used == end - ((end - t - 72) // 16) * 16
    assert a.tail_used == expected_used


def test_head_resize_and_temp() -> None:
    a = BufferAllocator(512)
    a.resize_head(192, 8)
    assert (a.head, a.temp) == (192, 192)
    assert a.allocate_temp(10, 8) == 192
    assert a.allocate_temp(4, 8) == 208
    assert a.head_used == 212
    a.deallocate_temp()
    a.deallocate_temp()
    a.reset_temp()
    assert a.head_used == 192
    a.resize_head(32, 16)
    assert a.used_bytes == 32  # head deltas telescope: +192 - 160
    assert a.requested_head_bytes == 32


def test_tail_failure_uses_tflm_numbers() -> None:
    a = BufferAllocator(256)
    a.resize_head(200, 16)
    with pytest.raises(ArenaTooSmallError) as info:
        a.allocate_persistent(64, 16)
    # AlignPointerDown(256 - 64, 16) = 192 < head 200: missing 8, available 64 - 8.
    assert "Requested: 64, available 56, missing: 8" in str(info.value)
    assert info.value.missing == 8


def test_temp_and_resize_failures() -> None:
    a = BufferAllocator(100)
    a.allocate_persistent(20, 4)  # tail at 80
    with pytest.raises(ArenaTooSmallError, match="temp memory. Requested: 90, available 80"):
        a.allocate_temp(90, 8)
    with pytest.raises(ArenaTooSmallError, match="resize buffer. Requested: 96, available 80, "
                                                  "missing: 16"):
        a.resize_head(96, 16)


def test_required_end_tracks_every_check() -> None:
    a = BufferAllocator(1 << 20)
    a.allocate_persistent(100, 16)  # tail used 112
    a.resize_head(64, 16)
    assert a.required_end == 64 + 112
    a.allocate_temp(500, 8)
    assert a.required_end == 64 + 500 + 112
    a.require_planner_area(400)  # up16(564) + 400 + 112 (end is a multiple of 16)
    assert a.required_end == 576 + 400 + 112
