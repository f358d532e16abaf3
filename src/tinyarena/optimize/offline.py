"""The OfflineMemoryAllocation metadata TFLM reads (``GetOfflinePlannedOffsets``, facts 3)."""

from __future__ import annotations

import struct
from typing import Sequence

from tinyarena.arena.lifetimes import OFFLINE_METADATA_NAME, ONLINE
from tinyarena.errors import PlanError

OFFLINE_PLAN_VERSION = 1  # word 0; TFLM ignores it, the format documentation says 1


def encode_offline_plan(offsets: Sequence[int], n_subgraphs: int) -> bytes:
    """Little-endian int32 words: version, subgraph count, offset count, then one offset per
    tensor of every subgraph (subgraph 0's first), -1 meaning "plan online"."""
    bad = [o for o in offsets if o < ONLINE]
    if bad:
        raise PlanError(f"offline offsets must be >= 0 or -1 (online), got {bad[0]}")
    if any(o > 0x7FFFFFFF for o in offsets):
        raise PlanError("an offline offset does not fit TFLM's int32 word")
    return struct.pack(f"<3I{len(offsets)}i", OFFLINE_PLAN_VERSION, n_subgraphs, len(offsets),
                       *offsets)


__all__ = ["OFFLINE_METADATA_NAME", "OFFLINE_PLAN_VERSION", "encode_offline_plan"]
