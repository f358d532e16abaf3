"""JSON-ready dicts with stable keys for the CLI's ``--json`` output.

Scripts rely on these keys (the issue fixes them): ``plan`` gives ``head_bytes``,
``lower_bound_bytes`` and ``buffers`` (kind, index, size, offset, first, last); ``size`` gives
``head``, ``tail``, ``total`` (arena_used_bytes), ``min_arena`` and ``categories``
(name -> used, requested, count). Extra keys may be added; these never change.

With an ``ArenaExplanation`` (issue 10) ``plan`` adds ``peak`` (``step``, ``operator`` with
``index`` and ``type``, ``head_bytes``, ``buffers`` each with ``kind``, ``index``, ``name``,
``size``), a ``name`` (and shape, dtype, ops) on every buffer, and ``bound`` (the lower bound
for the overlap rules the plan uses); ``size`` adds ``peak``, ``tail_by_category`` and
``tail_by_operator``. ``lower_bound_bytes`` stays the no-overlap bound.
"""

from __future__ import annotations

from typing import Any

from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import get_target
from tinyarena.report.explain import ArenaExplanation


def _build(layout: ArenaLayout) -> dict[str, Any]:
    """The build the numbers are for (target, ABI, kernel set, allocator, TFLM version)."""
    profile = get_target(layout.target, layout.kernel_set, layout.esp_nn_version)
    return {"target": layout.target, "abi": profile.abi, "kernel_set": layout.kernel_set,
            "cmsis_nn_isa": profile.cmsis_nn_isa if layout.kernel_set == "cmsis-nn" else None,
            "esp_nn_version": layout.esp_nn_version,
            "allocator": layout.allocator, "tflm": profile.tflm_commit}


def bound_dict(explanation: ArenaExplanation) -> dict[str, Any]:
    r = explanation.rules
    return {"bytes": r.bound, "overlap_rules": r.rules, "holds_for": r.description,
            "no_overlap_bytes": r.no_overlap_bound, "optimal": explanation.optimal,
            "gap_bytes": explanation.layout.head - r.bound,
            "shared_bytes_pairs": [{"a": s.a, "b": s.b, "reason": s.reason, "rule": s.rule}
                                   for s in r.shared]}


def plan_dict(layout: ArenaLayout, explanation: ArenaExplanation | None = None
              ) -> dict[str, Any]:
    """The memory plan: head size, its lower bound, and every planned buffer."""
    data: dict[str, Any] = {
        **_build(layout),
        "planner": layout.planner,
        "head_bytes": layout.head,
        "lower_bound_bytes": layout.lower_bound,
        "buffers": [b.to_dict() for b in layout.buffers],
    }
    if explanation is not None:
        data["target"] = layout.target
        data["planned_by"] = explanation.planner_text
        data["buffers"] = [{**b.to_dict(), **info.to_dict()}
                           for b, info in zip(layout.buffers, explanation.buffers)]
        data["peak"] = explanation.peak_dict()
        data["bound"] = bound_dict(explanation)
        if explanation.npu_lines:
            data["npu"] = list(explanation.npu_lines)
    return data


def size_dict(layout: ArenaLayout, explanation: ArenaExplanation | None = None
              ) -> dict[str, Any]:
    """The arena's size: head, tail, total, minimum arena and TFLM's recorded categories."""
    data: dict[str, Any] = {
        **_build(layout),
        "arena_size": layout.arena_size,
        "head": layout.head,
        "tail": layout.tail,
        "total": layout.total,
        "min_arena": layout.min_arena,
        "overlap_free_arena": layout.overlap_free_arena,
        "tflm_checked_min_arena": layout.tflm_checked_min_arena,
        "min_arena_note": layout.min_arena_note,
        # why min_arena exceeds total: "rounding" or the transient step of AllocateTensors
        "min_arena_cause": layout.min_arena_cause,
        "temp_peak": layout.temp_peak,
        "categories": {name: usage.to_dict() for name, usage in layout.categories.items()},
    }
    if layout.variables_arena is not None:
        data["variables_arena"] = layout.variables_arena.to_dict()
    if explanation is not None:
        data["planned_by"] = explanation.planner_text
        data["peak"] = explanation.peak_dict()
        data["tail_by_category"] = dict(explanation.tail_by_category)
        data["tail_by_operator"] = [o.to_dict() for o in explanation.tail_by_operator]
        data["tail_model_wide"] = explanation.model_wide_tail
    return data


__all__ = ["bound_dict", "plan_dict", "size_dict"]
