"""Budgets counted in work instead of wall-clock time, for results that must not depend on the
machine that computed them.

Every search here stops at a deadline on a ``clock``: ``time.perf_counter`` by default, so a
loaded machine finds less than a quiet one. A batch whose files must be byte-identical whichever
executor ran them (local processes, a Ray cluster: ``tinyarena.batch.optimize_models``) reads
a ``WorkClock`` instead. It advances a fixed step each time a search reads it, and the searches
read their clock at fixed points of their work (every 64 branch-and-bound nodes, every placement
pass), so the same budget buys the same work, and the same result, everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

# Seconds one read of the clock stands for: on this project's 2-core machine the exact search on
# MiniMalloc's challenging instances reads its clock 150-400 times a second (A 203, B 213, C 395,
# D 147 reads/s, quiet machine), so a budget buys about the work it buys in wall time there.
WORK_CLOCK_TICK_S = 5e-3


@dataclass
class WorkClock:
    """A clock that reads ``now`` and then moves it on by ``tick`` (deterministic; mutable on
    purpose: one per search)."""

    tick: float = WORK_CLOCK_TICK_S
    now: float = 0.0

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


__all__ = ["WORK_CLOCK_TICK_S", "WorkClock"]
