"""Where batch work runs: this process, a local process pool, a Ray cluster, or any
``concurrent.futures.Executor`` (a Dask ``Client.get_executor()``, a thread pool).

Model-zoo owners size hundreds of models for a dozen targets on every change, and architecture
searches size thousands of candidates: the same per-model function has to run wherever the
user's compute is, and give the same records in the same order wherever it ran. So every batch
goes through ``map_ordered``: results come back in input order, one item's failure becomes that
item's result (``on_error``), and work lost with a worker (a killed process, a lost Ray node)
is run again rather than lost.

Ray is imported only when asked for (the optional extra ``ray``): ``RayExecutor`` connects to
``RAY_ADDRESS`` or a running cluster (``ray.init(address="auto")``), or starts a local one.
"""

from __future__ import annotations

import os
from concurrent.futures import Executor, Future
from typing import Any, Callable, Iterator, Sequence, TypeVar

from tinyarena.errors import TinyArenaError

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("local", "ray")

# A batch whose local process pool breaks (a worker killed by the OS, a crash in native code)
# runs the items that were lost again, in a fresh pool; on the last round each item runs alone,
# so one item that kills its worker every time cannot take the others with it.
LOCAL_ROUNDS = 3
# Ray re-runs a task whose worker or node died this many times (Ray's own ``max_retries``).
RAY_MAX_RETRIES = 3


class ExecutorError(TinyArenaError):
    """The executor itself failed: Ray missing or unreachable, or a worker lost every retry."""


class WorkerLostError(ExecutorError):
    """An item's worker died on every attempt (the item is reported, the batch goes on)."""


def map_ordered(fn: Callable[[T], R], items: Sequence[T], *, jobs: int = 1,
                executor: str | Executor | None = None,
                on_error: Callable[[T, BaseException], R] | None = None,
                progress: Callable[[int], None] | None = None) -> list[R]:
    """``[fn(item) for item in items]``, in input order, wherever ``executor`` says.

    ``executor``: None or "local" (this process when ``jobs`` is 1, else ``jobs`` processes),
    "ray" (``RayExecutor``), or any ``concurrent.futures.Executor`` the caller owns (it is not
    shut down here). ``fn`` must be picklable (a module-level function or a partial of one)
    except in this process. ``on_error(item, exc)`` turns an exception raised for one item into
    that item's result; without it the first exception propagates. ``progress(n)`` is called
    with the number of items finished each time some finish.
    """
    if isinstance(executor, Executor):
        return _gather(executor, fn, items, on_error, progress)
    if executor not in (None, "local", "ray"):
        raise ExecutorError(f"unknown executor {executor!r}; choose one of "
                            f"{', '.join(EXECUTORS)}, or pass a concurrent.futures.Executor")
    if executor == "ray":
        with RayExecutor(num_cpus=jobs if jobs > 1 else None) as ray_pool:
            return _gather(ray_pool, fn, items, on_error, progress)
    if jobs <= 1 or len(items) <= 1:
        return [_call_one(fn, item, on_error, progress) for item in items]
    return _local_pool(fn, items, jobs, on_error, progress)


def _call_one(fn: Callable[[T], R], item: T, on_error: Callable[[T, BaseException], R] | None,
              progress: Callable[[int], None] | None) -> R:
    try:
        result = fn(item)
    except Exception as exc:
        if on_error is None:
            raise
        result = on_error(item, exc)
    if progress is not None:
        progress(1)
    return result


def _gather(pool: Executor, fn: Callable[[T], R], items: Sequence[T],
            on_error: Callable[[T, BaseException], R] | None,
            progress: Callable[[int], None] | None) -> list[R]:
    futures = [pool.submit(fn, item) for item in items]
    return [_outcome(future, item, on_error, progress) for future, item in
            zip(_finished_in_order(futures, progress), items)]


def _finished_in_order(futures: list[Future[R]],
                       progress: Callable[[int], None] | None) -> Iterator[Future[R]]:
    """The futures in submission order, once all are done; ``progress`` ticks as they finish."""
    if progress is not None:
        from concurrent.futures import as_completed

        for _ in as_completed(futures):
            progress(1)
    yield from futures


def _outcome(future: Future[R], item: T, on_error: Callable[[T, BaseException], R] | None,
             progress: Callable[[int], None] | None) -> R:
    exc = future.exception()
    if exc is None:
        return future.result()
    if on_error is None:
        raise exc
    return on_error(item, exc)


def _local_pool(fn: Callable[[T], R], items: Sequence[T], jobs: int,
                on_error: Callable[[T, BaseException], R] | None,
                progress: Callable[[int], None] | None) -> list[R]:
    """A process pool whose lost items are run again (``LOCAL_ROUNDS``)."""
    from concurrent.futures import ProcessPoolExecutor  # ~15 ms a one-model command skips
    from concurrent.futures.process import BrokenProcessPool

    results: dict[int, R] = {}
    pending = list(range(len(items)))
    for round_ in range(LOCAL_ROUNDS):
        alone = round_ == LOCAL_ROUNDS - 1 and round_ > 0
        groups = [[i] for i in pending] if alone else [pending]
        lost: list[int] = []
        for group in groups:
            with ProcessPoolExecutor(max_workers=1 if alone else min(jobs, len(group))) as pool:
                futures = {i: pool.submit(fn, items[i]) for i in group}
                for i, future in futures.items():
                    exc = future.exception()
                    if isinstance(exc, BrokenProcessPool):
                        lost.append(i)
                        continue
                    results[i] = _outcome(future, items[i], on_error, None)
                    if progress is not None:
                        progress(1)
        pending = lost
        if not pending:
            break
    for i in pending:
        exc = WorkerLostError(
            f"the worker process running item {i + 1} of {len(items)} died on each of "
            f"{LOCAL_ROUNDS} attempts (killed, out of memory, or a crash in native code); "
            f"run it alone with --jobs 1 to see why")
        if on_error is None:
            raise exc
        results[i] = on_error(items[i], exc)
    return [results[i] for i in range(len(items))]


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What a Ray task runs: ``fn`` travels as an argument, so any picklable callable (a
    ``functools.partial`` too, which ``ray.remote`` itself refuses) can be submitted."""
    return fn(*args, **kwargs)


class RayExecutor(Executor):
    """``concurrent.futures.Executor`` over Ray tasks.

    Connects to ``address``, else ``RAY_ADDRESS``, else a running cluster on this machine,
    else starts a local one (``num_cpus`` workers; None: one per core) that ``shutdown`` stops
    again. A task whose worker dies is re-run up to ``max_retries`` times by Ray; an exception
    raised by the task itself is not retried (it is that item's result). Workers must be able
    to import tinyarena: on a remote cluster, install it there or pass a ``runtime_env``.
    """

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None,
                 max_retries: int = RAY_MAX_RETRIES,
                 runtime_env: dict[str, Any] | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorError(
                "--executor ray needs Ray: pip install 'tinyarena[ray]' (or run with "
                "--jobs N on local processes)") from None
        self._ray = ray
        self._owns = False
        if not ray.is_initialized():
            self._owns = True
            _ray_init(ray, address or os.environ.get("RAY_ADDRESS"), num_cpus, runtime_env)
        self._task = ray.remote(max_retries=max_retries)(_call)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        ref = self._task.remote(fn, *args, **kwargs)
        future: Future[R] = ref.future()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()
            self._owns = False


def _ray_init(ray: Any, address: str | None, num_cpus: int | None,
              runtime_env: dict[str, Any] | None) -> None:
    """Connect (or start a local cluster) quietly: the CLI's stdout is JSON or CSV."""
    quiet = {"log_to_driver": False, "include_dashboard": False, "logging_level": "ERROR",
             "runtime_env": runtime_env}
    if address:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(f"cannot connect to the Ray cluster at {address!r}: {exc}; "
                                f"check RAY_ADDRESS (or unset it to start a local "
                                f"cluster)") from None
        return
    try:
        ray.init(address="auto", **quiet)
        return
    except (ConnectionError, RuntimeError, ValueError):
        pass  # no cluster running here: start one
    ray.init(num_cpus=num_cpus, **quiet)


__all__ = ["EXECUTORS", "ExecutorError", "LOCAL_ROUNDS", "RAY_MAX_RETRIES", "RayExecutor",
           "WorkerLostError", "map_ordered"]
