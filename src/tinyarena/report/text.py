"""Human-readable renderings of arena layouts and memory plans (what the CLI prints)."""

from __future__ import annotations

import textwrap

from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.other_memory import AltDecompression, ArenaSizes, EthosUMemory
from tinyarena.arena.targets import get_target
from tinyarena.planning import Buffer, Plan, render_memory_plan
from tinyarena.planning.ascii import SHARED_MARK
from tinyarena.report.explain import TIME_STEPS, ArenaExplanation, planner_text

NAME_WIDTH = 40


def _n(value: int) -> str:
    return f"{value:,}"


def _clip(text: str, width: int) -> str:
    """Long TF names keep their end (the layer that made them), marked with a leading '~'."""
    return text if len(text) <= width else "~" + text[-(width - 1):]


def layout_header(layout: ArenaLayout, planned: str | None = None) -> str:
    """What every number below depends on: target, ABI, kernel set, allocator, and what placed
    the buffers (an offline plan is named as such)."""
    profile = get_target(layout.target, layout.kernel_set, layout.esp_nn_version)
    note = f"\nnote: target {profile.name}: {profile.note}" if profile.note else ""
    return f"{profile.header(layout.allocator)} | {planned or planner_text(layout)}{note}"


def render_size(layout: ArenaLayout, title: str = "",
                explanation: ArenaExplanation | None = None) -> str:
    """Totals first, then where the tail goes, in TFLM's recording categories."""
    lines = []
    planned = explanation.planner_text if explanation else planner_text(layout)
    lines.append(layout_header(layout, planned))  # first, as in every command
    if title:
        lines.append(title)
    lines.append(f"arena used      {_n(layout.total):>12} bytes  (head {_n(layout.head)} + tail "
                 f"{_n(layout.tail)})")
    lines.append(f"minimum arena   {_n(layout.min_arena):>12} bytes")
    if layout.arena_size < layout.min_arena:
        lines.append(f"warning: the {_n(layout.arena_size)}-byte arena passes TFLM's checks but "
                     f"is below the safe minimum; declare {_n(layout.min_arena)} bytes")
    if layout.min_arena_note:
        lines.extend(textwrap.wrap(f"({layout.min_arena_note})", width=96,
                                   initial_indent=" " * 16, subsequent_indent=" " * 17))
    lines.extend(_declare(layout))
    lines.extend(_variables_arena(layout))
    if explanation is not None:
        lines.append(f"head: {explanation.peak_text()}")
        lines.append(f"head: {explanation.bound_text()}")
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
    if explanation is not None:
        lines.append("")
        lines.extend(render_tail_by_operator(explanation))
    return "\n".join(lines)


def _arena_words(w: ArenaSizes) -> str:
    """One alternative arena in words: used (head + tail) and the minimum to declare."""
    return (f"arena used {_n(w.total)} bytes (head {_n(w.head)} + tail {_n(w.tail)}), "
            f"minimum arena {_n(w.min_arena)} bytes")


def render_other_memory(alt: AltDecompression | None, npu: EthosUMemory | None) -> list[str]:
    """The memory beside the arena: a compressed model's alternate decompression memory
    (with the arena it leaves), an Ethos-U driver's fast memory (with the arena without
    Vela's fast scratch). Empty when the model needs neither."""
    lines: list[str] = []
    if alt is not None:
        lines.append(f"alternate decompression memory {_n(alt.nbytes):>12} bytes  (TFLM_DECODE "
                     f"outputs outside the arena: SetDecompressionMemory, the wheel's "
                     f"alt_decompression_memory_size)")
        if alt.with_memory is not None:
            w = alt.with_memory
            lines.append(f"  with it: {_arena_words(w)}; without it: the figures above")
        else:
            lines.append("  no DECODE output of this model is placed there")
    if npu is not None:
        lines.append(f"Ethos-U fast memory            {_n(npu.fast_memory):>12} bytes  (Vela's "
                     f"fast scratch, ETHOSU_FAST_MEMORY_SIZE; scratch {_n(npu.scratch)} bytes)")
        if npu.without_fast_scratch is not None:
            w = npu.without_fast_scratch
            lines.append(f"  arena without the fast scratch: {_arena_words(w)}")
        lines.extend(textwrap.wrap(f"({npu.note})", width=96, initial_indent="  ",
                                   subsequent_indent="   "))
    return lines


def _declare(layout: ArenaLayout) -> list[str]:
    """Which number goes in the firmware, and why: users otherwise copy arena_used_bytes()."""
    pad = " " * 16
    return [f"declare         alignas(16) uint8_t tensor_arena[{layout.min_arena}];",
            *textwrap.wrap(f"{min_arena_reason(layout)};", width=100, initial_indent=pad,
                           subsequent_indent=pad),
            f"{pad}alignas(16): TFLM aligns the arena's start up to 16, so a less aligned "
            f"buffer of this size fails"]


def min_arena_reason(layout: ArenaLayout) -> str:
    """Why min_arena, not arena used (``arena_used_bytes()``): the real cause, from the
    layout's ``min_arena_cause`` (facts 1.2 and 1.5)."""
    extra = layout.min_arena - layout.total
    if extra <= 0:
        return "min_arena (here equal to the arena used)"
    used = _n(layout.total)
    if layout.min_arena_cause == "rounding":
        return (f"min_arena, not arena used: nothing transient needs more here; the {extra} "
                f"bytes round {used} up to a multiple of 16, where the arena's end is 16-aligned "
                f"and TFLM's tail allocations need no padding (an arena of {used} bytes pads "
                f"them and may fall short)")
    if layout.min_arena_cause == "invoke overrun":
        return f"min_arena, not arena used: {layout.min_arena_note}"
    cause = layout.min_arena_cause or "data AllocateTensors releases before it returns"
    checked = layout.tflm_checked_min_arena or layout.min_arena
    return (f"min_arena, not arena used: AllocateTensors needs {_n(checked - layout.total)} "
            f"bytes more while it runs than it keeps afterwards, for {cause}; so {used} bytes "
            f"is not enough")


def _variables_arena(layout: ArenaLayout) -> list[str]:
    """ESPHome's layout: MicroResourceVariables over a second arena's MicroAllocator."""
    v = layout.variables_arena
    if v is None:
        return []
    pad = " " * 16
    why = (f"MicroAllocator::Create(variables_arena, {v.min}) then "
           f"MicroResourceVariables::Create(allocator, {v.max_resource_variables}); a buffer "
           f"only 4-byte aligned (a heap block) needs {_n(v.min_4_aligned)}; the tensor arena "
           f"above holds everything else, the variables' buffers included")
    return [f"variables arena {_n(v.used):>12} bytes  (minimum {_n(v.min)}: MicroAllocator "
            f"objects + MicroResourceVariables for {_n(v.max_resource_variables)} variables)",
            f"declare         alignas(16) uint8_t variables_arena[{v.min}];",
            *textwrap.wrap(why, width=100, initial_indent=pad, subsequent_indent=pad)]


def render_tail_by_operator(explanation: ArenaExplanation) -> list[str]:
    """One row per operator that made tail allocations; the model-wide rest last."""
    lines = [f"{'tail by operator':<34} {'OpData':>8} {'persist':>8} {'params':>7} "
             f"{'scratch':>7} {'variable':>8} {'total':>8}"]
    for o in explanation.tail_by_operator:
        op = f"{o.index} {o.type}" + (f" (subgraph {o.subgraph})" if o.subgraph else "")
        lines.append(f"{_clip(op, 34):<34} {_n(o.op_data):>8} {_n(o.persistent_buffers):>8} "
                     f"{_n(o.builtin_data):>7} {_n(o.scratch_handles):>7} "
                     f"{_n(o.variable_state):>8} {_n(o.total):>8}")
    # the same words as the HTML report: the rest is not any one node's
    lines.append(f"{'model-wide (tensors, nodes, IO, allocator)':<77} "
                 f"{_n(explanation.model_wide_tail):>8}")
    return lines


def render_plan(layout: ArenaLayout, title: str = "", ascii_picture: bool = False,
                explanation: ArenaExplanation | None = None) -> str:
    """The head's memory plan: the peak and bound in words, one row per planned buffer (names,
    shapes, ops; '*' marks the peak's buffers), optionally TFLM's ASCII picture."""
    if explanation is None:
        return _render_plan_bare(layout, title, ascii_picture)
    e = explanation
    lines = []
    lines.append(layout_header(layout, e.planner_text))  # first, as in every command
    if title:
        lines.append(title)
    lines.append(f"head {_n(layout.head)} bytes; {len(layout.buffers)} buffers")
    lines.append(e.bound_text())
    lines.append(e.peak_text())
    lines.append(f"time steps: {TIME_STEPS}")
    peak = set(e.peak.buffers) if e.peak else set()
    lines.append("")
    lines.append(f"  {'#':>4} {'kind':<7} {'index':>5} {'name':<{NAME_WIDTH}} {'shape':<16} "
                 f"{'dtype':<7} {'size':>10} {'offset':>10} {'first':>5} {'last':>5}  ops")
    for info in e.buffers:
        mark = "*" if info.position in peak else " "
        flag = ("  (offline)" if info.offline else "") + (f"  [{info.role}]" if info.role
                                                            else "")
        lines.append(f"{mark} {info.position:>4} {info.kind:<7} {info.index:>5} "
                     f"{_clip(info.name, NAME_WIDTH):<{NAME_WIDTH}} "
                     f"{_clip(info.shape_text(), 16):<16} {info.dtype:<7} {_n(info.size):>10} "
                     f"{_n(info.offset):>10} {info.first:>5} {info.last:>5}  "
                     f"{info.ops_text()}{flag}")
    if peak:
        lines.append("* live at the peak step")
    if e.npu_lines:
        lines.append("")
        lines.append("Arm Ethos-U (Vela) buffers in the arena:")
        lines.extend(f"  {line}" for line in e.npu_lines)
    shared = e.rules.shared
    if shared:
        lines.append("")
        for s in shared:
            a, b = e.buffers[s.a], e.buffers[s.b]
            what = ("COLLISION" if not s.intended else f"shared on purpose ({s.reason}"
                    + (f"; relies on {s.rule}" if s.rule else "") + ")")
            lines.append(f"buffers {s.a} and {s.b} ({_clip(a.name, 30)!r}, "
                         f"{_clip(b.name, 30)!r}) share bytes: {what}")
    if ascii_picture:
        intended = {(min(s.a, s.b), max(s.a, s.b)) for s in shared if s.intended}
        lines.append("")
        lines.append(f"TFLM's PrintMemoryPlan picture: ids are the '#' column (0-9, a-z, A-Z, "
                     f"then again), '*' a one-step buffer, '!' a collision"
                     + (f", '{SHARED_MARK}' bytes shared on purpose" if intended else ""))
        lines.append(render_memory_plan(_plan_of(layout),
                                        (lambda i, j: (i, j) in intended) if intended else None
                                        ).rstrip("\n"))
    return "\n".join(lines)


def _plan_of(layout: ArenaLayout) -> Plan:
    return Plan(tuple(b.offset for b in layout.buffers),
                tuple(Buffer(b.size, b.first, b.last) for b in layout.buffers))


def _render_plan_bare(layout: ArenaLayout, title: str, ascii_picture: bool) -> str:
    """Without the model at hand: indices only, and the no-overlap bound named as such."""
    lines = []
    lines.append(layout_header(layout))  # first, as in every command
    if title:
        lines.append(title)
    lines.append(f"head {_n(layout.head)} bytes; lower bound {_n(layout.lower_bound)} bytes for "
                 f"plans where no two live buffers share a byte; {len(layout.buffers)} buffers")
    lines.append("")
    lines.append(f"{'kind':<8} {'subgraph':>8} {'index':>6} {'size':>10} {'offset':>10} "
                 f"{'first':>6} {'last':>6}")
    for b in layout.buffers:
        lines.append(f"{b.kind:<8} {b.subgraph:>8} {b.index:>6} {_n(b.size):>10} "
                     f"{_n(b.offset):>10} {b.first:>6} {b.last:>6}"
                     + ("  (offline)" if b.offline else ""))
    if ascii_picture:
        lines.append("")
        lines.append(render_memory_plan(_plan_of(layout)).rstrip("\n"))
    return "\n".join(lines)


__all__ = ["render_plan", "render_size", "render_tail_by_operator"]
