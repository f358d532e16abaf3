"""Text rendering of an ``OptimizeResult`` (the CLI's non-JSON output)."""

from __future__ import annotations

from tinyarena.optimize.pipeline import OptimizeResult, kernel_path


def _pct(saved: int, before: int) -> str:
    return f"{100.0 * saved / before:.1f}%" if before else "0.0%"


def render_optimize(result: OptimizeResult, source: str = "", output: str = "") -> str:
    """Before/after table, saving, proof status, and what was changed."""
    b, a = result.before, result.after
    lines = [f"tinyarena optimize: {source} -> {output}".rstrip(" ->"), ""]
    lines.append(f"{'':10}{'before':>12}{'after':>12}{'saved':>12}")
    for name in ("head", "tail", "total", "min_arena"):
        x, y = getattr(b, name), getattr(a, name)
        lines.append(f"{name:10}{x:>12,}{y:>12,}{x - y:>12,}")
    lines.append("")
    lines.append(f"saving: {result.saving:,} bytes of arena_used_bytes "
                 f"({_pct(result.saving, b.total)}), head {_pct(b.head - a.head, b.head)}")
    status = "proven optimal" if result.optimal else "not proven optimal"
    lines.append(f"lower bound: {result.lower_bound:,} bytes of head for this operator order "
                 f"under the {result.overlap!r} overlap rules; the plan is {status} "
                 f"(greedy {result.greedy_head:,}, search {result.search_head:,} by "
                 f"{result.search_method})")
    if result.order_exact is not None:
        how = "exact" if result.order_exact else "heuristic"
        lines.append(f"operator order: {'changed' if result.reordered else 'kept'} ({how} "
                     f"search)")
    planned = (f"target {result.target}, kernel set {result.kernel_set}" if result.target
               else "no target named: rules every kernel set tolerates" if
               result.kernel_set == "any" else f"kernel set {result.kernel_set}")
    safe_for = ("safe for any kernel set" if result.safe_for == ("any",)
                else f"safe only for kernel set(s) {', '.join(result.safe_for)}")
    lines.append(f"planned for: {planned}")
    lines.append(f"overlap: {result.overlap}; the plan is {safe_for}; "
                 f"{len(result.aliases) + len(result.partial)} tensor(s) share bytes")
    for op, name, rule, kept, merged in result.aliases:
        lines.append(f"  op {op} {name}: tensor {merged} on tensor {kept} ({rule})")
    for p, shift in zip(result.partial, result.shifts):
        lines.append(f"  op {p.op} {p.op_name}: output tensor {p.output} starts {shift:,} bytes "
                     f"from input tensor {p.input} (partial overlap, margin {p.margin:,}; "
                     f"{kernel_path(result.kernel_set, p.rule, p.scheme)})")
    if result.savings_by_rule:
        lines.append("savings by rule (head bytes the search needs more without it):")
        lines.extend(f"  {label}: {saved:,}" for label, saved in result.savings_by_rule)
    if result.patches is not None:
        info = result.patches
        lines.append(f"patches: operators 0..{info.split_after} as a {info.grid[0]}x"
                     f"{info.grid[1]} grid, {info.extra_macs_percent:+.1f}% MACs, "
                     f"{info.ops_before} -> {info.ops_after} operators")
    lines.extend(f"note: {n}" for n in result.notes)
    return "\n".join(lines)


__all__ = ["render_optimize"]
