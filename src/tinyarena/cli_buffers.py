"""``tinyarena plan --buffers FILE.csv``: plan any buffer list, not only a model's.

The buffers come in MiniMalloc's CSV format (``planning.buffer_csv``). ``greedy`` and ``linear``
are TFLM's planners; ``optimal`` is the placement search behind ``optimize`` (exact branch and
bound plus heuristics), which gives its best plan when ``--time-budget`` ends. The budget
bounds the whole command, reading the file included: the deadline is counted from the moment
the command started (``args.started``).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from tinyarena.errors import UsageError


def run_plan_buffers(args: argparse.Namespace) -> int:
    from tinyarena.planning import lower_bound, plan_greedy, plan_linear, verify_plan
    from tinyarena.planning.buffer_csv import read_buffer_csv

    started = getattr(args, "started", None) or time.perf_counter()
    if args.model is not None:
        raise UsageError("give a model or --buffers FILE.csv, not both")
    ignored = [flag for flag, given in (("--target", getattr(args, "targets", None)),
                                         ("--kernels", getattr(args, "kernels", None)),
                                         ("--ascii", getattr(args, "ascii", False)),
                                         ("--svg", getattr(args, "svg", None))) if given]
    if ignored:
        raise UsageError(f"{', '.join(ignored)}: only for a model's plan; --buffers plans a "
                         f"bare buffer list, so drop {'it' if len(ignored) == 1 else 'them'}")
    table = read_buffer_csv(args.buffers)
    buffers = list(table.buffers)
    bound = lower_bound(buffers)
    method, proven = args.planner, False
    if args.planner == "optimal":
        from tinyarena.optimize.placement import search_plan

        result = search_plan(buffers, deadline=started + args.time_budget)
        plan, greedy_head, proven, method = result.plan, result.greedy_head, result.optimal, \
            result.method
    else:
        plan = plan_linear(buffers) if args.planner == "linear" else plan_greedy(buffers)
        verify_plan(plan)
        greedy_head = plan.head_size if args.planner == "greedy" else plan_greedy(buffers).head_size
    head = plan.head_size
    optimal = proven or head <= bound
    seconds = time.perf_counter() - started
    data: dict[str, Any] = {
        "source": args.buffers, "planner": args.planner, "method": method,
        "head_bytes": head, "lower_bound_bytes": bound, "greedy_head_bytes": greedy_head,
        "optimal": optimal, "seconds": round(seconds, 3),
        "buffers": [{"kind": "buffer", "index": i, "id": ident, "size": b.size,
                     "offset": plan.offsets[i], "first": b.first, "last": b.last}
                    for i, (ident, b) in enumerate(zip(table.ids, table.buffers))],
    }
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(_render(data, table.buffers, args.time_budget if args.planner == "optimal"
                      else None))
    return 0


def _render(data: dict[str, Any], buffers: Any, budget: float | None) -> str:
    head, bound = data["head_bytes"], data["lower_bound_bytes"]
    lines = [f"{data['source']}  [{len(buffers)} buffers, {data['planner']} planner"
             + (f", budget {budget:g} s" if budget is not None else "") + "]",
             f"head {head:,} bytes ({head / bound:.4f} x the lower bound)" if bound else
             f"head {head:,} bytes",
             f"lower bound {bound:,} bytes (largest total of buffers live at one step; no two "
             f"live buffers may share a byte)",
             f"TFLM's greedy: {data['greedy_head_bytes']:,} bytes"]
    if data["optimal"]:
        lines.append("optimal: proven" + (" (head = lower bound)" if head <= bound else
                                          " (no plan fits in less; search exhausted)"))
    else:
        lines.append("optimal: not proven within the budget")
    lines.append(f"found by {data['method']} in {data['seconds']:.2f} s")
    lines.append("")
    lines.append(f"{'id':>8} {'size':>10} {'offset':>10} {'first':>8} {'last':>8}")
    rows = data["buffers"]
    for row in rows[:200]:
        lines.append(f"{row['id']:>8} {row['size']:>10,} {row['offset']:>10,} "
                     f"{row['first']:>8} {row['last']:>8}")
    if len(rows) > 200:
        lines.append(f"... {len(rows) - 200} more (use --json for all)")
    return "\n".join(lines)


__all__ = ["run_plan_buffers"]
