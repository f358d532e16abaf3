"""Arena heads: TFLM's greedy, the lower bound, tinyarena's plans, and what the wheel records.

    python benchmarks/arena.py [--models ../shared/models] [--seeds 20] [--budget 1.0] [--json]

For every model in ../shared/models and for generated graphs (``tinyarena.builder.random_graphs``
seeds 0..N-1), columns:

* greedy     the head the wheel (the real TFLM) records for the original model;
* bound      the live-bytes lower bound of the original order, lifetimes only;
* optimal    tinyarena's best plan for the same order without overlap (``plan --planner
             optimal``), as TFLM runs it when pinned;
* views      the predicted head of ``optimize_model`` with --overlap views (reordering,
             views only: no rule (b) or (c));
* optimized  the predicted head of ``optimize_model`` (reordering and --overlap safe, i.e.
             rules (a), (b) and (c): partial overlap of conv/depthwise/pooling/PAD outputs
             with their dying inputs; safe for TFLM's reference kernels only);
* wheel      the head the wheel records when it loads the optimized model (must equal
             ``optimized``);
* saved      greedy - wheel (and as a percentage of greedy), and the bound the optimized plan
             is certified against; ``partial`` counts the rule-(c) overlaps the plan uses.

Needs the tflite-micro wheel (tests/tflm_oracle.py). Times drift between runs; only heads are
compared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from tflm_oracle import tflm_allocations  # noqa: E402

from tinyarena.arena import allocate_model  # noqa: E402
from tinyarena.builder.random_graphs import random_model  # noqa: E402
from tinyarena.model import read_model  # noqa: E402
from tinyarena.optimize import optimal_layout, optimize_model  # noqa: E402


def measure(name: str, data: bytes, budget: float) -> dict[str, object]:
    model = read_model(data)
    greedy = tflm_allocations(data).head
    original = allocate_model(model)
    start = time.perf_counter()
    best = optimal_layout(model, time_budget_s=budget)
    views = optimize_model(data, overlap="views", time_budget_s=budget)
    # the wheel runs TFLM's reference kernels: name them, so every rule proven for them applies
    result = optimize_model(data, time_budget_s=budget, kernel_set="reference")
    elapsed = time.perf_counter() - start
    wheel = tflm_allocations(result.model).head
    return {
        "model": name,
        "greedy": greedy,
        "predicted_greedy": original.head,
        "bound": original.lower_bound,
        "optimal": best.head,
        "views": views.after.head,
        "optimized": result.after.head,
        "wheel": wheel,
        "saved": greedy - wheel,
        "saved_pct": round(100.0 * (greedy - wheel) / greedy, 1) if greedy else 0.0,
        "partial": len(result.partial),
        "certified_bound": result.lower_bound,
        "proven": result.optimal,
        "reordered": result.reordered,
        "aliases": len(result.aliases),
        "seconds": round(elapsed, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=str(ROOT.parent / "shared" / "models"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    folder = Path(args.models)
    for path in sorted(folder.glob("*.tflite")) if folder.is_dir() else []:
        rows.append(measure(path.stem, path.read_bytes(), args.budget))
    for seed in range(args.seeds):
        rows.append(measure(f"random-{seed}", random_model(seed, max_blocks=6).model,
                            args.budget))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        cols = ("greedy", "bound", "optimal", "views", "optimized", "wheel", "saved",
                "saved_pct", "certified_bound")
        print(f"{'model':38}" + "".join(f" {c:>15}" for c in cols)
              + "  proven reordered aliases partial")
        for r in rows:
            print(f"{str(r['model'])[:38]:38}" + "".join(f" {r[c]:>15}" for c in cols)
                  + f"  {str(r['proven']):6} {str(r['reordered']):9} {r['aliases']:7} "
                  + f"{r['partial']}")
    mismatches = [r["model"] for r in rows if r["wheel"] != r["optimized"]
                  or r["greedy"] != r["predicted_greedy"]]
    if mismatches:
        print(f"prediction differs from the wheel for: {mismatches}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
