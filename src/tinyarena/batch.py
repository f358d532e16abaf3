"""Many models, many targets, any executor: ``size``, ``check``, ``export`` and ``optimize`` as
Python calls that return the CLI's JSON records.

A model zoo sized for a dozen targets, or a neural-architecture search sizing thousands of
candidates, is the same loop as ``tinyarena size DIR --target A --target B``; these functions
are that loop, and the CLI's batch commands call them. Every result is a plain JSON-able dict
(the record ``--json`` prints), in input order: model by model, and for each model target by
target. A model that cannot be sized is a record with ``error``, never a lost batch.

Work runs where ``executor`` says (``tinyarena.executors.map_ordered``): this process, local
processes (``jobs``), ``"ray"``, or any ``concurrent.futures.Executor``. One task is one model
with all its targets, so the file is read and parsed once however many targets it is sized for.
A model may be a path or the bytes of a ``.tflite`` (a search's candidates need no files);
bytes are named ``<model N>`` in the records unless ``names`` says otherwise.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, Union

from tinyarena.cli_check import check_records
from tinyarena.cli_common import error_object
from tinyarena.cli_export import export_record
from tinyarena.cli_size import size_records
from tinyarena.errors import TinyArenaError
from tinyarena.executors import map_ordered

ModelSource = Union[str, "os.PathLike[str]", bytes]
Record = dict[str, Any]
DEFAULT_TARGETS = ("host-x64",)


@dataclass(frozen=True)
class _Task:
    """One model's work: picklable, so it travels to any executor."""

    index: int
    name: str
    source: str | bytes


def _tasks(models: Sequence[ModelSource], names: Sequence[str] | None) -> list[_Task]:
    if names is not None and len(names) != len(models):
        raise TinyArenaError(f"{len(names)} names for {len(models)} models; give one name per "
                             f"model or none")
    tasks = []
    for i, model in enumerate(models):
        if isinstance(model, (bytes, bytearray, memoryview)):
            source: str | bytes = bytes(model)
            name = names[i] if names is not None else f"<model {i}>"
        else:
            source = os.fspath(model)
            name = names[i] if names is not None else source
        tasks.append(_Task(i, name, source))
    return tasks


def _run(job: Callable[[_Task], list[Record]], tasks: list[_Task], *, jobs: int,
         executor: str | Executor | None,
         progress: Callable[[int], None] | None) -> list[Record]:
    def failed(task: _Task, exc: BaseException) -> list[Record]:
        return [{"model": task.name, **error_object(exc)}]

    nested = map_ordered(job, tasks, jobs=jobs, executor=executor, on_error=failed,
                         progress=progress)
    return [record for records in nested for record in records]


def size_models(models: Sequence[ModelSource], targets: Sequence[str] = DEFAULT_TARGETS, *,
                kernels: str | None = None, arena_size: int | None = None,
                names: Sequence[str] | None = None, jobs: int = 1,
                executor: str | Executor | None = None,
                progress: Callable[[int], None] | None = None) -> list[Record]:
    """``tinyarena size --json`` for every model on every target: one record per (model,
    target), model-major. Each record has ``total`` (``arena_used_bytes()``), ``min_arena``
    (the arena to declare), ``head``, ``tail`` and the build it holds for."""
    job = functools.partial(_size_task, tuple(targets), kernels, arena_size)
    return _run(job, _tasks(models, names), jobs=jobs, executor=executor, progress=progress)


def _builds(targets: Sequence[str]) -> tuple[tuple[str, None], ...]:
    """The CLI's builds for plain target names (each target's default esp-nn release)."""
    return tuple((t, None) for t in targets)


def _size_task(targets: tuple[str, ...], kernels: str | None, arena_size: int | None,
               task: _Task) -> list[Record]:
    records = size_records(task.name, builds=_builds(targets), arena_size=arena_size,
                           kernels=kernels, source=task.source)
    for r in records:
        r.pop("text", None)
    return records


def check_models(models: Sequence[ModelSource], budget: int,
                 targets: Sequence[str] = DEFAULT_TARGETS, *, kernels: str | None = None,
                 names: Sequence[str] | None = None, jobs: int = 1,
                 executor: str | Executor | None = None,
                 progress: Callable[[int], None] | None = None) -> list[Record]:
    """``tinyarena check``'s per-model records: ``fits``, ``over_by``, ``headroom`` against
    ``budget`` bytes of arena, per (model, target)."""
    job = functools.partial(_check_task, tuple(targets), kernels, budget)
    return _run(job, _tasks(models, names), jobs=jobs, executor=executor, progress=progress)


def _check_task(targets: tuple[str, ...], kernels: str | None, budget: int,
                task: _Task) -> list[Record]:
    return check_records(task.name, builds=_builds(targets), budget=budget, kernels=kernels,
                         source=task.source)


def export_models(models: Sequence[str], output: str, targets: Sequence[str], *,
                  kernels: str | None = None, margin: int = 0, jobs: int = 1,
                  executor: str | Executor | None = None,
                  progress: Callable[[int], None] | None = None) -> list[Record]:
    """``tinyarena export`` for every model file: ``NAME.h``/``NAME.cc`` in ``output`` (in
    ``output/TARGET`` when several targets are given, since each target has its own
    ``kTensorArenaSize``)."""
    targets = tuple(targets)
    job = functools.partial(_export_task, targets, kernels, margin, output)
    return _run(job, _tasks(models, None), jobs=jobs, executor=executor, progress=progress)


def _export_task(targets: tuple[str, ...], kernels: str | None, margin: int, output: str,
                 task: _Task) -> list[Record]:
    return [export_record(str(task.source), target=t, kernels=kernels, name=None,
                          margin=margin, output=per_target_dir(output, t, targets))
            for t in targets]


def per_target_dir(output: str, target: str, targets: Sequence[str]) -> str:
    """Where one target's files go: ``output`` itself for one target, else ``output/TARGET``
    (a target's name is a valid folder name: ``cortex-m4+fp`` included)."""
    return output if len(targets) <= 1 else str(Path(output) / target)


def optimize_models(models: Sequence[str], outputs: Sequence[str],
                    targets: Sequence[str | None] = (None,), *,
                    kernel_set: str | None = None, time_budget_s: float = 1.0,
                    reorder: bool = True, overlap: str = "safe", jobs: int = 1,
                    executor: str | Executor | None = None,
                    progress: Callable[[int], None] | None = None) -> list[Record]:
    """``tinyarena optimize`` for every model: writes ``outputs[i]`` (for several targets,
    ``outputs[i]`` with the target's folder before its name: ``OUT/cortex-m4/model.tflite``)
    and returns ``optimize --json``'s record per (model, target).

    The written files are the same whichever executor ran them, on any machine and under any
    load: each search counts ``time_budget_s`` in work, not wall time
    (``planning.clock.WorkClock``: about the same work a second buys on a 2-core machine), and
    leaves OR-Tools out (its limit is wall time). A single ``optimize_model`` call keeps wall
    time, so a search its budget cuts short can end elsewhere there."""
    if len(outputs) != len(models):
        raise TinyArenaError(f"{len(outputs)} outputs for {len(models)} models")
    targets = tuple(targets)
    tasks = [_Task(i, os.fspath(m), os.fspath(o)) for i, (m, o) in
             enumerate(zip(models, outputs))]
    job = functools.partial(_optimize_task, targets, kernel_set, time_budget_s, reorder,
                            overlap)
    return _run(job, tasks, jobs=jobs, executor=executor, progress=progress)


def optimized_path(output: str, target: str | None, targets: Sequence[str | None]) -> str:
    """``output``, or for several targets the same file name in a folder named after the
    target, next to it."""
    if len(targets) <= 1 or target is None:
        return output
    path = Path(output)
    return str(path.parent / target / path.name)


def _optimize_task(targets: tuple[str | None, ...], kernel_set: str | None,
                   time_budget_s: float, reorder: bool, overlap: str,
                   task: _Task) -> list[Record]:
    from tinyarena.optimize import optimize_model
    from tinyarena.planning.clock import WorkClock

    records = []
    for target in targets:
        output = optimized_path(str(task.source), target, targets)
        record: Record = {"model": task.name, "output": output}
        try:
            result = optimize_model(task.name, reorder=reorder, overlap=overlap,
                                    time_budget_s=time_budget_s, target=target,
                                    kernel_set=kernel_set, clock=WorkClock())
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            Path(output).write_bytes(result.model)
            record.update(result.to_dict())
        except TinyArenaError as exc:
            record.update(error_object(exc))
        except OSError as exc:
            record["error"] = {"type": "OSError", "message": f"{output}: {exc.strerror or exc}"}
        records.append(record)
    return records


__all__ = ["DEFAULT_TARGETS", "check_models", "export_models", "optimize_models",
           "optimized_path", "per_target_dir", "size_models"]
