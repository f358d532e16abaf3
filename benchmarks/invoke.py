"""Invoke time of tinyarena versus the tflite-micro wheel, same models, same inputs, one run.

    .venv/bin/python benchmarks/invoke.py [MODEL.tflite ...] [--repeat N] [--json]
        [--no-streaming] [--no-native] [--families]

Without arguments it runs every model in ../shared/models plus two streaming models built in
the run (``tinyarena.examples.streaming``: microWakeWord-shaped, ring buffers in resource
variables, 59 and 24 ops per invoke). For each model it feeds the same random input to both
interpreters, checks that the outputs agree, and prints the median invoke time of each and their
ratio (tinyarena / wheel; below 1 means tinyarena is faster), and per operator: tinyarena's
time beyond the wheel's, and the interpreter's own cost with no-op kernels. The smallest models
show the fixed per-invoke overhead of each runtime. Times drift between runs on shared
machines: compare ratios from the same run, never absolute times across runs.

``--families`` adds one builder-made model per family of real TFLM models
(tests/model_families.py: wake-word streaming int8/float, DS-CNN, MicroNet, MobileNet-style,
activity CNN+LSTM, audio front ends with TFLM's signal library, 16x8, ...).

tinyarena runs its compiled kernels when numba (the ``fast`` extra) is installed; the first
line of the table says which kernels ran, and ``--no-native`` times the numpy kernels instead.
Compiling happens once, when the tensors are allocated (and is cached on disk): it is not in
the invoke times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

import tinyarena
from tinyarena.examples.streaming import streaming_model
from tinyarena.interpreter.inputs import random_inputs
from tinyarena.kernels import native

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


@contextmanager
def _quiet_fd2() -> Iterator[None]:
    """The wheel prints to C-level stderr; keep the table readable."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _median_seconds(fn: Callable[[], object], repeat: int, budget: float) -> tuple[float, int]:
    """Median of up to ``repeat`` timed calls, stopping early once ``budget`` seconds are spent."""
    fn()  # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat and (len(times) < 3 or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _wheel(model: bytes, inputs: list[np.ndarray]):
    from tflite_micro.python.tflite_micro import runtime

    with _quiet_fd2():
        ip = runtime.Interpreter.from_bytes(model, arena_size=64 * 1024 * 1024)
        for i, x in enumerate(inputs):
            ip.set_input(x, i)
    return ip


def _noop_eval(ctx: object, op: object, data: object) -> None:
    return None


def _overhead_seconds(model: bytes, repeat: int) -> float:
    """Invoke time with every kernel's eval replaced by a no-op (same init and prepare): what
    the interpreter itself costs per invoke, kernels aside."""
    from dataclasses import replace

    model_ops = {op.name for sg in tinyarena.read_model(model).subgraphs for op in sg.operators}
    default = tinyarena.OpResolver.default()
    resolver = tinyarena.OpResolver()
    for name in sorted(model_ops):
        resolver.add(name, replace(default.resolve_name(name), eval=_noop_eval, bind=None))
    ip = tinyarena.Interpreter(model, resolver=resolver)
    ip.allocate_tensors()
    return _median_seconds(ip.invoke, max(repeat, 1000), 1.0)[0]


def _feed(ip: tinyarena.Interpreter, inputs: list[np.ndarray]) -> None:
    for i, x in enumerate(inputs):
        ip.input(i)[...] = x


def bench_model(name: str, model: bytes, repeat: int, budget: float,
                native: bool | None = None) -> dict[str, object]:
    ours = tinyarena.Interpreter(model, native=native)
    ours.allocate_tensors()
    inputs = random_inputs(ours.get_input_details(), seed=0)
    _feed(ours, inputs)
    wheel = _wheel(model, inputs)
    with _quiet_fd2():
        ours_s, n_ours = _median_seconds(ours.invoke, repeat, budget)
        wheel_s, n_wheel = _median_seconds(wheel.invoke, repeat, budget)
        # Compare one fresh invoke of each: a graph input whose memory the plan reuses holds
        # other data after an invoke, so the inputs are set again first.
        ours.reset()
        wheel.reset()
        _feed(ours, inputs)
        for i, x in enumerate(inputs):
            wheel.set_input(x, i)
        ours.invoke()
        wheel.invoke()
        wheel_out = [np.array(wheel.get_output(i)) for i in range(ours.outputs_size())]
    overhead_s = _overhead_seconds(model, repeat)
    diff = max((_difference(ours.get_output(i), w) for i, w in enumerate(wheel_out)), default=0)
    ops = len(ours.model.subgraphs[0].operators)  # run per invoke (CALL_ONCE's: once)
    return {"model": name, "ops": ops,
            "tinyarena_ms": ours_s * 1e3, "wheel_ms": wheel_s * 1e3,
            "ratio": ours_s / wheel_s, "runs": [n_ours, n_wheel], "max_difference": diff,
            "interpreter_overhead_us": overhead_s * 1e6,
            "excess_us_per_op": (ours_s - wheel_s) * 1e6 / max(ops, 1),
            "loop_us_per_op": overhead_s * 1e6 / max(ops, 1)}


def _models(args: argparse.Namespace, parser: argparse.ArgumentParser
            ) -> list[tuple[str, bytes]]:
    paths = args.models or sorted(SHARED_MODELS.glob("*.tflite"))
    models = [(p.stem, p.read_bytes()) for p in paths]
    if not args.models and not args.no_streaming:
        models.append(("streaming (built, 59 ops)", streaming_model()))
        models.append(("streaming_small (built)", streaming_model(kernels=(3, 5, 7),
                                                                  channels=16)))
    if args.families:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from model_families import FAMILIES

        models.extend((f"{name} (family)", make()) for name, make in FAMILIES.items())
    if not models:
        parser.error(f"no models given and none found in {SHARED_MODELS}")
    return models


def _difference(ours: np.ndarray, wheel: np.ndarray) -> int:
    """0 when identical; else ulps for float32, largest absolute difference for integers."""
    if np.array_equal(ours, wheel):
        return 0
    if ours.dtype == np.float32:
        def ordered(x: np.ndarray) -> np.ndarray:
            i = x.view(np.int32).astype(np.int64)
            return np.where(i < 0, -(i & 0x7FFFFFFF), i)
        return int(np.max(np.abs(ordered(ours) - ordered(wheel))))
    return int(np.max(np.abs(ours.astype(np.int64) - wheel.astype(np.int64))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=30, help="invokes timed per runtime")
    parser.add_argument("--budget", type=float, default=5.0,
                        help="seconds per model and runtime after which timing stops (min 3 runs)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--no-streaming", action="store_true",
                        help="leave out the streaming models built in the run")
    parser.add_argument("--families", action="store_true",
                        help="also one builder-made model per family of tests/model_families.py")
    parser.add_argument("--no-native", action="store_true",
                        help="time the numpy kernels even when numba (extra 'fast') is installed")
    args = parser.parse_args(argv)
    native_on = native.resolve(False if args.no_native else None)
    kernels = (f"compiled (numba {native.numba_module().__version__}) where a kernel has them"
               if native_on and native.numba_module() is not None else
               "numpy only" + ("" if args.no_native else
                               f" (numba is not installed: {native.INSTALL_HINT})"))
    rows = [dict(bench_model(name, model, args.repeat, args.budget, native_on), kernels=kernels)
            for name, model in _models(args, parser)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"tinyarena kernels: {kernels}")
    print(f"{'model':36s} {'ops':>4s} {'tinyarena ms':>13s} {'wheel ms':>10s} {'ratio':>7s} "
          f"{'excess us/op':>13s} {'loop us/op':>11s}  outputs")
    for r in rows:
        diff = r["max_difference"]
        same = "equal" if diff == 0 else f"differ by {diff}"
        print(f"{r['model']:36s} {r['ops']:4d} {r['tinyarena_ms']:13.3f} {r['wheel_ms']:10.3f} "
              f"{r['ratio']:7.2f} {r['excess_us_per_op']:13.2f} {r['loop_us_per_op']:11.3f}  "
              f"{same}")
    print("ratio = tinyarena median / wheel median, measured in this run (lower is faster);")
    print("excess us/op = (tinyarena - wheel) per operator of subgraph 0;")
    print("loop us/op = tinyarena's per-invoke cost with no-op kernels, per operator;")
    print("outputs: 'differ by N' is N ulp for float32 outputs, N quantization steps otherwise.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
