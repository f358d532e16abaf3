"""Candidates sized per second: one process, local processes, a Ray cluster, against the wheel.

    python benchmarks/batch.py [--candidates 200] [--jobs 2] [--no-ray] [--json]

Candidates are search-space models (``tinyarena.builder.search_space``: DS-CNN/MobileNet
style, 20-96 px, 1-8 blocks), built once before timing. Rows:

* wheel        the real TFLM (the pinned tflite-micro wheel): ``Interpreter.from_bytes`` plus
               ``AllocateTensors`` per candidate, one process, host-x64 only (the only build the
               wheel is); the reference for every ratio;
* 1 process    ``tinyarena.batch.size_models`` in this process, host-x64 (what the wheel does);
* 1 process x3 the same for three device targets at once (one parse per candidate);
* --jobs N     three targets on N local processes;
* ray N        three targets on a local Ray cluster of N workers (started before timing,
               on 127.0.0.1; a batch of candidates per task).

Ratios are candidate-targets per second against the wheel's candidates per second, measured in
the same run. Every tinyarena row must give the same records; host-x64 rows must equal the
wheel's ``arena_used_bytes``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from tinyarena.batch import size_models  # noqa: E402
from tinyarena.builder.search_space import Candidate, ds_cnn  # noqa: E402

TARGETS = ["cortex-m4", "cortex-m55", "cortex-m33"]


def candidates(n: int) -> list[bytes]:
    import numpy as np

    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        c = Candidate(resolution=int(rng.choice([20, 32, 48, 64, 96])), channels=1,
                      width=int(rng.choice([4, 8, 16, 24])), blocks=int(rng.integers(1, 9)),
                      stride_at=((0, 2, 4), (0, 1), (2, 4))[int(rng.integers(0, 3))],
                      kernel=int(rng.choice([3, 5])), classes=12)
        out.append(ds_cnn(c, seed=i))
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def wheel_sizes(models: list[bytes]) -> list[int]:
    """The wheel's arena_used_bytes per candidate: its Python API reports it only through the
    recording allocator's printed report (C-level stderr), so that is parsed, as a user would."""
    from tflm_oracle import captured_stderr, make_interpreter, parse_allocations

    sizes = []
    for data in models:
        with captured_stderr() as err:
            make_interpreter(data).print_allocations()
        sizes.append(parse_allocations(err[0]).total)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description="candidates sized per second")
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    models = candidates(args.candidates)
    n = len(models)
    rows: list[tuple[str, int, float]] = []

    t_wheel, wheel = timed(lambda: wheel_sizes(models))
    rows.append(("wheel (host-x64)", n, t_wheel))
    t, host = timed(lambda: size_models(models, ["host-x64"]))
    assert [r["total"] for r in host] == wheel, "host-x64 sizes differ from the wheel's"
    rows.append(("1 process (host-x64)", n, t))
    t, one = timed(lambda: size_models(models, TARGETS))
    rows.append(("1 process x3 targets", 3 * n, t))
    t, local = timed(lambda: size_models(models, TARGETS, jobs=args.jobs))
    assert local == one
    rows.append((f"--jobs {args.jobs} x3 targets", 3 * n, t))
    if not args.no_ray:
        rows.append(ray_row(models, args.jobs, one))

    base = n / t_wheel
    result = [{"executor": name, "sized": count, "seconds": round(sec, 3),
               "per_second": round(count / sec, 1), "ratio_vs_wheel": round(count / sec / base, 2)}
              for name, count, sec in rows]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{n} candidates; targets {', '.join(TARGETS)}; ratio = sized/s over the wheel's")
    for r in result:
        print(f"  {r['executor']:<24} {r['sized']:>6} in {r['seconds']:>7.2f} s  "
              f"{r['per_second']:>8.1f}/s  ratio {r['ratio_vs_wheel']:.2f}")


def ray_row(models: list[bytes], workers: int, expected: list[dict[str, Any]]
            ) -> tuple[str, int, float]:
    """Candidates in chunks (one Ray task per chunk: a task per candidate would measure Ray's
    scheduling, not sizing), on a local cluster started before the clock."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # stay on 127.0.0.1
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    from tinyarena.executors import RayExecutor

    chunk = max(1, len(models) // (4 * workers))
    chunks = [models[i:i + chunk] for i in range(0, len(models), chunk)]
    with RayExecutor(num_cpus=workers) as pool:
        pool.submit(size_models, models[:1], TARGETS).result()  # workers warm
        start = time.perf_counter()
        futures = [pool.submit(size_models, c, TARGETS) for c in chunks]
        records = [r for f in futures for r in f.result()]
        elapsed = time.perf_counter() - start
    for i, r in enumerate(records):
        r["model"] = expected[i]["model"]  # chunks number their bytes from 0
    assert records == expected
    return (f"ray {workers} workers x3 targets", 3 * len(models), elapsed)


if __name__ == "__main__":
    main()
