"""JSON-ready dicts with stable keys for the CLI's ``--json`` output.

Scripts rely on these keys (the issue fixes them): ``plan`` gives ``head_bytes``,
``lower_bound_bytes`` and ``buffers`` (kind, index, size, offset, first, last); ``size`` gives
``head``, ``tail``, ``total`` (arena_used_bytes), ``min_arena`` and ``categories``
(name -> used, requested, count). Extra keys may be added; these never change.
"""

from __future__ import annotations

from typing import Any

from tinyarena.arena.layout import ArenaLayout


def plan_dict(layout: ArenaLayout) -> dict[str, Any]:
    """The memory plan: head size, its lower bound, and every planned buffer."""
    return {
        "planner": layout.planner,
        "head_bytes": layout.head,
        "lower_bound_bytes": layout.lower_bound,
        "buffers": [b.to_dict() for b in layout.buffers],
    }


def size_dict(layout: ArenaLayout) -> dict[str, Any]:
    """The arena's size: head, tail, total, minimum arena and TFLM's recorded categories."""
    return {
        "target": layout.target,
        "allocator": layout.allocator,
        "arena_size": layout.arena_size,
        "head": layout.head,
        "tail": layout.tail,
        "total": layout.total,
        "min_arena": layout.min_arena,
        "overlap_free_arena": layout.overlap_free_arena,
        "temp_peak": layout.temp_peak,
        "categories": {name: usage.to_dict() for name, usage in layout.categories.items()},
    }


__all__ = ["plan_dict", "size_dict"]
