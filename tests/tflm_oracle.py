"""The oracle: the pinned ``tflite-micro`` wheel, run live.

Its recording allocator prints to C-level stderr, so file descriptor 2 is redirected around
each call. Anything that can crash the process (a tiny arena, a model TFLM refuses, data that
drives a kernel out of range) runs in a child process: ``tflm_probe``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
DEFAULT_ARENA = 64 * 1024 * 1024


def shared_model_names() -> list[str]:
    """Stems of the .tflite files in ../shared/models (empty when the folder is absent)."""
    if not SHARED_MODELS.is_dir():
        return []
    return sorted(p.stem for p in SHARED_MODELS.glob("*.tflite"))


def shared_model_bytes(name: str) -> bytes:
    return (SHARED_MODELS / f"{name}.tflite").read_bytes()


def _runtime():
    from tflite_micro.python.tflite_micro import runtime

    return runtime


@contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Capture everything written to fd 2 (C and Python) into the yielded one-item list."""
    out: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


@dataclass
class Allocations:
    """What RecordingMicroAllocator::PrintAllocations reported."""

    total: int
    head: int
    tail: int
    categories: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # used, requested, count
    text: str = ""


_LINE_TOTAL = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")
_LINE_CAT = re.compile(
    r"'([^']+)' used (\d+) bytes with alignment overhead \(requested (\d+) bytes for (\d+) "
)


def parse_allocations(text: str) -> Allocations:
    sizes = {m.group(1): int(m.group(2)) for m in _LINE_TOTAL.finditer(text)}
    if not {"total", "head", "tail"} <= sizes.keys():
        raise AssertionError(f"no allocation report in TFLM's output:\n{text}")
    cats = {
        m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
        for m in _LINE_CAT.finditer(text)
    }
    return Allocations(sizes["total"], sizes["head"], sizes["tail"], cats, text)


def make_interpreter(model: bytes, arena_size: int = DEFAULT_ARENA, preserve_all: bool = False):
    rt = _runtime()
    config = (rt.InterpreterConfig.kPreserveAllTensors if preserve_all
              else rt.InterpreterConfig.kAllocationRecording)
    return rt.Interpreter.from_bytes(bytes(model), arena_size=arena_size,
                                     intrepreter_config=config)


def tflm_allocations(model: bytes, arena_size: int = DEFAULT_ARENA,
                     inputs: Sequence[np.ndarray] | None = None) -> Allocations:
    """Load, invoke once (zeros unless inputs given) and read the recording allocator's report."""
    with captured_stderr() as err:
        ip = make_interpreter(model, arena_size)
        _feed(ip, inputs)
        ip.invoke()
        ip.print_allocations()
    return parse_allocations(err[0])


def _feed(ip, inputs: Sequence[np.ndarray] | None) -> None:
    i = 0
    while True:
        try:
            details = ip.get_input_details(i)
        except Exception:
            break
        if inputs is not None and i < len(inputs):
            data = np.asarray(inputs[i])
        else:
            data = np.zeros(details["shape"], dtype=details["dtype"])
        ip.set_input(data, i)
        i += 1
    if inputs is not None and len(inputs) > i:  # a test bug must not be dropped silently
        raise ValueError(f"{len(inputs)} inputs given to a model with {i}")


def _outputs(ip) -> list[np.ndarray]:
    """Copies of every output of the wheel's interpreter after an invoke."""
    outputs = []
    i = 0
    while True:
        try:
            ip.get_output_details(i)
        except Exception:
            break
        outputs.append(np.array(ip.get_output(i), copy=True))
        i += 1
    return outputs


def tflm_run(model: bytes, inputs: Sequence[np.ndarray],
             arena_size: int = DEFAULT_ARENA) -> list[np.ndarray]:
    """Outputs of one invoke of the wheel."""
    return tflm_invokes(model, [inputs], arena_size)[0]


def tflm_invokes(model: bytes, steps: Sequence[Sequence[np.ndarray]],
                 arena_size: int = DEFAULT_ARENA) -> list[list[np.ndarray]]:
    """The outputs of consecutive invokes of one wheel interpreter (variables and resource
    state carry over), one list per step; inputs a step leaves out are zeros."""
    results = []
    with captured_stderr():
        ip = make_interpreter(model, arena_size)
        for inputs in steps:
            _feed(ip, inputs)
            ip.invoke()
            results.append(_outputs(ip))
    return results


_PROBE = r"""
import sys, numpy as np
from tflite_micro.python.tflite_micro import runtime
model_path, arena, steps_path, out_path, report = sys.argv[1:6]
steps = np.load(steps_path)
n_steps = int(steps["n_steps"])
outputs = {}
stage = "allocate"
try:
    ip = runtime.Interpreter.from_bytes(
        open(model_path, "rb").read(), arena_size=int(arena),
        intrepreter_config=runtime.InterpreterConfig.kAllocationRecording)
    print("STAGE allocated", flush=True)
    if report == "1":
        ip.print_allocations()
    stage = "invoke"
    for s in range(n_steps):
        i = 0
        while True:
            try:
                d = ip.get_input_details(i)
            except Exception:
                break
            key = f"s{s}_{i}"
            data = steps[key] if key in steps.files else np.zeros(d["shape"], d["dtype"])
            ip.set_input(data, i)
            i += 1
        ip.invoke()
        j = 0
        while True:
            try:
                ip.get_output_details(j)
            except Exception:
                break
            outputs[f"s{s}_{j}"] = np.array(ip.get_output(j), copy=True)
            j += 1
        print(f"STAGE invoked {s}", flush=True)
except Exception as exc:
    print(f"REFUSED {stage}: {exc}", flush=True)
    sys.exit(3)
np.savez(out_path, **outputs)
print("STAGE ok", flush=True)
"""


@dataclass(frozen=True)
class WheelProbe:
    """What the wheel did with a model in a child process: ``stage`` is "ok", or where TFLM
    refused it ("allocate" or "invoke"), or "crash" (the child died: undefined behaviour in
    TFLM, which a test treats as a refusal). ``log`` holds TFLM's messages, ``outputs`` one
    list per completed invoke (only when every invoke ran)."""

    stage: str
    log: str
    outputs: tuple[tuple[np.ndarray, ...], ...] = ()

    @property
    def refused(self) -> bool:
        return self.stage != "ok"

    @property
    def crashed(self) -> bool:
        return self.stage == "crash"

    def allocations(self) -> Allocations:
        """The recording allocator's report (asked for with ``report=True``; printed right
        after AllocateTensors, so it survives a crash in invoke)."""
        return parse_allocations(self.log)


def tflm_probe(model: bytes, steps: Sequence[Sequence[np.ndarray]] | None = None,
               arena_size: int = DEFAULT_ARENA, report: bool = False) -> WheelProbe:
    """Load, allocate and invoke ``model`` in the wheel in a child process, once per step
    (one invoke of zeros when ``steps`` is None; inputs a step leaves out are zeros).

    Every call that can reach undefined behaviour in TFLM (a model TFLM refuses or should
    refuse, out-of-range data, an arena too small for the allocator objects) goes through
    here: in-process, a segfault would take the whole pytest worker down."""
    steps = [[]] if steps is None else steps
    arrays = {f"s{s}_{i}": np.asarray(x) for s, ins in enumerate(steps) for i, x in enumerate(ins)}
    with tempfile.TemporaryDirectory(prefix="tflm_probe") as tmp:
        folder = Path(tmp)
        (folder / "model.tflite").write_bytes(bytes(model))
        np.savez(folder / "steps.npz", n_steps=np.array(len(steps)), **arrays)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _PROBE, str(folder / "model.tflite"), str(arena_size),
                 str(folder / "steps.npz"), str(folder / "out.npz"), "1" if report else "0"],
                capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError("the wheel did not finish in 300 s (a hang is no refusal)") \
                from exc
        log = proc.stderr + proc.stdout
        if proc.returncode == 0:
            with np.load(folder / "out.npz") as out:
                outputs = tuple(tuple(out[f"s{s}_{j}"] for j in range(_count(out.files, s)))
                                for s in range(len(steps)))
            return WheelProbe("ok", log, outputs)
    refused = re.search(r"^REFUSED (allocate|invoke):", proc.stdout, re.MULTILINE)
    if proc.returncode == 3 and refused:
        return WheelProbe(refused.group(1), log)
    return WheelProbe("crash", f"{log}\n(child exit status {proc.returncode})")


def _count(keys: Sequence[str], step: int) -> int:
    return sum(1 for k in keys if k.startswith(f"s{step}_"))


def tflm_fits(model: bytes, arena_size: int) -> tuple[bool, str]:
    """Does the wheel allocate and invoke in ``arena_size`` bytes? Runs in a child process,
    because an arena too small for the allocator objects crashes TFLM. Returns (ok, log)."""
    probe = tflm_probe(model, arena_size=arena_size)
    return not probe.refused, probe.log


def model_random_inputs(model: bytes | Any, seed: int) -> list[np.ndarray]:
    """Random inputs for subgraph 0 of ``model`` (bytes or a read Model), drawn as
    ``tinyarena run`` draws them when given no input file."""
    from tinyarena.interpreter.inputs import random_inputs
    from tinyarena.model import read_model
    from tinyarena.model.types import NUMPY_DTYPES

    m = read_model(model) if isinstance(model, (bytes, bytearray, memoryview)) else model
    sg = m.subgraphs[0]
    return random_inputs([{"shape": sg.tensors[i].shape, "dtype": NUMPY_DTYPES[sg.tensors[i].type]}
                          for i in sg.inputs], seed)
