"""Planner speed at scale: TFLM's greedy (ported) and the optimizer's placement search.

    python benchmarks/planner.py [--sizes 1000,10000,30000] [--budget 0.5]

Prints, per size, the time of tinyarena's greedy port, of the search, the heads and the lower
bound. The C++ greedy's own time at these sizes is quoted in ../shared/docs/planning-notes.md;
the wheel does not expose its planner alone, so no same-run ratio is printed here (the model
benchmarks in benchmarks/arena.py compare heads with the wheel).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tinyarena.optimize.placement import search_plan
from tinyarena.planning import Buffer, lower_bound, plan_greedy


def random_chain(n: int, seed: int) -> list[Buffer]:
    rng = np.random.default_rng(seed)
    return [Buffer(int(rng.integers(1, 400)) * 16, i, i + int(rng.integers(1, 4)))
            for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,30000")
    parser.add_argument("--budget", type=float, default=0.5)
    args = parser.parse_args()
    print(f"{'buffers':>8} {'greedy s':>9} {'search s':>9} {'greedy':>9} {'search':>9} "
          f"{'bound':>9} optimal method")
    for n in (int(s) for s in args.sizes.split(",")):
        buffers = random_chain(n, seed=n)
        t0 = time.perf_counter()
        greedy = plan_greedy(buffers).head_size
        t1 = time.perf_counter()
        result = search_plan(buffers, time_budget_s=args.budget)
        t2 = time.perf_counter()
        print(f"{n:>8} {t1 - t0:>9.3f} {t2 - t1:>9.3f} {greedy:>9} {result.head:>9} "
              f"{lower_bound(buffers):>9} {str(result.optimal):>7} {result.method}")


if __name__ == "__main__":
    main()
