"""``tinyarena.executors.map_ordered``: input order, per-item errors, lost workers re-run."""

from __future__ import annotations

import functools
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinyarena.executors import LOCAL_ROUNDS, ExecutorError, WorkerLostError, map_ordered


def _square(x: int) -> int:
    return x * x


def _fails_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def _dies_once(marker_dir: str, x: int) -> int:
    """Kills its worker process the first time it sees ``x == 2`` (a marker file remembers)."""
    marker = Path(marker_dir) / f"died-{x}"
    if x == 2 and not marker.exists():
        marker.write_text("1")
        os._exit(17)
    return x * 10


def _always_dies(x: int) -> int:
    if x == 1:
        os._exit(17)
    return x


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_back_in_input_order(jobs: int) -> None:
    items = list(range(23))
    assert map_ordered(_square, items, jobs=jobs) == [x * x for x in items]


def test_any_concurrent_futures_executor_is_used_as_given() -> None:
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert map_ordered(_square, list(range(10)), executor=pool) == \
            [x * x for x in range(10)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_item_failing_is_that_items_result(jobs: int) -> None:
    got = map_ordered(_fails_on_three, [1, 2, 3, 4], jobs=jobs,
                      on_error=lambda item, exc: f"{item}: {exc}")
    assert got == [1, 2, "3: three", 4]
    with pytest.raises(ValueError, match="three"):
        map_ordered(_fails_on_three, [1, 2, 3, 4], jobs=jobs)


def test_a_lost_worker_is_run_again(tmp_path: Path) -> None:
    job = functools.partial(_dies_once, str(tmp_path))
    assert map_ordered(job, [0, 1, 2, 3, 4, 5], jobs=2) == [0, 10, 20, 30, 40, 50]
    assert (tmp_path / "died-2").exists()  # the worker really died once


def test_an_item_that_kills_every_worker_is_reported_and_the_rest_finish() -> None:
    got = map_ordered(_always_dies, [0, 1, 2, 3], jobs=2,
                      on_error=lambda item, exc: exc)
    assert got[0] == 0 and got[2] == 2 and got[3] == 3
    assert isinstance(got[1], WorkerLostError)
    assert f"{LOCAL_ROUNDS} attempts" in str(got[1])


def test_unknown_executor_is_refused() -> None:
    with pytest.raises(ExecutorError, match="local, ray"):
        map_ordered(_square, [1], executor="dask")


def test_ray_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(ExecutorError, match=r"tinyarena\[ray\]"):
        map_ordered(_square, [1, 2], executor="ray")
