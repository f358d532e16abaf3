"""Why the arena moved between two builds of one model: the operators whose scratch changed.

A user who bumps esp-nn (or moves a model from an ESP32 to an ESP32-S3, or from one Cortex-M to
another) sees the minimum arena change; what changed is almost always one kernel's Prepare-time
scratch request. ``scratch_requests`` lists a layout's requests per operator (plain data, so a
``size`` record carries it from a worker process); ``arena_change`` compares two such records
and names every operator whose scratch differs: "CONV_2D op 0: scratch 7,840 -> 15,832 bytes".
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from tinyarena.report.explain import ArenaExplanation


def scratch_requests(explanation: ArenaExplanation) -> list[dict[str, Any]]:
    """Every scratch buffer the kernels requested, in request order: the operator (subgraph,
    index, type) and the bytes asked for (before the planner's 16-byte rounding)."""
    rows = []
    for b in explanation.buffers:
        if b.kind != "scratch":
            continue
        op = b.producer
        rows.append({"subgraph": b.subgraph, "op": op.index if op else None,
                     "type": op.type if op else "", "bytes": b.nbytes})
    return rows


def _by_operator(requests: Sequence[Mapping[str, Any]]) -> dict[tuple[int, Any, str], int]:
    totals: dict[tuple[int, Any, str], int] = {}
    for r in requests:
        key = (int(r["subgraph"]), r["op"], str(r["type"]))
        totals[key] = totals.get(key, 0) + int(r["bytes"])
    return totals


def arena_change(before: Mapping[str, Any], after: Mapping[str, Any], before_label: str
                 ) -> dict[str, Any]:
    """How ``after`` (a size record) differs from ``before``: the change of arena used and of
    the minimum arena, and every operator whose scratch bytes differ (sum of its requests; 0
    where it requests none), in operator order."""
    old, new = _by_operator(before["scratch_requests"]), _by_operator(after["scratch_requests"])
    ops = sorted(set(old) | set(new), key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    scratch = [{"subgraph": sg, "op": op, "type": kind, "from": old.get((sg, op, kind), 0),
                "to": new.get((sg, op, kind), 0)}
               for sg, op, kind in ops if old.get((sg, op, kind), 0) != new.get((sg, op, kind), 0)]
    return {"from": before_label, "total": int(after["total"]) - int(before["total"]),
            "min_arena": int(after["min_arena"]) - int(before["min_arena"]),
            "scratch": scratch}


def _signed(n: int) -> str:
    return f"{n:+,}" if n else "unchanged"


def change_lines(change: Mapping[str, Any]) -> list[str]:
    """The change as text: one line for the arena, one per operator whose scratch moved."""
    lines = [f"vs {change['from']}: min_arena {_signed(int(change['min_arena']))} bytes, "
             f"arena used {_signed(int(change['total']))} bytes"]
    for s in change["scratch"]:
        where = f" (subgraph {s['subgraph']})" if s["subgraph"] else ""
        lines.append(f"  {s['type']} op {s['op']}{where}: scratch {int(s['from']):,} -> "
                     f"{int(s['to']):,} bytes")
    if not change["scratch"] and (change["min_arena"] or change["total"]):
        lines.append("  no scratch request changed: the difference is in the tail (OpData, "
                     "struct sizes) or in the plan")
    return lines


def change_summary(change: Mapping[str, Any]) -> str:
    """One line for a CSV cell or a table column: the operators whose scratch moved."""
    parts = [f"{s['type']} op {s['op']}: scratch {int(s['from']):,} -> {int(s['to']):,} bytes"
             for s in change["scratch"]]
    return "; ".join(parts) if parts else "no scratch request changed"


__all__ = ["arena_change", "change_lines", "change_summary", "scratch_requests"]
