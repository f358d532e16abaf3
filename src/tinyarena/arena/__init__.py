"""TFLM's tensor arena, emulated byte for byte: targets, head/temp/tail, lifetimes, recording."""

from __future__ import annotations

from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.layout import ArenaLayout, PlannedBuffer, TailAllocation
from tinyarena.arena.recording import CATEGORY_ORDER, CategoryUsage
from tinyarena.arena.targets import PROFILES, TargetProfile, get_target

__all__ = [
    "ArenaLayout",
    "CATEGORY_ORDER",
    "CategoryUsage",
    "PROFILES",
    "PlannedBuffer",
    "TailAllocation",
    "TargetProfile",
    "allocate_model",
    "get_target",
]
