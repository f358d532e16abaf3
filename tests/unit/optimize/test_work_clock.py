"""A budget counted in work (``planning.clock.WorkClock``) gives the same optimized model
whatever the machine's speed or load: what ``tinyarena.batch.optimize_models`` relies on for
byte-identical files across executors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tinyarena.optimize import pipeline
from tinyarena.optimize.placement import search_plan
from tinyarena.planning.buffers import Buffer
from tinyarena.planning.clock import WorkClock



INSTANCE = (Path(__file__).resolve().parents[4] / "shared" / "planner-benchmarks" /
            "minimalloc-challenging" / "A.1048576.csv")


def _instance() -> list[Buffer]:
    """MiniMalloc's challenging instance A: the search is still running when the budget ends."""
    import csv

    if not INSTANCE.is_file():
        pytest.skip("../shared/planner-benchmarks is not present")
    rows = list(csv.DictReader(INSTANCE.open()))
    return [Buffer(int(r["size"]), int(r["lower"]), int(r["upper"]) - 1) for r in rows]


def test_work_clock_advances_per_read() -> None:
    clock = WorkClock(tick=0.5)
    assert [clock(), clock(), clock()] == [0.5, 1.0, 1.5]


def test_same_plan_on_a_slow_machine() -> None:
    """Each read of the clock also sleeps (a machine 'slower' by far): a wall-clock search ends
    early there, a work-counted one does the same work and returns the same plan."""
    buffers = _instance()
    quick = search_plan(buffers, time_budget_s=0.3, clock=WorkClock(), cp_sat=False)
    assert not quick.optimal  # the budget, not a proof, ended the search

    class Sleepy(WorkClock):
        def __call__(self) -> float:
            time.sleep(0.0005)
            return super().__call__()

    slow = search_plan(buffers, time_budget_s=0.3, clock=Sleepy(), cp_sat=False)
    assert slow.plan.offsets == quick.plan.offsets and slow.head == quick.head


def test_optimize_model_is_deterministic_under_load(shared_models: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    model = shared_models / "person_detect.tflite"
    first = pipeline.optimize_model(model, kernel_set="reference", time_budget_s=0.2,
                                    clock=WorkClock())
    real = pipeline.allocate_model

    def slow_allocate(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.3)  # a loaded machine: the emulation takes longer
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "allocate_model", slow_allocate)
    second = pipeline.optimize_model(model, kernel_set="reference", time_budget_s=0.2,
                                     clock=WorkClock())
    assert second.model == first.model
