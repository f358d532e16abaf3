"""The memory plan and the arena's composition as plain SVG, written by hand.

No plotting library: the picture is a few hundred rectangles, the output must be one
self-contained file that opens anywhere (no scripts, no fonts, no network), and tinyarena's
runtime dependencies stay numpy and flatbuffers. Hover text is each element's ``<title>``,
which every browser shows as a tooltip without JavaScript.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from tinyarena.report.explain import ArenaExplanation, BufferInfo

FONT = "font-family=\"sans-serif\" font-size=\"11\""


@dataclass(frozen=True)
class _Frame:
    """Plot area and the two scales: step -> x, byte offset -> y (offset 0 at the bottom)."""

    left: float
    top: float
    width: float
    height: float
    t_min: int
    t_max: int
    y_max: int

    def x(self, step: float) -> float:
        return self.left + (step - self.t_min) * self.width / (self.t_max - self.t_min + 1)

    def y(self, offset: float) -> float:
        return self.top + self.height - offset * self.height / self.y_max


def _f(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _colour(position: int) -> str:
    return f"hsl({position * 47 % 360},55%,68%)"


def _ticks(lo: int, hi: int, count: int) -> list[int]:
    span = max(hi - lo, 1)
    raw = span / max(count, 1)
    step = 1
    while step * 10 <= raw:
        step *= 10
    for m in (1, 2, 5, 10):
        if step * m >= raw:
            step *= m
            break
    first = -(-lo // step) * step
    return list(range(first, hi + 1, step))


def _rect(b: BufferInfo, fr: _Frame, peak: bool) -> str:
    x0, x1 = fr.x(b.first), fr.x(b.last + 1)
    y0, y1 = fr.y(b.end), fr.y(b.offset)
    cls = "buf peak" if peak else "buf"
    stroke = 'stroke="#c00000" stroke-width="2"' if peak else 'stroke="#333" stroke-width="0.5"'
    return (f'<rect class="{cls}" data-kind="{b.kind}" data-index="{b.index}" '
            f'data-position="{b.position}" data-name="{escape(b.name)}" '
            f'x="{_f(x0)}" y="{_f(y0)}" width="{_f(max(x1 - x0, 0.5))}" '
            f'height="{_f(max(y1 - y0, 0.5))}" fill="{_colour(b.position)}" '
            f'fill-opacity="0.8" {stroke}><title>{escape(b.title())}</title></rect>')


def plan_svg(e: ArenaExplanation, title: str = "", width: int = 760, height: int = 380,
             standalone: bool = True) -> str:
    """Time steps across, arena offset up, one ``rect.buf`` per planned buffer (the peak's
    with class ``peak``), the peak step shaded, head and bound as horizontal lines, and real
    collisions (pairs the verifier rejects) in red."""
    layout = e.layout
    bufs = e.buffers
    t_min = min([0] + [b.first for b in bufs])
    t_max = max([0] + [b.last for b in bufs])
    y_max = max([layout.head, e.rules.bound, 16] + [b.end for b in bufs])
    fr = _Frame(72, 30 if title else 12, width - 72 - 150, height - (30 if title else 12) - 40,
                t_min, t_max, y_max)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plan" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img">'
           if standalone else
           f'<svg class="plan" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img">']
    out.append(f'<title>memory plan: {escape(title or layout.target)}, head '
               f'{layout.head:,} bytes</title>')
    out.append(f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>')
    if title:
        out.append(f'<text x="{fr.left}" y="18" {FONT} font-weight="bold">'
                   f'{escape(title)}</text>')
    out.append(f'<rect x="{_f(fr.left)}" y="{_f(fr.top)}" width="{_f(fr.width)}" '
               f'height="{_f(fr.height)}" fill="#f7f7f7" stroke="#999"/>')
    peak = set(e.peak.buffers) if e.peak else set()
    # peak buffers last, so their outline is on top
    for b in sorted(bufs, key=lambda b: b.position in peak):
        out.append(_rect(b, fr, b.position in peak))
    if e.peak is not None:
        p = e.peak
        out.append(f'<rect class="peak-step" data-step="{p.step}" x="{_f(fr.x(p.step))}" '
                   f'y="{_f(fr.top)}" width="{_f(fr.x(p.step + 1) - fr.x(p.step))}" '
                   f'height="{_f(fr.height)}" fill="#ffd54f" fill-opacity="0.35" pointer-events="none">'
                   f'<title>{escape(e.peak_text())}</title></rect>')
    for s in e.rules.collisions:
        a, b = bufs[s.a], bufs[s.b]
        t0, t1 = max(a.first, b.first), min(a.last, b.last) + 1
        lo, hi = max(a.offset, b.offset), min(a.end, b.end)
        out.append(f'<rect class="collision" x="{_f(fr.x(t0))}" y="{_f(fr.y(hi))}" '
                   f'width="{_f(fr.x(t1) - fr.x(t0))}" height="{_f(fr.y(lo) - fr.y(hi))}" '
                   f'fill="#e00" fill-opacity="0.7"><title>collision: {escape(a.name)} and '
                   f'{escape(b.name)} share bytes {lo:,}..{hi:,} while both are live'
                   f'</title></rect>')
    right = fr.left + fr.width
    lines = [("head", layout.head, "#c00000", "6,3")]
    if e.rules.bound != layout.head:
        lines.append(("lower bound", e.rules.bound, "#1565c0", "2,3"))
    for name, value, colour, dash in lines:
        y = fr.y(value)
        out.append(f'<line class="{name.replace(" ", "-")}" x1="{_f(fr.left)}" y1="{_f(y)}" '
                   f'x2="{_f(right)}" y2="{_f(y)}" stroke="{colour}" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{_f(right + 6)}" y="{_f(y + 4)}" {FONT} fill="{colour}">'
                   f'{name} {value:,}</text>')
    for t in _ticks(t_min, t_max, 12):
        x = (fr.x(t) + fr.x(t + 1)) / 2
        out.append(f'<text x="{_f(x)}" y="{_f(fr.top + fr.height + 14)}" {FONT} '
                   f'text-anchor="middle">{t}</text>')
    out.append(f'<text x="{_f(fr.left + fr.width / 2)}" y="{_f(height - 8)}" {FONT} '
               f'text-anchor="middle">time step (step k: operator k-1 runs)</text>')
    for v in _ticks(0, y_max, 6):
        y = fr.y(v)
        out.append(f'<text x="{_f(fr.left - 6)}" y="{_f(y + 4)}" {FONT} '
                   f'text-anchor="end">{v:,}</text>')
    out.append(f'<text x="14" y="{_f(fr.top + fr.height / 2)}" {FONT} text-anchor="middle" '
               f'transform="rotate(-90 14 {_f(fr.top + fr.height / 2)})">arena offset (bytes)'
               f'</text>')
    out.append("</svg>")
    return "\n".join(out)


def composition_svg(e: ArenaExplanation, width: int = 760) -> str:
    """Bars on one scale: arena used (head, then the tail by category), the temporary peak
    during AllocateTensors, and the minimum working arena."""
    layout = e.layout
    segments = [("head", layout.head)] + [(n, v) for n, v in e.tail_by_category if v > 0]
    bars = [("arena used", segments),
            ("temporary peak", [("temp peak", layout.temp_peak)]),
            ("minimum arena", [("min arena", layout.min_arena)])]
    top = max(layout.total, layout.temp_peak, layout.min_arena, 1)
    left, bar_w, row = 120, width - 120 - 20, 30
    legend_rows = (len(segments) + 2) // 3
    height = len(bars) * row + 20 + legend_rows * 16 + 10
    out = [f'<svg class="composition" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img">',
           f'<title>arena composition, {layout.target}</title>']
    palette = ["#ef5350", "#42a5f5", "#66bb6a", "#ffa726", "#ab47bc", "#26c6da", "#8d6e63",
               "#d4e157", "#78909c", "#ec407a"]
    colours = {name: palette[i % len(palette)] for i, (name, _) in enumerate(segments)}
    colours.update({"temp peak": "#90a4ae", "min arena": "#455a64"})
    for r, (label, parts) in enumerate(bars):
        y = 10 + r * row
        out.append(f'<text x="{left - 6}" y="{y + 15}" {FONT} text-anchor="end">'
                   f'{label}</text>')
        x = float(left)
        for name, value in parts:
            w = value * bar_w / top
            out.append(f'<rect class="segment" data-name="{escape(name)}" data-bytes="{value}" '
                       f'x="{_f(x)}" y="{y}" width="{_f(max(w, 0.5))}" height="20" '
                       f'fill="{colours[name]}" stroke="#fff" stroke-width="0.5">'
                       f'<title>{escape(name)}: {value:,} bytes</title></rect>')
            x += w
        total = sum(v for _, v in parts)
        out.append(f'<text x="{_f(min(x + 4, width - 70))}" y="{y + 15}" {FONT}>'
                   f'{total:,}</text>')
    y = 10 + len(bars) * row + 6
    for i, (name, value) in enumerate(segments):
        cx, cy = left + (i % 3) * (bar_w / 3), y + (i // 3) * 16
        out.append(f'<rect x="{_f(cx)}" y="{cy}" width="10" height="10" '
                   f'fill="{colours[name]}"/>')
        out.append(f'<text x="{_f(cx + 14)}" y="{cy + 9}" {FONT}>'
                   f'{escape(name[:34])} ({value:,})</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["composition_svg", "plan_svg"]
