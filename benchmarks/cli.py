"""Cold-start time of the CLI: ``tinyarena size`` and ``plan`` against bare Python.

    .venv/bin/python benchmarks/cli.py [MODEL.tflite ...] [--repeat N] [--json]

Each command runs as a fresh process (a cold CLI, as an editor integration or a loop over a
model zoo calls it), ``--repeat`` times; the table gives the median wall time and the median
CPU time (user + system) of each, next to two floors measured in the same run: ``python -c
pass`` (the interpreter's own start) and ``python -c "import numpy"`` (the one dependency every
command loads). Without arguments the model is ../shared/models'
mobilenet_v2_quantized_1x3x224x224.tflite. CPU time is the steadier figure on a shared machine;
compare rows of one run, never absolute times across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
DEFAULT_MODEL = SHARED_MODELS / "mobilenet_v2_quantized_1x3x224x224.tflite"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], repeat: int) -> dict[str, float]:
    """Median wall and CPU seconds of ``repeat`` fresh runs of ``argv`` (after one warm-up run
    that fills the OS file cache and Python's bytecode cache)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    walls, cpus = [], []
    for _ in range(repeat):
        cpu0 = _children_cpu()
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        walls.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - cpu0)
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7, help="runs per command")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    models = args.models or [DEFAULT_MODEL]
    missing = [m for m in models if not m.exists()]
    if missing:
        parser.error(f"model not found: {missing[0]}")
    py = sys.executable
    commands = [("python -c pass", [py, "-c", "pass"]),
                ("python -c 'import numpy'", [py, "-c", "import numpy"])]
    for m in models:
        commands.append((f"tinyarena size {m.name}", [py, "-m", "tinyarena", "size", str(m)]))
        commands.append((f"tinyarena plan {m.name}", [py, "-m", "tinyarena", "plan", str(m)]))
    rows = [{"command": name, **_time(cmd, args.repeat)} for name, cmd in commands]
    floor = rows[0]
    for r in rows:
        r["wall_over_floor_s"] = r["wall_s"] - floor["wall_s"]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'command':64s} {'wall s':>8s} {'cpu s':>8s} {'wall - floor':>13s}")
    for r in rows:
        print(f"{r['command']:64s} {r['wall_s']:8.3f} {r['cpu_s']:8.3f} "
              f"{r['wall_over_floor_s']:13.3f}")
    print(f"medians of {args.repeat} cold runs each; floor = python -c pass, same run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
