"""``tinyarena report``: one self-contained HTML page explaining a model's arena.

The page carries everything inline (CSS in a ``<style>``, pictures as inline SVG) and a
Content-Security-Policy of ``default-src 'none'`` with inline styles allowed, so a browser
opening it makes no request at all. Every figure is written from the same
``ArenaExplanation`` the ``--json`` outputs come from, and carries
``data-target``/``data-key`` attributes naming the JSON value it shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any, Sequence

from tinyarena.arena import get_target
from tinyarena.report.data import plan_dict, size_dict
from tinyarena.report.explain import TIME_STEPS, ArenaExplanation
from tinyarena.report.svg import composition_svg, plan_svg

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body { font-family: sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; } h3 { font-size: 14px; }
.targets { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.target { flex: 1 1 600px; max-width: 800px; min-width: 0; overflow-x: auto;
          border: 1px solid #ccc; padding: 10px; }
.target svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.peak td { background: #fff3c4; }
.words { background: #f4f8ff; border-left: 4px solid #1565c0; padding: 6px 10px;
         overflow-wrap: anywhere; }
.note { color: #555; font-size: 12px; }
.declare { background: #e8f5e9; border-left: 4px solid #2e7d32; padding: 6px 10px;
           font-size: 15px; }
td.name { max-width: 26em; overflow-wrap: anywhere; }
.verdict { font-size: 15px; border-left: 4px solid #2a7; padding: 4px 10px; }
.verdict.unsafe { border-left-color: #c22; font-weight: bold; }
"""
# Longer tensor names are shortened in tables (their end kept: the layer that made them);
# the full name is the cell's hover text.
NAME_CHARS = 48


@dataclass(frozen=True)
class OptimizeView:
    """Before/after for ``optimize``: the original plan and the optimized model's plan."""

    before: ArenaExplanation
    after: ArenaExplanation
    source: str  # "computed with tinyarena.optimize" or the file given
    notes: tuple[str, ...] = ()


def _fig(target: str, key: str, value: int | str) -> str:
    """A figure cell, tagged with the JSON key whose value it shows."""
    text = f"{value:,}" if isinstance(value, int) else escape(str(value))
    return (f'<td class="num" data-target="{escape(target)}" data-key="{escape(key)}">'
            f"{text}</td>")


def figures(e: ArenaExplanation) -> dict[str, Any]:
    """Every figure the report shows for one target, keyed as in the JSON outputs
    (``size.*`` from ``size --json``, ``plan.*`` from ``plan --json``)."""
    size, plan = size_dict(e.layout, e), plan_dict(e.layout, e)
    out: dict[str, Any] = {f"size.{k}": size[k] for k in
                           ("head", "tail", "total", "min_arena", "temp_peak",
                            "overlap_free_arena")}
    for name, used in size["tail_by_category"].items():
        out[f"size.tail_by_category.{name}"] = used
    out["size.tail_model_wide"] = size["tail_model_wide"]
    out["plan.head_bytes"] = plan["head_bytes"]
    out["plan.lower_bound_bytes"] = plan["lower_bound_bytes"]
    out["plan.bound.bytes"] = plan["bound"]["bytes"]
    if plan["peak"] is not None:
        out["plan.peak.step"] = plan["peak"]["step"]
        out["plan.peak.live_bytes"] = plan["peak"]["live_bytes"]
        out["plan.peak.head_bytes"] = plan["peak"]["head_bytes"]
        if plan["peak"]["operator"] is not None:
            out["plan.peak.operator.index"] = plan["peak"]["operator"]["index"]
            out["plan.peak.operator.type"] = plan["peak"]["operator"]["type"]
    return out


def _name_cell(name: str) -> str:
    """A table cell for a tensor name or an ops list: long ones keep their end after an
    ellipsis, the full text is the hover title."""
    shown = name if len(name) <= NAME_CHARS else "\u2026" + name[-(NAME_CHARS - 1):]
    return f'<td class="name" title="{escape(name)}">{escape(shown)}</td>'


def _declare_banner(e: ArenaExplanation) -> str:
    """The number a firmware declares for this target, before anything else about it."""
    layout, t = e.layout, build_key(e)
    profile = get_target(layout.target, layout.kernel_set, layout.esp_nn_version)
    used = (f"; more than arena_used_bytes(), {layout.total:,}"
            if layout.total != layout.min_arena else "")
    return (f'<p class="declare">declare {_span(t, "size.min_arena", layout.min_arena)} bytes '
            f"on {escape(t)}: <code>alignas(16) uint8_t tensor_arena[{layout.min_arena}];"
            f"</code> <span class=\"note\">(kernels {escape(profile.kernels)}, TFLM "
            f"{escape(profile.tflm_commit)}{used})</span></p>")


def build_key(e: ArenaExplanation) -> str:
    """The name a section and its figures carry (``data-target``): the target, plus the esp-nn
    release on esp-nn builds, where one target can be shown for several releases."""
    layout = e.layout
    if layout.kernel_set == "esp-nn" and layout.esp_nn_version is not None:
        return f"{layout.target} esp-nn {layout.esp_nn_version}"
    return layout.target


def _change_table(before: ArenaExplanation, after: ArenaExplanation) -> str:
    """Why this build's arena differs from the previous column's: the operators whose scratch
    request changed (``size``'s change lines, as a table)."""
    from tinyarena.report.changes import arena_change, scratch_requests

    def record(e: ArenaExplanation) -> dict[str, Any]:
        return {"total": e.layout.total, "min_arena": e.layout.min_arena,
                "scratch_requests": scratch_requests(e)}

    change = arena_change(record(before), record(after), build_key(before))
    t = build_key(after)
    rows = [f"<h3>why it changed from {escape(change['from'])}</h3>",
            f'<p class="words">minimum arena {change["min_arena"]:+,} bytes, arena used '
            f'{change["total"]:+,} bytes</p>']
    if not change["scratch"]:
        rows.append('<p class="note">No scratch request changed.</p>')
        return "\n".join(rows)
    rows.append("<table><tr><th>operator</th><th>scratch before</th><th>scratch now</th></tr>")
    for c in change["scratch"]:
        key = f"change.scratch.{c['op']}"
        rows.append(f"<tr><td>{escape(str(c['type']))} op {c['op']}</td>"
                    f"{_fig(t, key + '.from', int(c['from']))}"
                    f"{_fig(t, key + '.to', int(c['to']))}</tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _target_section(e: ArenaExplanation, title: str,
                    previous: ArenaExplanation | None = None) -> str:
    layout, t = e.layout, build_key(e)
    profile = get_target(layout.target, layout.kernel_set, layout.esp_nn_version)
    figs = figures(e)
    parts = [f'<section class="target" data-target="{escape(t)}">',
             f"<h2>{escape(t)}</h2>",
             _declare_banner(e),
             f'<p class="note">{escape(profile.description)}; kernels '
             f"{escape(profile.kernels)}; {escape(layout.allocator)} allocator, "
             f"{escape(e.planner_text)}</p>",
             "<table><tr><th>figure</th><th>bytes</th><th>what it is</th></tr>"]
    rows = [("size.total", "arena used", "head + tail, TFLM's arena_used_bytes()"),
            ("size.head", "head", "the planned, non-persistent section"),
            ("size.tail", "tail", "persistent allocations"),
            ("size.temp_peak", "temporary peak", "largest non-persistent use during "
                                                  "AllocateTensors"),
            ("size.min_arena", "minimum arena", "smallest arena in which AllocateTensors "
                                                "succeeds"),
            ("plan.bound.bytes", "head lower bound", e.rules.description),
            ("plan.lower_bound_bytes", "no-overlap bound", "largest sum of buffers live at "
                                                            "one step")]
    for key, label, what in rows:
        parts.append(f"<tr><td>{label}</td>{_fig(t, key, figs[key])}"
                     f"<td>{escape(what)}</td></tr>")
    parts.append("</table>")
    parts.append(f'<p class="words">{escape(e.peak_text())}. {escape(e.bound_text())}.</p>')
    if e.npu_lines:  # a Vela model: which bytes of the arena are the NPU's
        parts.append('<p class="words">Arm Ethos-U (Vela) buffers in the arena: '
                     + "; ".join(escape(line) for line in e.npu_lines) + ".</p>")
    parts.append(plan_svg(e, title=f"{title} on {t}", standalone=False))
    parts.append(f'<p class="note">Time steps: {escape(TIME_STEPS)}. Hover a rectangle for '
                 f"its tensor. Outlined in red: the buffers live at the peak step (shaded); "
                 f"red fill: bytes two live buffers share although no rule allows it.</p>")
    parts.append(_peak_table(e, figs))
    parts.append("<h3>arena composition</h3>")
    parts.append(composition_svg(e))
    parts.append("<table><tr><th>tail by category</th><th>bytes</th></tr>")
    for name, used in e.tail_by_category:
        parts.append(f"<tr><td>{escape(name)}</td>"
                     f"{_fig(t, f'size.tail_by_category.{name}', used)}</tr>")
    parts.append("</table>")
    parts.append(_tail_by_operator(e))
    if previous is not None:
        parts.append(_change_table(previous, e))
    parts.append("</section>")
    return "\n".join(parts)


def _peak_table(e: ArenaExplanation, figs: dict[str, Any]) -> str:
    if e.peak is None:
        return "<p>No buffer is planned: the head is empty.</p>"
    t = build_key(e)
    p = e.peak
    op = p.operator
    head = [f"<h3>the peak: step {_span(t, 'plan.peak.step', p.step)}"]
    if op is not None:
        head.append(f", operator {_span(t, 'plan.peak.operator.index', op.index)} "
                    f"{_span(t, 'plan.peak.operator.type', op.type)}")
    head.append("</h3>")
    rows = ["".join(head), "<table><tr><th>#</th><th>tensor / scratch</th><th>shape</th>"
            "<th>dtype</th><th>bytes</th><th>offset</th><th>live</th><th>made by -> last used"
            "</th></tr>"]
    for i in p.buffers:
        b = e.buffers[i]
        rows.append(f'<tr class="peak"><td>{b.position}</td>{_name_cell(b.name)}'
                    f"<td>{escape(b.shape_text())}</td><td>{escape(b.dtype)}</td>"
                    f'<td class="num">{b.size:,}</td><td class="num">{b.offset:,}</td>'
                    f"<td>{b.first}..{b.last}</td>{_name_cell(b.ops_text())}</tr>")
    rows.append(f"<tr><td></td><td>live at the peak</td><td></td><td></td>"
                f"{_fig(t, 'plan.peak.live_bytes', p.live_bytes)}<td></td><td></td>"
                f"<td>head {_span(t, 'plan.peak.head_bytes', p.head_bytes)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _span(target: str, key: str, value: int | str) -> str:
    text = f"{value:,}" if isinstance(value, int) else escape(str(value))
    return f'<span data-target="{escape(target)}" data-key="{escape(key)}">{text}</span>'


def _tail_by_operator(e: ArenaExplanation) -> str:
    t = build_key(e)
    rows = ["<table><tr><th>tail by operator</th><th>OpData</th><th>persistent</th>"
            "<th>params</th><th>scratch handles</th><th>variable state</th><th>total</th></tr>"]
    for o in e.tail_by_operator:
        cells = "".join(f'<td class="num">{v:,}</td>' for v in
                        (o.op_data, o.persistent_buffers, o.builtin_data, o.scratch_handles,
                         o.variable_state, o.total))
        sg = f" (subgraph {o.subgraph})" if o.subgraph else ""
        rows.append(f"<tr><td>{o.index} {escape(o.type)}{sg}</td>{cells}</tr>")
    rows.append(f"<tr><td>model-wide (tensors, nodes, IO, allocator)</td>"
                f"<td></td><td></td><td></td><td></td><td></td>"
                f"{_fig(t, 'size.tail_model_wide', e.model_wide_tail)}</tr></table>")
    return "\n".join(rows)


def _optimize_section(view: OptimizeView, title: str) -> str:
    b, a = view.before.layout, view.after.layout
    saved = b.total - a.total
    pct = f" ({100 * saved / b.total:.1f}%)" if b.total else ""
    parts = ['<section class="optimize">', "<h2>what <code>tinyarena optimize</code> would save"
             f" ({escape(b.target)})</h2>",
             f'<p class="words">{escape(view.source)}: head {b.head:,} -> {a.head:,} bytes, '
             f"arena used {b.total:,} -> {a.total:,} bytes, saving {saved:,} bytes{pct}. "
             f"After: {escape(view.after.bound_text())}.</p>"]
    parts.extend(f'<p class="note">{escape(n)}</p>' for n in view.notes)
    relied = [s for s in view.after.rules.shared if s.intended]
    if relied:
        bufs = view.after.buffers
        parts.append('<p class="words">Overlaps the optimized plan relies on (safe only for '
                     'the kernel code path named):</p><ul class="overlaps">')
        parts.extend(f"<li>{escape(bufs[s.a].name)} / {escape(bufs[s.b].name)}: "
                     f"{escape(s.reason)}{'; ' + escape(s.rule) if s.rule else ''}</li>"
                     for s in relied)
        parts.append("</ul>")
    parts.append('<div class="targets"><div class="target"><h3>before</h3>')
    parts.append(plan_svg(view.before, title=f"{title}: before", standalone=False))
    parts.append('</div><div class="target"><h3>after</h3>')
    parts.append(plan_svg(view.after, title=f"{title}: after", standalone=False))
    parts.append("</div></div></section>")
    return "\n".join(parts)


def _patches_section(record: dict[str, Any]) -> str:
    """The patch grid and stage of a model written by ``tinyarena optimize --patches``."""
    grid = record.get("grid", ["?", "?"])
    shape = "x".join(str(d) for d in record.get("stage_output_shape", []))
    ops = ", ".join(str(o) for o in dict.fromkeys(record.get("stage_ops", [])))
    words = (f"Operators 0..{record.get('split_after')} of the original model (the stage: "
             f"{ops}) run as a {grid[0]} x {grid[1]} grid of spatial patches, each with "
             f"STRIDED_SLICE/PAD and the stage's own operators; CONCATENATION assembles the "
             f"stage output (tensor {record.get('stage_output')}, {shape}). "
             f"{record.get('ops_before')} -> {record.get('ops_after')} operators, "
             f"{float(record.get('extra_macs_percent', 0.0)):+.1f}% multiply-accumulates.")
    return ('<section class="patches"><h2>patch-based stage</h2>'
            f'<p class="words">{escape(words)}</p></section>')


def render_report(title: str, explanations: Sequence[ArenaExplanation],
                  optimized: OptimizeView | None = None,
                  verdicts: Sequence[tuple[bool, str]] = (),
                  patches: dict[str, Any] | None = None) -> str:
    """The whole page: the verdict per target first (``(safe, sentence)``: may this model go
    into that firmware?), the patch grid and stage of a patched model, one section per target
    side by side, then the optimizer's before/after."""
    body = [f"<h1>arena report: {escape(title)}</h1>",
            *(f'<p class="verdict{"" if safe else " unsafe"}">{escape(text)}</p>'
              for safe, text in verdicts),
            '<p class="note">Generated by tinyarena. Figures are bytes; each equals the '
            "corresponding <code>tinyarena size --json</code> / <code>plan --json</code> value "
            "for its target.</p>",
            '<div class="targets">']
    body.extend(_target_section(e, title, explanations[i - 1] if i else None)
                for i, e in enumerate(explanations))
    body.append("</div>")
    if patches is not None:
        body.insert(2, _patches_section(patches))
    if optimized is not None:
        body.append(_optimize_section(optimized, title))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>arena report: {escape(title)}</title>\n<style>{STYLE}</style></head>\n"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")


__all__ = ["CSP", "OptimizeView", "build_key", "figures", "render_report"]
