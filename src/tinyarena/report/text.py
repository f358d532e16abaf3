"""Human-readable renderings of arena layouts and memory plans (what the CLI prints)."""

from __future__ import annotations

import textwrap

from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import get_target
from tinyarena.planning import Buffer, Plan, render_memory_plan


def _n(value: int) -> str:
    return f"{value:,}"


def layout_header(layout: ArenaLayout) -> str:
    """What every number below depends on: target, ABI, kernel set, allocator, planner."""
    profile = get_target(layout.target, layout.kernel_set)
    return f"{profile.header(layout.allocator)} | {layout.planner} planner"


def render_size(layout: ArenaLayout, title: str = "") -> str:
    """Totals first, then where the tail goes, in TFLM's recording categories."""
    lines = []
    if title:
        lines.append(title)
    lines.append(layout_header(layout))
    lines.append(f"arena used      {_n(layout.total):>12} bytes  (head {_n(layout.head)} + tail "
                 f"{_n(layout.tail)})")
    lines.append(f"minimum arena   {_n(layout.min_arena):>12} bytes")
    if layout.arena_size < layout.min_arena:
        lines.append(f"warning: the {_n(layout.arena_size)}-byte arena passes TFLM's checks but "
                     f"is below the safe minimum; declare {_n(layout.min_arena)} bytes")
    if layout.min_arena_note:
        lines.extend(textwrap.wrap(f"({layout.min_arena_note})", width=96,
                                   initial_indent=" " * 16, subsequent_indent=" " * 17))
    rows = [(name, c.used, c.requested, c.count) for name, c in layout.categories.items()]
    itemised = sum(used for _, used, _, _ in rows)
    rows.append(("not itemised (allocator objects, params, ...)", layout.tail - itemised, 0, 0))
    width = max(len(r[0]) for r in rows)
    lines.append("")
    lines.append(f"{'tail':<{width}}  {'used':>10}  {'requested':>10}  {'count':>6}")
    for name, used, requested, count in rows:
        req = _n(requested) if requested else "-"
        cnt = _n(count) if count else "-"
        lines.append(f"{name:<{width}}  {_n(used):>10}  {req:>10}  {cnt:>6}")
    return "\n".join(lines)


def render_plan(layout: ArenaLayout, title: str = "", ascii_picture: bool = False) -> str:
    """The head's memory plan: one row per planned buffer, optionally TFLM's ASCII picture."""
    lines = []
    if title:
        lines.append(title)
    lines.append(layout_header(layout))
    share = (f" ({100 * layout.lower_bound / layout.head:.0f}% of the head)"
             if layout.head else "")
    lines.append(f"head {_n(layout.head)} bytes, {layout.planner} planner; lower bound "
                 f"{_n(layout.lower_bound)} bytes{share}; {len(layout.buffers)} buffers")
    lines.append("")
    lines.append(f"{'kind':<8} {'subgraph':>8} {'index':>6} {'size':>10} {'offset':>10} "
                 f"{'first':>6} {'last':>6}")
    for b in layout.buffers:
        lines.append(f"{b.kind:<8} {b.subgraph:>8} {b.index:>6} {_n(b.size):>10} "
                     f"{_n(b.offset):>10} {b.first:>6} {b.last:>6}"
                     + ("  (offline)" if b.offline else ""))
    if ascii_picture:
        plan = Plan(tuple(b.offset for b in layout.buffers),
                    tuple(Buffer(b.size, b.first, b.last) for b in layout.buffers))
        lines.append("")
        lines.append(render_memory_plan(plan).rstrip("\n"))
    return "\n".join(lines)


__all__ = ["render_plan", "render_size"]
