"""JSON-ready dicts with stable keys for the CLI's ``--json`` output.

Scripts rely on these keys (the issue fixes them): ``plan`` gives ``head_bytes``,
``lower_bound_bytes`` and ``buffers`` (kind, index, size, offset, first, last); ``size`` gives
``head``, ``tail``, ``total`` (arena_used_bytes), ``min_arena`` and ``categories``
(name -> used, requested, count). Extra keys may be added; these never change.
"""

from __future__ import annotations

from typing import Any

from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import get_target


def _build(layout: ArenaLayout) -> dict[str, Any]:
    """The build the numbers are for (target, ABI, kernel set, allocator, TFLM version)."""
    profile = get_target(layout.target, layout.kernel_set)
    return {"target": layout.target, "abi": profile.abi, "kernel_set": layout.kernel_set,
            "cmsis_nn_isa": profile.cmsis_nn_isa if layout.kernel_set == "cmsis-nn" else None,
            "allocator": layout.allocator, "tflm": profile.tflm_commit}


def plan_dict(layout: ArenaLayout) -> dict[str, Any]:
    """The memory plan: head size, its lower bound, and every planned buffer."""
    return {
        **_build(layout),
        "planner": layout.planner,
        "head_bytes": layout.head,
        "lower_bound_bytes": layout.lower_bound,
        "buffers": [b.to_dict() for b in layout.buffers],
    }


def size_dict(layout: ArenaLayout) -> dict[str, Any]:
    """The arena's size: head, tail, total, minimum arena and TFLM's recorded categories."""
    return {
        **_build(layout),
        "arena_size": layout.arena_size,
        "head": layout.head,
        "tail": layout.tail,
        "total": layout.total,
        "min_arena": layout.min_arena,
        "overlap_free_arena": layout.overlap_free_arena,
        "tflm_checked_min_arena": layout.tflm_checked_min_arena,
        "min_arena_note": layout.min_arena_note,
        "temp_peak": layout.temp_peak,
        "categories": {name: usage.to_dict() for name, usage in layout.categories.items()},
    }


__all__ = ["plan_dict", "size_dict"]
